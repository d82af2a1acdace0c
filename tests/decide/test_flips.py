"""What would change the answer: every reported flip, applied through the chain, flips the leader."""

from __future__ import annotations

import pytest

from fabricplan.catalog import load_catalog
from fabricplan.decide import evaluate
from fabricplan.decide.flips import FLIP_CANDIDATES, FlipCandidate, FlipContext, what_would_change
from fabricplan.plan import Scenario
from fabricplan.spec import load_spec
from project_paths import EXAMPLES

CATALOG = load_catalog()


def _candidates(spec, leader):
    fabrics = [c.profile for c in spec.fabric_choices()]
    ctx = FlipContext(spec=spec, catalog=CATALOG, leader=leader, fabrics=fabrics)
    return {c.name: c for factory in FLIP_CANDIDATES for c in factory(ctx)}


def test_each_flip_applied_through_the_chain_flips_the_leader_with_regret_at_least_zero():
    spec = load_spec(EXAMPLES / "llama70b-1024-h100.yaml", CATALOG)
    result = what_would_change(spec, CATALOG)
    assert result.leader == evaluate(spec, CATALOG).recommendation.recommended
    assert result.flips and [f.size for f in result.flips] == sorted(f.size for f in result.flips)
    candidates = _candidates(spec, result.leader)
    for flip in result.flips:
        assert flip.regret >= 0 and flip.regret_usd >= 0 and flip.regret_at_limit >= 0
        case_spec, case_catalog, scenario = candidates[flip.candidate].apply(flip.value)
        after = evaluate(case_spec, case_catalog, scenario)
        assert after.recommendation.recommended == flip.new_leader != result.leader, flip
        metrics = {f: o.cost_per_useful_gpu_hour_usd for f, o in after.outcomes.items()}
        assert metrics[result.leader] - metrics[flip.new_leader] == pytest.approx(flip.regret_usd)
    # a multiplier flip is the smallest: the same change short by twice the bisection's precision
    # (flip_search_tolerance, relative) leaves the leader where it is
    import math

    tolerance = CATALOG.parameter("flip_search_tolerance").value.at("default")
    smallest = next(f for f in result.flips if f.unit == "multiplier")
    step = 2 * math.log1p(tolerance) * (1 if smallest.value > 1 else -1)
    back = math.exp(math.log(smallest.value) - step)
    case = candidates[smallest.candidate].apply(back)
    assert evaluate(case[0], case[1], case[2]).recommendation.recommended == result.leader


def test_a_new_assumption_is_one_more_registry_entry():
    spec = load_spec(EXAMPLES / "llama70b-1024-h100.yaml", CATALOG)

    def optics_price(ctx):  # e.g. the optics price basis another change brings: one factory
        return [FlipCandidate(name="optics prices", ends=(3.0,),
                              apply=lambda m: (ctx.spec, ctx.catalog, Scenario(price_multipliers=(("optics", m),))),
                              describe=lambda m: f"optics prices x{m:.3g}")]

    result = what_would_change(spec, CATALOG, registry=(optics_price,))
    assert [f.candidate for f in result.flips] + [n.split(" (")[0] for n in result.no_flip] == ["optics prices"]


def test_compare_carries_the_flips_in_json_and_the_terminal(cli):
    spec = str(EXAMPLES / "llama70b-1024-h100.yaml")
    report = cli("compare", spec, "--quiet", "--json", "--draws", "100").json()
    flips = report["what_would_change"]
    assert flips["leader"] == report["recommendation"]["recommended"] and flips["flips"]
    text = cli("compare", spec, "--quiet", "--draws", "100").out
    assert "What would change the answer" in text and "Smallest flip:" in text
    assert max(len(line) for line in text.splitlines()) <= 80


def test_the_optics_basis_is_a_flip_candidate_of_every_fabric_that_has_one():
    spec = load_spec(EXAMPLES / "llama70b-1024-h100.yaml", CATALOG)
    leader = evaluate(spec, CATALOG).recommendation.recommended
    candidates = _candidates(spec, leader)
    toggle = candidates["infiniband-ndr optics basis"]
    assert toggle.unit == "toggle" and toggle.base == 0.0 and toggle.ends == (1.0,)  # third party by default
    before = evaluate(spec, CATALOG).outcomes["infiniband-ndr"].cost
    after = evaluate(*toggle.apply(1.0)).outcomes["infiniband-ndr"].cost
    assert after.optics_basis == "vendor" and before.optics_basis == "third_party"
    assert after.network_capex_usd > before.network_capex_usd * 1.2  # LinkX at about twice third-party prices


def test_sharp_is_a_flip_candidate_and_switching_it_changes_the_design_the_chain_runs():
    spec = load_spec(EXAMPLES / "moe-alltoall-2048-h100.yaml", CATALOG)
    leader = evaluate(spec, CATALOG).recommendation.recommended
    sharp = _candidates(spec, leader)["infiniband-ndr sharp"]
    assert sharp.unit == "toggle" and sharp.base == 0.0 and sharp.ends == (1.0,)  # off as installed
    case_spec, _catalog, _scenario = sharp.apply(1.0)
    choice = next(c for c in case_spec.fabric_choices() if c.profile == "infiniband-ndr")
    assert choice.options().get("sharp") is True
