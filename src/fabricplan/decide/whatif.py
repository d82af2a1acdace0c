"""What would change the answer: crossover GPU counts between fabrics and a sensitivity table."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import get_args

from fabricplan.catalog import Catalog
from fabricplan.decide.evaluate import evaluate
from fabricplan.decide.models import Crossover, ScalePoint, SensitivityRow, TierBoundary
from fabricplan.errors import FabricplanError, InputError
from fabricplan.plan import DEFAULT_PLAN, Draws, Levers, Plan, Scenario, fabric_outcomes
from fabricplan.plan.scale import (  # noqa: F401 (jobs_left_out, jobs_out_of_memory, scaled_spec: re-exported)
    full_mix_spec,
    jobs_left_out,
    jobs_out_of_memory,
    layout_unit,
    scaled_spec,
    tier_capacities_gpus,
)
from fabricplan.spec import ClusterSpec
from fabricplan.spec.models import Maturity

MATURITY_LEVELS: tuple[Maturity, ...] = get_args(Maturity)  # lowest to highest skill
Progress = Callable[[str], None]
#: The band of each fabric's cost along the scale curve: the same p10 and p90 the Monte Carlo's summary reports.
BAND_PERCENTILES = (10, 90)


def scale_grid(spec: ClusterSpec, catalog: Catalog) -> list[int]:
    """GPU counts to search: one node doubled up to the catalog's ``scale_search_max_gpus``, plus
    the spec's own size."""
    largest = catalog.parameter("scale_search_max_gpus").value.at("default")
    grid = {spec.cluster.gpus}
    gpus = spec.cluster.domain_gpus
    while gpus <= largest:
        grid.add(gpus)
        gpus *= 2
    return sorted(grid)


def _leader(metrics: dict[str, float], a: str, b: str) -> str:
    return a if metrics[a] <= metrics[b] else b


def _pair_key(a: str, b: str) -> str:
    return f"{a}|{b}"


def scale_curve(spec: ClusterSpec, catalog: Catalog, grid: Iterable[int],
                progress: Progress | None = None, plan: Plan = DEFAULT_PLAN, draws: int = 0,
                seed: int = 0) -> list[ScalePoint]:
    """Cost per useful GPU-hour of every fabric at each size of the grid where the whole job mix
    lays out, with (``draws`` > 0) the probability that each fabric of a pair is the cheaper one
    over the catalog's ranges (the same seeded draws at every size)."""
    import numpy as np

    fabrics = [choice.profile for choice in spec.fabric_choices()]
    points = []
    for gpus in grid:
        scaled = full_mix_spec(spec, gpus, catalog)
        if scaled is None:
            continue
        if progress:
            progress(f"scale search: {gpus:,} GPUs")
        outcomes, sampled = {}, {}
        shared = Draws(n=draws, seed=seed) if draws > 0 else 0  # the same draws for every fabric at this size
        for fabric in fabrics:
            try:  # a design that cannot be built at this size is left out of that point
                evaluation = plan.evaluate(scaled, catalog, fabrics=[fabric], draws=shared, light=True)
            except FabricplanError:
                continue
            outcomes[fabric] = evaluation.outcomes[fabric]
            sampled.update(evaluation.metric_draws)
        if not outcomes:
            continue
        lower: dict[str, float] = {}
        if len(sampled) > 1:
            names = list(sampled)
            for i, a in enumerate(names):
                for b in names[i + 1:]:
                    lower[_pair_key(a, b)] = float((sampled[a] < sampled[b]).mean())
        bands = {}
        for f, values in sampled.items():
            finite = np.asarray(values, dtype=float)
            finite = finite[np.isfinite(finite)]
            if f in outcomes and finite.size > 1:
                bands[f] = [float(v) for v in np.percentile(finite, BAND_PERCENTILES)]
        excess = {}
        drawn = {f: np.asarray(values, dtype=float) for f, values in sampled.items() if f in outcomes}
        if len(drawn) > 1 and len({v.shape for v in drawn.values()}) == 1:
            # the same draws for every fabric: each against the cheapest of its own draw, so what moves every
            # fabric alike (GPU prices, energy) does not widen the band
            cheapest = np.min(np.vstack(list(drawn.values())), axis=0)
            for f, values in drawn.items():
                with np.errstate(invalid="ignore", divide="ignore"):  # a draw with no cost (inf) is left out
                    ratio = values / cheapest - 1.0
                ratio = ratio[np.isfinite(ratio)]
                if ratio.size > 1:
                    excess[f] = [float(v) for v in np.percentile(ratio, BAND_PERCENTILES)]
        points.append(ScalePoint(gpus=gpus, cost_per_useful_gpu_hour_usd={
            f: o.cost_per_useful_gpu_hour_usd for f, o in outcomes.items()}, probability_lower=lower,
            cost_band_usd=bands, excess_band=excess,
            tiers={f: o.cost.topology.tiers for f, o in outcomes.items()},
            tier_capacity_gpus={f: o.cost.topology.max_endpoints // max(o.cost.topology.nics_per_node, 1)
                                * spec.cluster.domain_gpus for f, o in outcomes.items()}))
    return points


def tier_boundaries(spec: ClusterSpec, outcomes: dict, curve: list[ScalePoint]) -> list[TierBoundary]:
    """Where each fabric's chosen design (its switch radix and style at the spec's size) needs another
    tier, inside the searched range (:func:`fabricplan.topology.tier_capacities`)."""
    if not curve:
        return []
    low, high = curve[0].gpus, curve[-1].gpus
    boundaries = []
    for fabric, outcome in outcomes.items():
        size = outcome.cost.topology
        capacity = tier_capacities_gpus(spec, size.radix, size.style)
        for tiers, gpus in sorted(capacity.items()):
            if tiers < 4 and capacity[tiers + 1] > gpus and low <= gpus < high:
                boundaries.append(TierBoundary(fabric=fabric, switch=outcome.cost.switch_id, radix=size.radix,
                                               tiers_above=tiers + 1, gpus=gpus))
    return sorted(boundaries, key=lambda b: (b.gpus, b.fabric))


def _pair_metrics(spec: ClusterSpec, catalog: Catalog, gpus: int, pair: tuple[str, str],
                  plan: Plan = DEFAULT_PLAN) -> dict[str, float] | None:
    scaled = full_mix_spec(spec, gpus, catalog)
    if scaled is None:
        return None
    outcomes = fabric_outcomes(scaled, catalog, fabrics=list(pair), plan=plan)
    return {f: o.cost_per_useful_gpu_hour_usd for f, o in outcomes.items()}


#: Steps (of the job mix's layout unit) either side of a bisection midpoint tried when the mix does not
#: lay out at it (an expert-parallel degree that does not divide the data-parallel one).
BISECT_NEIGHBOURS = 4


def _evaluable(spec, catalog, gpus, pair, plan) -> dict[str, float] | None:
    try:
        return _pair_metrics(spec, catalog, gpus, pair, plan)
    except FabricplanError:
        return None


def _bisect(spec: ClusterSpec, catalog: Catalog, pair: tuple[str, str], low_gpus: int, high_gpus: int,
            leader_low: str, plan: Plan = DEFAULT_PLAN, boundaries: Iterable[int] = ()) -> tuple[int, int]:
    """The GPU range in which `leader_low` stops leading: (last size it leads, first size it does
    not), in steps of the job mix's layout unit (:func:`layout_unit`), evaluated only where the whole
    mix lays out. A tier boundary in the range is tried first (a design that needs another tier is
    the usual cause); otherwise the range is bisected."""
    unit = layout_unit(spec)
    low, high = -(-low_gpus // unit), high_gpus // unit
    low = low_gpus // unit if low_gpus % unit == 0 else low
    for boundary in sorted(boundaries):
        below, above = boundary // unit, boundary // unit + 1
        if low <= below < above <= high:
            m_below = _evaluable(spec, catalog, below * unit, pair, plan)
            m_above = _evaluable(spec, catalog, above * unit, pair, plan)
            if m_below and m_above and _leader(m_below, *pair) == leader_low != _leader(m_above, *pair):
                return below * unit, above * unit
    while high - low > 1:
        mid = (low + high) // 2
        metrics, at = None, mid
        for shift in sorted(range(-BISECT_NEIGHBOURS, BISECT_NEIGHBOURS + 1), key=abs):
            at = mid + shift
            if low < at < high and (metrics := _evaluable(spec, catalog, at * unit, pair, plan)) is not None:
                break
        if metrics is None:
            break
        if _leader(metrics, *pair) == leader_low:
            low = at
        else:
            high = at
    return low * unit, high * unit


def _states(points: list[ScalePoint], a: str, b: str, threshold: float | None) -> list[str | None]:
    """Per point, the clear leader of the pair, or None inside the uncertainty."""
    states = []
    for point in points:
        probability = point.probability_lower.get(_pair_key(a, b))
        if probability is None:
            reverse = point.probability_lower.get(_pair_key(b, a))
            probability = None if reverse is None else 1 - reverse
        if threshold is None or probability is None:
            states.append(_leader(point.cost_per_useful_gpu_hour_usd, a, b))
        elif probability >= threshold:
            states.append(a)
        elif probability <= 1 - threshold:
            states.append(b)
        else:
            states.append(None)
    return states


def _tier_change(before: ScalePoint, after: ScalePoint, pair: tuple[str, str]) -> str:
    """'; roce-v2 goes from 2 to 3 tiers in between' when a fabric's tier count changes between two sizes."""
    changes = [f"{f} goes from {before.tiers[f]} to {after.tiers[f]} tiers" for f in pair
               if f in before.tiers and f in after.tiers and before.tiers[f] != after.tiers[f]]
    return f"; {' and '.join(changes)} in between" if changes else ""


def _unclear_spans(states: list[str | None]) -> list[tuple[int, int, str | None, str | None]]:
    """(first, last index, clear leader before, clear leader after) of each run of unclear points."""
    spans, k, last_clear = [], 0, None
    while k < len(states):
        if states[k] is None:
            start = k
            while k < len(states) and states[k] is None:
                k += 1
            spans.append((start, k - 1, last_clear, states[k] if k < len(states) else None))
            continue
        last_clear = states[k]
        k += 1
    return spans


def _unclear_crossover(a: str, b: str, points: list[ScalePoint], span, threshold: float | None,
                       searched: str) -> Crossover:
    start, end, before, after = span
    first, last = points[start].gpus, points[end].gpus
    where = f"at {first:,} GPUs" if first == last else f"from {first:,} to {last:,} GPUs"
    return Crossover(fabric_a=a, fabric_b=b, gpus=None, leader_below=before or "-", leader_above=after,
                     kind="no_clear_leader", from_gpus=first, to_gpus=last,
                     note=f"no clear leader {where}: neither is cheaper with probability >= "
                          f"{100 * (threshold or 0):.0f} % ({before} leads below, {after} above) ({searched})")


def _hand_over(spec: ClusterSpec, catalog: Catalog, plan: Plan, pair: tuple[str, str], before: ScalePoint,
               after: ScalePoint, leader_below: str, leader_above: str, searched: str) -> Crossover:
    """A clear leader handing over to another between two adjacent grid points, bisected in whole layouts."""
    boundaries = [before.tier_capacity_gpus[f] for f in pair
                  if before.tiers.get(f) != after.tiers.get(f) and f in before.tier_capacity_gpus]
    low, high = _bisect(spec, catalog, pair, before.gpus, after.gpus, leader_below, plan, boundaries)
    unit = layout_unit(spec)
    step = "" if unit == spec.cluster.domain_gpus else f" (the job mix lays out every {unit:,} GPUs)"
    where = (f"below {high:,} GPUs, {leader_above} from there{step}" if high - low == unit else
             f"up to {low:,} GPUs, {leader_above} by {high:,} (the job mix does not lay out at the sizes in between)")
    return Crossover(fabric_a=pair[0], fabric_b=pair[1], gpus=high, leader_below=leader_below,
                     leader_above=leader_above,
                     note=f"{leader_below} leads {where}{_tier_change(before, after, pair)} ({searched})")


def crossovers(spec: ClusterSpec, catalog: Catalog, curve: list[ScalePoint],
               plan: Plan = DEFAULT_PLAN, threshold: float | None = None) -> list[Crossover]:
    """Leader changes of every pair over the scale curve. With draws on the curve, a size is led
    clearly by a fabric that is cheaper with probability >= ``threshold`` (catalog
    ``decision_best_probability``). A crossover changes the leader: a hand-over from one clear
    leader to the other at adjacent sizes (bisected in whole nodes, at sizes where the job mix lays
    out), or a span without a clear leader between two different clear leaders ("no clear leader
    from X to Y"). A dip into the uncertainty with the same leader on both sides, or at either end
    of the range, changes nothing and is only named in the pair's "no change" note; a pair never
    clear anywhere is one "no clear leader" row."""
    fabrics = [c.profile for c in spec.fabric_choices()]
    results = []
    for i, a in enumerate(fabrics):
        for b in fabrics[i + 1:]:
            points = [p for p in curve if a in p.cost_per_useful_gpu_hour_usd and b in p.cost_per_useful_gpu_hour_usd]
            if not points:
                continue
            searched = f"searched {points[0].gpus:,}-{points[-1].gpus:,} GPUs"
            states = _states(points, a, b, threshold)
            clear = [s for s in states if s is not None]
            if not clear:
                results.append(_unclear_crossover(a, b, points, (0, len(points) - 1, None, None), threshold, searched))
                continue
            found = []
            for span in _unclear_spans(states):
                if span[2] is not None and span[3] is not None and span[2] != span[3]:
                    found.append(_unclear_crossover(a, b, points, span, threshold, searched))
            for k in range(1, len(points)):
                if states[k] is not None and states[k - 1] is not None and states[k] != states[k - 1]:
                    found.append(_hand_over(spec, catalog, plan, (a, b), points[k - 1], points[k], states[k - 1],
                                            states[k], searched))
            if not found:
                unclear = [points[k].gpus for k, s in enumerate(states) if s is None]
                dips = f"; no clear leader at {', '.join(f'{g:,}' for g in unclear)} GPUs" if unclear else ""
                found.append(Crossover(fabric_a=a, fabric_b=b, gpus=None, leader_below=clear[0], leader_above=None,
                                       kind="no_change",
                                       note=f"{clear[0]} leads at every size with a clear leader{dips} ({searched})"
                                       if unclear else f"{clear[0]} leads at every size ({searched})"))
            results += sorted(found, key=lambda c: c.gpus if c.gpus is not None else c.from_gpus or 0)
    return results


def _maturity_step(spec: ClusterSpec, step: int) -> tuple[ClusterSpec, str]:
    index = MATURITY_LEVELS.index(spec.operations.maturity)
    level = MATURITY_LEVELS[min(max(index + step, 0), len(MATURITY_LEVELS) - 1)]
    operations = spec.operations.model_copy(update={"maturity": level})
    return spec.model_copy(update={"operations": operations}), f"maturity {level}"


def _lists_vendor_optics(catalog: Catalog, profile) -> bool:
    """The profile prices some vendor part that has a third-party equivalent (the optics basis moves it)."""
    hw = profile.hardware
    ids = [hw.switch_optic, hw.nic_optic, hw.interswitch_optic, hw.host_dac]
    ids += [end for m in hw.host_media + hw.interswitch_media for end in (m.switch_end, m.far_end)]
    return any(catalog.optic(i).third_party_part is not None for i in ids if i is not None)


def sensitivity(spec: ClusterSpec, catalog: Catalog, swing: float | None = None,
                progress: Progress | None = None, plan: Plan = DEFAULT_PLAN) -> list[SensitivityRow]:
    """Re-decide with each factor moved down and up by `swing` (default: the catalog's
    ``sensitivity_swing``); report the numbers' leader each way (the cheapest per useful GPU-hour
    among the fabrics no rule rules out) and whether it flips. Besides factors that move every
    fabric alike, fabric-specific ones move one fabric against the others so that a flip can show:
    the InfiniBand price premium (every network part of the InfiniBand fabrics), the socket
    transport's bandwidth (kernel-TCP fabrics) and the operations staff of InfiniBand and of
    lossless-Ethernet (RoCE) fabrics; and the optics basis of every fabric (third-party or
    vendor-qualified) where a fabric lists vendor optics."""
    if swing is None:
        swing = catalog.parameter("sensitivity_swing").value.at("default")
    if not 0 <= swing < 1:  # a swing of 100 % or more would price hardware at zero or below
        raise InputError(f"the sensitivity swing must be at least 0 and below 1, got {swing:g}", location="swing")
    base = evaluate(spec, catalog, plan=plan)
    base_metric = {f: o.cost_per_useful_gpu_hour_usd for f, o in base.outcomes.items()}
    winner = base.recommendation.numbers_leader or base.recommendation.recommended
    low, high = 1 - swing, 1 + swing
    cases: list[tuple[str, str, str, Callable[[float], tuple[ClusterSpec, Scenario]]]] = [
        ("switch prices", f"-{swing:.0%}", f"+{swing:.0%}",
         lambda m: (spec, Scenario(price_multipliers=(("switches", m),)))),
        ("NIC prices", f"-{swing:.0%}", f"+{swing:.0%}", lambda m: (spec, Scenario(price_multipliers=(("nics", m),)))),
        ("optics and cable prices", f"-{swing:.0%}", f"+{swing:.0%}",
         lambda m: (spec, Scenario(price_multipliers=(("optics", m), ("cables", m))))),
        ("energy price", f"-{swing:.0%}", f"+{swing:.0%}", lambda m: (spec, Scenario(energy_multiplier=m))),
        ("achievable GPU efficiency", f"-{swing:.0%}", f"+{swing:.0%}",
         lambda m: (spec, Scenario(levers=Levers(efficiency_multiplier=m)))),
    ]
    profiles = {c.profile: catalog.fabric(c.profile) for c in spec.fabric_choices()}
    infiniband = [f for f, p in profiles.items() if p.family == "infiniband"]
    socket = [f for f, p in profiles.items() if p.socket is not None]
    roce = [f for f, p in profiles.items() if p.family == "ethernet" and p.transport == "rdma"]
    others = len(profiles) > 1

    def each(fabrics: list[str], field: str, m: float) -> Scenario:
        return Scenario(**{field: tuple((f, m) for f in fabrics)})

    if infiniband and others:
        cases.append(("InfiniBand price premium", f"-{swing:.0%}", f"+{swing:.0%}",
                      lambda m: (spec, each(infiniband, "fabric_price_multipliers", m))))
    if socket and others:
        cases.append(("socket (kernel TCP) bandwidth", f"-{swing:.0%}", f"+{swing:.0%}",
                      lambda m: (spec, each(socket, "fabric_bandwidth_multipliers", m))))
    if infiniband and others:
        cases.append(("InfiniBand operations staff", f"-{swing:.0%}", f"+{swing:.0%}",
                      lambda m: (spec, each(infiniband, "fabric_staff_multipliers", m))))
    if roce and others:
        cases.append(("RoCE operations staff", f"-{swing:.0%}", f"+{swing:.0%}",
                      lambda m: (spec, each(roce, "fabric_staff_multipliers", m))))
    if others and any(_lists_vendor_optics(catalog, p) for p in profiles.values()):
        # Every fabric at one basis (one rule for all): third-party on the low side, vendor-qualified on the high.
        cases.append(("optics basis (every fabric)", "third-party", "vendor", lambda m: (spec, Scenario(
            fabric_optics_basis=tuple((f, "third_party" if m == low else "vendor") for f in profiles)))))
    rows = []
    for factor, low_label, high_label, make in cases:
        if progress:
            progress(f"sensitivity: {factor}")
        decisions = []
        for multiplier in (low, high):
            case_spec, scenario = make(multiplier)
            decisions.append(evaluate(case_spec, catalog, scenario, plan))
        rows.append(_row(factor, low_label, high_label, decisions, base_metric, winner))
    if progress:
        progress("sensitivity: operations maturity")
    down, down_label = _maturity_step(spec, -1)
    up, up_label = _maturity_step(spec, +1)
    decisions = [evaluate(down, catalog, plan=plan), evaluate(up, catalog, plan=plan)]
    rows.append(_row("operations maturity one step", down_label, up_label, decisions, base_metric, winner))
    return rows


def _row(factor, low_label, high_label, decisions, base_metric, winner) -> SensitivityRow:
    winners = [d.recommendation.numbers_leader or d.recommendation.recommended for d in decisions]
    changes = [{f: o.cost_per_useful_gpu_hour_usd / base_metric[f] - 1 for f, o in d.outcomes.items()}
               for d in decisions]
    excluded = [sorted({f for r in d.rules if r.fired for f in r.excludes}) for d in decisions]
    return SensitivityRow(factor=factor, low_label=low_label, high_label=high_label, winner_low=winners[0],
                          winner_high=winners[1], flips=any(w != winner for w in winners),
                          metric_change_low=changes[0], metric_change_high=changes[1],
                          excluded_low=excluded[0], excluded_high=excluded[1])
