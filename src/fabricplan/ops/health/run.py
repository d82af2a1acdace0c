"""One health run: its inputs checked, the telemetry read from every source, the checks evaluated.

:func:`fabricplan.health` composes these with the design's expectations under load
(``api.expected_under_load``, which ``ops`` may not import); ``fabricplan health`` calls that. Times
are epoch seconds, or text as the command line takes it: ``now``, ``now-15m`` / ``-15m`` (s, m, h,
d before ``now_s``), epoch seconds or ISO 8601; durations are seconds or ``15s``, ``5m``, ``1h``.
Error locations name the command's flags, as the rest of the health readers do.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fabricplan.errors import InputError
from fabricplan.ops.health.engine import HealthResult, clip, evaluate, read_jobs
from fabricplan.ops.lint.config import LintConfig
from fabricplan.ops.telemetry import Telemetry

#: Telemetry files of one run: (reader kind of ``readers.telemetry.read_input``, paths), read in order.
TelemetryFiles = Sequence[tuple[str, Sequence[str | Path]]]
#: The source keywords of :func:`telemetry_files` (and ``fabricplan.health``) -> reader kind, in the
#: order the files are read.
FILE_KINDS = {"ethtool": "ethtool", "hw_counters": "hw_counters", "perfquery": "perfquery", "prom_text": "prom",
              "rtt": "rtt", "telemetry": "npz", "pfcwd": "pfcwd", "rdma_stat": "rdma_stat"}
#: The range read from a live Prometheus when the run names none (the command's --start default).
DEFAULT_START = "now-15m"
DEFAULT_END = "now"

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


def epoch_s(value: float | str | None, where: str, now_s: float) -> float | None:
    """A time given as epoch seconds or as text (:func:`parse_when`); None stays None."""
    if value is None or not isinstance(value, str):
        return value
    return parse_when(value, where, now_s)


def seconds(value: float | str, where: str) -> float:
    """A duration given as seconds or as text (:func:`parse_duration_s`)."""
    return parse_duration_s(value, where) if isinstance(value, str) else float(value)


def baseline_window_s(window: tuple[float | str, float | str] | str | None,
                      now_s: float) -> tuple[float, float] | None:
    """A quiet window as (start, end) epoch seconds, from a pair or from ``START..END`` text."""
    if window is None:
        return None
    if isinstance(window, str):
        lo, sep, hi = window.partition("..")
        if not sep:
            raise InputError("expected START..END", location="--baseline-window")
        window = (lo, hi)
    return epoch_s(window[0], "--baseline-window", now_s), epoch_s(window[1], "--baseline-window", now_s)


def telemetry_files(**sources: str | Path | Sequence[str | Path] | None) -> list[tuple[str, list[str | Path]]]:
    """The files of each source keyword of :data:`FILE_KINDS` (one path or several; None = none) as
    (reader kind, paths), in reading order."""
    unknown = sorted(set(sources) - set(FILE_KINDS))
    if unknown:
        raise InputError(f"unknown telemetry source {unknown[0]!r}; known: {', '.join(FILE_KINDS)}", location="health")
    out = []
    for name, kind in FILE_KINDS.items():
        paths = sources.get(name)
        out.append((kind, [paths] if isinstance(paths, (str, Path)) else list(paths or [])))
    return out


def require_telemetry(files: TelemetryFiles, prometheus: str | None) -> None:
    """Something to read: telemetry files of some kind, or a live Prometheus."""
    if prometheus is None and not any(paths for _kind, paths in files):
        raise InputError("nothing to check: give telemetry files (--ethtool, --hw-counters, --perfquery, --prom-text, "
                         "--rtt, --telemetry, --pfcwd, --rdma-stat) or --prometheus URL", location="health")


def check_expectations(expected_rtt_us: float | None, spec: Any, baseline_window: Any, fabric: str | None,
                       load: Any) -> None:
    """One RTT baseline at most (a stated RTT, a design, or a quiet window), a stated RTT above 0,
    and a fabric or a load only with a design (``spec``)."""
    if sum(x is not None for x in (expected_rtt_us, spec, baseline_window)) > 1:
        raise InputError("give one RTT baseline: --expected-rtt-us, --spec or --baseline-window", location="--spec")
    if expected_rtt_us is not None and not 0 < expected_rtt_us < 1e9:
        raise InputError(f"must be > 0 us, got {expected_rtt_us:g}", location="--expected-rtt-us")
    if fabric is not None and spec is None:
        raise InputError("--fabric chooses a fabric of --spec", location="--fabric")
    if load is not None and spec is None:
        raise InputError("--load needs --spec (the design judged at that load)", location="--load")


def health_inputs(config: str | Path | None, jobs: str | Path | None,
                  catalog: Any) -> tuple[LintConfig, dict[str, list[str]] | None]:
    """The health config (lint config format; None = the checks' defaults from ``catalog``) and the
    jobs file's hosts per job (None without one)."""
    from fabricplan.ops.health.checks import CHECKS
    from fabricplan.ops.lint.config import load_config

    return load_config(config, CHECKS, catalog), (read_jobs(jobs) if jobs is not None else None)


def read_telemetry(files: TelemetryFiles, *, prometheus: str | None = None, start: float | str | None = None,
                   end: float | str | None = None, step_s: float = 15.0, now_s: float | None = None,
                   catalog: Any, prometheus_deadline_s: float | None = None) -> Telemetry:
    """Every file in ``files`` (in order), then a live Prometheus between ``start`` and ``end``
    (default: the 15 minutes before ``now_s``) at ``step_s``, each request within
    ``prometheus_deadline_s`` (default: the catalog's); without one, the files' readings between
    ``start`` and ``end`` (either may be None)."""
    from fabricplan.ops.readers.telemetry import read_input

    now_s = time.time() if now_s is None else now_s
    read = Telemetry()
    for kind, paths in files:
        for path in paths or []:
            read.extend(read_input(kind, path, catalog))
    if prometheus is not None:
        from fabricplan.ops.readers.prometheus_api import read_prometheus

        lo_s = epoch_s(start if _given(start) else DEFAULT_START, "--start", now_s)
        hi_s = epoch_s(end if _given(end) else DEFAULT_END, "--end", now_s)
        read.extend(read_prometheus(prometheus, lo_s, hi_s, step_s, catalog=catalog,
                                    deadline_s=prometheus_deadline_s))
    elif start is not None or end is not None:
        read = clip(read, epoch_s(start, "--start", now_s) if _given(start) else None,
                    epoch_s(end, "--end", now_s) if _given(end) else None)
    return read


def _given(value: float | str | None) -> bool:
    """A bound was given (an empty text, as an empty flag, is none)."""
    return value is not None and value != ""


def check_health(files: TelemetryFiles, config: LintConfig, catalog: Any, *, prometheus: str | None = None,
                 start: float | str | None = None, end: float | str | None = None, step: float | str = 15.0,
                 now_s: float | None = None, expected_rtt_us: float | None = None,
                 baseline_window: tuple[float | str, float | str] | str | None = None,
                 jobs: dict[str, list[str]] | None = None, load_model: Any = None,
                 prometheus_deadline: float | str | None = None) -> HealthResult:
    """Read the telemetry (:func:`read_telemetry`) and evaluate every enabled check over it
    (:func:`~fabricplan.ops.health.engine.evaluate`). With ``load_model`` (the design's behaviour
    under load), RTT pairs whose load is unknown are judged against its unloaded RTT.
    ``prometheus_deadline`` (seconds or ``10s``): each Prometheus request's deadline."""
    now_s = time.time() if now_s is None else now_s
    expected_rtt_source = None
    if load_model is not None:
        expected_rtt_us, expected_rtt_source = load_model.unloaded_rtt_us, load_model.unloaded_source
    window = baseline_window_s(baseline_window, now_s)
    step_s = seconds(step, "--step")
    deadline_s = (seconds(prometheus_deadline, "--prometheus-deadline") if prometheus_deadline is not None
                  else None)
    read = read_telemetry(files, prometheus=prometheus, start=start, end=end, step_s=step_s, now_s=now_s,
                          catalog=catalog, prometheus_deadline_s=deadline_s)
    return evaluate(read, config, catalog=catalog, expected_rtt_us=expected_rtt_us, expected_rtt_source=expected_rtt_source,
                    baseline_window=window, jobs=jobs, load_model=load_model)
