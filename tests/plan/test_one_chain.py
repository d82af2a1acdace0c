"""One chain for point and drawn numbers: a swapped step acts on the point estimate and on the
Monte Carlo alike, because both run the same step functions (fabricplan.plan.Plan.evaluate)."""

from __future__ import annotations

import numpy as np
import pytest

from fabricplan.catalog import load_catalog
from fabricplan.catalog.inputs import Draws, Inputs
from fabricplan.cost import cost_design, resolve_assumptions
from fabricplan.decide import evaluate
from fabricplan.perf.efficiency import AnalyticEfficiency, Efficiency, register_efficiency_model
from fabricplan.plan import DEFAULT_PLAN, join_outcome
from fabricplan.spec import load_spec
from project_paths import EXAMPLES

CATALOG = load_catalog()
DRAWS = 300


def example(name):
    return load_spec(EXAMPLES / f"{name}.yaml", CATALOG)


def halving(fabric: str):
    """An outcome step a notebook user might write: ``fabric``'s cost per useful GPU-hour halved."""
    def step(spec, catalog, design, fabric_cost, steps, assumptions, inputs):
        outcome = join_outcome(spec, catalog, design, fabric_cost, steps, assumptions, inputs)
        if outcome.fabric != fabric:
            return outcome
        return outcome.model_copy(update={"cost_per_useful_gpu_hour_usd": outcome.cost_per_useful_gpu_hour_usd / 2})
    return step


def _runner_up(uncertainty) -> str:
    return max((f for f in uncertainty.fabrics if f != uncertainty.leader),
               key=lambda f: uncertainty.fabrics[f].probability_best)


def test_a_custom_outcome_step_moves_the_monte_carlos_leader_and_its_probability():
    spec = example("llama405b-16k-h100")
    base = evaluate(spec, CATALOG, draws=DRAWS)
    target = _runner_up(base.uncertainty)  # not the leader: best in under half the draws
    before_p = base.uncertainty.fabrics[target].probability_best
    assert before_p < 0.5
    swapped = evaluate(spec, CATALOG, plan=DEFAULT_PLAN.replace(outcome=halving(target)), draws=DRAWS)
    uncertainty = swapped.uncertainty
    assert uncertainty.leader == target and uncertainty.clear
    assert uncertainty.fabrics[target].probability_best == 1.0  # half the cost in every draw
    assert swapped.recommendation.recommended == target
    # the drawn distribution is the point's step applied to every draw: its median halves too
    before, after = base.uncertainty.fabrics[target], uncertainty.fabrics[target]
    assert after.p50_usd == pytest.approx(before.p50_usd / 2, rel=1e-9)
    # the other fabrics' draws are untouched
    other = base.uncertainty.leader
    assert uncertainty.fabrics[other].p50_usd == pytest.approx(base.uncertainty.fabrics[other].p50_usd, rel=1e-12)


class SlowFabric:
    """An efficiency model that gives one fabric's collectives (``target``, a profile id) a tenth of
    the analytic share."""

    name = "test-slow-fabric"
    target = ""

    def __init__(self):
        self.analytic = AnalyticEfficiency()

    def __call__(self, case):
        result = self.analytic(case)
        if getattr(case.profile, "id", "") == self.target:
            return Efficiency(value=result.value * 0.1, oversubscription=result.oversubscription, model=self.name)
        return result


def test_a_registered_efficiency_model_moves_the_monte_carlo():
    spec = example("llama70b-1024-h100")
    plan = DEFAULT_PLAN.replace(efficiency_model="analytic")
    base = evaluate(spec, CATALOG, plan=plan, draws=DRAWS)
    leader = base.uncertainty.leader
    other = _runner_up(base.uncertainty)
    slow_model = type("SlowLeader", (SlowFabric,), {"target": leader})
    register_efficiency_model(SlowFabric.name, slow_model)
    slow = evaluate(spec, CATALOG, plan=plan.replace(efficiency_model=SlowFabric.name), draws=DRAWS)
    assert base.uncertainty.fabrics[leader].probability_best > 0.5
    assert slow.uncertainty.fabrics[leader].probability_best == 0.0
    assert slow.uncertainty.leader != leader
    # the drawn utilisation follows the model: the slowed fabric's falls, the others' do not move
    assert (slow.outcomes[leader].weighted_gpu_utilisation
            < base.outcomes[leader].weighted_gpu_utilisation - 0.01)
    assert slow.outcomes[other].weighted_gpu_utilisation == pytest.approx(
        base.outcomes[other].weighted_gpu_utilisation, rel=1e-12)
    assert slow.uncertainty.fabrics[leader].p50_usd > base.uncertainty.fabrics[leader].p50_usd


def test_cost_design_is_one_function_for_a_point_and_for_draws():
    """The drawn cost at zero-width ranges is the point cost; a single draw at the catalog's value is too."""
    spec = example("llama70b-1024-h100")
    run = DEFAULT_PLAN.evaluate(spec, CATALOG, fabrics=["roce-v2"]).runs["roce-v2"]
    assumptions = resolve_assumptions(spec, CATALOG)
    point = cost_design(run.spec, CATALOG, run.design, assumptions)
    assert isinstance(point.network_tco_usd, float)
    draws = Draws(n=400, seed=11)
    many = cost_design(run.spec, CATALOG, run.design, assumptions, Inputs.drawn(draws))
    assert many.network_tco_usd.shape == (400,)
    assert np.ptp(many.network_tco_usd) > 0  # prices and powers drawn
    # the mean of triangular draws moves towards the range's centre, but the draws bracket the point
    assert many.network_tco_usd.min() < point.network_tco_usd < many.network_tco_usd.max()
    # TCO per draw is the sum of its parts, as at the point
    np.testing.assert_allclose(many.network_tco_usd,
                               many.network_capex_usd + many.opex_usd_per_year.total_usd * assumptions.horizon_years,
                               rtol=1e-12)


def test_the_evaluation_keeps_the_designs_it_chose_for_the_draws():
    """The drawn chain runs on the design the point search chose (no second search)."""
    spec = example("llama70b-1024-h100")
    evaluation = DEFAULT_PLAN.evaluate(spec, CATALOG, draws=50)
    for fabric, run in evaluation.runs.items():
        chosen = run.outcome.design
        if chosen is not None:
            assert run.design.hardware.switch.id == chosen.switch
        drawn = evaluation.drawn[fabric]
        assert drawn.cost.topology == run.outcome.cost.topology
        assert drawn.cost_per_useful_gpu_hour_usd.shape == (50,)
