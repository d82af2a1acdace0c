"""`fabricplan sweep`: run a design-space sweep, report on its results, list its outputs, its schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from fabricplan.cli.common import emit_json, stderr, stdout
from fabricplan.cli.plan_cmds import JsonOption
from fabricplan.errors import InputError

sweep_app = typer.Typer(help="Design-space sweeps: many compares over axes, locally or on Ray; Pareto fronts.",
                        no_args_is_help=True)


@sweep_app.command("run")
def run(
    sweep_path: Annotated[Path, typer.Argument(help="Sweep file (YAML or JSON).", metavar="SWEEP",
                                               show_default=False)],
    out: Annotated[Optional[Path], typer.Option(
        "--out", "-o", help="Results folder (a Parquet dataset); default: <name>.sweep beside the sweep file. "
                            "Points already in it are skipped.")] = None,
    executor: Annotated[str, typer.Option(
        "--executor", "-e", help="inprocess, process (a local process pool) or ray.")] = "process",
    workers: Annotated[Optional[int], typer.Option(
        "--workers", "-j", min=1, max=4096, help="Local processes, or CPUs of a local Ray (default: the CPUs here).")
    ] = None,
    batch_size: Annotated[Optional[int], typer.Option(
        "--batch-size", min=1, max=1_000_000, help="Points per task (default: ~8 tasks per worker, at most 200).")
    ] = None,
    ray_address: Annotated[Optional[str], typer.Option(
        "--ray-address", help="Ray cluster to run on (e.g. 10.0.0.1:6379 or ray://host:10001); default: "
                              "a local single-node Ray, stopped at the end. A cluster with token authentication "
                              "gets the token where Ray keeps it (RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH, "
                              "~/.ray/auth_token).")] = None,
    ray_temp_dir: Annotated[Optional[Path], typer.Option(
        "--ray-temp-dir", help="Folder for the sessions and logs of a local Ray (default: Ray's own).")] = None,
    limit: Annotated[Optional[int], typer.Option(
        "--limit", min=1, help="Compute at most this many new points now (the rest on a later run).")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Count the points and stop.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    json_output: JsonOption = False,
) -> None:
    """Run a sweep: a compare at every point, one Parquet row per point; a re-run resumes.

    Every point is a quick compare of the base spec with the axes' values (analytic model); results
    go to one Parquet dataset, one row per point. A re-run skips points already done."""
    from fabricplan.sweep.executors import EXECUTORS, import_ray

    if executor not in EXECUTORS:
        raise InputError(f"unknown executor '{executor}'; choose one of {', '.join(EXECUTORS)}", location="--executor")
    if ray_address is not None and executor != "ray":
        raise InputError("--ray-address needs --executor ray", location="--ray-address")
    if executor == "ray":
        import_ray()  # without Ray: how to install it, before any work
    from fabricplan.sweep import load_sweep
    from fabricplan.sweep.run import run_sweep

    sweep = load_sweep(sweep_path)
    folder = out if out is not None else sweep_path.parent / f"{sweep.name}.sweep"
    if dry_run:
        _dry_run(sweep, folder, json_output)
        return
    bar = _Progress(show=not quiet, limit=limit)
    try:
        summary = run_sweep(sweep, folder, executor=executor, workers=workers, batch_size=batch_size,
                            ray_address=ray_address, ray_temp_dir=str(ray_temp_dir) if ray_temp_dir else None,
                            limit=limit, on_start=bar.on_start, progress=bar.progress, on_stopping=bar.on_stopping,
                            on_wait=_waiting, on_note=_note)
    except KeyboardInterrupt:
        bar.stop()
        stderr.print(f"interrupted: finished batches are saved in {folder}; run again to resume", soft_wrap=True)
        raise typer.Exit(130) from None
    finally:
        bar.stop()
    record = {**summary.__dict__, "points_per_s": summary.points_per_s}
    if json_output:
        emit_json(record, catalog=sweep.context.catalog)
    elif bar.show:
        stderr.print(f"computed {summary.points_computed:,} points ({summary.points_failed:,} with an input error) "
                     f"in {summary.seconds:.1f} s ({points_rate(summary.points_per_s)}); results: {summary.out}",
                     soft_wrap=True)


def points_rate(per_s: float) -> str:
    """Points per second as a person reads it: whole from 10 a second, else with its figures (a slow
    sweep's 0.09 points/s is not "0"), or seconds per point below one a minute."""
    if per_s >= 10:
        return f"{per_s:,.0f} points/s"
    if per_s >= 1 / 60:
        return f"{per_s:.2g} points/s"
    return f"{1 / per_s:,.0f} s per point" if per_s > 0 else "0 points/s"


def _waiting(folder: str) -> None:
    stderr.print(f"waiting: another `fabricplan sweep run` is writing to {folder}; this run goes on when it "
                 "ends and computes only the points it left (Ctrl-C to stop waiting)", soft_wrap=True)


def _note(text: str) -> None:
    stderr.print(f"note: {text}", soft_wrap=True, markup=False, highlight=False)


def _dry_run(sweep, folder: Path, json_output: bool) -> None:  # type: ignore[no-untyped-def]
    """`--dry-run`: the sweep's points, and how many its filters keep."""
    kept = sum(1 for _ in sweep.points())
    summary = {"name": sweep.name, "points_total": sweep.total, "points_kept": kept, "out": str(folder)}
    if json_output:
        emit_json(summary, catalog=sweep.context.catalog)
    else:
        stdout.print(f"{sweep.name}: {sweep.total:,} points, {kept:,} kept by the filters")


class _Progress:
    """What `sweep run` says on stderr while it runs: the plan, a progress bar (neither with
    --quiet) and what a first Ctrl-C does."""

    def __init__(self, *, show: bool, limit: int | None) -> None:
        self.show, self.limit = show, limit
        self.bar = None
        self.task_id = None

    def on_start(self, summary) -> None:  # type: ignore[no-untyped-def]
        if not self.show:
            return
        now = summary.points_now
        kept = "points past a filter" if summary.points_kept is None else f"{summary.points_kept:,} points"
        plan = (f"{kept} ({summary.points_skipped:,} already in {summary.out}); {now:,} to run"
                if summary.points_skipped is not None else  # --limit stopped the scan: the rest not looked at
                f"{kept}; the first {now:,} not yet in {summary.out} to run now (--limit)")
        stderr.print(f"{summary.name}: {plan} on {summary.executor} ({summary.workers} "
                     f"worker{'s' if summary.workers > 1 else ''}, {summary.batch_size} points per batch)",
                     soft_wrap=True)
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.bar = Progress(TextColumn("sweep"), BarColumn(), MofNCompleteColumn(), TaskProgressColumn(),
                            TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TextColumn("ETA"),
                            TimeRemainingColumn(), console=stderr, transient=False)
        self.task_id = self.bar.add_task("sweep", total=now, rate="")
        self.bar.start()

    def progress(self, points: int) -> None:
        if self.bar is not None and self.task_id is not None:
            self.bar.advance(self.task_id, points)
            task = self.bar.tasks[0]
            speed = task.finished_speed or task.speed
            self.bar.update(self.task_id, rate=points_rate(speed) if speed else "")

    @staticmethod
    def on_stopping(running: int) -> None:
        stderr.print(f"stopping: {running} running batch{'es' if running != 1 else ''} finish and are saved; "
                     "Ctrl-C again to stop now", soft_wrap=True)

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()


@sweep_app.command("report")
def report(
    results: Annotated[Path, typer.Argument(help="Results folder of `sweep run`.", metavar="RESULTS",
                                            show_default=False)],
    x: Annotated[Optional[str], typer.Option("--x", help="Axis across the map (path or column); default: the "
                                                         "axis with most values.")] = None,
    y: Annotated[Optional[str], typer.Option("--y", help="Axis down the map; default: the next.")] = None,
    html: Annotated[Optional[Path], typer.Option(
        "--html", help="Also write a self-contained HTML report with plotly charts to this file.")] = None,
    json_output: JsonOption = False,
) -> None:
    """Pareto fronts, the recommended fabric over two axes, crossovers.

    Pareto fronts of cost per useful GPU-hour vs step time per fabric, the recommended fabric as a
    map over two axes, and the crossover surface of each pair of fabrics."""
    from fabricplan.sweep.analysis import analyse
    from fabricplan.sweep.render import analysis_document, terminal_renderables
    from fabricplan.sweep.store import read_results

    if html is not None:
        from fabricplan.io import check_output_path

        check_output_path(html, what="HTML report")
    table, manifest = read_results(results)
    analysis = analyse(table.to_pydict(), manifest, x=x, y=y)
    if html is not None:
        from fabricplan.io import write_text_atomic
        from fabricplan.sweep.render import sweep_html

        write_text_atomic(html, sweep_html(analysis), what="HTML report")
        stderr.print(f"wrote {html}")
    if json_output:
        emit_json(analysis_document(analysis), catalog=manifest.get("catalog_sha256"))
        return
    for renderable in terminal_renderables(analysis):
        stdout.print(renderable)


@sweep_app.command("outputs")
def outputs(json_output: JsonOption = False) -> None:
    """The outputs a sweep file can keep (its `outputs:` list) and the per-point ones."""
    from fabricplan.sweep.adapter import FABRIC_OUTPUTS, POINT_OUTPUTS

    items = {**{name: f"{d} (per fabric)" for name, (d, _f, _t) in FABRIC_OUTPUTS.items()},
             **{name: d for name, (d, _t) in POINT_OUTPUTS.items()}}
    if json_output:
        emit_json(items, catalog=None)
        return
    from fabricplan.report.layout import FitTable

    stdout.print(FitTable(("output", "description"), [[name, d] for name, d in items.items()]))


@sweep_app.command("schema")
def schema(json_output: JsonOption = False) -> None:
    """Print the JSON Schema of a sweep file (always JSON; --json is accepted, as by every command)."""
    from fabricplan.sweep.model import SweepFile

    print(json.dumps(SweepFile.model_json_schema(), indent=2))


def register(app: typer.Typer) -> None:
    """Add the sweep command group to the app."""
    app.add_typer(sweep_app, name="sweep")
