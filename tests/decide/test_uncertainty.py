"""The Monte Carlo over the catalog's ranges: exact at zero width, linear in prices, and deciding."""

from __future__ import annotations

import numpy as np
import pytest

from fabricplan.catalog import load_catalog
from fabricplan.cost import resolve_assumptions
from fabricplan.cost.draws import Draws, tco_draws
from fabricplan.decide import evaluate, fabric_outcomes
from fabricplan.spec import load_spec

from project_paths import EXAMPLES

CATALOG = load_catalog()
PRICED = ("switches", "nics", "optics", "servers")


def example(name, catalog=CATALOG):
    return load_spec(EXAMPLES / f"{name}.yaml", catalog)


def zero_width(catalog):
    """The catalog with every price and parameter range collapsed onto its default."""
    values = {}
    for section in PRICED:
        for entry_id, entry in catalog.section(section).items():
            values[f"{section}.{entry_id}.price_usd"] = entry.price_usd.default
    for entry_id, entry in catalog.section("parameters").items():
        values[f"parameters.{entry_id}.value"] = entry.value.default
    for entry_id, profile in catalog.section("fabrics").items():
        if profile.costs is not None:  # the per-fabric support, licence, staffing and failure ranges
            for name in ("support_fraction_per_year", "licence_usd_per_node_year", "ops_fte_multiplier",
                         "network_failure_multiplier"):
                values[f"fabrics.{entry_id}.costs.{name}"] = getattr(profile.costs, name).default
    return catalog.with_values(values)


@pytest.mark.parametrize("name", ["mid-128-h100-existing-ethernet", "llama70b-1024-h100"])
def test_zero_width_monte_carlo_equals_the_deterministic_result(name):
    catalog = zero_width(CATALOG)
    decision = evaluate(example(name, catalog), catalog, draws=200, seed=3)
    assert decision.uncertainty.ranged_inputs == []
    for fabric, outcome in decision.outcomes.items():
        dist = decision.uncertainty.fabrics[fabric]
        for value in (dist.p10_usd, dist.p50_usd, dist.p90_usd, dist.mean_usd):
            assert value == pytest.approx(outcome.cost_per_useful_gpu_hour_usd, rel=1e-12)
    cheapest = min(decision.outcomes, key=lambda f: decision.outcomes[f].cost_per_useful_gpu_hour_usd)
    assert decision.uncertainty.fabrics[cheapest].probability_best == 1.0
    assert decision.uncertainty.clear


def test_tco_draws_are_counts_times_price_draws():
    """Only the switch price ranged: TCO moves by switches x (draw - default) x (1 + support x horizon)."""
    catalog = zero_width(CATALOG).with_values({"switches.sw_ib_qm9700.price_usd": {"low": 30000, "high": 60000}})
    spec = example("llama70b-1024-h100", catalog)
    assumptions = resolve_assumptions(spec, catalog)
    outcome = fabric_outcomes(spec, catalog, fabrics=["infiniband-ndr"])["infiniband-ndr"]
    draws = Draws(n=500, seed=1)
    tco = tco_draws(spec, catalog, outcome.cost, assumptions, draws)
    price = draws.of("price:sw_ib_qm9700", 0, 0, 0)  # cached: the draws tco_draws used
    assert 30000 <= price.min() < price.max() <= 60000
    switches = outcome.cost.topology.total_switches
    expected = outcome.tco_usd + switches * (price - 45000) * (
        1 + outcome.cost.support_fraction_per_year * assumptions.horizon_years)  # the fabric's own support share
    np.testing.assert_allclose(tco, expected, rtol=1e-12)


def test_draws_are_seeded_and_shared_by_key():
    a, b = Draws(n=100, seed=7), Draws(n=100, seed=7)
    np.testing.assert_array_equal(a.of("price:x", 1, 2, 4), b.of("price:x", 1, 2, 4))
    assert not np.array_equal(a.of("price:x", 1, 2, 4), Draws(n=100, seed=8).of("price:x", 1, 2, 4))
    assert not np.array_equal(a.of("price:x", 1, 2, 4), a.of("price:y", 1, 2, 4))
    # order-independent: asking for y first does not change x
    c = Draws(n=100, seed=7)
    c.of("price:y", 1, 2, 4)
    np.testing.assert_array_equal(c.of("price:x", 1, 2, 4), a.of("price:x", 1, 2, 4))


def test_a_price_overlay_that_should_flip_the_winner_does_and_rules_do_not_override_it():
    # 16,384 H100: at the catalog's prices (InfiniBand with NVIDIA LinkX optics) RoCE is the clear
    # numeric winner; SCALE003/SCALE004 fire for InfiniBand, are shown with their weights, and do
    # not override it.
    spec = example("llama405b-16k-h100")
    base = evaluate(spec, CATALOG, draws=1000)
    rec = base.recommendation
    assert base.uncertainty.leader == "roce-v2" and base.uncertainty.clear
    assert rec.recommended == "roce-v2" and rec.decided_by == "numbers"
    fired = {r.id for r in base.rules if r.fired}
    assert {"SCALE003", "SCALE004"} <= fired
    assert any(d.startswith("SCALE004") and "weight 0.25" in d and "the numbers decided" in d
               for d in rec.disagreements)
    votes = {v.rule: v for v in rec.rule_votes}
    assert not votes["SCALE003"].agrees_with_numbers and not votes["SCALE003"].decided
    # Ethernet switches at four times their price: InfiniBand is then clearly cheaper per useful
    # GPU-hour, and the numbers (not the rules) say so.
    dear = CATALOG.with_values({
        f"switches.{sid}.price_usd": {"low": 4 * sw.price_usd.low, "default": 4 * sw.price_usd.default,
                                      "high": 4 * sw.price_usd.high}
        for sid, sw in CATALOG.section("switches").items() if sw.family == "ethernet"})
    flipped = evaluate(load_spec(EXAMPLES / "llama405b-16k-h100.yaml", dear), dear, draws=1000)
    assert flipped.uncertainty.leader == "infiniband-ndr" and flipped.uncertainty.clear
    assert flipped.recommendation.recommended == "infiniband-ndr"
    assert flipped.recommendation.decided_by == "numbers"


def test_rules_break_a_close_call_with_their_weights():
    """Two fabrics the draws cannot separate: the weighted rule votes choose, and say so."""
    spec = example("llama70b-1024-h100")
    decision = evaluate(spec, CATALOG, draws=1000)
    uncertainty = decision.uncertainty
    probabilities = sorted((d.probability_best for d in uncertainty.fabrics.values()), reverse=True)
    if uncertainty.clear:
        pytest.skip("the catalog makes this example a clear call")
    assert probabilities[0] < uncertainty.threshold
    assert decision.recommendation.close_call
    # the recommended fabric has the largest weighted vote among the contenders
    assert decision.recommendation.recommended == "infiniband-ndr"


def test_the_infiniband_premium_row_flips_at_the_expected_ratio():
    """RoCE leads IB by a small margin on the 16k example (IB pays NVIDIA LinkX optics). Cost is
    linear in prices, so IB's metric falls by (network hardware capex x (1 + IB's support share x
    horizon)) / useful GPU-hours per unit of premium taken off; the row must flip exactly when the
    swing passes the ratio that closes the gap."""
    from fabricplan.decide.whatif import sensitivity

    spec = example("llama405b-16k-h100")
    outcomes = fabric_outcomes(spec, CATALOG)
    ib, roce = outcomes["infiniband-ndr"], outcomes["roce-v2"]
    assert roce.cost_per_useful_gpu_hour_usd < ib.cost_per_useful_gpu_hour_usd
    assumptions = resolve_assumptions(spec, CATALOG)
    per_unit = (ib.cost.network_capex_usd * (1 + ib.cost.support_fraction_per_year * assumptions.horizon_years)
                / ib.useful_gpu_hours)
    ratio = (ib.cost_per_useful_gpu_hour_usd - roce.cost_per_useful_gpu_hour_usd) / per_unit
    assert 0 < ratio < 0.8  # a swing the sensitivity accepts (below 0.95) on both sides of the flip

    def premium_row(swing):
        return next(r for r in sensitivity(spec, CATALOG, swing=swing) if r.factor == "InfiniBand price premium")

    below, above = premium_row(ratio * 0.9), premium_row(ratio * 1.1)
    assert not below.flips and below.winner_low == "roce-v2"
    assert above.flips and above.winner_low == "infiniband-ndr" and above.winner_high == "roce-v2"
    # only InfiniBand moved: RoCE's metric is unchanged in that row
    assert above.metric_change_low["roce-v2"] == pytest.approx(0.0, abs=1e-12)
    assert above.metric_change_low["infiniband-ndr"] == pytest.approx(-ratio * 1.1 * per_unit
                                                                     / ib.cost_per_useful_gpu_hour_usd, rel=1e-6)


def test_goodput_draws_follow_the_failure_rate_ranges():
    """Only the GPU failure rate ranged: the draws' goodput equals the goodput model at each drawn
    rate, and lower rates keep more of the job's time (the Monte Carlo sees failures)."""
    from fabricplan.decide.uncertainty import goodput_draws
    from fabricplan.plan.goodput import goodput_array

    base = zero_width(CATALOG)
    rate = base.parameter("failure_rate_gpu_per_million_hours").value.default
    catalog = base.with_values({"parameters.failure_rate_gpu_per_million_hours.value":
                                {"low": rate / 4, "default": rate, "high": rate * 4}})
    spec = example("llama70b-1024-h100", catalog)
    outcome = fabric_outcomes(spec, catalog, fabrics=["roce-v2"])["roce-v2"]
    draws = Draws(n=400, seed=5)
    goodput = goodput_draws(spec, catalog, outcome, draws)
    drawn = draws.of("param:failure_rate_gpu_per_million_hours", 0, 0, 0)  # cached: what it used
    assert rate / 4 <= drawn.min() < drawn.max() <= rate * 4
    order = np.argsort(drawn)
    assert np.all(np.diff(goodput[order]) <= 1e-15)  # more GPU failures, less goodput
    at_default = goodput[np.argmin(np.abs(drawn - rate))]
    assert at_default == pytest.approx(outcome.weighted_goodput, rel=2e-3)
    assert goodput_array({"gpu": 1.0}, {"gpu": 0.0}, 5.0, 10.0) == pytest.approx(1.0)  # nothing fails
