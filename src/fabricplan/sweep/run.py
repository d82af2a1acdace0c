"""Run a sweep: enumerate its points, skip those already in the results folder, run the rest in
batches on an executor and write each finished batch as one part file."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from fabricplan.sweep.evaluate import Task
from fabricplan.sweep.executors import BatchArgs, batch_size_for, default_workers, execute
from fabricplan.sweep.points import Sweep
from fabricplan.sweep.store import ResultStore


@dataclass
class RunSummary:
    """What a run did: points in the sweep, kept by the filters, already done, to compute now,
    computed, with errors. Under a ``limit`` the points past the last one run are not looked at:
    ``points_skipped`` is then None, and so is ``points_kept`` when the sweep has filters."""

    name: str
    out: str
    executor: str
    workers: int
    batch_size: int
    points_total: int
    points_kept: int | None
    points_skipped: int | None
    points_now: int = 0
    points_computed: int = 0
    points_failed: int = 0
    batches_written: int = 0
    seconds: float = 0.0
    ray_nodes: list[str] = field(default_factory=list)

    @property
    def points_per_s(self) -> float:
        return self.points_computed / self.seconds if self.seconds > 0 else 0.0


Progress = Callable[[int], None]  # called with the number of points a finished batch added


def run_sweep(sweep: Sweep, out: str | Path, *, executor: str = "process", workers: int | None = None,
              batch_size: int | None = None, ray_address: str | None = None, ray_temp_dir: str | None = None,
              limit: int | None = None, on_start: Callable[[RunSummary], None] | None = None,
              progress: Progress | None = None, on_stopping: Callable[[int], None] | None = None,
              on_wait: Callable[[str], None] | None = None, on_note: Callable[[str], None] | None = None) -> RunSummary:
    """Compute the sweep's points that ``out`` does not hold yet (``limit``: at most that many now).

    The folder is locked for the run (:class:`ResultStore`): ``on_wait(folder)`` when another run
    holds it (this one waits for it to end, then skips what it stored); ``on_note(text)`` for each
    file that could not be read and was set aside. ``on_stopping(running)``: a first Ctrl-C on the
    process pool, the batches still to finish."""
    with ResultStore(out, sweep, on_wait=on_wait, on_note=on_note) as store:
        return _run_in(store, sweep, out, executor=executor, workers=workers, batch_size=batch_size,
                       ray_address=ray_address, ray_temp_dir=ray_temp_dir, limit=limit, on_start=on_start,
                       progress=progress, on_stopping=on_stopping)


def pending_tasks(sweep: Sweep, done: set[str], limit: int | None) -> tuple[list[Task], int | None, int | None]:
    """The points to compute now (not in ``done``; at most ``limit``), the points the filters keep and
    those already done. Points are made one at a time: with a ``limit`` the scan stops at the
    ``limit``-th new point (``--limit 1`` of a 10-million-point sweep makes a point or two, not 10
    million tasks), and the counts it did not reach are None (the kept count is the total when the
    sweep has no filters)."""
    tasks: list[Task] = []
    kept = 0
    for index, values in sweep.points():
        kept += 1
        point_id = sweep.point_id(values)
        if point_id not in done:
            tasks.append((index, point_id, values))
            if limit is not None and len(tasks) >= limit:
                break
    else:
        return tasks, kept, kept - len(tasks)
    if kept == sweep.total:  # stopped at the last point: every count is known
        return tasks, kept, kept - len(tasks)
    return tasks, (sweep.total if not sweep.conditions else None), None


def _run_in(store: ResultStore, sweep: Sweep, out: str | Path, *, executor: str, workers: int | None,
            batch_size: int | None, ray_address: str | None, ray_temp_dir: str | None, limit: int | None,
            on_start: Callable[[RunSummary], None] | None, progress: Progress | None,
            on_stopping: Callable[[int], None] | None) -> RunSummary:
    done = store.done_ids()
    workers = 1 if executor == "inprocess" else workers or default_workers()
    tasks, kept, skipped = pending_tasks(sweep, done, limit)
    size = batch_size_for(len(tasks), workers, batch_size)
    summary = RunSummary(name=sweep.name, out=str(out), executor=executor, workers=workers, batch_size=size,
                         points_total=sweep.total, points_kept=kept, points_skipped=skipped, points_now=len(tasks))
    if on_start:
        on_start(summary)
    if not tasks:
        return summary
    batches = [tasks[i:i + size] for i in range(0, len(tasks), size)]
    json_axes = frozenset(p for p, kind in sweep.arrow_types.items() if kind == "json")
    args = BatchArgs(columns=sweep.columns, json_axes=json_axes)
    start = time.perf_counter()
    try:
        info: dict[str, list[str]] = {}
        # closing: an error in writing a batch ends the executor now (its pool, its Ctrl-C handler),
        # not whenever the suspended generator is collected.
        with closing(execute(executor, sweep.context, batches, args, workers=workers, ray_address=ray_address,
                             ray_temp_dir=ray_temp_dir, info=info, on_stopping=on_stopping)) as results:
            for rows in results:
                summary.ray_nodes = info.get("ray_nodes", [])
                store.write(rows)
                summary.batches_written += 1
                summary.points_computed += len(rows)
                summary.points_failed += sum(1 for r in rows if r["error"] is not None)
                if progress:
                    progress(len(rows))
    finally:
        summary.seconds = time.perf_counter() - start
    return summary
