"""`fabricplan compare`: numbers, rules, recommendation, crossovers and sensitivity in one report."""

from __future__ import annotations

from fabricplan.catalog import Catalog
from fabricplan.decide.evaluate import evaluate
from fabricplan.decide.models import CompareReport
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
    curve = scale_curve(spec, catalog, grid, progress, plan, scale_draws, seed) if search_scale else []
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
    crossing = crossovers(spec, catalog, curve, plan, threshold) if search_scale else []
    boundaries = tier_boundaries(spec, decision.outcomes, curve) if search_scale else []
    rows = sensitivity(spec, catalog, progress=progress, plan=plan) if analyse_sensitivity else []
    if before is not None and hasattr(model, "usage_note"):
        notes.append(model.usage_note(before))
    from fabricplan.decide.options import option_uplifts

    uplifts = option_uplifts(spec, catalog, plan, decision.outcomes)
    ordered = [decision.outcomes[f] for f in decision.recommendation.ranking]
    return CompareReport(
        spec_name=spec.name, gpus=spec.cluster.gpus, horizon_years=spec.economics.horizon_years,
        fabrics=ordered, rules=decision.rules, recommendation=decision.recommendation,
        crossovers=crossing, scale_curve=curve, sensitivity=rows, notes=notes, tier_boundaries=boundaries,
        efficiency_model=plan.efficiency_model_name, uncertainty=decision.uncertainty, options=uplifts)
