"""The Monte Carlo over the catalog's ranges: the chain's own steps on drawn inputs; exact at zero
width, linear in prices, and deciding."""

from __future__ import annotations

import numpy as np
import pytest

from fabricplan.catalog import load_catalog
from fabricplan.catalog.inputs import Draws
from fabricplan.catalog.spread import without_spreads
from fabricplan.cost import resolve_assumptions
from fabricplan.decide import evaluate, fabric_outcomes
from fabricplan.plan import DEFAULT_PLAN
from fabricplan.spec import load_spec
from project_paths import EXAMPLES

CATALOG = load_catalog()
PRICED = ("switches", "nics", "optics", "servers")


def example(name, catalog=CATALOG):
    return load_spec(EXAMPLES / f"{name}.yaml", catalog)


def drawn(spec, catalog, fabrics, draws, **options):
    """The chain's evaluation of ``fabrics`` with ``draws`` (point runs and drawn outcomes)."""
    return DEFAULT_PLAN.evaluate(spec, catalog, fabrics=fabrics, draws=draws, **options)


def zero_width(catalog):
    """The catalog with every price and parameter range collapsed onto its default and the spreads
    of entries and perf parameters (power, per-NIC bandwidth, socket figures, adaptive residual) removed."""
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
    return without_spreads(catalog.with_values(values))


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
    draws = Draws(n=500, seed=1)
    evaluation = drawn(spec, catalog, ["infiniband-ndr"], draws)
    outcome = evaluation.outcomes["infiniband-ndr"]
    tco = evaluation.drawn["infiniband-ndr"].tco_usd
    price = draws.of("price:sw_ib_qm9700", 0, 0, 0)  # cached: the draws the chain used
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


def vendor_optics(spec):
    """The spec with every fabric's optics at the vendor basis (InfiniBand pays NVIDIA LinkX at ~2x)."""
    return spec.model_copy(update={"economics": spec.economics.model_copy(update={"optics_basis": "vendor"})})


def _switches_priced(catalog, family: str, factor: float):
    return catalog.with_values({
        f"switches.{sid}.price_usd": {"low": factor * sw.price_usd.low, "default": factor * sw.price_usd.default,
                                      "high": factor * sw.price_usd.high}
        for sid, sw in catalog.section("switches").items() if sw.family == family})


def test_a_price_overlay_that_should_flip_the_winner_does_and_rules_do_not_override_it():
    # 16,384 H100 with InfiniBand switches at three times their price: RoCE is the clear numeric winner;
    # SCALE003/SCALE004 fire for InfiniBand, are shown as advice beside the numbers, and do not
    # override it.
    cheap_eth = _switches_priced(CATALOG, "infiniband", 3)
    clear = evaluate(load_spec(EXAMPLES / "llama405b-16k-h100.yaml", cheap_eth), cheap_eth, draws=1000)
    rec = clear.recommendation
    assert clear.uncertainty.leader == "roce-v2" and clear.uncertainty.clear
    assert rec.recommended == "roce-v2" and rec.decided_by == "numbers"
    fired = {r.id for r in clear.rules if r.fired}
    assert {"SCALE003", "SCALE004"} <= fired
    assert any(d.startswith("SCALE004") and "advice" in d and "roce-v2 best in" in d for d in rec.disagreements)
    advice = {a.rule: a for a in rec.advice}
    assert not advice["SCALE003"].agrees_with_numbers and advice["SCALE003"].favours == ["infiniband-ndr"]
    assert advice["SCALE003"].mechanism.startswith("in the numbers")
    # Ethernet switches at four times their price: InfiniBand is then clearly cheaper per useful
    # GPU-hour, and the numbers (not the rules) say so.
    dear = _switches_priced(CATALOG, "ethernet", 4)
    flipped = evaluate(load_spec(EXAMPLES / "llama405b-16k-h100.yaml", dear), dear, draws=1000)
    assert flipped.uncertainty.leader == "infiniband-ndr" and flipped.uncertainty.clear
    assert flipped.recommendation.recommended == "infiniband-ndr"
    assert flipped.recommendation.decided_by == "numbers"


def test_a_close_call_is_ranked_by_the_numbers_not_by_the_rules():
    """1,024 GPUs with RoCE's network prices set where it ties InfiniBand at the point (the flip the
    chain finds for them): a close call by construction, and SCALE003/SCALE004 favour InfiniBand.
    The report says it is close and ranks by the numbers: the fabric most often best is
    recommended, the rules are advice beside it."""
    from fabricplan.decide.flips import network_price, what_would_change
    from fabricplan.plan import Scenario

    spec = example("llama70b-1024-h100")
    leader = evaluate(spec, CATALOG).recommendation.recommended
    rival = "roce-v2" if leader == "infiniband-ndr" else "infiniband-ndr"
    flips = what_would_change(spec, CATALOG, registry=(network_price,)).flips
    tie = next(f for f in flips if f.fabric in (leader, rival) and f.new_leader in (leader, rival))
    decision = evaluate(spec, CATALOG, Scenario(fabric_price_multipliers=((tie.fabric, tie.value),)), draws=1000)
    uncertainty = decision.uncertainty
    rec = decision.recommendation
    assert not uncertainty.clear and rec.close_call
    assert {"SCALE003", "SCALE004"} <= {r.id for r in decision.rules if r.fired}
    best = max(uncertainty.fabrics, key=lambda f: uncertainty.fabrics[f].probability_best)
    assert rec.recommended == best == uncertainty.leader == rec.ranking[0]
    assert rec.decided_by == "numbers"
    assert all(r.role in {"advice", "constraint", "check"} for r in decision.rules)
    # the rules favour another fabric: said as a disagreement, but the ranking is the numbers'
    if rec.recommended != "infiniband-ndr":
        assert any("infiniband-ndr" in d and "advice" in d for d in rec.disagreements)
    assert any("close call" in reason for reason in rec.reasons)
    by_probability = sorted(rec.ranking, key=lambda f: -uncertainty.fabrics[f].probability_best)
    assert rec.ranking == by_probability


def test_the_infiniband_premium_row_flips_at_the_expected_ratio():
    """RoCE leads IB by a small margin on the 1,024-GPU example (the design search's rail-only
    Tomahawk 5 against InfiniBand's 2-tier leaf-spine). Cost is
    linear in prices, so IB's metric falls by (network hardware capex x (1 + IB's support share x
    horizon)) / useful GPU-hours per unit of premium taken off; the row must flip exactly when the
    swing passes the ratio that closes the gap."""
    from fabricplan.decide.whatif import sensitivity

    spec = example("llama70b-1024-h100")
    outcomes = fabric_outcomes(spec, CATALOG)
    ib, roce = outcomes["infiniband-ndr"], outcomes["roce-v2"]
    assert roce.cost_per_useful_gpu_hour_usd < ib.cost_per_useful_gpu_hour_usd
    assumptions = resolve_assumptions(spec, CATALOG)
    per_unit = ((ib.cost.network_capex_usd + ib.cost.support_covered_capex_usd * ib.cost.support_fraction_per_year
                 * assumptions.horizon_years) / ib.useful_gpu_hours)
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
    from fabricplan.plan.goodput import job_goodput

    base = zero_width(CATALOG)
    rate = base.parameter("failure_rate_gpu_per_million_hours").value.default
    catalog = base.with_values({"parameters.failure_rate_gpu_per_million_hours.value":
                                {"low": rate / 4, "default": rate, "high": rate * 4}})
    spec = example("llama70b-1024-h100", catalog)
    draws = Draws(n=400, seed=5)
    evaluation = drawn(spec, catalog, ["roce-v2"], draws)
    outcome = evaluation.outcomes["roce-v2"]
    goodput = evaluation.drawn["roce-v2"].weighted_goodput
    rates = draws.of("param:failure_rate_gpu_per_million_hours", 0, 0, 0)  # cached: what it used
    assert rate / 4 <= rates.min() < rates.max() <= rate * 4
    order = np.argsort(rates)
    assert np.all(np.diff(goodput[order]) <= 1e-15)  # more GPU failures, less goodput
    at_default = goodput[np.argmin(np.abs(rates - rate))]
    assert at_default == pytest.approx(outcome.weighted_goodput, rel=2e-3)
    nothing = job_goodput({"gpu": 1.0}, {"gpu": np.zeros(3)}, 5.0, 10.0)  # nothing fails: nothing lost
    np.testing.assert_array_equal(nothing.goodput, np.ones(3))


def test_power_draws_move_energy_and_colocation_by_the_drawn_network_power():
    """Only the Tomahawk 5's power ranged: the network's energy and colocation scale by
    Σ q·P·r / Σ q·P, nothing else moves."""
    catalog = zero_width(CATALOG).with_values(
        {"switches.sw_eth_th5.spread": {"ranges": {"power_w": [600, 1200]}, "reason": "test"}})
    spec = example("llama70b-1024-h100", catalog)
    assumptions = resolve_assumptions(spec, catalog)
    draws = Draws(n=300, seed=2)
    evaluation = drawn(spec, catalog, ["roce-v2"], draws)
    outcome = evaluation.outcomes["roce-v2"]
    cost = outcome.cost
    tco = evaluation.drawn["roce-v2"].tco_usd
    if not any(line.item_id == "sw_eth_th5" for line in cost.bom):
        pytest.skip("the chosen design has no Tomahawk 5")
    watts = draws.of("power:sw_eth_th5", 0, 0, 0)
    assert 600 <= watts.min() < watts.max() <= 1200
    switch_w = sum(line.quantity * line.unit_power_w for line in cost.bom if line.item_id == "sw_eth_th5")
    total_w = sum(line.quantity * line.unit_power_w for line in cost.bom)
    ratio = (total_w + switch_w * (watts / 913.0 - 1)) / total_w
    np.testing.assert_allclose(evaluation.drawn["roce-v2"].cost.network_power_w / total_w, ratio, rtol=1e-12)
    yearly = cost.opex_usd_per_year
    expected = outcome.tco_usd + (yearly.energy_usd + yearly.colocation_usd) * (ratio - 1) * assumptions.horizon_years
    np.testing.assert_allclose(tco, expected, rtol=1e-12)


def test_per_nic_bandwidth_is_drawn_per_fabric_from_its_own_range():
    """Only InfiniBand's effective bandwidth ranged: its utilisation draws move with it (more
    bandwidth, more utilisation), RoCE's do not."""
    catalog = zero_width(CATALOG).with_values(
        {"fabrics.infiniband-ndr.spread": {"ranges": {"effective_bandwidth_gbytes_per_s": [30, 48]}, "reason": "test"}})
    spec = example("llama70b-1024-h100", catalog)
    draws = Draws(n=300, seed=4)
    evaluation = drawn(spec, catalog, ["infiniband-ndr", "roce-v2"], draws)
    outcomes = evaluation.outcomes
    ib = evaluation.drawn["infiniband-ndr"].weighted_gpu_utilisation
    roce = evaluation.drawn["roce-v2"].weighted_gpu_utilisation
    assert np.ptp(roce) == 0 and roce[0] == pytest.approx(outcomes["roce-v2"].weighted_gpu_utilisation)
    bandwidth = draws.of("fabric:infiniband-ndr:effective_bandwidth_gbytes_per_s", 0, 0, 0)
    assert 30 <= bandwidth.min() < bandwidth.max() <= 48
    order = np.argsort(bandwidth)
    assert np.all(np.diff(ib[order]) >= -1e-12) and ib[order][-1] > ib[order][0]
    assert sorted(draws.ranged) == ["fabric:infiniband-ndr:effective_bandwidth_gbytes_per_s"]


def test_socket_figures_and_the_adaptive_residual_are_drawn_where_they_act():
    """Only the socket DRAM touches and the adaptive-routing residual ranged: the kernel-TCP fabric's
    bandwidth moves with the touches (the DRAM bounce bound), InfiniBand (adaptive) gets the
    residual's term, RoCE (ECMP) gets neither."""
    from fabricplan.plan.drawn import bandwidth_ratio_draws

    catalog = zero_width(CATALOG).with_values({
        "perf_defaults.parameters.socket_dram_touches_per_byte.spread": {"ranges": {"value": [2, 4]}, "reason": "test"},
        "perf_defaults.parameters.adaptive_routing_residual_collision_fraction.spread":
            {"ranges": {"value": [0.0, 0.5]}, "reason": "test"}})
    spec = example("llama70b-1024-h100", catalog)
    fabrics = ["ethernet-tcp", "infiniband-ndr", "roce-v2"]
    draws = Draws(n=300, seed=6)
    evaluation = drawn(spec, catalog, fabrics, draws)
    tcp = bandwidth_ratio_draws(catalog, evaluation.runs["ethernet-tcp"].design, draws)
    touches = draws.of("param:socket_dram_touches_per_byte", 0, 0, 0)
    assert tcp.max() > 1.0 and np.all(tcp >= 1.0 - 1e-12)  # fewer touches, a higher DRAM bound
    assert np.all(tcp <= 4 / touches + 1e-12)  # at most the DRAM bound's own ratio
    roce = evaluation.drawn["roce-v2"].weighted_gpu_utilisation
    assert np.ptp(roce) == 0
    ib = evaluation.drawn["infiniband-ndr"].weighted_gpu_utilisation
    residual = draws.of("param:adaptive_routing_residual_collision_fraction", 0, 0, 0)
    order = np.argsort(residual)
    assert np.all(np.diff(ib[order]) <= 1e-12)  # more residual collision loss, less utilisation


def test_the_scale_curve_draws_compute_speed_too():
    """light (the scale curve): only compute speed ranged, the utilisation draws move with it,
    linearly through the deterministic value at the default speed."""
    catalog = zero_width(CATALOG).with_values(
        {"parameters.uncertainty_gpu_efficiency.value": {"low": 0.9, "default": 1.0, "high": 1.1}})
    spec = example("llama70b-1024-h100", catalog)
    draws = Draws(n=200, seed=8)
    evaluation = drawn(spec, catalog, ["roce-v2"], draws, light=True)
    outcome = evaluation.outcomes["roce-v2"]
    light = evaluation.drawn["roce-v2"].weighted_gpu_utilisation
    speed = draws.of("param:uncertainty_gpu_efficiency", 0, 0, 0)
    assert np.ptp(light) > 0
    slope = np.polyfit(speed, light, 1)
    np.testing.assert_allclose(np.polyval(slope, speed), light, rtol=1e-9)
    assert np.polyval(slope, 1.0) == pytest.approx(outcome.weighted_gpu_utilisation, rel=1e-9)
    full = drawn(spec, catalog, ["roce-v2"], draws).drawn["roce-v2"].weighted_gpu_utilisation
    np.testing.assert_allclose(light, full, rtol=0.02)  # the linear term is close to the grid's


def test_dp_overlap_efficiency_is_drawn_for_every_fabric():
    """Only the DP overlap efficiency ranged: more overlap, more utilisation, on every fabric."""
    catalog = zero_width(CATALOG).with_values({"perf_defaults.parameters.dp_overlap_efficiency.spread":
                                               {"ranges": {"value": [0.5, 1.0]}, "reason": "test"}})
    spec = example("llama70b-1024-h100", catalog)
    draws = Draws(n=200, seed=9)
    overlap = draws.of("param:dp_overlap_efficiency", 0.5, 0.9, 1.0)
    evaluation = drawn(spec, catalog, ["ethernet-tcp", "roce-v2"], draws)
    for fabric, outcome in evaluation.drawn.items():
        values = outcome.weighted_gpu_utilisation
        order = np.argsort(overlap)
        assert np.all(np.diff(values[order]) >= -1e-12), fabric
        assert values[order][-1] > values[order][0], fabric


def test_fabrics_that_tie_in_a_draw_share_its_win():
    """Three fabrics whose numbers differ only by float round-off (one node, no fabric) tie in every
    draw: each is best in a third of them, not the first listed in all (decision_tie_relative)."""
    from fabricplan.decide.uncertainty import summarise

    draws = Draws(n=6, seed=1)
    base = np.array([6.1, 6.2, 5.9, 6.0, 6.3, 6.05])
    metrics = {"ethernet-tcp": base, "roce-v2": base * (1 + 1e-15), "infiniband-ndr": base * (1 - 1e-15)}
    tie = CATALOG.parameter("decision_tie_relative").value.at("default")
    tied = summarise(metrics, list(metrics), draws, 0.8, tie)
    assert all(f.probability_best == pytest.approx(1 / 3) for f in tied.fabrics.values())
    strict = summarise(metrics, list(metrics), draws, 0.8, 0.0)
    assert strict.fabrics["infiniband-ndr"].probability_best == 1.0  # without the tolerance, round-off decides
