"""The model chain: design -> cost -> performance -> outcome, each step a named, swappable callable.

::

    design      = plan.design(spec, catalog, choice)                              # fabricplan.design.resolve
    fabric_cost = plan.cost(spec, catalog, design, assumptions, inputs)           # fabricplan.cost.cost_design
    steps       = plan.performance(spec, catalog, design, levers, model)          # job_step_times
    outcome     = plan.outcome(spec, catalog, design, fabric_cost, steps, assumptions, inputs)  # join_outcome

``inputs`` (:class:`fabricplan.catalog.inputs.Inputs`) are the ranged numbers the cost and outcome
steps read: at a point (floats) or as draws (numpy arrays). :meth:`Plan.evaluate` is the one route
from a spec to every number the decision uses: it runs the chain at the point for each fabric (with
the design search), then, with draws, the *same* steps on the chosen designs with drawn inputs (the
performance step on a small grid, :mod:`fabricplan.plan.drawn`), so a swapped step acts on the point
estimate and on the Monte Carlo alike.

``model`` is the efficiency model (by name, ``auto`` by default: the simulator within ``sim_auto_max_connections``, else ``analytic``, or an object; see
:mod:`fabricplan.perf.efficiency`): what share of the per-NIC bandwidth each collective gets on the
design. Replace any step with ``plan.replace(cost=my_cost)`` or choose the efficiency model with
``Plan(efficiency_model="ideal")``; ``decide`` and ``compare`` run whatever plan they are given.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from fabricplan.catalog import Catalog
from fabricplan.catalog.inputs import Draws, Inputs
from fabricplan.cost import Assumptions, FabricCost, cost_design
from fabricplan.design import FabricDesign, resolve
from fabricplan.perf.efficiency import EfficiencyModel
from fabricplan.perf.efficiency import efficiency_model as resolve_efficiency_model
from fabricplan.perf.step import StepResult, step_time
from fabricplan.plan.outcome import DesignSummary, FabricOutcome, join_outcome
from fabricplan.plan.scenario import Levers, Scenario
from fabricplan.spec import ClusterSpec, FabricChoice
from fabricplan.topology.sizing import size_key


def scaled_bandwidth(design: FabricDesign, multiplier: float) -> FabricDesign:
    """The design with its per-NIC bandwidth scaled by ``multiplier``: an RDMA profile's effective
    bandwidth, or the socket transport's modelled bandwidth (the bandwidth lever of what-ifs and
    the Monte Carlo)."""
    if multiplier == 1.0:
        return design
    network = design.network
    profile = network.profile.model_copy(update={
        "effective_bandwidth_gbytes_per_s": network.profile.effective_bandwidth_gbytes_per_s * multiplier})
    return replace(design, network=replace(network, profile=profile,
                                           socket_bandwidth_scale=network.socket_bandwidth_scale * multiplier))


DesignStep = Callable[[ClusterSpec, Catalog, FabricChoice], FabricDesign]
CostStep = Callable[[ClusterSpec, Catalog, FabricDesign, Assumptions, Inputs], FabricCost]
PerformanceStep = Callable[[ClusterSpec, Catalog, FabricDesign, Levers, EfficiencyModel], list[StepResult]]
OutcomeStep = Callable[[ClusterSpec, Catalog, FabricDesign, FabricCost, list[StepResult], Assumptions, Inputs],
                       FabricOutcome]


def job_step_times(spec: ClusterSpec, catalog: Catalog, design: FabricDesign, levers: Levers,
                   efficiency: EfficiencyModel) -> list[StepResult]:
    """Each job's step time on the design's network (the default performance step): a training job's
    step (``perf/step.py``), a serving job's decode iteration with its serving metrics
    (``perf/serving.py``).

    The bandwidth lever scales the per-NIC bandwidth (:func:`scaled_bandwidth`). The efficiency
    lever scales compute speed (``step_time``'s ``compute_efficiency_multiplier``):
    per-operation compute times are divided by it; a flat achievable fraction is multiplied
    (capped at 1).
    """
    from fabricplan.perf.serving import serving_time

    design = scaled_bandwidth(design, levers.bandwidth_multiplier)
    return [(serving_time if job.kind == "serving" else step_time)(
                job, design.network, catalog=catalog, efficiency_model=efficiency,
                compute_efficiency_multiplier=levers.efficiency_multiplier) for job in spec.jobs]


def cached_performance(step: PerformanceStep) -> PerformanceStep:
    """``step`` with its results remembered for the lifetime of the returned callable (one
    ``compare``): a what-if that changes only prices, energy or the team's maturity, and the
    Monte Carlo's default grid point, run the same step times again. The key is everything the
    performance step reads: the jobs and cluster of the spec, the network as built (profile with
    its overrides and bandwidth scale, switch, GPU, sized fabric, layout), the levers and the
    efficiency model."""
    cache: dict[tuple, list[StepResult]] = {}
    texts: dict[int, tuple[object, str]] = {}  # the JSON of each spec and profile asked about, kept with it

    def text(model, **options) -> str:
        """``model.model_dump_json(**options)``, once per object (pydantic models are not changed in place
        here; the object is kept with its text so its id cannot be reused)."""
        hit = texts.get(id(model))
        if hit is None or hit[0] is not model:
            hit = texts[id(model)] = (model, model.model_dump_json(**options))
        return hit[1]

    def run(spec: ClusterSpec, catalog: Catalog, design: FabricDesign, levers: Levers,
            efficiency: EfficiencyModel) -> list[StepResult]:
        network = design.network
        gpu = network.gpu
        key = (catalog.revision, text(spec, include={"cluster", "jobs"}), text(network.profile),
               network.socket_bandwidth_scale, network.switch.id, getattr(gpu, "id", None),
               gpu.model_dump_json() if not isinstance(getattr(gpu, "id", None), str) or gpu.id == "custom-gpu"
               else "", size_key(network.size), network.layout, levers,
               # registered models are built anew per run: the same name and class is the same model
               (type(efficiency), getattr(efficiency, "name", None) or id(efficiency)))
        hit = cache.get(key)
        if hit is None:
            hit = cache[key] = step(spec, catalog, design, levers, efficiency)
        return hit

    return run


@dataclass(frozen=True)
class Run:
    """One fabric through the chain: the design option's spec, the design, its jobs' step results and
    the outcome (floats at a point, arrays when drawn)."""

    spec: ClusterSpec
    design: FabricDesign
    assumptions: Assumptions
    levers: Levers
    steps: list[StepResult]
    outcome: FabricOutcome
    #: The performance step this run used when it differs from the plan's (the fleet's interference)
    performance: PerformanceStep | None = None


@dataclass(frozen=True)
class Evaluation:
    """Every number the decision uses, from one run of the chain (:meth:`Plan.evaluate`)."""

    runs: dict[str, Run]                       # per fabric, the chosen design at the point
    drawn: dict[str, FabricOutcome] = field(default_factory=dict)  # per fabric, the outcome under the draws
    draws: Draws | None = None

    @property
    def outcomes(self) -> dict[str, FabricOutcome]:
        """Per fabric, the point outcome of its chosen design."""
        return {fabric: run.outcome for fabric, run in self.runs.items()}

    @property
    def metric_draws(self) -> dict:
        """Per fabric, the cost per useful GPU-hour of each draw (empty without draws)."""
        return {fabric: outcome.cost_per_useful_gpu_hour_usd for fabric, outcome in self.drawn.items()}


@dataclass(frozen=True)
class Plan:
    """The model chain with its steps (module docstring). Immutable; ``replace`` gives a variant."""

    design: DesignStep = resolve
    cost: CostStep = cost_design
    performance: PerformanceStep = job_step_times
    outcome: OutcomeStep = join_outcome
    efficiency_model: str | EfficiencyModel = "auto"  # simulator within a budget, else analytic
    search_designs: bool = True  # try every switch model x style the spec leaves open (design.candidates)
    fleet: bool = True  # jobs that share the cluster: their interference from the fleet (plan.fleet)

    def replace(self, **steps: object) -> Plan:
        """A plan with some steps swapped, e.g. ``plan.replace(efficiency_model="ideal")``."""
        return replace(self, **steps)

    @property
    def efficiency_model_name(self) -> str:
        model = self.efficiency_model
        return model if isinstance(model, str) else getattr(model, "name", type(model).__name__)

    def efficiency(self) -> EfficiencyModel:
        """The efficiency model the performance step is given (resolved from its name)."""
        return resolve_efficiency_model(self.efficiency_model)

    def run_chain(self, spec: ClusterSpec, catalog: Catalog, design: FabricDesign, assumptions: Assumptions,
                  levers: Levers = Levers(), inputs: Inputs | None = None) -> Run:
        """Cost, performance and outcome of one design at a point (``inputs`` None: the price point)."""
        from fabricplan.plan.memory_fit import fit_pipeline, relayout

        inputs = inputs or Inputs.point(assumptions.price_point)
        fabric_cost = self.cost(spec, catalog, design, assumptions, inputs)
        efficiency = self.efficiency()

        def run_steps(at: ClusterSpec) -> list[StepResult]:
            return self.performance(at, catalog, design, levers, efficiency)

        # memory gates the comparison: a job no recompute setting fits gets more pipeline stages or is
        # left out; a job over the GPU's memory at its own setting is re-laid with heavier recompute
        spec, steps, staged = fit_pipeline(spec, run_steps)
        spec, steps, changes = relayout(spec, steps, run_steps)
        outcome = self.outcome(spec, catalog, design, fabric_cost, steps, assumptions, inputs)
        notes = dict(staged)
        for change in changes:
            notes[change.job] = f"{notes[change.job]}; then {change.note}" if change.job in notes else change.note
        if notes:
            outcome = outcome.model_copy(update={
                "jobs": [job.model_copy(update={"memory_note": notes[job.job]}) if job.job in notes else job
                         for job in outcome.jobs],
                "jobs_left_out": {job: note for job, note in staged.items() if note.startswith("left out")}})
        return Run(spec=spec, design=design, assumptions=assumptions, levers=levers, steps=steps, outcome=outcome)

    def run_drawn(self, run: Run, catalog: Catalog, draws: Draws, light: bool = False) -> FabricOutcome:
        """The outcome of a point run's design under ``draws``: the same cost and outcome steps with
        drawn inputs, the performance step on a grid (:func:`fabricplan.plan.drawn.drawn_steps`)."""
        from fabricplan.plan.drawn import drawn_steps

        inputs = Inputs.drawn(draws, run.assumptions.price_point)
        efficiency = self.efficiency()
        fabric_cost = self.cost(run.spec, catalog, run.design, run.assumptions, inputs)

        step = run.performance or self.performance

        def performance(at: Catalog, levers: Levers) -> list[StepResult]:
            return step(run.spec, at, run.design, levers, efficiency)

        steps = drawn_steps(catalog, run.design, draws, run.steps, performance, run.levers, light)
        return self.outcome(run.spec, catalog, run.design, fabric_cost, steps, run.assumptions, inputs)

    def run_design(self, spec: ClusterSpec, catalog: Catalog, choice: FabricChoice, assumptions: Assumptions,
                   levers: Levers = Levers()) -> FabricOutcome:
        """Design, cost, performance and outcome of one fabric choice as the spec builds it."""
        return self.run_chain(spec, catalog, self.design(spec, catalog, choice), assumptions, levers).outcome

    def run(self, spec: ClusterSpec, catalog: Catalog, choice: FabricChoice, assumptions: Assumptions,
            levers: Levers = Levers()) -> FabricOutcome:
        """Design, cost, performance and outcome of one fabric choice: with ``search_designs``, of
        the cheapest per useful GPU-hour of the designs the spec leaves open (:func:`choose_design`)."""
        return self.run_choice(spec, catalog, choice, assumptions, levers).outcome

    def run_choice(self, spec: ClusterSpec, catalog: Catalog, choice: FabricChoice, assumptions: Assumptions,
                   levers: Levers = Levers(), fleet: bool = True) -> Run:
        """:meth:`run` with the design and step results it used (``fleet`` False: without the fleet's
        interference, the scale curve's cheaper runs)."""
        if not self.search_designs:
            run = self.run_chain(spec, catalog, self.design(spec, catalog, choice), assumptions, levers)
        else:
            run = choose_design(self, spec, catalog, choice, assumptions, levers)
        return self.beside_the_fleet(run, catalog, assumptions, levers) if fleet else run

    def beside_the_fleet(self, run: Run, catalog: Catalog, assumptions: Assumptions, levers: Levers) -> Run:
        """``run`` again with its jobs' interference from the fleet on its design
        (:mod:`fabricplan.plan.fleet`; unchanged when no job shares the fabric or ``fleet`` is off)."""
        from fabricplan.plan.fleet import interference, with_interference

        if not self.fleet:
            return run
        factors, note = interference(run.spec, catalog, run.design)
        if not any(f > 1.0 for f in factors.values()):
            return run
        step = with_interference(self.performance, factors)
        again = replace(self, performance=step).run_chain(run.spec, catalog, run.design, assumptions, levers)
        outcome = again.outcome.model_copy(update={"design": run.outcome.design,
                                                   "designs_considered": run.outcome.designs_considered,
                                                   "fleet_note": note})
        return replace(again, outcome=outcome, performance=step)

    def evaluate(self, spec: ClusterSpec, catalog: Catalog, scenario: Scenario = Scenario(),
                 draws: int | Draws = 0, seed: int = 0, fabrics: list[str] | None = None,
                 light: bool = False) -> Evaluation:
        """Every fabric of the spec (or the named subset) through the chain under ``scenario``: the
        point outcome of its chosen design, and with ``draws`` (a count, or a :class:`Draws` shared
        with other evaluations: common random numbers) the outcome under the draws (``light``: the
        scale curve's cheaper performance grid, :mod:`fabricplan.plan.drawn`, and no fleet: a fleet run
        per curve point would take minutes; the spec's own scale, its Monte Carlo and its what-ifs
        include the fleet's interference)."""
        assumptions = scenario.assumptions(spec, catalog)
        runs = {}
        for choice in spec.fabric_choices():
            if fabrics is not None and choice.profile not in fabrics:
                continue
            case, levers = scenario.fabric_case(spec, catalog, choice.profile, assumptions)
            runs[choice.profile] = self.run_choice(spec, catalog, choice, case, levers, fleet=not light)
        if isinstance(draws, int):
            draws = Draws(n=draws, seed=seed) if draws > 0 else None
        if draws is None:
            return Evaluation(runs=runs)
        drawn = {fabric: self.run_drawn(run, catalog, draws, light) for fabric, run in runs.items()}
        return Evaluation(runs=runs, drawn=drawn, draws=draws)


def _summary(option, outcome: FabricOutcome | None = None, note: str = "") -> DesignSummary:
    reused = getattr(option.choice, "reuse_estate", None) is not None
    if reused:
        note = f"the estate's owned switches at {option.spec.cluster.nic_speed_gbps}G; {note}"
    if outcome is None:
        return DesignSummary(switch=option.switch, style=option.style, note=note, reused=reused)
    size = outcome.cost.topology
    return DesignSummary(switch=option.switch, style=option.style, radix=size.radix, tiers=size.tiers,
                         switches=size.total_switches,
                         switches_by_tier={k: v for k, v in size.switches_by_tier.items() if v},
                         network_capex_usd=outcome.cost.network_capex_usd,
                         cost_per_useful_gpu_hour_usd=outcome.cost_per_useful_gpu_hour_usd, note=note, reused=reused)


def choose_design(plan: Plan, spec: ClusterSpec, catalog: Catalog, choice: FabricChoice, assumptions: Assumptions,
                  levers: Levers = Levers()) -> Run:
    """Run every design the spec leaves open for ``choice`` (:func:`fabricplan.design.candidates.design_options`)
    and keep the one with the lowest cost per useful GPU-hour (fewer switches on a tie), with the
    list of designs considered and why each lost. A design that cannot be built (the cluster does
    not fit, no matching optic) is listed with the reason. If none can be built, the spec's own
    design's error is raised."""
    from fabricplan.design.candidates import design_options
    from fabricplan.errors import FabricplanError

    options = design_options(spec, catalog, choice)
    if len(options) <= 1:
        return plan.run_chain(spec, catalog, plan.design(spec, catalog, choice), assumptions, levers)
    results: list[tuple[object, Run | None, str]] = []
    first_error: FabricplanError | None = None
    for option in options:
        if option.problem:
            results.append((option, None, f"not buildable: {option.problem}"))
            continue
        try:
            run = plan.run_chain(option.spec, catalog, plan.design(option.spec, catalog, option.choice),
                                 assumptions, levers)
        except FabricplanError as exc:
            first_error = first_error or exc
            results.append((option, None, f"not buildable: {exc.message if hasattr(exc, 'message') else exc}"))
            continue
        results.append((option, run, ""))
    built = [(o, r) for o, r, _ in results if r is not None]
    if not built:
        raise first_error if first_error is not None else ValueError("no design option")
    best_option, best_run = min(built, key=lambda pair: (pair[1].outcome.cost_per_useful_gpu_hour_usd,
                                                         pair[1].outcome.cost.topology.total_switches))
    best = best_run.outcome
    summaries = []
    for option, run, note in results:
        if run is None:
            summaries.append(_summary(option, note=note))
            continue
        outcome = run.outcome
        if option is best_option:
            note = "chosen: lowest cost per useful GPU-hour"
        else:
            gap = outcome.cost_per_useful_gpu_hour_usd / best.cost_per_useful_gpu_hour_usd - 1
            best_capex = best.cost.network_capex_usd
            capex = (f"network capex {100 * (outcome.cost.network_capex_usd / best_capex - 1):+.1f} %"
                     if best_capex else f"network capex ${outcome.cost.network_capex_usd:,.0f} vs none")
            note = (f"{100 * gap:+.1f} % cost per useful GPU-hour ({capex}, "
                    f"{outcome.cost.topology.total_switches} vs {best.cost.topology.total_switches} switches)")
        summaries.append(_summary(option, outcome, note).model_copy(update={"chosen": option is best_option}))
    chosen = next(s for s in summaries if s.chosen)
    return replace(best_run, outcome=best.model_copy(update={"design": chosen, "designs_considered": summaries}))


DEFAULT_PLAN = Plan()


def fabric_outcomes(spec: ClusterSpec, catalog: Catalog, scenario: Scenario = Scenario(),
                    fabrics: list[str] | None = None, plan: Plan = DEFAULT_PLAN) -> dict[str, FabricOutcome]:
    """Point outcomes for each fabric of the spec (or the named subset), by the model chain ``plan``."""
    return plan.evaluate(spec, catalog, scenario, fabrics=fabrics).outcomes


def chosen_design(spec: ClusterSpec, catalog: Catalog, choice: FabricChoice, plan: Plan = DEFAULT_PLAN,
                  assumptions: Assumptions | None = None) -> tuple[ClusterSpec, FabricChoice]:
    """The (spec, fabric choice) of the design :func:`choose_design` keeps for ``choice`` (what
    ``compare`` costs and runs), so ``cost``, ``topology``, ``step`` and ``health`` show the same
    design. A fabric whose spec fixes its switch and style has one option: its own."""
    from fabricplan.cost import resolve_assumptions
    from fabricplan.design.candidates import design_options

    options = [o for o in design_options(spec, catalog, choice) if not o.problem]
    if len(options) <= 1:
        return spec, choice
    assumptions = assumptions or resolve_assumptions(spec, catalog)
    design = choose_design(plan, spec, catalog, choice, assumptions).outcome.design
    for option in options:
        if design is not None and (option.switch, option.style) == (design.switch, design.style):
            return option.spec, option.choice
    return spec, choice


def chosen_designs(spec: ClusterSpec, catalog: Catalog, plan: Plan = DEFAULT_PLAN) -> dict[str, tuple[ClusterSpec, FabricChoice]]:
    """Per fabric of the spec, :func:`chosen_design`. Errors name the spec's file."""
    from fabricplan.cost import resolve_assumptions
    from fabricplan.spec.load import located

    with located(spec):
        assumptions = resolve_assumptions(spec, catalog)
        return {choice.profile: chosen_design(spec, catalog, choice, plan, assumptions)
                for choice in spec.fabric_choices()}
