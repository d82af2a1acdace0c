"""``fabricplan health``: telemetry (files or a live Prometheus) against SLOs."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer
from rich.text import Text

from fabricplan.cli.common import catalog_digest, emit_json, stderr, stdout
from fabricplan.cli.plan_cmds import CatalogOption
from fabricplan.errors import InputError

if TYPE_CHECKING:
    from fabricplan.catalog import Catalog
    from fabricplan.ops.health import HealthResult

FAIL_ON = ("error", "warning", "info", "never")


def parse_load(text: str) -> float:
    """``--load``: a utilisation as a fraction (``0.6``) or a percentage (``60%``), in (0, 1]."""
    raw = text.strip()
    percent = raw.endswith("%")
    number = raw[:-1].strip() if percent else raw
    if not re.fullmatch(r"\d+(?:\.\d+)?|\.\d+", number):
        raise InputError(f"expected a utilisation such as 0.6 or 60%, got {text[:30]!r}", location="--load")
    value = float(number) / (100.0 if percent else 1.0)
    if not 0 < value <= 1:
        raise InputError(f"must be a utilisation above 0 and at most 1 (100%), got {text[:30]!r}", location="--load")
    return value


def health_command(
    ethtool: Optional[list[Path]] = typer.Option(None, "--ethtool", help="ethtool -S snapshots with '# time=' headers (repeatable)."),
    hw_counters: Optional[list[Path]] = typer.Option(None, "--hw-counters", help="grep -H dumps of sysfs hw_counters/counters (repeatable)."),
    perfquery: Optional[list[Path]] = typer.Option(None, "--perfquery", help="perfquery [-x] output snapshots (repeatable)."),
    prom_text: Optional[list[Path]] = typer.Option(None, "--prom-text", help="Prometheus exposition text scrapes (node_exporter, infiniband_exporter; repeatable)."),
    pfcwd: Optional[list[Path]] = typer.Option(None, "--pfcwd", help="SONiC 'show pfcwd stats' snapshots with '# time=... host=SWITCH' headers (repeatable)."),
    rdma_stat: Optional[list[Path]] = typer.Option(None, "--rdma-stat", help="'rdma statistic show' snapshots (text or -j JSON) with '# time=' headers (repeatable)."),
    rtt: Optional[list[Path]] = typer.Option(None, "--rtt", help="RTT samples CSV: time,src,dst,rtt_us (repeatable)."),
    telemetry: Optional[list[Path]] = typer.Option(None, "--telemetry", help="A .npz written by --save-telemetry (repeatable)."),
    prometheus: Optional[str] = typer.Option(None, "--prometheus", help="Live Prometheus URL (http://host:9090); rates via PromQL."),
    start: Optional[str] = typer.Option(None, "--start", help="Range start: epoch s, ISO 8601, or now-15m (Prometheus default: now-15m)."),
    end: Optional[str] = typer.Option(None, "--end", help="Range end: epoch s, ISO 8601, or now (Prometheus default: now)."),
    step: str = typer.Option("15s", "--step", help="Prometheus query resolution, e.g. 15s."),
    prometheus_deadline: Optional[str] = typer.Option(None, "--prometheus-deadline", help="Give up on one Prometheus request (retries included) after this long, e.g. 30s (default: ops_defaults health.prometheus_request_deadline_s, 120 s)."),
    expected_rtt_us: Optional[float] = typer.Option(None, "--expected-rtt-us", help="Expected RTT [us] the p99.9 is compared with."),
    spec: Optional[Path] = typer.Option(None, "--spec", help="Cluster spec: the expected RTT, pauses and CNPs are what its design gives at the observed load (--load or byte counters)."),
    fabric: Optional[str] = typer.Option(None, "--fabric", help="With --spec: which of its fabrics runs (if it lists several)."),
    load: Optional[str] = typer.Option(None, "--load", help="With --spec: link utilisation the design is judged at (0.6 or 60%); default: each port's byte counters."),
    baseline_window: Optional[str] = typer.Option(None, "--baseline-window", help="Quiet window START..END: each RTT pair's p99.9 there is its baseline."),
    jobs: Optional[Path] = typer.Option(None, "--jobs", help="YAML 'jobs: {name: [host or pattern, ...]}', hosts as Slurm hostlists (node[01-16]) or patterns (gpu0*): name the jobs on each unhealthy port."),
    config: Optional[Path] = typer.Option(None, "--config", help="Health config YAML (lint config format): disable checks, set severities/thresholds."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON document."),
    html: Optional[Path] = typer.Option(None, "--html", help="Write an HTML report with time-series charts of the offending counters."),
    all_ports: bool = typer.Option(False, "--all-ports", help="Per-port table: every port, not only those with findings."),
    save_telemetry: Optional[Path] = typer.Option(None, "--save-telemetry", help="Write what was read as .npz (fast re-read with --telemetry)."),
    fail_on: str = typer.Option("error", "--fail-on", help="Exit 1 if a finding is at or above: error, warning, info, never."),
    watch: Optional[str] = typer.Option(None, "--watch", help="With --prometheus: re-evaluate every INTERVAL (e.g. 30s) and print changes."),
    iterations: int = typer.Option(0, "--iterations", help="With --watch: stop after N evaluations (0 = until Ctrl-C)."),
    catalog: CatalogOption = None,
) -> None:
    """Check RDMA/RoCE/InfiniBand telemetry (files or a live Prometheus) against SLOs."""
    from fabricplan.api import health
    from fabricplan.ops.health.run import (
        baseline_window_s,
        check_expectations,
        parse_duration_s,
        require_telemetry,
        telemetry_files,
    )
    from fabricplan.ops.lint.finding import severity_rank

    if fail_on not in FAIL_ON:
        raise InputError(f"must be one of {', '.join(FAIL_ON)}, got {fail_on!r}", location="--fail-on")
    # Which flags go together is checked before any value is parsed (health() checks it again).
    sources = {name: paths or [] for name, paths in dict(
        ethtool=ethtool, hw_counters=hw_counters, perfquery=perfquery, prom_text=prom_text, rtt=rtt,
        telemetry=telemetry, pfcwd=pfcwd, rdma_stat=rdma_stat).items()}
    require_telemetry(telemetry_files(**sources), prometheus)
    if watch is not None and prometheus is None:
        raise InputError("--watch needs --prometheus (files do not change)", location="--watch")
    if iterations < 0:
        raise InputError(f"must be >= 0, got {iterations}", location="--iterations")
    check_expectations(expected_rtt_us, spec, baseline_window, fabric, load)
    stated_load = parse_load(load) if load is not None else None
    parse_duration_s(step, "--step", noun="query step")  # a bad step is one line before any read
    if prometheus_deadline is not None:
        if prometheus is None:
            raise InputError("--prometheus-deadline bounds requests to --prometheus", location="--prometheus-deadline")
        parse_duration_s(prometheus_deadline, "--prometheus-deadline", noun="deadline")
    from fabricplan.io import check_output_path

    for output, what in ((html, "HTML report"), (save_telemetry, "telemetry file")):
        if output is not None:
            check_output_path(output, what=what)
    now = time.time()
    # the quiet window is fixed when the command starts, also while --watch re-evaluates
    window = baseline_window_s(baseline_window, now)
    interval_s = parse_duration_s(watch, "--watch", noun="watch interval") if watch is not None else None
    from fabricplan.catalog import load_catalog

    cat = load_catalog(catalog or [])  # once: every evaluation and the JSON's catalog_sha256 use it

    def run_once(now_s: float) -> HealthResult:
        return health(**sources, prometheus=prometheus, start=start, end=end, step=step,
                      expected_rtt_us=expected_rtt_us, spec=spec, fabric=fabric, load=stated_load,
                      baseline_window=window, jobs=jobs, config=config, catalog=cat, now_s=now_s,
                      prometheus_deadline=prometheus_deadline)

    if interval_s is not None:
        _watch(run_once, interval_s, iterations, json_out, cat)
        return
    result = run_once(now)
    _report(result, save_telemetry=save_telemetry, html=html, json_out=json_out, all_ports=all_ports, catalog=cat)
    if fail_on != "never" and any(severity_rank(f.severity) >= severity_rank(fail_on) for f in result.findings):
        raise typer.Exit(code=1)


def _report(result: HealthResult, *, save_telemetry: Path | None, html: Path | None, json_out: bool,
            all_ports: bool, catalog: Catalog) -> None:
    """What was read as .npz (``--save-telemetry``), the HTML report (``--html``), then text or JSON;
    both files whole or not at all (:func:`fabricplan.io.atomic_output`)."""
    if save_telemetry is not None:
        from fabricplan.ops.telemetry import save_npz

        save_npz(result.telemetry, save_telemetry)
    from fabricplan.report.health_output import as_json, print_text

    if html is not None:
        from fabricplan.io import write_text_atomic
        from fabricplan.report.health_html import health_html

        write_text_atomic(html, health_html(result), what="HTML report")
        stderr.print(Text(f"wrote {html}"))
    if json_out:
        emit_json(as_json(result), catalog=catalog)
    else:
        print_text(stdout, result, all_ports=all_ports)


def _watch(run_once, interval_s: float, iterations: int, json_out: bool, catalog: Catalog) -> None:
    """Evaluate every ``interval_s`` and print what changed: findings that appeared (+) or cleared (-);
    with --json one stamped JSON document per line and change."""
    from fabricplan.ops.health.checks._common import stamp
    from fabricplan.report.json_document import document_text

    previous: dict[tuple[str, str, str], object] | None = None
    count = 0
    while True:
        now = time.time()
        result = run_once(now)
        current = {(f.rule_id, f.link, f.message.split(":")[0]): f for f in result.findings}
        if previous is None:
            changes = [("+", f) for f in current.values()]
        else:
            changes = [("+", f) for k, f in current.items() if k not in previous]
            changes += [("-", f) for k, f in previous.items() if k not in current]
        for sign, f in changes:
            if json_out:
                print(document_text({"time": stamp(now), "change": "new" if sign == "+" else "cleared",
                                     **f.as_dict()}, catalog_digest(catalog), indent=None), flush=True)
            else:
                style = "red" if sign == "+" else "green"
                stdout.print(Text(f"{stamp(now)} {sign} {f.severity.upper():<7} {f.rule_id:<7} {f.link}: {f.message}",
                                  style=style), soft_wrap=True)
        if not changes and not json_out:
            stdout.print(Text(f"{stamp(now)} no change ({len(current)} findings)", style="dim"), soft_wrap=True)
        previous = current
        count += 1
        if iterations and count >= iterations:
            return
        time.sleep(max(0.0, interval_s - (time.time() - now)))


def register(app: typer.Typer) -> None:
    """Add ``health`` to the app."""
    app.command("health")(health_command)
