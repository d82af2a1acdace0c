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


def halve_infiniband(spec, catalog, design, fabric_cost, steps, assumptions, inputs):
    """An outcome step a notebook user might write: InfiniBand's cost per useful GPU-hour halved."""
    outcome = join_outcome(spec, catalog, design, fabric_cost, steps, assumptions, inputs)
    if outcome.family != "infiniband":
        return outcome
    return outcome.model_copy(update={"cost_per_useful_gpu_hour_usd": outcome.cost_per_useful_gpu_hour_usd / 2})


def test_a_custom_outcome_step_moves_the_monte_carlos_leader_and_its_probability():
    spec = example("llama405b-16k-h100")
    base = evaluate(spec, CATALOG, draws=DRAWS)
    assert base.uncertainty.leader == "roce-v2"
    ib_before = base.uncertainty.fabrics["infiniband-ndr"].probability_best
    assert ib_before < 0.5
    swapped = evaluate(spec, CATALOG, plan=DEFAULT_PLAN.replace(outcome=halve_infiniband), draws=DRAWS)
    uncertainty = swapped.uncertainty
    assert uncertainty.leader == "infiniband-ndr" and uncertainty.clear
    assert uncertainty.fabrics["infiniband-ndr"].probability_best == 1.0  # half the cost in every draw
    assert swapped.recommendation.recommended == "infiniband-ndr"
    # the drawn distribution is the point's step applied to every draw: its median halves too
    before, after = base.uncertainty.fabrics["infiniband-ndr"], uncertainty.fabrics["infiniband-ndr"]
    assert after.p50_usd == pytest.approx(before.p50_usd / 2, rel=1e-9)
    # the other fabrics' draws are untouched
    assert uncertainty.fabrics["roce-v2"].p50_usd == pytest.approx(base.uncertainty.fabrics["roce-v2"].p50_usd,
                                                                   rel=1e-12)


class SlowInfiniband:
    """An efficiency model that gives InfiniBand's collectives a tenth of the analytic share."""

    name = "test-slow-infiniband"

    def __init__(self):
        self.analytic = AnalyticEfficiency()

    def __call__(self, case):
        result = self.analytic(case)
        if getattr(case.profile, "family", "") == "infiniband":
            return Efficiency(value=result.value * 0.1, oversubscription=result.oversubscription, model=self.name)
        return result


def test_a_registered_efficiency_model_moves_the_monte_carlo():
    register_efficiency_model(SlowInfiniband.name, SlowInfiniband)
    spec = example("llama70b-1024-h100")
    plan = DEFAULT_PLAN.replace(efficiency_model="analytic")
    base = evaluate(spec, CATALOG, plan=plan, draws=DRAWS)
    slow = evaluate(spec, CATALOG, plan=plan.replace(efficiency_model=SlowInfiniband.name), draws=DRAWS)
    assert base.uncertainty.fabrics["infiniband-ndr"].probability_best > 0.05
    assert slow.uncertainty.fabrics["infiniband-ndr"].probability_best == 0.0
    assert slow.uncertainty.leader != "infiniband-ndr"
    # the drawn utilisation follows the model: InfiniBand's falls, RoCE's does not move
    assert (slow.outcomes["infiniband-ndr"].weighted_gpu_utilisation
            < base.outcomes["infiniband-ndr"].weighted_gpu_utilisation - 0.01)
    assert slow.outcomes["roce-v2"].weighted_gpu_utilisation == pytest.approx(
        base.outcomes["roce-v2"].weighted_gpu_utilisation, rel=1e-12)
    assert (slow.uncertainty.fabrics["infiniband-ndr"].p50_usd
            > base.uncertainty.fabrics["infiniband-ndr"].p50_usd)


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
