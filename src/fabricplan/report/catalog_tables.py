"""`catalog list`: a summary of the sections (the default), one section's entries, or every entry."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from fabricplan.report.layout import FitTable

#: What each section holds, for the summary (the data files' own titles, shortened).
SECTION_TOPICS = {
    "switches": "switch models: radix per speed, price, power",
    "nics": "NICs: speed, families, price, power",
    "optics": "transceivers, cables and fibre: reach, price",
    "gpus": "GPUs: peaks, memory, NVLink, compute curves",
    "servers": "servers: GPUs per host, NVLink domain, price",
    "fabrics": "fabric profiles: link rate, routing, congestion control, costs",
    "parameters": "economics, failure rates and decision thresholds",
    "models": "model presets (layers, hidden size, experts)",
    "sources": "publications the rules cite: title, English translation",
    "perf_defaults": "the performance models' parameters",
    "nccl_tuner": "NCCL tuner constants per release",
    "ops_defaults": "lint, headroom and health thresholds",
}


def _short_value(value: Any, limit: int = 60) -> str:
    plain = value.model_dump(mode="json") if hasattr(value, "model_dump") else value
    text = json.dumps(plain) if isinstance(plain, (dict, list)) else str(plain)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def section_rows(catalog: Any, name: str) -> list[tuple[str, str, str, str]]:
    """(id or path, name or value, date, origin) of every entry of one section."""
    from fabricplan.catalog import SECTIONS

    if name in SECTIONS:
        return [(entry_id, entry.name, entry.date, catalog.origins[name][entry_id])
                for entry_id, entry in catalog.section(name).items()]
    rows = []
    for path, item in catalog.document_items(name):
        full = f"{name}.{path}"
        value = getattr(item, "value", None) if hasattr(item, "value") else None
        rows.append((path, "" if value is None else _short_value(value), catalog.source_of(full)[1],
                     catalog.origin(full)))
    return rows


def section_table(catalog: Any, name: str) -> FitTable:
    """One section's entries: id, name, date and origin (or path, value, date, origin)."""
    from fabricplan.catalog import SECTIONS

    headers = ("id", "name", "date", "origin") if name in SECTIONS else ("path", "value", "date", "origin")
    return FitTable(headers, [list(row) for row in section_rows(catalog, name)], title=name)


def summary_table(catalog: Any, names: list[str]) -> RenderableType:
    """One line per section: how many entries, what they hold, their dates, how many an overlay set."""
    rows = []
    for name in names:
        entries = section_rows(catalog, name)
        dates = sorted(date[:7] for _i, _n, date, _o in entries if date)  # months: the span at a glance
        overlaid = sum(1 for *_rest, origin in entries if origin != "bundled")
        span = "" if not dates else dates[0] if dates[0] == dates[-1] else f"{dates[0]}..{dates[-1]}"
        rows.append([name, f"{len(entries):,}", SECTION_TOPICS.get(name, ""), span,
                     f"{overlaid:,}" if overlaid else ""])
    any_overlaid = any(row[-1] for row in rows)
    headers = ("section", "entries", "holds", "dates", *(("overlaid",) if any_overlaid else ()))
    table = FitTable(headers, [row if any_overlaid else row[:-1] for row in rows], title="Catalog",
                     justify=["left", "right", "left", "left", "right"][:len(headers)])
    hint = Text("fabricplan catalog list SECTION lists a section's entries; --all lists every entry; "
                "fabricplan catalog show ID shows one with its sources.", style="dim")
    return Group(table, hint)
