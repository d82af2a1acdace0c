"""The one place that knows the shape of a compare result: the outputs a sweep point keeps.

Each sweep point runs the public API (:func:`fabricplan.api.compare`, quick, analytic model by
default) and this module turns its :class:`~fabricplan.decide.models.CompareReport` into flat
columns. When compare's internals change, only this adapter changes.

Per-fabric outputs become the columns ``<fabric>__<output>`` (fabric id with ``-`` as ``_``, e.g.
``infiniband_ndr__cost_per_useful_gpu_hour_usd``); point outputs keep their own names. Job outputs
are those of the spec's first job (the main job of the mix); ``None`` when the spec has no jobs.

The outputs read the point estimates, never a draw. By default a point's compare runs the
catalog's Monte Carlo, as ``fabricplan compare`` does, so its recommended fabric and close call are
the ones ``compare`` prints for that design; the sweep file's ``draws: 0`` turns the draws off: the model's
columns (cost, time, ...) do not change; the recommended fabric, the close call and the rank then
follow the point estimates and the close-call band.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fabricplan.catalog import Catalog
    from fabricplan.decide.models import CompareReport
    from fabricplan.plan.outcome import FabricOutcome
    from fabricplan.spec import ClusterSpec


def _job(name: str) -> Callable[[FabricOutcome], float | None]:
    def get(outcome: FabricOutcome) -> float | None:
        return getattr(outcome.jobs[0], name) if outcome.jobs else None
    return get


def _serving(name: str) -> Callable[[FabricOutcome], float | None]:
    """The first serving job's ``ServingOutcome.<name>`` (None without a serving job, or when undefined)."""
    def get(outcome: FabricOutcome) -> float | None:
        job = next((j for j in outcome.jobs if j.serving is not None), None)
        value = None if job is None else getattr(job.serving, name)
        return None if value is None else float(value)
    return get


#: name -> (description, extractor, arrow type): what a sweep can keep per fabric.
FABRIC_OUTPUTS: dict[str, tuple[str, Callable[[FabricOutcome], Any], str]] = {
    "cost_per_useful_gpu_hour_usd": ("TCO per useful GPU-hour (the deciding metric)",
                                     lambda o: o.cost_per_useful_gpu_hour_usd, "float64"),
    "step_time_s": ("Step time of the spec's first job", _job("step_time_s"), "float64"),
    "tokens_per_s": ("Training throughput of the first job", _job("tokens_per_s"), "float64"),
    "exposed_comm_share": ("Exposed communication / step time, first job", _job("exposed_comm_share"), "float64"),
    "run_cost_usd": ("Cost of one training run of the first job's token budget", _job("run_cost_usd"), "float64"),
    "weighted_gpu_utilisation": ("Job-share-weighted compute / step time",
                                 lambda o: o.weighted_gpu_utilisation, "float64"),
    "weighted_mfu": ("Job-share-weighted model FLOPs utilisation", lambda o: o.weighted_mfu, "float64"),
    "tco_usd": ("Cluster TCO over the horizon (network TCO when servers are not priced)",
                lambda o: o.tco_usd, "float64"),
    "network_capex_usd": ("Network capex", lambda o: o.cost.network_capex_usd, "float64"),
    "network_tco_usd": ("Network TCO over the horizon", lambda o: o.cost.network_tco_usd, "float64"),
    "network_power_w": ("Network IT power", lambda o: o.cost.network_power_w, "float64"),
    "small_message_latency_us": ("Point-to-point latency across the top tier",
                                 lambda o: o.small_message_latency_us, "float64"),
    "switches": ("Switches in the fabric", lambda o: o.cost.topology.total_switches, "int64"),
    "tiers": ("Tiers of the fabric", lambda o: o.cost.topology.tiers, "int64"),
    "rank": ("Rank in the recommendation (1 = recommended)", lambda o: o.rank, "int64"),
    "cost_per_million_tokens_usd": ("Cost per million output tokens within SLO of the first serving job",
                                    _serving("cost_per_million_tokens_usd"), "float64"),
    "tokens_per_s_per_gpu": ("Output tokens per second per GPU of the first serving job",
                             _serving("tokens_per_s_per_gpu"), "float64"),
    "slo_attainment": ("Share of the first serving job's requests within both SLOs",
                       _serving("slo_attainment"), "float64"),
    "ttft_ms": ("Mean time to first token of the first serving job", _serving("ttft_ms"), "float64"),
}

#: name -> (description, arrow type): one value per point.
POINT_OUTPUTS: dict[str, tuple[str, str]] = {
    "recommended": ("The recommended fabric", "string"),
    "close_call": ("Top two within the close-call band", "bool"),
    "feasible": ("False when the rules rule out every fabric", "bool"),
}

#: The outputs `sweep report` needs: always kept.
REQUIRED_OUTPUTS = ("cost_per_useful_gpu_hour_usd", "step_time_s", "rank")


def fabric_column(fabric: str, output: str) -> str:
    """``infiniband-ndr``, ``step_time_s`` -> ``infiniband_ndr__step_time_s``."""
    return f"{fabric.replace('-', '_').replace('.', '_')}__{output}"


def compare_point(spec: ClusterSpec, catalog: Catalog, *, quick: bool, efficiency_model: str,
                  draws: int | None = None) -> CompareReport:
    """One point's compare through the public API (``draws``: None for the catalog's, as `compare`)."""
    from fabricplan.api import compare

    return compare(spec, catalog, quick=quick, efficiency_model=efficiency_model, draws=draws)


def outputs_of(report: CompareReport, fabrics: list[str], outputs: list[str]) -> dict[str, Any]:
    """The flat output columns of one compare (``None`` for a fabric the point's spec leaves out)."""
    by_fabric = {outcome.fabric: outcome for outcome in report.fabrics}
    row: dict[str, Any] = {
        "recommended": report.recommendation.recommended,
        "close_call": report.recommendation.close_call,
        "feasible": report.recommendation.feasible,
    }
    for fabric in fabrics:
        outcome = by_fabric.get(fabric)
        for name in outputs:
            row[fabric_column(fabric, name)] = None if outcome is None else FABRIC_OUTPUTS[name][1](outcome)
    return row
