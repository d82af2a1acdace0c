"""Health output for people (ranked findings by host/port, a per-port table) and scripts (JSON)."""

from __future__ import annotations

import json
import math
from collections import Counter
from typing import Any

from rich.console import Console
from rich.text import Text

from fabricplan.ops.health.checks import CHECKS
from fabricplan.ops.health.checks._common import stamp
from fabricplan.ops.health.engine import NO_INTERVAL, HealthResult
from fabricplan.ops.lint.finding import SEVERITIES
from fabricplan.report.layout import FitTable
from fabricplan.report.lint_output import _wrapped

_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
#: Per-port table columns: (check id, metric, heading, how to show the value).
TABLE_COLUMNS = (
    ("PFC001", "paused_fraction_peak", "paused", "pct"),
    ("PFC002", "longest_storm_s", "storm s", "num"),
    ("RETX001", "retransmit_ratio_peak", "retx", "pct"),
    ("CC002", "cnp_per_s_peak", "CNP/s", "num"),
    ("DROP001", "drops_per_s_peak", "drops/s", "num"),
    ("IB001", "symbol_errors_per_hour", "symerr/h", "num"),
    ("IB002", "link_downs", "downs", "num"),
)


def _show(value: float, how: str) -> str:
    if not math.isfinite(value):
        return "n/a"
    if how == "pct":
        return f"{value * 100:.3g}%"
    if value == 0:
        return "0"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def summary(result: HealthResult) -> dict[str, Any]:
    counts = Counter(f.severity for f in result.findings)
    return {
        **{severity: counts.get(severity, 0) for severity in SEVERITIES},
        "ports": len(result.ports),
        "rtt_pairs": len(result.pairs),
        "ports_with_findings": len({f.link for f in result.findings}),
        "checks_not_available": len(result.unavailable),
        "ports_not_measured": len({n.entity for n in result.unavailable if n.check_id == NO_INTERVAL}),
        "start": stamp(result.start_s),
        "end": stamp(result.end_s),
        "healthy": not result.findings,
    }


def port_rows(result: HealthResult) -> dict[str, dict[str, Any]]:
    """entity -> {check id: value | "n/a"} plus ``worst`` (severity or "ok")."""
    rows: dict[str, dict[str, Any]] = {}
    for port in result.ports:
        rows[port.name] = {}
    for pair in result.pairs:
        rows[pair.name] = {}
    for m in result.measurements:
        rows.setdefault(m.entity, {})[m.metric] = m.value
    for n in result.unavailable:
        rows.setdefault(n.entity, {}).setdefault(f"{n.check_id}:na", True)
    worst: dict[str, str] = {}
    for f in result.findings:
        if f.link not in worst or SEVERITIES.index(f.severity) > SEVERITIES.index(worst[f.link]):
            worst[f.link] = f.severity
    for entity, row in rows.items():
        measured_any = any(not k.endswith(":na") for k in row)
        # a port on which no check could be evaluated is "not measured", never "ok"
        row["worst"] = worst.get(entity, "ok" if measured_any else "not measured")
    return rows


def as_json(result: HealthResult) -> dict[str, Any]:
    """One JSON document: summary, findings ranked (grouped by host/port, worst first), per-port
    values, checks not available, and the checks run."""
    findings = []
    for entity, items in result.ranked():
        for item in items:
            findings.append({**item.as_dict(), "entity": entity,
                             "series": [{"entity": e, "counter": c} for e, c in (item.series or [])]})
    ports = []
    for entity, row in port_rows(result).items():
        values = {k: (v if not isinstance(v, float) or math.isfinite(v) else None) for k, v in row.items()
                  if not k.endswith(":na") and k != "worst"}
        ports.append({"entity": entity, "status": row["worst"], "values": values,
                      **({"jobs": result.jobs_by_entity[entity]} if entity in result.jobs_by_entity else {}),
                      "not_available": sorted(k[:-3] for k in row if k.endswith(":na"))})
    return {"summary": summary(result), "findings": findings, "ports": ports,
            "not_available": [n.as_dict() for n in result.unavailable],
            "checks": [{"id": c.ID, "severity": c.SEVERITY, "title": c.TITLE} for c in CHECKS],
            "notes": result.notes, **({"model": result.model} if result.model is not None else {})}


def model_lines(result: HealthResult) -> list[str]:
    """The design's expectations the findings were judged against (``--spec``), one line each."""
    m = result.model
    if m is None:
        return []
    load = "unknown (no byte counters; give --load)" if m["load"] is None else \
        f"{m['load'] * 100:.3g} % ({m['load_from']})"
    lines = [f"Against the model: {m['source']}.", f"Load: {load}."]
    for e in m["expected"]:
        parts = [f"p99.9 RTT {e['rtt_p999_us']:.3g} us"]
        if e["pause_fraction"] is not None:
            parts.append(f"paused {e['pause_fraction'] * 100:.3g} % of the time")
        if e["cnp_per_s"] is not None:
            parts.append(f"{e['cnp_per_s']:,.0f} CNPs/s per host")
        if e.get("becn_per_s") is not None:
            parts.append(f"{e['becn_per_s']:,.0f} BECNs/s per host")
        if e.get("ecn_marks_per_s") is not None:
            mark = "FECN" if e.get("becn_per_s") is not None else "ECN"
            parts.append(f"{e['ecn_marks_per_s']:,.0f} {mark}-marked packets/s per host")
        if e["credit_wait_fraction"] is not None:
            parts.append(f"credit-starved {e['credit_wait_fraction'] * 100:.3g} % of the time")
        lines.append(f"At {e['load_bucket'] * 100:.3g} % load this design gives " + ", ".join(parts) + ".")
    return lines


def print_text(console: Console, result: HealthResult, all_ports: bool = False) -> None:
    """Ranked findings grouped by host/port, the per-port table, what was not available, a summary."""
    for entity, items in result.ranked():
        jobs = result.jobs_by_entity.get(entity)
        console.print(Text(entity + (f"  (job: {', '.join(jobs)})" if jobs else ""), style="bold"), soft_wrap=True)
        for item in items:
            label = Text("  ")
            label.append(f"{item.severity.upper():<7}", style=_STYLE[item.severity])
            label.append(f" {item.rule_id:<7} ", style="bold")
            _wrapped(console, label, Text(item.message))
            _wrapped(console, Text("          do: ", style="green"), Text(item.fix, style="green"))
            if item.evidence:
                _wrapped(console, Text("          evidence: ", style="dim"),
                         Text(json.dumps(item.evidence, sort_keys=True), style="dim"))
        console.print()
    rows = port_rows(result)
    shown = {e: r for e, r in rows.items() if all_ports or r["worst"] != "ok"}
    if shown:
        used = [c for c in TABLE_COLUMNS if any(c[1] in r or f"{c[0]}:na" in r for r in shown.values())]
        table_rows = []
        for entity, row in list(shown.items())[:200]:
            cells: list[str | Text] = [entity]
            for cid, metric, _heading, how in used:
                if metric in row:
                    cells.append(_show(row[metric], how))
                elif f"{cid}:na" in row:
                    cells.append("n/a")
                else:
                    cells.append("-")
            style = _STYLE.get(row["worst"], "green" if row["worst"] == "ok" else "yellow")
            table_rows.append([*cells, Text(row["worst"], style=style)])
        title = "Per port" + ("" if all_ports else " (ports with findings; --all-ports for every port)")
        console.print(FitTable(("port", *(heading for _c, _m, heading, _h in used), "status"), table_rows,
                               title=title, justify=["left", *["right"] * len(used), "left"]))
        if len(shown) > 200:
            console.print(f"... and {len(shown) - 200} more ports (see --json)")
        console.print()
    if result.unavailable:
        by_check = Counter(n.check_id for n in result.unavailable)
        parts = ", ".join(f"{'every check' if cid == NO_INTERVAL else cid} on {count} {'port' if count == 1 else 'ports'}"
                          for cid, count in sorted(by_check.items()))
        _wrapped(console, Text("not available: ", style="yellow"), Text(f"{parts} (counters not read; "
                                                                        "--json lists which)"))
        first = result.unavailable[0]
        _wrapped(console, Text("  e.g. "), Text(f"{first.check_id} on {first.entity}: {first.reason}"))
    for line in model_lines(result):
        _wrapped(console, Text("model: ", style="cyan"), Text(line))
    for note in result.notes:
        _wrapped(console, Text("note: "), Text(note))
    s = summary(result)
    checked = f"{s['ports']} ports, {s['rtt_pairs']} RTT pairs, {s['start']} .. {s['end']}"
    if result.findings:
        _wrapped(console, Text(""), Text(f"{s['error']} errors, {s['warning']} warnings, {s['info']} info on "
                                         f"{s['ports_with_findings']} of {checked}", style="bold"))
    else:
        tail = f"; {s['checks_not_available']} checks not available" if s["checks_not_available"] else ""
        if s["ports_not_measured"]:
            tail = (f"; {s['ports_not_measured']} more {'port' if s['ports_not_measured'] == 1 else 'ports'} "
                    "not measured (one reading per counter)") + tail
        _wrapped(console, Text(""), Text(f"Healthy on what was measured: {checked}{tail}.", style="bold green"))
