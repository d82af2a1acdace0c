"""Terminal tables and JSON documents of the performance commands (``collective``, ``step``).

The CLI parses, calls and prints; the shape of what it prints lives here, beside the other reports.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.table import Table

from fabricplan.perf.collectives import CollectiveResult
from fabricplan.perf.step import StepResult


def collective_document(results: Sequence[CollectiveResult], sweep: bool) -> Any:
    """``collective --json``: one result, or a list for a size sweep."""
    return [r.as_dict() for r in results] if sweep else results[0].as_dict()


def collective_table(results: Sequence[CollectiveResult]) -> Table:
    """An nccl-tests-style table: size, time, algbw, busbw and NCCL's choice per size."""
    first = results[0]
    table = Table(title=f"{first.operation} on {first.fabric}: {first.n_gpus} GPUs, {first.gpus_per_node} per node "
                        f"(NCCL {first.nccl_version} model)")
    for column in ("size (B)", "time (us)", "algbw (GB/s)", "busbw (GB/s)", "algo", "proto"):
        table.add_column(column, justify="right" if "(" in column else "left")
    for r in results:
        table.add_row(f"{r.size_bytes}", f"{r.time_us:.2f}", f"{r.algbw_gbytes_per_s:.2f}",
                      f"{r.busbw_gbytes_per_s:.2f}", r.algorithm, r.protocol)
    return table


def step_document(spec_name: str, results: Sequence[StepResult]) -> dict:
    """``step --json``: the spec's name and one result per job and fabric."""
    return {"spec": spec_name, "results": [r.as_dict() for r in results]}


def step_table(spec_name: str, results: Sequence[StepResult]) -> Table:
    """Step time, its parts, MFU, tokens/s and GPU-hours per job and fabric."""
    table = Table(title=f"Training step time: {spec_name}")
    for column in ("job", "fabric", "step (s)", "compute (s)", "bubble (s)", "exposed comm (s)", "MFU",
                   "tokens/s", "GPU-hours"):
        table.add_column(column, justify="left" if column in ("job", "fabric") else "right")
    for r in results:
        exposed = ", ".join(f"{k} {v:.2f}" for k, v in r.exposed_comm_s.items() if v > 0) or "0"
        hours = f"{r.gpu_hours_for_budget:,.0f}" if r.gpu_hours_for_budget else "-"
        table.add_row(r.job, r.fabric, f"{r.step_time_s:.3f}", f"{r.compute_s:.3f}", f"{r.bubble_s:.3f}", exposed,
                      f"{r.mfu:.1%}", f"{r.tokens_per_s:,.0f}", hours)
    return table
