"""What would change the answer: for the numbers' leader, the smallest single change of an
assumption that flips it, its size and the regret if it happens.

A registry (``FLIP_CANDIDATES``) of factories, each giving the candidates of one kind of assumption
for a comparison: how to apply it at a value (a spec, a catalog and a :class:`Scenario`, all run
through the chain by :func:`fabricplan.decide.evaluate.evaluate`) and the range to search each way.
A new assumption (an optics price basis, SHARP as a design option) is one more factory in the
registry. Every number comes from the chain; the search settings are catalog parameters
(``flip_search_*`` in decision.yaml).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from fabricplan.catalog import Catalog
from fabricplan.decide.evaluate import evaluate
from fabricplan.decide.models import Flip, WhatWouldChange
from fabricplan.errors import FabricplanError
from fabricplan.plan import DEFAULT_PLAN, Levers, Plan, Scenario
from fabricplan.plan.scale import full_mix_spec, layout_unit
from fabricplan.spec import ClusterSpec

Case = tuple[ClusterSpec, Catalog, Scenario]


@dataclass(frozen=True)
class FlipContext:
    spec: ClusterSpec
    catalog: Catalog
    leader: str
    fabrics: list[str]

    def setting(self, name: str) -> float:
        return self.catalog.parameter(name).value.at("default")

    def rivals(self) -> list[str]:
        return [f for f in self.fabrics if f != self.leader]


@dataclass(frozen=True)
class FlipCandidate:
    """One assumption: its name, how to apply it at a value, its value now and the ends to search."""

    name: str
    apply: Callable[[float], Case]
    describe: Callable[[float], str]
    ends: tuple[float, ...]  # the search range's end in each direction (a toggle: its other state)
    unit: Literal["multiplier", "gpus", "toggle"] = "multiplier"
    base: float = 1.0
    fabric: str | None = None
    extra: dict = field(default_factory=dict)


def _per_fabric(ctx: FlipContext, name: str, factor: float, make: Callable[[str, float], Case],
                words: str, leader_up: bool = True) -> list[FlipCandidate]:
    """The leader's multiplier moved against it (up when ``leader_up``), each rival's in its favour."""
    out = []
    for fabric in ctx.fabrics:
        against = (fabric == ctx.leader) == leader_up
        out.append(FlipCandidate(
            name=f"{fabric} {name}", fabric=fabric, apply=lambda m, f=fabric: make(f, m),
            describe=lambda m, f=fabric: f"{f} {words} x{m:.3g}", ends=(factor if against else 1 / factor,)))
    return out


def network_price(ctx: FlipContext) -> list[FlipCandidate]:
    """Each fabric's network hardware prices (switches, NICs, optics, cables) by a factor."""
    return _per_fabric(ctx, "network price", ctx.setting("flip_search_cost_factor"),
                       lambda f, m: (ctx.spec, ctx.catalog, Scenario(fabric_price_multipliers=((f, m),))),
                       "network prices")


def staffing(ctx: FlipContext) -> list[FlipCandidate]:
    """Each fabric's operations staff by a factor (the staffing multiplier of the cost model)."""
    return _per_fabric(ctx, "staffing", ctx.setting("flip_search_cost_factor"),
                       lambda f, m: (ctx.spec, ctx.catalog, Scenario(fabric_staff_multipliers=((f, m),))),
                       "operations staff")


def failure_rate(ctx: FlipContext) -> list[FlipCandidate]:
    """Each fabric's network failure multiplier (catalog ``fabrics.<id>.costs.network_failure_multiplier``)."""
    def make(fabric: str, m: float) -> Case:
        costs = ctx.catalog.fabric(fabric).costs
        if costs is None:
            return ctx.spec, ctx.catalog, Scenario()
        value = costs.network_failure_multiplier.default * m
        path = f"fabrics.{fabric}.costs.network_failure_multiplier"
        return ctx.spec, ctx.catalog.with_values({path: value}), Scenario()
    usable = [c for c in _per_fabric(ctx, "failure rate", ctx.setting("flip_search_failure_factor"), make,
                                     "network failure rate") if ctx.catalog.fabric(c.fabric).costs is not None]
    return usable


def bandwidth(ctx: FlipContext) -> list[FlipCandidate]:
    """Each fabric's per-NIC bandwidth by a factor (the leader's down, the rivals' up)."""
    return _per_fabric(ctx, "bandwidth", ctx.setting("flip_search_performance_factor"),
                       lambda f, m: (ctx.spec, ctx.catalog, Scenario(fabric_bandwidth_multipliers=((f, m),))),
                       "per-NIC bandwidth", leader_up=False)


def gpu_efficiency(ctx: FlipContext) -> list[FlipCandidate]:
    """The GPUs' compute efficiency (every fabric alike) by a factor, each way."""
    factor = ctx.setting("flip_search_performance_factor")
    return [FlipCandidate(name="GPU compute efficiency",
                          apply=lambda m: (ctx.spec, ctx.catalog, Scenario(levers=Levers(efficiency_multiplier=m))),
                          describe=lambda m: f"GPU compute efficiency x{m:.3g}", ends=(1 / factor, factor))]


def scheduler(ctx: FlipContext) -> list[FlipCandidate]:
    """Topology-aware scheduling switched to the other state (job placement in the step-time model)."""
    now = ctx.spec.operations.topology_aware_scheduling

    def apply(value: float) -> Case:
        operations = ctx.spec.operations.model_copy(update={"topology_aware_scheduling": bool(value)})
        return ctx.spec.model_copy(update={"operations": operations}), ctx.catalog, Scenario()
    return [FlipCandidate(name="topology-aware scheduler", unit="toggle", base=float(now), apply=apply,
                          describe=lambda v: f"topology-aware scheduler {'on' if v else 'off'}",
                          ends=(float(not now),))]


def optics_basis(ctx: FlipContext) -> list[FlipCandidate]:
    """Each fabric's optics price basis switched to the other one (vendor-qualified or third-party
    optics and cables, catalog ``optics.yaml``): a toggle, 1 = vendor, 0 = third party."""
    from fabricplan.plan.scenario import optics_bases

    out = []
    for fabric, now in optics_bases(ctx.spec, ctx.catalog).items():
        if fabric not in ctx.fabrics:
            continue

        def apply(value: float, f: str = fabric) -> Case:
            basis = "vendor" if value else "third_party"
            return ctx.spec, ctx.catalog, Scenario(fabric_optics_basis=((f, basis),))
        out.append(FlipCandidate(name=f"{fabric} optics basis", fabric=fabric, unit="toggle",
                                 base=float(now == "vendor"), apply=apply,
                                 describe=lambda v, f=fabric: f"{f} optics {'vendor-qualified' if v else 'third-party'}",
                                 ends=(float(now != "vendor"),)))
    return out


def design_options(ctx: FlipContext) -> list[FlipCandidate]:
    """Each fabric option of the catalog (SHARP, adaptive routing) switched from how the spec builds
    it (:mod:`fabricplan.decide.options`): a toggle, 1 = on, 0 = off."""
    from fabricplan.decide.options import with_option

    out = []
    for choice in ctx.spec.fabric_choices():
        profile = ctx.catalog.fabric(choice.profile)
        for name in profile.options:
            now = bool(profile.option_on(name, choice.options().get(name)))

            def apply(value: float, f: str = choice.profile, option: str = name) -> Case:
                return with_option(ctx.spec, f, option, bool(value)), ctx.catalog, Scenario()
            words = name.replace("_", " ")
            out.append(FlipCandidate(name=f"{choice.profile} {words}", fabric=choice.profile, unit="toggle",
                                     base=float(now), apply=apply, ends=(float(not now),),
                                     describe=lambda v, f=choice.profile, w=words: f"{f} {w} {'on' if v else 'off'}"))
    return out


def gpu_count(ctx: FlipContext) -> list[FlipCandidate]:
    """The cluster's GPU count (the job mix weak-scaled, :func:`fabricplan.plan.scale.full_mix_spec`)."""
    def apply(gpus: float) -> Case:
        return full_mix_spec(ctx.spec, int(gpus), ctx.catalog), ctx.catalog, Scenario()
    return [FlipCandidate(name="GPU count", unit="gpus", base=float(ctx.spec.cluster.gpus), apply=apply,
                          describe=lambda g: f"{int(g):,} GPUs", ends=())]


#: The assumptions searched, one factory each.
FLIP_CANDIDATES: tuple[Callable[[FlipContext], list[FlipCandidate]], ...] = (
    network_price, optics_basis, design_options, gpu_count, scheduler, staffing, failure_rate, bandwidth,
    gpu_efficiency,
)


Result = tuple[str, dict[str, float]]  # the leader and every fabric's cost per useful GPU-hour


def _leader_at(candidate: FlipCandidate, value: float, plan: Plan) -> Result | None:
    """The numbers' leader (cheapest eligible per useful GPU-hour at the point) with the candidate at
    ``value``; None where the case cannot be built or no fabric meets the constraints."""
    spec, catalog, scenario = candidate.apply(value)
    if spec is None:
        return None
    try:
        decision = evaluate(spec, catalog, scenario, plan)
    except FabricplanError:
        return None
    if not decision.recommendation.feasible:
        return None
    return (decision.recommendation.recommended,
            {f: o.cost_per_useful_gpu_hour_usd for f, o in decision.outcomes.items()})


def _regret(result: Result, leader: str) -> tuple[float, float]:
    """(dollars, relative) the ``leader`` costs per useful GPU-hour over the result's leader."""
    new, metrics = result
    if leader not in metrics:
        return math.inf, math.inf
    extra = metrics[leader] - metrics[new]
    return extra, extra / metrics[new]


def _flip(candidate: FlipCandidate, value: float, found: Result, limit: float, at_limit: Result,
          leader: str) -> Flip:
    base = candidate.base
    size = 1.0 if candidate.unit == "toggle" else abs(value / base - 1)
    usd, relative = _regret(found, leader)
    return Flip(candidate=candidate.name, fabric=candidate.fabric, unit=candidate.unit, base_value=base,
                value=value, size=size, change=candidate.describe(value), new_leader=found[0],
                regret_usd=max(usd, 0.0), regret=max(relative, 0.0),
                regret_at_limit=max(_regret(at_limit, leader)[1], 0.0), limit_value=limit)


def _search_multiplier(candidate: FlipCandidate, end: float, leader: str, plan: Plan, tolerance: float) -> Flip | None:
    """Bisection (in log space) between the value now and ``end`` for the smallest change that flips."""
    at_end = _leader_at(candidate, end, plan)
    if at_end is None or at_end[0] == leader:
        return None
    low, high, found = 0.0, math.log(end), at_end
    while abs(math.exp(high - low) - 1) > tolerance:
        middle = (low + high) / 2
        result = _leader_at(candidate, math.exp(middle), plan)
        if result is not None and result[0] != leader:
            high, found = middle, result
        else:
            low = middle
    return _flip(candidate, math.exp(high), found, end, at_end, leader)


def _search_toggle(candidate: FlipCandidate, leader: str, plan: Plan) -> Flip | None:
    other = candidate.ends[0]
    result = _leader_at(candidate, other, plan)
    if result is None or result[0] == leader:
        return None
    return _flip(candidate, other, result, other, result, leader)


def _bisect_gpus(candidate: FlipCandidate, steady: int, flipped: int, found: Result, unit: int, leader: str,
                 plan: Plan) -> tuple[int, Result]:
    """The flipping size nearest ``steady`` between it (leader unchanged) and ``flipped``, in whole layouts."""
    a, b = steady // unit, flipped // unit
    while abs(b - a) > 1:
        middle = (a + b) // 2
        result = _leader_at(candidate, middle * unit, plan)
        if result is None:  # the mix does not lay out here: try the sizes next to it
            result = next((r for shift in (1, -1, 2, -2) if min(a, b) < middle + shift < max(a, b)
                           and (r := _leader_at(candidate, (middle + shift) * unit, plan)) is not None), None)
            if result is None:
                break
        if result[0] != leader:
            b, found = middle, result
        else:
            a = middle
    return b * unit, found


def _search_gpus(candidate: FlipCandidate, leader: str, plan: Plan, ctx: FlipContext) -> list[Flip]:
    """The nearest GPU counts above and below the spec's where the leader changes: the scale grid
    first, then bisection in whole job-mix layouts."""
    from fabricplan.decide.whatif import scale_grid

    gpus = ctx.spec.cluster.gpus
    grid = scale_grid(ctx.spec, ctx.catalog)
    unit = layout_unit(ctx.spec)
    flips = []
    for side in (sorted(g for g in grid if g > gpus), sorted((g for g in grid if g < gpus), reverse=True)):
        steady = gpus
        for size in side:
            result = _leader_at(candidate, size, plan)
            if result is None:
                continue
            if result[0] != leader:
                value, found = _bisect_gpus(candidate, steady, size, result, unit, leader, plan)
                flips.append(_flip(candidate, float(value), found, float(size), result, leader))
                break
            steady = size
    return flips


def what_would_change(spec: ClusterSpec, catalog: Catalog, plan: Plan = DEFAULT_PLAN,
                      registry=FLIP_CANDIDATES) -> WhatWouldChange:
    """Every candidate of the registry searched alone (module docstring); the flips smallest first."""
    base = evaluate(spec, catalog, plan=plan)
    leader = base.recommendation.recommended
    ctx = FlipContext(spec=spec, catalog=catalog, leader=leader, fabrics=list(base.outcomes))
    tolerance = ctx.setting("flip_search_tolerance")
    flips, no_flip = [], []
    for factory in registry:
        for candidate in factory(ctx):
            if candidate.unit == "gpus":  # other GPU counts as the scale curve prices them: without the fleet
                found = _search_gpus(candidate, leader, plan.replace(fleet=False), ctx)
            elif candidate.unit == "toggle":
                found = [f for f in [_search_toggle(candidate, leader, plan)] if f is not None]
            else:
                found = [f for end in candidate.ends
                         if (f := _search_multiplier(candidate, end, leader, plan, tolerance)) is not None]
            if found:
                flips.append(min(found, key=lambda f: f.size))
            else:
                no_flip.append(_searched(candidate, ctx))
    return WhatWouldChange(leader=leader, flips=sorted(flips, key=lambda f: f.size), no_flip=no_flip)


def _searched(candidate: FlipCandidate, ctx: FlipContext) -> str:
    if candidate.unit == "gpus":
        from fabricplan.decide.whatif import scale_grid

        grid = scale_grid(ctx.spec, ctx.catalog)
        return f"{candidate.name} ({grid[0]:,}-{grid[-1]:,} GPUs)"
    if candidate.unit == "toggle":
        return f"{candidate.name} ({candidate.describe(candidate.ends[0])})"
    return f"{candidate.name} ({' and '.join(f'x{e:.3g}' for e in candidate.ends)})"
