"""``fabricplan health``: telemetry (files or a live Prometheus) against SLOs."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Optional

import typer
from rich.text import Text

from fabricplan.cli.common import emit_json, stderr, stdout
from fabricplan.cli.plan_cmds import CatalogOption
from fabricplan.errors import InputError

FAIL_ON = ("error", "warning", "info", "never")
#: Program limits of the time flags: a query step or watch interval from 1 ms to a year; a
#: relative time (now-OFFSET) at most 100 years back.
DURATION_RANGE_S = (0.001, 366 * 86400)
MAX_OFFSET_S = 100 * 366 * 86400


def parse_when(text: str, where: str, now_s: float) -> float:
    """``now``, ``now-15m``/``-15m`` (any duration of :mod:`fabricplan.units`; a bare number is
    seconds), epoch seconds or ISO 8601 -> epoch seconds."""
    from fabricplan.ops.readers._common import parse_time

    raw = text.strip().lower()
    if raw.startswith("now") or raw.startswith("-"):
        offset = raw.removeprefix("now").strip()
        if not offset:
            return now_s
        if offset.startswith("-"):
            from fabricplan.units import parse_duration

            return now_s - parse_duration(offset[1:], where, lo=0, hi=MAX_OFFSET_S, noun="offset")
        raise InputError(f"expected now, now-15m, epoch seconds or ISO 8601, got {text[:30]!r}", location=where)
    return parse_time(text, where)


def parse_duration_s(text: str, where: str, noun: str = "duration") -> float:
    """``15s``, ``5m``, ``1h``, ``500ms`` (a bare number is seconds) -> seconds, 1 ms .. 1 year."""
    from fabricplan.units import parse_duration

    return parse_duration(text, where, lo=DURATION_RANGE_S[0], hi=DURATION_RANGE_S[1], noun=noun)


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
    step: str = typer.Option("15s", "--step", help="Prometheus query resolution: 15s, 500ms, 1m (a bare number is seconds)."),
    expected_rtt_us: Optional[float] = typer.Option(None, "--expected-rtt-us", help="Expected RTT [us] the p99.9 is compared with."),
    spec: Optional[Path] = typer.Option(None, "--spec", help="Cluster spec: the expected RTT, pauses and CNPs are what its design gives at the observed load (--load or byte counters)."),
    fabric: Optional[str] = typer.Option(None, "--fabric", help="With --spec: which of its fabrics runs (if it lists several)."),
    load: Optional[str] = typer.Option(None, "--load", help="With --spec: link utilisation the design is judged at (0.6 or 60%); default: each port's byte counters."),
    baseline_window: Optional[str] = typer.Option(None, "--baseline-window", help="Quiet window START..END: each RTT pair's p99.9 there is its baseline."),
    jobs: Optional[Path] = typer.Option(None, "--jobs", help="YAML 'jobs: {name: [host or pattern, ...]}': name the jobs on each unhealthy port."),
    config: Optional[Path] = typer.Option(None, "--config", help="Health config YAML (lint config format): disable checks, set severities/thresholds."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON document."),
    html: Optional[Path] = typer.Option(None, "--html", help="Write an HTML report with time-series charts of the offending counters."),
    all_ports: bool = typer.Option(False, "--all-ports", help="Per-port table: every port, not only those with findings."),
    save_telemetry: Optional[Path] = typer.Option(None, "--save-telemetry", help="Write what was read as .npz (fast re-read with --telemetry)."),
    fail_on: str = typer.Option("error", "--fail-on", help="Exit 1 if a finding is at or above: error, warning, info, never."),
    watch: Optional[str] = typer.Option(None, "--watch", help="With --prometheus: re-evaluate every INTERVAL (30s, 5m; a bare number is seconds) and print changes."),
    iterations: int = typer.Option(0, "--iterations", help="With --watch: stop after N evaluations (0 = until Ctrl-C)."),
    catalog: CatalogOption = None,
) -> None:
    """Check RDMA/RoCE/InfiniBand telemetry (files or a live Prometheus) against SLOs."""
    from fabricplan.catalog import load_catalog
    from fabricplan.ops.health import clip, evaluate
    from fabricplan.ops.health.checks import CHECKS
    from fabricplan.ops.lint.config import load_config
    from fabricplan.ops.lint.finding import severity_rank
    from fabricplan.ops.readers.telemetry import read_input
    from fabricplan.ops.telemetry import Telemetry

    if fail_on not in FAIL_ON:
        raise InputError(f"must be one of {', '.join(FAIL_ON)}, got {fail_on!r}", location="--fail-on")
    files = [("ethtool", ethtool), ("hw_counters", hw_counters), ("perfquery", perfquery), ("prom", prom_text),
             ("rtt", rtt), ("npz", telemetry), ("pfcwd", pfcwd), ("rdma_stat", rdma_stat)]
    if prometheus is None and not any(paths for _k, paths in files):
        raise InputError("nothing to check: give telemetry files (--ethtool, --hw-counters, --perfquery, --prom-text, "
                         "--rtt, --telemetry, --pfcwd, --rdma-stat) or --prometheus URL", location="health")
    if watch is not None and prometheus is None:
        raise InputError("--watch needs --prometheus (files do not change)", location="--watch")
    if iterations < 0:
        raise InputError(f"must be >= 0, got {iterations}", location="--iterations")
    if sum(x is not None for x in (expected_rtt_us, spec, baseline_window)) > 1:
        raise InputError("give one RTT baseline: --expected-rtt-us, --spec or --baseline-window", location="--spec")
    if expected_rtt_us is not None and not 0 < expected_rtt_us < 1e9:
        raise InputError(f"must be > 0 us, got {expected_rtt_us:g}", location="--expected-rtt-us")
    if fabric is not None and spec is None:
        raise InputError("--fabric chooses a fabric of --spec", location="--fabric")
    if load is not None and spec is None:
        raise InputError("--load needs --spec (the design judged at that load)", location="--load")
    stated_load = parse_load(load) if load is not None else None
    step_s = parse_duration_s(step, "--step", noun="query step")
    from fabricplan.io import check_output_path

    for output, what in ((html, "HTML report"), (save_telemetry, "telemetry file")):
        if output is not None:
            check_output_path(output, what=what)
    watch_s = parse_duration_s(watch, "--watch", noun="watch interval") if watch is not None else None
    cat = load_catalog(catalog or [])
    cfg = load_config(config, CHECKS, cat)
    from fabricplan.ops.health.engine import read_jobs

    job_hosts = read_jobs(jobs) if jobs is not None else None
    now = time.time()
    baseline_source = None
    load_model = None
    if spec is not None:
        from fabricplan.api import expected_under_load

        load_model = expected_under_load(spec, fabric, cat, load=stated_load)
        # pairs whose load is unknown are judged against the unloaded RTT
        expected_rtt_us, baseline_source = load_model.unloaded_rtt_us, load_model.unloaded_source
    window = None
    if baseline_window is not None:
        lo, sep, hi = baseline_window.partition("..")
        if not sep:
            raise InputError("expected START..END", location="--baseline-window")
        window = (parse_when(lo, "--baseline-window", now), parse_when(hi, "--baseline-window", now))

    def read_all(now_s: float) -> Telemetry:
        read = Telemetry()
        for kind, paths in files:
            for path in paths or []:
                read.extend(read_input(kind, path))
        if prometheus is not None:
            from fabricplan.ops.readers.prometheus_api import read_prometheus

            lo_s = parse_when(start or "now-15m", "--start", now_s)
            hi_s = parse_when(end or "now", "--end", now_s)
            read.extend(read_prometheus(prometheus, lo_s, hi_s, step_s, catalog=cat))
        elif start is not None or end is not None:
            read = clip(read, parse_when(start, "--start", now_s) if start else None,
                        parse_when(end, "--end", now_s) if end else None)
        return read

    def run_once(now_s: float):
        read = read_all(now_s)
        return read, evaluate(read, cfg, cat, expected_rtt_us=expected_rtt_us, expected_rtt_source=baseline_source,
                              baseline_window=window, jobs=job_hosts, load_model=load_model)

    if watch is not None:
        _watch(run_once, watch_s, iterations, json_out)
        return
    read, result = run_once(now)
    if save_telemetry is not None:
        from fabricplan.ops.telemetry import save_npz

        save_npz(read, save_telemetry)
    from fabricplan.ops.health.output import as_json, print_text

    if html is not None:
        from fabricplan.report.health_html import health_html

        text = health_html(result)
        from fabricplan.io import write_text_atomic

        write_text_atomic(html, text, what="HTML report")
        stderr.print(Text(f"wrote {html}"))
    if json_out:
        emit_json(as_json(result))
    else:
        print_text(stdout, result, all_ports=all_ports)
    if fail_on != "never" and any(severity_rank(f.severity) >= severity_rank(fail_on) for f in result.findings):
        raise typer.Exit(code=1)


def _watch(run_once, interval_s: float, iterations: int, json_out: bool) -> None:
    """Evaluate every ``interval_s`` and print what changed: findings that appeared (+) or cleared (-)."""
    import json as jsonlib

    from fabricplan.ops.health.checks._common import stamp

    previous: dict[tuple[str, str, str], object] | None = None
    count = 0
    while True:
        now = time.time()
        _read, result = run_once(now)
        current = {(f.rule_id, f.link, f.message.split(":")[0]): f for f in result.findings}
        if previous is None:
            changes = [("+", f) for f in current.values()]
        else:
            changes = [("+", f) for k, f in current.items() if k not in previous]
            changes += [("-", f) for k, f in previous.items() if k not in current]
        for sign, f in changes:
            if json_out:
                print(jsonlib.dumps({"time": stamp(now), "change": "new" if sign == "+" else "cleared",
                                     **f.as_dict()}, sort_keys=True), flush=True)
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
