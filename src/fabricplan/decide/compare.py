"""`fabricplan compare`: numbers, rules, recommendation, crossovers and sensitivity in one report."""

from __future__ import annotations

from fabricplan.catalog import Catalog
from fabricplan.decide.evaluate import evaluate
from fabricplan.decide.models import CitedSource, CompareReport, OpenSearch
from fabricplan.decide.whatif import (
    Progress,
    crossovers,
    jobs_left_out,
    jobs_out_of_memory,
    scale_curve,
    scale_grid,
    sensitivity,
    tier_boundaries,
)
from fabricplan.plan import DEFAULT_PLAN, Plan
from fabricplan.spec import ClusterSpec, check_references
from fabricplan.spec.load import located


def compare(spec: ClusterSpec, catalog: Catalog, *, progress: Progress | None = None,
            search_scale: bool = True, analyse_sensitivity: bool = True, plan: Plan = DEFAULT_PLAN,
            draws: int | None = None, seed: int | None = None) -> CompareReport:
    """Compare every fabric of the spec and recommend one, with what would change the answer.

    ``plan`` is the model chain every evaluation runs (:class:`fabricplan.plan.Plan`: swap a step or
    the efficiency model there). ``draws`` Monte Carlo draws over the catalog's ranges (default:
    catalog ``uncertainty_draws``; 0 = none) with ``seed`` (default: catalog ``uncertainty_seed``)."""
    if draws is None:
        draws = int(catalog.parameter("uncertainty_draws").value.at("default"))
    if seed is None:
        seed = int(catalog.parameter("uncertainty_seed").value.at("default"))
    with located(spec):  # errors found by the models name the spec's file
        return _compare(spec, catalog, progress, search_scale, analyse_sensitivity, plan, draws, seed)


def _compare(spec: ClusterSpec, catalog: Catalog, progress: Progress | None, search_scale: bool,
             analyse_sensitivity: bool, plan: Plan, draws: int = 0, seed: int = 0) -> CompareReport:
    check_references(spec, catalog)
    model = plan.efficiency()
    usage = getattr(model, "usage", None)  # a model that can say how it answered (e.g. sim's cache)
    before = usage() if usage else None
    from fabricplan.plan.chain import cached_performance

    plan = plan.replace(performance=cached_performance(plan.performance))  # what-ifs re-run the same step times
    if progress:
        progress(f"evaluating {len(spec.fabrics)} fabrics at {spec.cluster.gpus:,} GPUs")
    decision = evaluate(spec, catalog, plan=plan, draws=draws, seed=seed)
    notes = []
    if not spec.jobs:
        notes.append("No jobs in the spec: every GPU-hour counts as useful, so the ranking is by TCO alone.")
    grid = scale_grid(spec, catalog) if search_scale else []
    scale_draws = min(draws, int(catalog.parameter("uncertainty_scale_draws").value.at("default")))
    # the curve's other GPU counts without the fleet's interference: a fleet run per point would take minutes
    scale_plan = plan.replace(fleet=False)
    curve = scale_curve(spec, catalog, grid, progress, scale_plan, scale_draws, seed) if search_scale else []
    for gpus in grid:
        left_out = jobs_left_out(spec, gpus)
        if left_out and len(left_out) < len(spec.jobs):
            notes.append(f"The scale search skips {gpus:,} GPUs: {', '.join(left_out)} does not lay out there "
                         "(its model parallelism), and a curve point must run the whole job mix.")
        no_memory = jobs_out_of_memory(spec, catalog, gpus)
        if no_memory and len(left_out) + len(no_memory) < len(spec.jobs):
            notes.append(f"The scale search skips {gpus:,} GPUs: {', '.join(no_memory)} does not fit in GPU memory "
                         "there, even with full activation recomputation.")
    threshold = catalog.parameter("decision_best_probability").value.at("default") if scale_draws else None
    crossing = crossovers(spec, catalog, curve, scale_plan, threshold) if search_scale else []
    boundaries = tier_boundaries(spec, decision.outcomes, curve) if search_scale else []
    rows = sensitivity(spec, catalog, progress=progress, plan=plan) if analyse_sensitivity else []
    opened = open_search(spec, catalog, plan, decision.outcomes) if spec.style_pinned else None
    if opened is not None:
        notes.append(open_search_note(opened))
    flips = None
    if analyse_sensitivity:
        from fabricplan.decide.flips import what_would_change

        if progress:
            progress("what would change the answer")
        flips = what_would_change(spec, catalog, plan)
    notes += _memory_notes(decision.outcomes)
    notes += [f"Shared fabric ({fabric}): {outcome.fleet_note}; the scale curve's other GPU counts are priced "
              "without it (and so are the crossovers)." for fabric, outcome in decision.outcomes.items() if outcome.fleet_note]
    if before is not None and hasattr(model, "usage_note"):
        notes.append(model.usage_note(before))
    from fabricplan.decide.options import option_uplifts

    uplifts = option_uplifts(spec, catalog, plan, decision.outcomes)
    ordered = [decision.outcomes[f] for f in decision.recommendation.ranking]
    from fabricplan.decide.phases import phase_outcomes

    phases, deciding_phase, phase_text = phase_outcomes(spec, decision.outcomes, decision.recommendation.ranking)
    recommendation = decision.recommendation
    if phase_text:
        recommendation = recommendation.model_copy(update={"reasons": [*recommendation.reasons, phase_text]})
    return CompareReport(
        phases=phases, deciding_phase=deciding_phase,
        spec_name=spec.name, gpus=spec.cluster.gpus, horizon_years=spec.economics.horizon_years,
        fabrics=ordered, rules=decision.rules, recommendation=recommendation,
        crossovers=crossing, scale_curve=curve, sensitivity=rows, notes=notes, tier_boundaries=boundaries,
        efficiency_model=plan.efficiency_model_name, uncertainty=decision.uncertainty, open_search=opened,
        what_would_change=flips, options=uplifts, sources=cited_sources(catalog, decision.rules))


def cited_sources(catalog: Catalog, rules: list) -> list[CitedSource]:
    """The catalog sources the rules' citations name ("[S1]"), in order of first mention."""
    from fabricplan.decide.rules import cited_source_ids

    known = catalog.section("sources")
    return [CitedSource(id=s.id, title=s.title, title_en=s.title_en, language=s.language, publisher=s.publisher,
                        date=s.date, url=s.url, quotes={q.text: q.text_en for q in s.quotes})
            for s in (known[i] for i in cited_source_ids([rule.citation for rule in rules]) if i in known)]


def open_search(spec: ClusterSpec, catalog: Catalog, plan: Plan, pinned: dict) -> OpenSearch | None:
    """What the design search chooses for each fabric with the spec's ``topology.style`` left open
    (the point estimate, through the same chain), beside the pinned style's outcomes."""
    from fabricplan.errors import FabricplanError

    try:
        opened = plan.evaluate(spec.open_design(), catalog).outcomes
    except FabricplanError:
        return None
    common = [f for f in pinned if f in opened]
    if not common:
        return None

    def cheapest(metrics: dict[str, float]) -> str:
        return min(metrics, key=lambda f: metrics[f])

    open_metric = {f: float(opened[f].cost_per_useful_gpu_hour_usd) for f in common}
    pinned_metric = {f: float(pinned[f].cost_per_useful_gpu_hour_usd) for f in common}
    return OpenSearch(pinned_style=spec.topology.style, designs={f: opened[f].design for f in common if opened[f].design},
                      cost_per_useful_gpu_hour_usd=open_metric, pinned_cost_per_useful_gpu_hour_usd=pinned_metric,
                      leader=cheapest(open_metric), pinned_leader=cheapest(pinned_metric))


def open_search_note(found: OpenSearch) -> str:
    """One sentence: what the open design search would choose per fabric, and the leader."""
    parts = []
    for fabric, design in found.designs.items():
        gap = found.cost_per_useful_gpu_hour_usd[fabric] / found.pinned_cost_per_useful_gpu_hour_usd[fabric] - 1
        if design.style == found.pinned_style and abs(gap) < 5e-4:
            parts.append(f"{fabric} the same")
            continue
        parts.append(f"{fabric} {design.style.replace('_', '-')} on {design.switch} ({design.tiers} tier"
                     f"{'' if design.tiers == 1 else 's'}, {design.switches} switches), {100 * gap:+.1f} % cost "
                     "per useful GPU-hour")
    verdict = (f"the leader would change from {found.pinned_leader} to {found.leader}" if found.changes_leader
               else f"the leader stays {found.leader}")
    return (f"The spec pins topology.style {found.pinned_style}; left open, the design search would choose: "
            f"{'; '.join(parts)}; {verdict}.")


def _memory_notes(outcomes: dict) -> list[str]:
    """One note per job and distinct memory verdict of the chain (re-laid to fit, or over memory),
    naming the fabrics when not all share it."""
    verdicts: dict[tuple[str, str], list[str]] = {}
    for fabric, outcome in outcomes.items():
        for job in outcome.jobs:
            if job.memory_note:
                verdicts.setdefault((job.job, job.memory_note), []).append(fabric)
        for job, note in outcome.jobs_left_out.items():
            verdicts.setdefault((job, note), []).append(fabric)
    return [f"Memory: {job} {note}" + ("" if len(fabrics) == len(outcomes) else f" (on {', '.join(fabrics)})") + "."
            for (job, note), fabrics in verdicts.items()]
