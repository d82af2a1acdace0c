"""The model chain: design -> cost -> performance -> outcome, each step a named, swappable callable.

::

    design      = plan.design(spec, catalog, choice)                      # fabricplan.design.resolve
    fabric_cost = plan.cost(spec, catalog, design, assumptions)           # fabricplan.cost.cost_design
    steps       = plan.performance(spec, catalog, design, levers, model)  # job_step_times
    outcome     = plan.outcome(spec, catalog, design, fabric_cost, steps, assumptions)  # join_outcome

``model`` is the efficiency model (by name, ``analytic`` by default, or an object; see
:mod:`fabricplan.perf.efficiency`): what share of the per-NIC bandwidth each collective gets on the
design. Replace any step with ``plan.replace(cost=my_cost)`` or choose the efficiency model with
``Plan(efficiency_model="ideal")``; ``decide`` and ``compare`` run whatever plan they are given.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from fabricplan.catalog import Catalog
from fabricplan.cost import Assumptions, FabricCost, cost_design
from fabricplan.design import FabricDesign, resolve
from fabricplan.perf.efficiency import EfficiencyModel
from fabricplan.perf.efficiency import efficiency_model as resolve_efficiency_model
from fabricplan.perf.step import StepResult, step_time
from fabricplan.plan.outcome import FabricOutcome, join_outcome
from fabricplan.spec import ClusterSpec, FabricChoice


@dataclass(frozen=True)
class Levers:
    """What-if adjustments applied on top of the spec and catalog (sensitivity analysis)."""

    efficiency_multiplier: float = 1.0  # scales compute speed (step_time compute_efficiency_multiplier)
    bandwidth_multiplier: float = 1.0   # scales the fabric's per-NIC bandwidth (RDMA ceiling or socket model)


def scaled_bandwidth(design: FabricDesign, multiplier: float) -> FabricDesign:
    """The design with its per-NIC bandwidth scaled by ``multiplier``: an RDMA profile's effective
    bandwidth, or the socket transport's modelled bandwidth (the bandwidth lever of what-ifs and
    the Monte Carlo). Placements are kept."""
    if multiplier == 1.0:
        return design
    network = design.network
    profile = network.profile.model_copy(update={
        "effective_bandwidth_gbytes_per_s": network.profile.effective_bandwidth_gbytes_per_s * multiplier})
    profile._socket_bandwidth_scale = network.profile._socket_bandwidth_scale * multiplier
    return replace(design, network=replace(network, profile=profile, _placements=network._placements))


DesignStep = Callable[[ClusterSpec, Catalog, FabricChoice], FabricDesign]
CostStep = Callable[[ClusterSpec, Catalog, FabricDesign, Assumptions], FabricCost]
PerformanceStep = Callable[[ClusterSpec, Catalog, FabricDesign, Levers, EfficiencyModel], list[StepResult]]
OutcomeStep = Callable[[ClusterSpec, Catalog, FabricDesign, FabricCost, list[StepResult], Assumptions],
                       FabricOutcome]


def job_step_times(spec: ClusterSpec, catalog: Catalog, design: FabricDesign, levers: Levers,
                   efficiency: EfficiencyModel) -> list[StepResult]:
    """Each job's step time on the design's network (the default performance step).

    The bandwidth lever scales the per-NIC bandwidth (:func:`scaled_bandwidth`). The efficiency
    lever scales compute speed (``step_time``'s ``compute_efficiency_multiplier``):
    per-operation compute times are divided by it; a flat achievable fraction is multiplied
    (capped at 1).
    """
    design = scaled_bandwidth(design, levers.bandwidth_multiplier)
    return [step_time(job, design.network, catalog=catalog, efficiency_model=efficiency,
                      compute_efficiency_multiplier=levers.efficiency_multiplier) for job in spec.jobs]


@dataclass(frozen=True)
class Plan:
    """The model chain with its steps (module docstring). Immutable; ``replace`` gives a variant."""

    design: DesignStep = resolve
    cost: CostStep = cost_design
    performance: PerformanceStep = job_step_times
    outcome: OutcomeStep = join_outcome
    efficiency_model: str | EfficiencyModel = "analytic"

    def replace(self, **steps: object) -> Plan:
        """A plan with some steps swapped, e.g. ``plan.replace(efficiency_model="ideal")``."""
        return replace(self, **steps)

    @property
    def efficiency_model_name(self) -> str:
        model = self.efficiency_model
        return model if isinstance(model, str) else getattr(model, "name", type(model).__name__)

    def run(self, spec: ClusterSpec, catalog: Catalog, choice: FabricChoice, assumptions: Assumptions,
            levers: Levers = Levers()) -> FabricOutcome:
        """Design, cost, performance and outcome of one fabric choice."""
        efficiency = resolve_efficiency_model(self.efficiency_model)
        design = self.design(spec, catalog, choice)
        fabric_cost = self.cost(spec, catalog, design, assumptions)
        steps = self.performance(spec, catalog, design, levers, efficiency)
        return self.outcome(spec, catalog, design, fabric_cost, steps, assumptions)


DEFAULT_PLAN = Plan()
