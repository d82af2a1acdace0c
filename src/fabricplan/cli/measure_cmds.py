"""Measurement commands: `calibrate` (fit the catalog's calibratable parameters to nccl-tests and
perftest logs, write an overlay) and `check-measured` (model vs measured against a design)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.text import Text

from fabricplan.cli.common import emit_json, stderr, stdout
from fabricplan.cli.plan_cmds import CatalogOption
from fabricplan.errors import InputError

OPERATIONS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv", "broadcast", "reduce")


def _read(logs: list[Path], op: Optional[str]):
    from fabricplan.measure.read import read_log

    if op is not None and op not in OPERATIONS:
        raise InputError(f"must be one of {', '.join(OPERATIONS)}, got {op!r}", location="--op")
    read = [read_log(path, operation=op) for path in logs]
    for log in read:
        for run in log.nccl_runs:
            for note in run.notes:
                stderr.print(f"note: {run.where}: {note}")
        for prun in log.perftest_runs:
            for note in prun.notes:
                stderr.print(f"note: {prun.where}: {note}")
    if not any(log.nccl_runs for log in read):
        raise InputError("perftest tables only: the fit and the check use nccl-tests rows; add an nccl-tests log "
                         "(all_reduce_perf ...)", location=read[0].file)
    return read


def _system(read, catalog, spec_path, fabric, gpu, nics_per_node, cpu_vendor):
    from fabricplan.measure.system import infer_system

    if cpu_vendor not in ("intel", "amd"):
        raise InputError(f"must be intel or amd, got {cpu_vendor!r}", location="--cpu-vendor")
    if nics_per_node is not None and not 1 <= nics_per_node <= 1024:
        raise InputError(f"must be 1..1024, got {nics_per_node}", location="--nics-per-node")
    spec = None
    if spec_path is not None:
        from fabricplan.spec import load_spec

        spec = load_spec(spec_path, catalog)
    system = infer_system(read, catalog, spec=spec, fabric=fabric, gpu=gpu, nics_per_node=nics_per_node,
                          cpu_vendor=cpu_vendor)
    for note in system.notes:  # the logs' GPU is not the one judged: say so where it cannot be missed
        if note.startswith("WARNING: "):
            stderr.print(Text("warning: " + note.removeprefix("WARNING: ")), soft_wrap=True)
    return system


def calibrate_command(
    logs: list[Path] = typer.Argument(..., help="nccl-tests and perftest logs (one or more files)", metavar="LOG..."),
    out: Optional[Path] = typer.Option(None, "--out", help="Overlay to write (YAML; use it with --catalog); "
                                                           "without it the fit is reported, nothing is written."),
    spec: Optional[Path] = typer.Option(None, "--spec", help="Cluster spec: the system the logs were measured on."),
    fabric: Optional[str] = typer.Option(None, "--fabric", help="Catalog fabric profile (default: the spec's or "
                                                                "inferred from the logs)."),
    gpu: Optional[str] = typer.Option(None, "--gpu", help="Catalog GPU id (default: from the logs' device names)."),
    nics_per_node: Optional[int] = typer.Option(None, "--nics-per-node", help="Default: the NET/IB line, else 1/GPU."),
    cpu_vendor: str = typer.Option("intel", "--cpu-vendor", help="intel or amd (NCCL's network overhead)."),
    op: Optional[str] = typer.Option(None, "--op", help="Collective of runs whose log does not name it."),
    no_cross_validation: bool = typer.Option(False, "--no-cross-validation", help="Skip the cross-validation fits."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
    catalog: CatalogOption = None,
) -> None:
    """Fit the model's calibratable parameters to measured logs; report the fit, warn on a poor one, and
    with --out write the values as a --catalog overlay."""
    from fabricplan.catalog import load_catalog
    from fabricplan.io import check_output_path
    from fabricplan.measure.fit import calibrate, overlay_document, write_overlay
    from fabricplan.report.measure_tables import calibration_document, calibration_report

    if out is not None:
        check_output_path(out, what="catalog overlay")  # before the fit, not after
    cat = load_catalog(catalog or [])
    read = _read(logs, op)
    system = _system(read, cat, spec, fabric, gpu, nics_per_node, cpu_vendor)
    result = calibrate(read, cat, system, cross_validate=not no_cross_validation)
    overlay = overlay_document(result, cat)
    if out is not None:
        write_overlay(overlay, out, result)
    if not as_json:
        stdout.print(calibration_report(result, str(out) if out is not None else None))
        return
    emit_json(calibration_document(result, overlay, str(out) if out is not None else None), catalog=cat)
    for warning in result.warnings:  # the report holds them; with --json they go to stderr too
        stderr.print(f"warning: {warning}", soft_wrap=True)


def check_measured_command(
    logs: list[Path] = typer.Argument(..., help="nccl-tests and perftest logs (one or more files)", metavar="LOG..."),
    spec: Path = typer.Option(..., "--spec", help="Cluster spec: the design the measurements should match."),
    fabric: Optional[str] = typer.Option(None, "--fabric", help="Fabric of the spec to check (default: its first)."),
    threshold: Optional[float] = typer.Option(None, "--threshold", help="Exit 1 when measured busbw at the largest "
                                              "size is below this share of the design's (default: catalog "
                                              "perf_defaults measured_pass_fraction, 0.9)."),
    latency_threshold: Optional[float] = typer.Option(None, "--latency-threshold", help="Exit 1 when the design's "
                                                      "small-message time / measured is below this (default: "
                                                      "measured_latency_pass_fraction, 0.7)."),
    cpu_vendor: str = typer.Option("intel", "--cpu-vendor", help="intel or amd (NCCL's network overhead)."),
    op: Optional[str] = typer.Option(None, "--op", help="Collective of runs whose log does not name it."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
    html: Optional[Path] = typer.Option(None, "--html", help="Also write a chart of measured vs modelled curves."),
    catalog: CatalogOption = None,
) -> None:
    """Model vs measured per size and collective, a verdict and likely causes; exit 1 below the threshold."""
    from dataclasses import replace

    from fabricplan.catalog import load_catalog
    from fabricplan.measure.check import check_measured
    from fabricplan.report.measure_tables import check_document, check_report

    for name, value in (("--threshold", threshold), ("--latency-threshold", latency_threshold)):
        if value is not None and not 0.0 < value <= 1.0:
            raise InputError(f"must be a share in (0, 1], got {value:g}", location=name)
    if html is not None:
        from fabricplan.io import check_output_path

        check_output_path(html, what="HTML chart")
    cat = load_catalog(catalog or [])
    read = _read(logs, op)
    # The design as specified: SHARP as the profile has it (whether the log engaged it is a cause).
    system = replace(_system(read, cat, spec, fabric, None, None, cpu_vendor), collnet=True)
    result = check_measured(read, cat, system, bandwidth_threshold=threshold, latency_threshold=latency_threshold)
    if html is not None:
        from fabricplan.io import write_text_atomic
        from fabricplan.report.measure_tables import check_html

        write_text_atomic(html, check_html(result), what="HTML chart")
    if as_json:
        emit_json(check_document(result), catalog=cat)
    else:
        stdout.print(check_report(result))
    if not result.passed:
        raise typer.Exit(code=1)


def register(app: typer.Typer) -> None:
    """Add ``calibrate`` and ``check-measured`` to the app."""
    app.command("calibrate")(calibrate_command)
    app.command("check-measured")(check_measured_command)
