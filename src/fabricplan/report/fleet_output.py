"""The fleet's outputs: a JSON document and terminal tables (fitted to the width)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from rich.console import Group
from rich.text import Text

from fabricplan.report.layout import FitTable, Lines


def fleet_document(results: dict[str, Any], *, version: str) -> dict[str, Any]:
    """One JSON document: per fabric the fleet result (``--samples`` instants, jobs at each)."""
    return {"tool": "fabricplan", "version": version, "kind": "fleet",
            "fabrics": {fabric: asdict(result) for fabric, result in results.items()}}


def _pct(value: float) -> str:
    return f"{100 * value:.0f}%"


def _tiers(shares: dict[str, float]) -> str:
    named = {k: v for k, v in shares.items() if k != "none"}
    if not named:
        return "-"
    return max(named.items(), key=lambda kv: kv[1])[0]


def fleet_renderable(results: dict[str, Any]) -> Group:
    """Per fabric: the fleet's summary line, a table of job kinds, what else would recover."""
    parts: list[Any] = []
    for fabric, result in results.items():
        parts.append(Text(f"{fabric}: {result.design}; policy {result.policy}, routing {result.routing} "
                          f"({result.qps} QP per connection); {result.horizon_days:g} days, "
                          f"{len(result.samples)} instants", style="bold"))
        rows = [[kind.name, f"{kind.nodes:,}", f"{kind.arrived:,}", f"{kind.mean_wait_hours:.1f}",
                 f"{kind.leaves_over_fewest:.1f}x", _pct(kind.pace_alone), _pct(kind.pace_shared),
                 _pct(kind.pace_shared_p10), _tiers(kind.bottleneck_share)] for kind in result.kinds]
        parts.append(FitTable(
            headers=["job", "nodes", "runs", "wait", "leaves", "alone", "shared", "p10", "bottleneck"],
            rows=rows, justify=["left", "right", "right", "right", "right", "right", "right", "right", "left"],
            caption="wait: mean hours queued; leaves: leaf groups a run spans over the fewest it could; alone / "
                    "shared: pace (below); p10: 10th percentile shared; bottleneck: the tier that most often "
                    "limits it"))
        lines = [("utilisation ", f"offered {_pct(result.offered_utilisation)}, achieved "
                                   f"{_pct(result.achieved_utilisation)} (jobs wait for nodes in arrival order)"),
                 ("mean pace ", f"{_pct(result.mean_pace)} of the NICs' rate, node-weighted over the instants")]
        for what, pace in result.alternatives.items():
            lines.append((f"with {what} ", f"{_pct(pace)} (same arrivals and instants)"))
        lines += [("note ", note) for note in result.notes]
        if result.failures:
            parts.append(Lines(lines))
            lines = []
            parts.append(_failures_table(result))
        parts.append(Lines(lines))
        parts.append(Text(""))
    parts.append(Lines([("pace ", "a job's slowest connection over what a non-blocking fabric gives it (its "
                                  "collective's bandwidth share); alone: the same placement without the other "
                                  "jobs")], style="dim"))
    return Group(*parts)


def _failures_table(result) -> FitTable:
    rows = [[f.component.replace("_", " "), f"{f.count:,}", f"{f.failures_per_month:.2g}", f"{f.jobs_stopped:.1f}",
             f"{f.gpus_stopped:,.0f}", f"{f.jobs_slowed:.1f}", _pct(f.pace_degraded),
             f"{f.reroute_s:g}" if f.reroute_s else "-",
             f"{f.stopped_gpu_hours_per_month + f.degraded_bandwidth_gpu_hours_per_month:,.0f}"] for f in result.failures]
    return FitTable(
        headers=["failed part", "parts", "per month", "jobs stop", "GPUs stop", "jobs slow", "pace", "reroute s",
                 "GPU-h lost"],
        rows=rows, justify=["left"] + ["right"] * 8,
        title=f"Failures at the busiest instant ({result.failure_instant_hours:,.0f} h), one part at a time",
        caption="per month: expected failures of all such parts (catalog rates x the fabric's failure multiplier); "
                "pace: the running jobs' GPU-weighted pace in degraded mode; GPU-h lost: per month, the stopped "
                "jobs' GPUs for a restart each (the rework since the last checkpoint is compare's goodput) plus "
                "the running GPUs times the collective bandwidth they lose until repair (an upper bound: a step "
                "loses it only where its communication is exposed)")
