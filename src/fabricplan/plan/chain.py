"""The model chain: design -> cost -> performance -> outcome, each step a named, swappable callable.

::

    design      = plan.design(spec, catalog, choice)                      # fabricplan.design.resolve
    fabric_cost = plan.cost(spec, catalog, design, assumptions)           # fabricplan.cost.cost_design
    steps       = plan.performance(spec, catalog, design, levers, model)  # job_step_times
    outcome     = plan.outcome(spec, catalog, design, fabric_cost, steps, assumptions)  # join_outcome

``model`` is the efficiency model (by name, ``auto`` by default: the simulator within ``sim_auto_max_connections``, else ``analytic``, or an object; see
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
from fabricplan.plan.outcome import DesignSummary, FabricOutcome, join_outcome
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


def cached_performance(step: PerformanceStep) -> PerformanceStep:
    """``step`` with its results remembered for the lifetime of the returned callable (one
    ``compare``): a what-if that changes only prices, energy or the team's maturity, and the
    Monte Carlo's default grid point, run the same step times again. The key is everything the
    performance step reads: the jobs and cluster of the spec, the network as built (profile with
    its overrides and bandwidth scale, switch, GPU, sized fabric, layout), the levers and the
    efficiency model."""
    cache: dict[tuple, tuple[object, object, list[StepResult]]] = {}

    def run(spec: ClusterSpec, catalog: Catalog, design: FabricDesign, levers: Levers,
            efficiency: EfficiencyModel) -> list[StepResult]:
        network = design.network
        gpu = network.gpu
        key = (id(catalog), spec.model_dump_json(include={"cluster", "jobs"}), network.profile.model_dump_json(),
               network.profile._socket_bandwidth_scale, network.switch.id, getattr(gpu, "id", None),
               gpu.model_dump_json() if not isinstance(getattr(gpu, "id", None), str) or gpu.id == "custom-gpu"
               else "", id(network.size), network.layout, levers,
               # registered models are built anew per run: the same name and class is the same model
               (type(efficiency), getattr(efficiency, "name", None) or id(efficiency)))
        hit = cache.get(key)
        if hit is not None and hit[0] is network.size and hit[1] is catalog:
            return hit[2]
        result = step(spec, catalog, design, levers, efficiency)
        # The size and the catalog are kept alive with the entry, so their ids stay unique: a catalog
        # variant of the Monte Carlo (a parameter at its low or high) freed after use could otherwise
        # hand its id to the next variant and read the wrong step times.
        cache[key] = (network.size, catalog, result)
        return result

    return run


@dataclass(frozen=True)
class Plan:
    """The model chain with its steps (module docstring). Immutable; ``replace`` gives a variant."""

    design: DesignStep = resolve
    cost: CostStep = cost_design
    performance: PerformanceStep = job_step_times
    outcome: OutcomeStep = join_outcome
    efficiency_model: str | EfficiencyModel = "auto"  # simulator within a budget, else analytic
    search_designs: bool = True  # try every switch model x style the spec leaves open (design.candidates)

    def replace(self, **steps: object) -> Plan:
        """A plan with some steps swapped, e.g. ``plan.replace(efficiency_model="ideal")``."""
        return replace(self, **steps)

    @property
    def efficiency_model_name(self) -> str:
        model = self.efficiency_model
        return model if isinstance(model, str) else getattr(model, "name", type(model).__name__)

    def run_design(self, spec: ClusterSpec, catalog: Catalog, choice: FabricChoice, assumptions: Assumptions,
                   levers: Levers = Levers()) -> FabricOutcome:
        """Design, cost, performance and outcome of one fabric choice as the spec builds it."""
        efficiency = resolve_efficiency_model(self.efficiency_model)
        design = self.design(spec, catalog, choice)
        fabric_cost = self.cost(spec, catalog, design, assumptions)
        steps = self.performance(spec, catalog, design, levers, efficiency)
        return self.outcome(spec, catalog, design, fabric_cost, steps, assumptions)

    def run(self, spec: ClusterSpec, catalog: Catalog, choice: FabricChoice, assumptions: Assumptions,
            levers: Levers = Levers()) -> FabricOutcome:
        """Design, cost, performance and outcome of one fabric choice: with ``search_designs``, of
        the cheapest per useful GPU-hour of the designs the spec leaves open (:func:`choose_design`)."""
        if not self.search_designs:
            return self.run_design(spec, catalog, choice, assumptions, levers)
        return choose_design(self, spec, catalog, choice, assumptions, levers)


def _summary(option, outcome: FabricOutcome | None = None, note: str = "") -> DesignSummary:
    if outcome is None:
        return DesignSummary(switch=option.switch, style=option.style, note=note)
    size = outcome.cost.topology
    return DesignSummary(switch=option.switch, style=option.style, radix=size.radix, tiers=size.tiers,
                         switches=size.total_switches,
                         switches_by_tier={k: v for k, v in size.switches_by_tier.items() if v},
                         network_capex_usd=outcome.cost.network_capex_usd,
                         cost_per_useful_gpu_hour_usd=outcome.cost_per_useful_gpu_hour_usd, note=note)


def choose_design(plan: Plan, spec: ClusterSpec, catalog: Catalog, choice: FabricChoice, assumptions: Assumptions,
                  levers: Levers = Levers()) -> FabricOutcome:
    """Run every design the spec leaves open for ``choice`` (:func:`fabricplan.design.candidates.design_options`)
    and keep the one with the lowest cost per useful GPU-hour (fewer switches on a tie), with the
    list of designs considered and why each lost. A design that cannot be built (the cluster does
    not fit, no matching optic) is listed with the reason. If none can be built, the spec's own
    design's error is raised."""
    from fabricplan.design.candidates import design_options
    from fabricplan.errors import FabricplanError

    options = design_options(spec, catalog, choice)
    if len(options) <= 1:
        return plan.run_design(spec, catalog, choice, assumptions, levers)
    results: list[tuple[object, FabricOutcome | None, str]] = []
    first_error: FabricplanError | None = None
    for option in options:
        if option.problem:
            results.append((option, None, f"not buildable: {option.problem}"))
            continue
        try:
            outcome = plan.run_design(option.spec, catalog, option.choice, assumptions, levers)
        except FabricplanError as exc:
            first_error = first_error or exc
            results.append((option, None, f"not buildable: {exc.message if hasattr(exc, 'message') else exc}"))
            continue
        results.append((option, outcome, ""))
    built = [(o, r) for o, r, _ in results if r is not None]
    if not built:
        raise first_error if first_error is not None else ValueError("no design option")
    best_option, best = min(built, key=lambda pair: (pair[1].cost_per_useful_gpu_hour_usd,
                                                     pair[1].cost.topology.total_switches))
    summaries = []
    for option, outcome, note in results:
        if outcome is None:
            summaries.append(_summary(option, note=note))
            continue
        if option is best_option:
            note = "chosen: lowest cost per useful GPU-hour"
        else:
            gap = outcome.cost_per_useful_gpu_hour_usd / best.cost_per_useful_gpu_hour_usd - 1
            capex = outcome.cost.network_capex_usd / best.cost.network_capex_usd - 1
            note = (f"{100 * gap:+.1f} % cost per useful GPU-hour (network capex {100 * capex:+.1f} %, "
                    f"{outcome.cost.topology.total_switches} vs {best.cost.topology.total_switches} switches)")
        summaries.append(_summary(option, outcome, note).model_copy(update={"chosen": option is best_option}))
    chosen = next(s for s in summaries if s.chosen)
    return best.model_copy(update={"design": chosen, "designs_considered": summaries})


DEFAULT_PLAN = Plan()


def chosen_designs(spec: ClusterSpec, catalog: Catalog, plan: Plan = DEFAULT_PLAN) -> dict[str, tuple[ClusterSpec, FabricChoice]]:
    """Per fabric of the spec, the (spec, fabric choice) of the design :func:`choose_design` keeps
    (what ``compare`` costs and runs), so ``cost`` and ``topology`` show the same design. A fabric
    whose spec fixes its switch and style has one option: its own. Errors name the spec's file."""
    from fabricplan.cost import resolve_assumptions
    from fabricplan.design.candidates import design_options
    from fabricplan.spec.load import located

    chosen = {}
    with located(spec):
        assumptions = resolve_assumptions(spec, catalog)
        for choice in spec.fabric_choices():
            options = [o for o in design_options(spec, catalog, choice) if not o.problem]
            picked = (spec, choice)
            if len(options) > 1:
                design = choose_design(plan, spec, catalog, choice, assumptions).design
                for option in options:
                    if design is not None and (option.switch, option.style) == (design.switch, design.style):
                        picked = (option.spec, option.choice)
                        break
            chosen[choice.profile] = picked
    return chosen
