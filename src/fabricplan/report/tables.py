"""Rich tables for the terminal."""

from __future__ import annotations

from rich.console import Group, RenderableType

from fabricplan.cost import CostReport
from fabricplan.cost.bom import CATEGORIES
from fabricplan.report.layout import FitTable, Lines, plural


def usd(value: float | None) -> str:
    """Money in a compact, readable form: $1.23M, $456k, $789."""
    if value is None:
        return "-"
    magnitude = abs(value)
    if magnitude >= 1e9:
        return f"${value / 1e9:,.2f}B"
    if magnitude >= 1e6:
        return f"${value / 1e6:,.2f}M"
    if magnitude >= 1e4:
        return f"${value / 1e3:,.0f}k"
    return f"${value:,.0f}"


def percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _fabric_table(title: str, report: CostReport, rows: list[tuple[str, list[str]]]) -> FitTable:
    """Rows of labelled values, one column per fabric (one block per row when they do not fit)."""
    headers = ["", *(f.fabric for f in report.fabrics)]
    return FitTable(headers, [[label, *values] for label, values in rows], title=title,
                    justify=["left"] + ["right"] * len(report.fabrics))


def topology_table(report: CostReport) -> RenderableType:
    fabrics = report.fabrics
    rows = [
        ("switch", [f.switch_id for f in fabrics]),
        ("radix @ port speed", [f"{f.topology.radix} @ {f.port_speed_gbps}G" for f in fabrics]),
        ("style", [f.topology.style for f in fabrics]),
        ("tiers", [str(f.topology.tiers) for f in fabrics]),
        ("leaf switches", [f"{f.topology.leaf_switches:,}" for f in fabrics]),
        ("spine switches", [f"{f.topology.spine_switches:,}" for f in fabrics]),
        ("core switches", [f"{f.topology.core_switches:,}" for f in fabrics]),
        ("total switches", [f"{f.topology.total_switches:,}" for f in fabrics]),
        ("host links", [f"{f.topology.host_links:,}" for f in fabrics]),
        ("leaf-spine links", [f"{f.topology.leaf_spine_links:,}" for f in fabrics]),
        ("spine-core links", [f"{f.topology.spine_core_links:,}" for f in fabrics]),
        ("max endpoints at this design", [f"{f.topology.max_endpoints:,}" for f in fabrics]),
    ]
    if any(f.topology.super_core_switches for f in fabrics):  # 4-tier fabrics only
        rows.insert(7, ("super-core switches", [f"{f.topology.super_core_switches:,}" for f in fabrics]))
        rows.insert(12, ("core-super-core links", [f"{f.topology.core_super_core_links:,}" for f in fabrics]))
    title = (f"Topology: {report.spec_name}, {plural(report.gpus, 'GPU')} on {plural(report.nodes, 'node')}")
    notes = Lines([(f"{f.fabric}: ", note) for f in fabrics for note in f.topology.notes], style="dim")
    return Group(_fabric_table(title, report, rows), notes)


def cost_tables(report: CostReport) -> list[RenderableType]:
    """A summary table across fabrics and a BOM table per fabric."""
    fabrics = report.fabrics
    horizon = report.assumptions.horizon_years
    title = (f"Cost: {report.spec_name}, {plural(report.gpus, 'GPU')}, {horizon:g}-year horizon "
             f"({report.assumptions.price_point} prices)")
    rows: list[tuple[str, list[str]]] = [
        ("topology", [f"{f.topology.tiers}-tier {f.topology.style}, {plural(f.topology.total_switches, 'switch')}"
                      for f in fabrics]),
    ]
    rows += [(f"capex: {c}", [usd(f.capex_usd[c]) for f in fabrics]) for c in CATEGORIES]
    rows += [
        ("network capex", [usd(f.network_capex_usd) for f in fabrics]),
        ("network power", [f"{f.network_power_w / 1000:,.1f} kW" for f in fabrics]),
        ("opex/yr: energy", [usd(f.opex_usd_per_year.energy_usd) for f in fabrics]),
        ("opex/yr: colocation", [usd(f.opex_usd_per_year.colocation_usd) for f in fabrics]),
        ("opex/yr: support", [f"{usd(f.opex_usd_per_year.support_usd)} ({f.support_fraction_per_year:.0%})"
                              for f in fabrics]),
        ("opex/yr: licences", [usd(f.opex_usd_per_year.licences_usd) for f in fabrics]),
        ("opex/yr: operations", [f"{usd(f.opex_usd_per_year.operations_usd)} ({f.ops_fte:.1f} FTE)"
                                 for f in fabrics]),
        ("network TCO", [usd(f.network_tco_usd) for f in fabrics]),
        ("network capex per GPU", [usd(f.network_capex_per_gpu_usd) for f in fabrics]),
        ("network TCO per GPU", [usd(f.network_tco_per_gpu_usd) for f in fabrics]),
        ("server capex (excl. NICs)", [usd(f.servers.capex_usd if f.servers else None) for f in fabrics]),
        ("network share of cluster capex", [percent(f.network_share_of_cluster_capex) for f in fabrics]),
        ("cluster TCO", [usd(f.cluster_tco_usd) for f in fabrics]),
    ]
    out: list[RenderableType] = [_fabric_table(title, report, rows)]
    for fabric in fabrics:
        if fabric.link_media:
            media = [[m.tier, f"{m.links:,}", f"{m.run_m:,.0f} m", m.medium + ("" if m.reaches else " (too short!)"),
                      usd(m.price_per_link_usd)] for m in fabric.link_media]
            out.append(FitTable(("link tier", "links", "longest run", "medium (reach)", "per link"), media,
                                title=f"Links by reach: {fabric.fabric} ({fabric.hall_racks:,} server racks)",
                                justify=["left", "right", "right", "left", "right"]))
        lines = [[f"{line.item_id}\n{line.role}", line.category, f"{line.quantity:,}", usd(line.unit_price_usd),
                  usd(line.price_usd), f"{line.power_w / 1000:,.2f} kW"] for line in fabric.bom]
        out.append(FitTable(("item / role", "category", "qty", "unit", "total", "power"), lines,
                            title=f"Bill of materials: {fabric.fabric}",
                            justify=["left", "left", "right", "right", "right", "right"]))
    return out
