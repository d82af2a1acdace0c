"""Lint output for people (text grouped by link), scripts (JSON) and CI systems (SARIF 2.1.0)."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from fabricplan.ops.lint.finding import SEVERITIES, Finding, severity_rank
from fabricplan.ops.model import Fabric

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
_LINE_LOCATION = re.compile(r"^(.*):(\d+)$")


def summary(fabric: Fabric, findings: list[Finding]) -> dict[str, Any]:
    counts = Counter(f.severity for f in findings)
    return {
        **{severity: counts.get(severity, 0) for severity in SEVERITIES},
        "links": len(fabric.links),
        "nics": len(fabric.nics),
        "switch_ports": len(fabric.switch_ports),
        "links_with_findings": len({f.link for f in findings}),
    }


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _sorted(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (-severity_rank(f.severity), f.rule_id))


def as_json(fabric: Fabric, findings: list[Finding]) -> dict[str, Any]:
    """One JSON document: summary plus findings (grouped order: by link, worst first)."""
    by_link: dict[str, list[Finding]] = {}
    for item in findings:
        by_link.setdefault(item.link, []).append(item)
    ordered = [f for link in by_link for f in _sorted(by_link[link])]
    return {"summary": summary(fabric, findings), "findings": [f.as_dict() for f in ordered]}


def _wrapped(console: Console, label: Text, body: Text) -> None:
    """`label body`, wrapped to the console's width with every continuation line indented under
    the body, so a message, a fix or a long path reads as one block at 80 columns."""
    width = console.width
    lead = label.cell_len
    if lead > width // 2:
        console.print(label)
        label, lead = Text("    "), 4
    for number, line in enumerate(_word_lines(body, max(1, width - lead))):
        console.print((label if number == 0 else Text(" " * lead)) + line, soft_wrap=True)


def _word_lines(text: Text, width: int) -> list[Text]:
    """`text` cut into lines of at most `width` cells at spaces; a word wider than a line (a long
    path) stays whole on a line of its own, never folded."""
    plain = text.plain
    cuts: list[int] = []
    line_start, used = 0, 0
    for match in re.finditer(r"\S+", plain):
        size = cell_len(match.group(0))
        if used and used + 1 + size > width:
            cuts.append(match.start())
            line_start, used = match.start(), size
        else:
            used = size if not used else match.end() - line_start
    lines = text.divide(cuts) if cuts else [text]
    for line in lines:
        line.rstrip()
    return list(lines)


def print_text(console: Console, fabric: Fabric, findings: list[Finding]) -> None:
    """Findings grouped by link, worst first, each with its fix and location."""
    by_link: dict[str, list[Finding]] = {}
    for item in findings:
        by_link.setdefault(item.link, []).append(item)
    for link, items in by_link.items():
        console.print(Text(link, style="bold"), soft_wrap=True)
        for item in _sorted(items):
            label = Text("  ")
            label.append(f"{item.severity.upper():<7}", style=_STYLE[item.severity])
            label.append(f" {item.rule_id:<8} ", style="bold")
            _wrapped(console, label, Text(item.message))
            # the fix is a command to paste: one line, never broken (the terminal may wrap it visually)
            console.print(Text(f"           fix: {item.fix}", style="green"), soft_wrap=True)
            if item.evidence:
                _wrapped(console, Text("           evidence: ", style="dim"),
                         Text(json.dumps(item.evidence, sort_keys=True), style="dim"))
            if item.location:
                _wrapped(console, Text("           at: ", style="dim"), Text(item.location, style="dim"))
        console.print()
    s = summary(fabric, findings)
    checked = (f"{_plural(s['links'], 'link')} ({_plural(s['nics'], 'NIC port')}, "
               f"{_plural(s['switch_ports'], 'switch port')})")
    if findings:
        _wrapped(console, Text(""), Text(f"{_plural(s['error'], 'error')}, {_plural(s['warning'], 'warning')}, "
                                         f"{s['info']} info on {s['links_with_findings']} of {checked}", style="bold"))
    else:
        _wrapped(console, Text(""), Text(f"No findings: {checked} checked.", style="bold green"))


def _sarif_location(location: str | None) -> list[dict[str, Any]]:
    if not location:
        return []
    file, sep, path = location.partition(":$")
    if sep:
        return [{"physicalLocation": {"artifactLocation": {"uri": Path(file).as_posix()}},
                 "logicalLocations": [{"fullyQualifiedName": "$" + path, "kind": "member"}]}]
    m = _LINE_LOCATION.match(location)
    if m:
        return [{"physicalLocation": {"artifactLocation": {"uri": Path(m.group(1)).as_posix()},
                                      "region": {"startLine": max(1, int(m.group(2)))}}}]
    return [{"physicalLocation": {"artifactLocation": {"uri": Path(location).as_posix()}}}]


def as_sarif(findings: list[Finding], rules: list[ModuleType], version: str) -> dict[str, Any]:
    """A SARIF 2.1.0 log with one run; rules carry their docstring as help text."""
    index = {rule.ID: i for i, rule in enumerate(rules)}
    driver_rules = []
    for rule in rules:
        doc = (rule.__doc__ or "").strip()
        driver_rules.append({
            "id": rule.ID,
            "name": rule.__name__.rsplit(".", 1)[-1],
            "shortDescription": {"text": rule.TITLE},
            "fullDescription": {"text": doc.splitlines()[0] if doc else rule.TITLE},
            "help": {"text": doc},
            "defaultConfiguration": {"level": SARIF_LEVEL[rule.SEVERITY]},
        })
    results = []
    for item in findings:
        results.append({
            "ruleId": item.rule_id,
            "ruleIndex": index.get(item.rule_id, -1),
            "level": SARIF_LEVEL[item.severity],
            "message": {"text": f"{item.link}: {item.message}. Fix: {item.fix}"},
            "locations": _sarif_location(item.location),
            "properties": {"link": item.link, "evidence": item.evidence, "fix": item.fix},
        })
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "fabricplan", "version": version,
                                "rules": driver_rules}},
            "results": results,
        }],
    }
