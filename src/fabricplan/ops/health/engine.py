"""Evaluate telemetry: group it into ports and RTT pairs, set RTT baselines, run the health checks
on the lint engine (``ops.lint.engine.run_units``)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from fabricplan.errors import InputError
from fabricplan.ops.health.checks import CHECKS
from fabricplan.ops.health.results import Measurement, NotAvailable
from fabricplan.ops.lint.config import LintConfig
from fabricplan.ops.lint.engine import run_units
from fabricplan.ops.lint.finding import Finding, severity_rank
from fabricplan.ops.telemetry import PortTelemetry, RttPair, Series, Telemetry, increases, quantile


@dataclass
class HealthFabric:
    """The target of "fabric"-scope checks: every port and RTT pair read."""

    ports: list[PortTelemetry]
    pairs: list[RttPair]


@dataclass
class HealthResult:
    telemetry: Telemetry
    ports: list[PortTelemetry]
    pairs: list[RttPair]
    findings: list[Finding]
    measurements: list[Measurement]
    unavailable: list[NotAvailable]
    start_s: float
    end_s: float
    notes: list[str] = field(default_factory=list)
    jobs_by_entity: dict[str, list[str]] = field(default_factory=dict)  # from --jobs: the jobs on each port/pair
    model: dict[str, Any] | None = None  # against the model (--spec): the design's expectations at the loads seen

    def ranked(self) -> list[tuple[str, list[Finding]]]:
        """Findings grouped by host/port, worst group first; worst finding first in a group
        (severity, then how far past its threshold)."""
        groups: dict[str, list[Finding]] = {}
        for item in self.findings:
            groups.setdefault(item.link, []).append(item)

        def key(f: Finding) -> tuple[int, float]:
            return (-severity_rank(f.severity), -(f.score or 0.0))

        ordered = [(name, sorted(items, key=key)) for name, items in groups.items()]
        ordered.sort(key=lambda group: key(group[1][0]))
        return ordered

    def worst_severity(self) -> str | None:
        return max((f.severity for f in self.findings), key=severity_rank, default=None)


def evaluate(telemetry: Telemetry, config: LintConfig | None = None, *, catalog: Any,
             expected_rtt_us: float | None = None, expected_rtt_source: str | None = None,
             baseline_window: tuple[float, float] | None = None,
             jobs: dict[str, list[str]] | None = None, load_model: Any = None) -> HealthResult:
    """Run every enabled health check over ``telemetry``.

    RTT baselines: ``expected_rtt_us`` (stated, or the design's, named by ``expected_rtt_source``)
    for every pair; else, with ``baseline_window`` (start, end in epoch seconds), each pair's own
    tail quantile in that quiet window, the pair then judged on its samples outside it.
    ``jobs`` (job name -> host names, expanded Slurm hostlists, or shell-style patterns) names the jobs
    on each port and RTT pair.
    ``load_model`` (an ``ops.health.expected.LoadModel``, from ``api.expected_under_load``): each
    port and RTT pair is judged against what the design should give at its load (its byte
    counters, or ``--load``); pairs whose load is unknown keep ``expected_rtt_us``.
    Raises InputError when nothing was read or no check could be evaluated at all (never a
    silent "healthy").
    """
    config = config or LintConfig(catalog=catalog)
    ports = telemetry.ports()
    pairs = telemetry.rtt_pairs()
    if not ports and not pairs:
        if telemetry.notes:
            raise InputError("could not judge: no usable reading (" + "; ".join(telemetry.notes[:3]) + ")",
                             location=", ".join(telemetry.sources[:3]) or None)
        raise InputError("no telemetry read: no counter and no RTT sample", location=", ".join(telemetry.sources) or None)
    notes: list[str] = list(telemetry.notes)
    ports, not_measured = _with_intervals(ports, notes)
    if not ports and not pairs:
        raise InputError(f"could not judge: {notes[-1]}", location=", ".join(telemetry.sources[:3]) or None)
    if pairs:
        pairs = _with_baselines(pairs, config, expected_rtt_us, expected_rtt_source, baseline_window, notes)
    model = _against_model(ports, pairs, load_model, notes) if load_model is not None else None
    fabric = HealthFabric(ports, pairs)
    scopes = {"port": ports, "rtt": pairs, "fabric": [fabric]}
    findings, other = run_units(CHECKS, lambda unit: scopes[unit.SCOPE], config)
    measurements = [m for m in other if isinstance(m, Measurement)]
    unavailable = not_measured + [n for n in other if isinstance(n, NotAvailable)]
    if not findings and not measurements:
        reasons = "; ".join(sorted({f"{n.check_id}: {n.reason}" for n in unavailable})[:4])
        raise InputError("no health check could be evaluated on what was read" + (f" ({reasons})" if reasons else
                         " (no counter any check uses)"), location=", ".join(telemetry.sources[:3]) or None)
    start, end = telemetry.span()
    result = HealthResult(telemetry, ports, pairs, findings, measurements, unavailable, start, end, notes)
    result.model = model
    if jobs:
        result.jobs_by_entity = _jobs_of(ports, pairs, jobs)
        for item in findings:
            if item.link in result.jobs_by_entity:
                item.evidence["jobs"] = result.jobs_by_entity[item.link]
    return result


#: The NotAvailable check id of a port no check could run on: none of its counters had an interval.
NO_INTERVAL = "ALL"


def _has_interval(series: Series) -> bool:
    """Two readings or more, and (for rates integrated from Prometheus) at least one known rate or a
    known saturation (which CNT002 reports): something a rate check can read."""
    if len(series.t_s) < 2:
        return False
    if series.from_rate and series.saturated_from_s is None:
        return increases(series).known
    return True


def _with_intervals(ports: list[PortTelemetry], notes: list[str]) -> tuple[list[PortTelemetry], list[NotAvailable]]:
    """The ports with the counters that have at least two readings (an interval, so a rate); a
    counter read once says nothing about a rate, so it is set aside (never read as "no increase"),
    and a port left with none is "not measured". A note names the counters' sources."""
    kept: list[PortTelemetry] = []
    not_measured: list[NotAvailable] = []
    once: dict[str, int] = {}
    for port in ports:
        single = {key: s for key, s in port.counters.items() if not _has_interval(s)}
        for s in single.values():
            once[s.source] = once.get(s.source, 0) + 1
        if not single:
            kept.append(port)
            continue
        usable = {key: s for key, s in port.counters.items() if key not in single}
        if usable:
            port.counters = usable
            port.start_s = min(float(s.t_s[0]) for s in usable.values())
            port.end_s = max(float(s.t_s[-1]) for s in usable.values())
            kept.append(port)
        else:
            not_measured.append(NotAvailable(NO_INTERVAL, port.name, sorted({s.label for s in single.values()}),
                                             "one reading per counter (or no known rate): no interval, so no "
                                             "rate; capture two or more snapshots of the port"))
    if once:
        parts = ", ".join(f"{count:,} in {source}" for source, count in list(once.items())[:3])
        more = f" and {len(once) - 3} more files" if len(once) > 3 else ""
        ports_note = f"; {len(not_measured)} port{'s' if len(not_measured) != 1 else ''} not measured" \
            if not_measured else ""
        notes.append(f"{sum(once.values()):,} counter{'s' if sum(once.values()) != 1 else ''} with a single "
                     f"reading (no interval, no rate; or no known rate) not judged: {parts}{more}{ports_note}")
    return kept, not_measured


def _against_model(ports: list[PortTelemetry], pairs: list[RttPair], model: Any, notes: list[str]) -> dict[str, Any]:
    """Set each port's and pair's load and expectation; the model's summary for the report."""
    from fabricplan.ops.health.expected import Load, loads, pct

    per_port, fabric_load = loads(ports, model)
    used: dict[float, Any] = {}

    def expect(load: Load) -> Any:
        found = model.at(load.value)
        used.setdefault(found.bucket, found)
        return found

    from fabricplan.ops.health.checks.model_load import NO_LOAD

    for port in ports:
        load = per_port.get(port.name, fabric_load)  # a port without byte counters: the fabric's mean
        if load is not None:
            port.load = load
            port.expected = expect(load)
        else:
            port.expected = NO_LOAD
    by_host: dict[str, list[Load]] = {}
    for port in ports:
        if port.name in per_port:
            by_host.setdefault(port.host, []).append(port.load)
    unknown = 0
    for pair in pairs:
        ends = by_host.get(pair.src, []) + by_host.get(pair.dst, [])
        load = max(ends, key=lambda x: x.value) if ends and model.load is None else fabric_load
        if load is None:
            unknown += 1
            continue
        pair.load = load
        pair.expected = expect(load)
        pair.baseline_us = pair.expected.rtt_p999_us
        pair.baseline_source = f"{model.mechanism}, fluid model at {pct(pair.expected.bucket)} load"
    if unknown:
        notes.append(f"{unknown} RTT pair{'s' if unknown != 1 else ''}: no load known (no byte counters and no --load), "
                     "so compared with the design's unloaded RTT")
    if fabric_load is not None and fabric_load.value > 1.0 + 1e-9:
        notes.append(f"load {pct(fabric_load.value)} is above the link rate {model.link_gbps:g} Gb/s: is the "
                     "design's link rate the one these ports run at?")
    return {"fabric": model.fabric, "mechanism": model.mechanism, "link_gbps": model.link_gbps,
            "unloaded_rtt_us": model.unloaded_rtt_us, "source": model.source,
            "load": None if fabric_load is None else round(fabric_load.value, 6),
            "load_from": None if fabric_load is None else fabric_load.source,
            "expected": [{"load_bucket": e.bucket, "rtt_p999_us": round(e.rtt_p999_us, 6),
                          "pause_fraction": e.pause_fraction, "cnp_per_s": e.cnp_per_s,
                          "credit_wait_fraction": e.credit_wait_fraction, "ecn_marks_per_s": e.ecn_marks_per_s,
                          "becn_per_s": e.becn_per_s}
                         for _b, e in sorted(used.items())]}


def _jobs_of(ports: list[PortTelemetry], pairs: list[RttPair], jobs: dict[str, list[str]]) -> dict[str, list[str]]:
    """Per port and RTT pair, the jobs on its host(s): ``jobs`` maps a job to host names (a Slurm
    hostlist already expanded by :func:`read_jobs`) or shell-style patterns (``gpu0*``)."""
    from fnmatch import fnmatchcase

    exact = {job: {h for h in hosts if not _is_glob(h)} for job, hosts in jobs.items()}
    globs = {job: [h for h in hosts if _is_glob(h)] for job, hosts in jobs.items()}

    def on(host: str) -> list[str]:
        return [job for job in jobs if host in exact[job] or any(fnmatchcase(host, g) for g in globs[job])]

    out: dict[str, list[str]] = {}
    for port in ports:
        if found := on(port.host):
            out[port.name] = found
    for pair in pairs:
        found = sorted(set(on(pair.src)) | set(on(pair.dst)))
        if found:
            out[pair.name] = found
    return out


def _is_glob(host: str) -> bool:
    return "*" in host or "?" in host


def read_jobs(path: Any) -> dict[str, list[str]]:
    """A jobs file: ``jobs: {job name: hosts}`` (YAML or JSON), each job's hosts a list or one string
    of Slurm hostlist expressions (``node[01-16]``, ``gpu[1-4,7],sw1``: what ``squeue -o %N`` and
    ``SLURM_JOB_NODELIST`` print), expanded by python-hostlist; a name with ``*`` or ``?`` is a
    shell-style pattern (``gpu0*``). Returns each job's host names and patterns."""
    import hostlist

    from fabricplan.ops.readers._common import read_structured

    _text, data = read_structured(path, as_json=str(path).endswith(".json"))
    where = str(path)
    if not isinstance(data, dict) or set(data) != {"jobs"} or not isinstance(data["jobs"], dict):
        raise InputError("expected 'jobs:' mapping each job name to its hosts (a Slurm hostlist such as "
                         "node[01-16], or patterns like gpu0*)", location=where)
    out: dict[str, list[str]] = {}
    for name, hosts in data["jobs"].items():
        entries = [hosts] if isinstance(hosts, str) else hosts
        if not isinstance(entries, list) or not entries or not all(isinstance(h, str) and h.strip() for h in entries):
            raise InputError("must be a Slurm hostlist (node[01-16]) or a non-empty list of host names or patterns",
                             location=f"{where}:$.jobs.{name}")
        expanded: list[str] = []
        for entry in entries:
            try:
                expanded += hostlist.expand_hostlist(entry.strip())
            except hostlist.BadHostlist as exc:
                raise InputError(f"{entry[:60]!r} is not a Slurm hostlist ({exc}); write e.g. node[01-16] or "
                                 "node[1-4,7]", location=f"{where}:$.jobs.{name}") from None
        out[str(name)] = list(dict.fromkeys(expanded))
    return out


def _with_baselines(pairs: list[RttPair], config: LintConfig, expected_us: float | None, source: str | None,
                    window: tuple[float, float] | None, notes: list[str]) -> list[RttPair]:
    from fabricplan.ops.health.checks import rtt_tail

    options = config.for_rule(rtt_tail).options
    out = []
    for pair in pairs:
        if expected_us is not None:
            pair.baseline_us, pair.baseline_source = expected_us, source or "stated"
        elif window is not None:
            t = pair.series.t_s
            quiet = (t >= window[0]) & (t <= window[1])
            if quiet.sum() >= options["min_samples"]:
                pair.baseline_us = quantile(pair.series.values[quiet], options["quantile"])
                pair.baseline_source = f"p{options['quantile'] * 100:g} of the quiet window"
                rest = ~quiet
                s = pair.series
                pair = RttPair(pair.src, pair.dst, Series(s.counter, s.host, s.device, s.port, s.priority, s.t_s[rest],
                                                          s.values[rest], s.source, kind=s.kind),
                               pair.baseline_us, pair.baseline_source,
                               float(s.t_s[rest][0]) if rest.any() else pair.start_s, pair.end_s)
            else:
                notes.append(f"{pair.name}: {int(quiet.sum())} samples in the quiet window; fewer than "
                             f"{options['min_samples']}, so no baseline is learned")
        out.append(pair)
    return [p for p in out if len(p.series.values) or p.baseline_us is None] if out else out


def clip(telemetry: Telemetry, start_s: float | None, end_s: float | None) -> Telemetry:
    """Only the readings in ``[start_s, end_s]`` (either bound may be None)."""
    if start_s is None and end_s is None:
        return telemetry
    out = Telemetry(sources=list(telemetry.sources))
    for s in telemetry.series:
        keep = np.ones(len(s.t_s), dtype=bool)
        if start_s is not None:
            keep &= s.t_s >= start_s
        if end_s is not None:
            keep &= s.t_s <= end_s
        if keep.any():
            out.series.append(replace(s, t_s=s.t_s[keep], values=s.values[keep]))
    if not out.series:
        raise InputError("no reading between --start and --end", location="--start")
    return out
