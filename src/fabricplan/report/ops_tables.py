"""Terminal output and JSON documents of the operations commands (``headroom``)."""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text

from fabricplan.ops.headroom import HeadroomResult
from fabricplan.report.layout import FitTable, Lines


def headroom_document(result: HeadroomResult) -> dict:
    """``headroom --json``: XOFF, XON and size [bytes], every term, notes and references."""
    return {
        "model": result.model, "inputs": result.inputs, "xoff_bytes": result.xoff_bytes,
        "xon_bytes": result.xon_bytes, "size_bytes": result.size_bytes,
        "terms": [{"name": t.name, "bytes": round(t.bytes, 3), "detail": t.detail} for t in result.terms],
        "notes": list(result.notes), "references": list(result.references),
    }


def _speed_label(speed_mbps: int) -> str:
    return f"{speed_mbps // 1000}G" if speed_mbps >= 1000 else f"{speed_mbps}M"


def headroom_renderables(result: HeadroomResult, speed_mbps: int, cable_m: float, mtu_bytes: int
                         ) -> list[RenderableType]:
    """The terms table, then XOFF/XON/size, notes and sources (one line each), for the terminal."""
    table = FitTable(("term", "bytes", "what"),
                     [[term.name, f"{term.bytes:,.1f}", term.detail] for term in result.terms],
                     title=f"PFC headroom, {result.model} model: {_speed_label(speed_mbps)}, {cable_m:g} m, "
                           f"MTU {mtu_bytes}",
                     justify=["left", "right", "left"])
    xon = (f"XON   {result.xon_bytes:>9,} B" if result.xon_bytes is not None
           else "XON         n/a (model defines none)")
    dynamic_xoff = result.inputs.get("dynamic_xoff_bytes", result.xoff_bytes)
    dynamic_size = result.inputs.get("dynamic_size_bytes", result.size_bytes)
    floored = dynamic_xoff != result.xoff_bytes
    xoff_line = f"XOFF  {result.xoff_bytes:>9,} B" + (
        f"  (NVIDIA static table {result.inputs.get('vendor_floor_table')}; SONiC dynamic: {dynamic_xoff:,} B)"
        if floored else "")
    size_line = f"size  {result.size_bytes:>9,} B" + (
        f"  (SONiC dynamic: {dynamic_size:,} B)" if floored and dynamic_size != result.size_bytes else "")
    lines: list[RenderableType] = [table, Text(xoff_line), Text(xon), Text(size_line)]
    lines.append(Lines([("note: ", note) for note in result.notes] +
                       [("source: ", ref) for ref in result.references], style="dim"))
    return lines
