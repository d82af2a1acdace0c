"""Terminal tables and JSON documents of the performance commands (``collective``, ``step``).

The CLI parses, calls and prints; the shape of what it prints lives here, beside the other reports.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Group, RenderableType

from fabricplan.perf.collectives import CollectiveResult
from fabricplan.perf.step import StepResult
from fabricplan.report.layout import FitTable, plural


def collective_document(results: Sequence[CollectiveResult], sweep: bool) -> Any:
    """``collective --json``: one result, or ``{"results": [...]}`` for a size sweep (an object, as
    every document is, so it carries the version and catalog stamp; `step --json` is shaped alike)."""
    return {"results": [r.as_dict() for r in results]} if sweep else results[0].as_dict()


def collective_table(results: Sequence[CollectiveResult]) -> RenderableType:
    """An nccl-tests-style table: size, time, algbw, busbw and NCCL's choice per size."""
    first = results[0]
    headers = ("size (B)", "time (us)", "algbw (GB/s)", "busbw (GB/s)", "algo", "proto")
    rows = [[f"{r.size_bytes}", f"{r.time_us:.2f}", f"{r.algbw_gbytes_per_s:.2f}", f"{r.busbw_gbytes_per_s:.2f}",
             r.algorithm, r.protocol] for r in results]
    placed = (f"{first.gpus_per_node} per node" if first.n_nodes * first.gpus_per_node == first.n_gpus else
              f"{first.n_nodes} nodes, >= {first.gpus_per_node} per node")  # a group across nodes partly
    return FitTable(headers, rows, justify=["right"] * 4 + ["left"] * 2,
                    title=f"{first.operation} on {first.fabric}: {plural(first.n_gpus, 'GPU')}, {placed} "
                          f"(NCCL {first.nccl_version} model)")


def step_document(spec_name: str, results: Sequence[StepResult]) -> dict:
    """``step --json``: the spec's name and one result per job and fabric."""
    return {"spec": spec_name, "results": [r.as_dict() for r in results]}


STEP_HEADERS = ("fabric", "step (s)", "compute (s)", "bubble (s)", "exposed comm (s)", "MFU", "tokens/s",
                "GPU-hours")


def step_table(spec_name: str, results: Sequence[StepResult]) -> RenderableType:
    """Step time, its parts, MFU, tokens/s and GPU-hours: one table per job, one row per fabric.

    Exposed communication lists its non-zero parts (tp, pp, dp, ep) one per line.
    """
    by_job: dict[str, list[StepResult]] = {}
    for r in results:
        by_job.setdefault(r.job, []).append(r)
    parts: list[RenderableType] = []
    for job, job_results in by_job.items():
        if job_results[0].serving is not None:
            parts.append(serving_table(spec_name, job, job_results))
            parts.extend(_memory_lines(job_results[0]))
            continue
        rows = []
        for r in job_results:
            exposed = "\n".join(f"{k} {v:.2f}" for k, v in r.exposed_comm_s.items() if v > 0) or "0"
            hours = f"{r.gpu_hours_for_budget:,.0f}" if r.gpu_hours_for_budget else "-"
            rows.append([r.fabric, f"{r.step_time_s:.3f}", f"{r.compute_s:.3f}", f"{r.bubble_s:.3f}", exposed,
                         f"{r.mfu:.1%}", f"{r.tokens_per_s:,.0f}", hours])
        parts.append(FitTable(STEP_HEADERS, rows, title=f"Training step time: {spec_name}, job {job}",
                              justify=["left"] + ["right"] * 7))
        parts.extend(_memory_lines(job_results[0]))
        parts.extend(_fabric_note_lines(job_results))
    return Group(*parts)


SERVING_HEADERS = ("fabric", "TTFT (ms)", "TPOT (ms)", "within SLOs", "tokens/s per GPU", "KV transfer (ms)",
                   "decode batch")


def serving_table(spec_name: str, job: str, results: Sequence[StepResult]) -> RenderableType:
    """A serving job on each fabric: what its users see (TTFT, TPOT, the share within SLOs), its
    throughput per GPU, the KV transfer of a disaggregated job and the decode batch."""
    rows = []
    for r in results:
        m = r.serving
        rows.append([r.fabric, f"{m.ttft_s * 1e3:,.1f}", f"{m.tpot_s * 1e3:,.2f}", f"{m.slo_attainment:.1%}",
                     f"{m.tokens_per_s_per_gpu:,.0f}", f"{m.kv_transfer_s * 1e3:,.2f}" if m.kv_transfer_s else "-",
                     f"{m.decode_batch:,.1f}"])
    slo = results[0].serving
    return FitTable(SERVING_HEADERS, rows, title=f"Serving: {spec_name}, job {job} (SLOs: TTFT "
                                                  f"{slo.ttft_slo_s * 1e3:,.0f} ms, TPOT {slo.tpot_slo_s * 1e3:,.0f} ms)",
                    justify=["left"] + ["right"] * 6)


def _fabric_note_lines(results: Sequence[StepResult]) -> list[RenderableType]:
    """Notes that differ by fabric (data-parallel traffic per micro-batch), one line per fabric."""
    from rich.text import Text

    return [Text(f"note: {r.fabric}: {note}", style="dim") for r in results for note in r.notes
            if note.startswith("ZeRO")]


GIB = 2**30


def _memory_lines(result: StepResult) -> list[RenderableType]:
    """Memory per GPU (the same on every fabric) and its parts, flagged when over capacity."""
    from rich.text import Text

    used = getattr(result, "memory_per_gpu_bytes", None)
    capacity = getattr(result, "memory_capacity_bytes", None)
    if not used or not capacity:
        return []
    parts = ", ".join(f"{name.replace('_', ' ')} {value / GIB:,.1f}"
                      for name, value in (result.memory_breakdown_bytes or {}).items() if value > 0)
    flag = "" if result.memory_fits else "  ⚠ over capacity (estimate)"
    lines: list[RenderableType] = [Text(f"memory per GPU: {used / GIB:,.1f} of {capacity / GIB:,.1f} GiB{flag}")]
    if parts:
        lines.append(Text(f"  ({parts} GiB)", style="dim"))
    lines += [Text(f"note: {note}", style="dim") for note in result.notes if note.startswith("memory:")]
    return lines
