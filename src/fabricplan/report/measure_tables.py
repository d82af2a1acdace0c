"""Reports of the measurement commands: ``calibrate`` (fit report) and ``check-measured`` (model vs
measured, verdict, ranked causes) as terminal tables, JSON documents and an HTML chart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from fabricplan.measure.check import OPERATION_TITLES, CheckResult, size_text
from fabricplan.measure.fit import CalibrationResult
from fabricplan.report.layout import FitTable, Lines


def _us(value: float) -> str:
    """A time as nccl-tests prints it: 2 decimals below 100 us, 1 below 10 ms, none above."""
    return f"{value:,.2f}" if value < 100 else f"{value:,.1f}" if value < 1e4 else f"{value:,.0f}"


def _num(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}g}"


def calibration_document(result: CalibrationResult, overlay: dict, out: str | None) -> dict[str, Any]:
    """``calibrate --json``."""
    return {
        "system": result.system.describe(),
        "files": list(result.files),
        "parameters": [{"name": p.name, "path": p.path, "unit": p.unit, "before": p.initial, "value": p.value,
                        "stddev": p.stddev, "lower": p.lower, "upper": p.upper, "status": p.status}
                       for p in result.parameters],
        "rms_log_error_before": result.rms_log_error_before,
        "rms_log_error_after": result.rms_log_error_after,
        "rows": [{"where": r.where, "operation": r.operation, "size_bytes": r.size_bytes, "gpus": r.n_gpus,
                  "gpus_per_node": r.ranks_per_node, "measured_us": r.measured_us, "model_us": r.model_us,
                  "error": r.error, "algorithm": r.algorithm or r.model_algorithm, "left_out": r.reason}
                 for r in result.rows],
        "cross_validation": [{"name": c.name, "fit_rows": c.fit_rows, "held_out_rows": c.held_out_rows,
                              "median_abs_error": c.median_abs_error, "max_abs_error": c.max_abs_error,
                              "detail": c.detail} for c in result.cross_validation],
        "warnings": list(result.warnings),
        "overlay": overlay,
        "out": out,
    }


def calibration_report(result: CalibrationResult, out: str | None) -> RenderableType:
    """The fit report: system, parameters with uncertainty, residual per row, rows left out, cross-validation."""
    system = result.system.describe()
    head = Text("\n".join([f"Calibrated from {', '.join(result.files)}",
                           f"System: {system['gpu']}, fabric {system['fabric']}, {system['nics_per_node']} NICs per "
                           f"node, NCCL tuner {system['nccl_tuner_release']}",
                           *[f"  - {note}" for note in system["notes"]]]))
    params = FitTable(("parameter (catalog path)", "before", "fitted", "± 1 sd", "bounds", "status"),
                      [[f"{p.name}\n{p.path}", _num(p.initial), _num(p.value), _num(p.stddev, 2),
                        f"{p.lower:.3g}..{p.upper:.3g} {p.unit}", p.status] for p in result.parameters],
                      title="Calibratable parameters")
    used = result.used

    def where(row) -> str:  # the line alone when there is one file
        return str(row.line) if len(result.files) == 1 else f"{Path(row.file).name}:{row.line}"

    rows = FitTable(("line", "collective", "size", "GPUs", "measured (us)", "model (us)", "error", "algorithm"),
                    [[where(r), r.operation, size_text(r.size_bytes),
                      f"{r.n_gpus} ({r.ranks_per_node}/node)",
                      _us(r.measured_us), _us(r.model_us), f"{r.error:+.1%}", r.algorithm or r.model_algorithm
                      or ""] for r in used],
                    justify=["left", "left", "right", "right", "right", "right", "right", "left"],
                    title=f"Residuals per row ({len(used)} used; rms |ln(model/measured)| "
                          f"{result.rms_log_error_before:.3f} before, {result.rms_log_error_after:.3f} after)")
    parts: list[RenderableType] = [head, params, rows]
    if result.left_out:
        parts.append(FitTable(("line", "size", "why left out"),
                              [[where(r), size_text(r.size_bytes), r.reason or ""]
                               for r in result.left_out],
                              title=f"Rows left out ({len(result.left_out)})"))
    if result.cross_validation:
        parts.append(FitTable(("cross-validation", "fit rows", "held out", "median |error|", "max |error|", "detail"),
                              [[c.name, str(c.fit_rows), str(c.held_out_rows), f"{c.median_abs_error:.1%}",
                                f"{c.max_abs_error:.1%}", c.detail] for c in result.cross_validation],
                              title="Cross-validation: fit on part, predict the rest"))
    else:
        parts.append(Text("Cross-validation: too few sizes or node counts (needs 4 sizes or 2 node counts)"))
    for warning in result.warnings:
        parts.append(Lines([("warning: ", warning)], style="bold yellow"))
    if out:
        parts.append(Text(f"Wrote {out}: use it with --catalog {out}"))
    else:
        parts.append(Text("No overlay written: give --out overlay.yaml to write the fitted values as a "
                          "--catalog overlay (--json shows it)."))
    return Group(*parts)


def check_document(result: CheckResult) -> dict[str, Any]:
    """``check-measured --json``."""
    return {
        "passed": result.passed,
        "summary": result.summary,
        "thresholds": {"bandwidth": result.bandwidth_threshold, "latency": result.latency_threshold},
        "system": result.system.describe(),
        "verdicts": [{"operation": v.operation, "gpus": v.n_gpus, "large_size_bytes": v.large_size,
                      "busbw_ratio": v.bandwidth_ratio, "small_size_bytes": v.small_size,
                      "latency_ratio": v.latency_ratio, "bandwidth_ok": v.bandwidth_ok, "latency_ok": v.latency_ok}
                     for v in result.verdicts],
        "causes": [{"rank": i + 1, "key": c.key, "title": c.title, "kind": c.kind, "explained": c.explained,
                    "score": c.score, "alone": c.alone, "evidence_weight": c.weight, "detail": c.detail,
                    "evidence": c.evidence, "applicable": c.applicable}
                   for i, c in enumerate(result.causes)],
        "points": [{"where": p.where, "operation": p.operation, "gpus": p.n_gpus, "size_bytes": p.size_bytes,
                    "measured_us": p.measured_us, "model_us": p.model_us, "measured_busbw_gbytes_per_s":
                    p.measured_busbw, "model_busbw_gbytes_per_s": p.model_busbw, "ratio": p.ratio,
                    "model_algorithm": p.algorithm} for p in result.points],
        "left_out": [{"where": r.where, "reason": r.reason} for r in result.left_out],
    }


def check_report(result: CheckResult) -> RenderableType:
    """Verdict, model vs measured per size, ranked causes."""
    verdict = Text(("PASS: " if result.passed else "FAIL: ") + result.summary)
    tables: list[RenderableType] = [verdict]
    groups: dict[tuple[str, int], list] = {}
    for p in result.points:
        groups.setdefault((p.operation, p.n_gpus), []).append(p)
    for (op, n), pts in groups.items():
        tables.append(FitTable(("size", "measured (us)", "model (us)", "measured busbw", "model busbw",
                                "measured/model", "model algorithm"),
                               [[size_text(p.size_bytes), _us(p.measured_us), _us(p.model_us),
                                 f"{p.measured_busbw:.2f}", f"{p.model_busbw:.2f}", f"{p.ratio:.0%}", p.algorithm]
                                for p in sorted(pts, key=lambda p: p.size_bytes)],
                               justify=["right"] * 6 + ["left"],
                               title=f"{OPERATION_TITLES.get(op, op)}, {n} GPUs: measured vs this design (busbw GB/s)"))
    tables.append(FitTable(CAUSE_HEADERS, cause_rows(result), title=CAUSES_TITLE))
    skipped = not_applicable(result)
    if skipped:
        tables.append(Text(skipped))
    return Group(*tables)


CAUSE_HEADERS = ("#", "likely cause", "adds", "alone", "what the model fitted", "log evidence")
CAUSES_TITLE = ("Likely causes, ranked from the model (adds: share of the gap it explains on top of those above; "
                "alone: as the only fault)")


def cause_rows(result: CheckResult) -> list[list[str]]:
    """The ranked applicable causes, one row each (`CAUSE_HEADERS`): the terminal and the HTML show the same."""
    causes = [c for c in result.causes if c.applicable]
    return [[str(i + 1), c.title, f"{c.explained:.0%}", f"{c.alone:.0%}", c.detail, c.evidence or "-"]
            for i, c in enumerate(causes)]


def not_applicable(result: CheckResult) -> str | None:
    """The causes that do not apply to this system, with why, as one line (None: all apply)."""
    skipped = [c for c in result.causes if not c.applicable]
    if not skipped:
        return None
    return "Not applicable: " + "; ".join(f"{c.title.split(' (')[0]} ({c.detail})" for c in skipped)


#: Layout only: one colour per collective and GPU count, the same in both panels (measured: markers, design: line).
CURVE_COLOURS = ("#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#eeca3b", "#9d755d")


def check_figure(result: CheckResult) -> Any:
    """Measured (markers) and modelled (line) busbw and time per size, one colour per collective and GPU
    count in both panels; a legend entry per curve toggles it in both."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    from fabricplan.report.compare_charts import FONT_FAMILY

    figure = make_subplots(rows=1, cols=2, subplot_titles=("bus bandwidth", "time"), horizontal_spacing=0.1)
    groups: dict[tuple[str, int], list] = {}
    for p in result.points:
        groups.setdefault((p.operation, p.n_gpus), []).append(p)
    for k, ((op, n), pts) in enumerate(groups.items()):
        pts = sorted(pts, key=lambda p: p.size_bytes)
        label = f"{OPERATION_TITLES.get(op, op)} {n} GPUs"
        colour = CURVE_COLOURS[k % len(CURVE_COLOURS)]
        x = [p.size_bytes for p in pts]
        sizes = [size_text(p.size_bytes) for p in pts]
        for col, (measured, model, unit) in enumerate(
                (([p.measured_busbw for p in pts], [p.model_busbw for p in pts], "GB/s"),
                 ([p.measured_us for p in pts], [p.model_us for p in pts], "us")), start=1):
            figure.add_trace(go.Scatter(
                x=x, y=measured, mode="markers", name=f"{label}: measured", legendgroup=f"{label}: measured",
                showlegend=col == 1, marker={"color": colour, "size": 7}, customdata=sizes,
                hovertemplate=f"%{{customdata}}: %{{y:.4g}} {unit} measured<extra>{label}</extra>"), row=1, col=col)
            figure.add_trace(go.Scatter(
                x=x, y=model, mode="lines", name=f"{label}: design", legendgroup=f"{label}: design",
                showlegend=col == 1, line={"color": colour, "width": 2}, customdata=sizes,
                hovertemplate=f"%{{customdata}}: %{{y:.4g}} {unit} design<extra>{label}</extra>"), row=1, col=col)
    figure.update_xaxes(type="log", title_text="message size (bytes)")
    figure.update_yaxes(title_text="busbw (GB/s)", rangemode="tozero", row=1, col=1)
    figure.update_yaxes(type="log", title_text="time (us)", row=1, col=2)
    figure.update_layout(template="plotly_white", height=480, font={"family": FONT_FAMILY},
                         legend={"orientation": "h", "yanchor": "top", "y": -0.18},
                         margin={"l": 70, "r": 30, "t": 60, "b": 120})
    return figure


def check_html(result: CheckResult) -> str:
    """A self-contained page on the reports' base layout and stylesheet (`check_measured.html.j2`):
    the verdict, the chart (`check_figure`) and the same ranked causes as the terminal (`cause_rows`),
    with the ones that do not apply."""
    from fabricplan.report.pages import figure_div, render

    return render("check_measured.html.j2", title="Measured vs design", command="check-measured", charts=True,
                  status="PASS" if result.passed else "FAIL", summary=result.summary,
                  chart=figure_div(check_figure(result), "chart-measured"), causes_title=CAUSES_TITLE,
                  causes={"headers": CAUSE_HEADERS, "rows": cause_rows(result)}, skipped=not_applicable(result))
