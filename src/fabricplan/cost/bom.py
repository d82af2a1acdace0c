"""Bill of materials: count switches, NICs, optics and cables for a sized fabric.

Counting rules (NVIDIA twin-port scheme; shared reference docs/reference/costs.md §2.3, docs/reference/topology.md §1.5):
* switch-side modules = used switch ports / logical ports per module (twin-port: 2);
* one single-port optic per NIC for optical host links;
* in-rack host links (ToR style) use DAC splitters and no optics;
* a switch-to-switch link needs a module share on both ends and one fibre.
"""

from __future__ import annotations

import math
from typing import Literal, NamedTuple, Protocol

from pydantic import BaseModel

from fabricplan.catalog import Optic, PricePoint, Range
from fabricplan.design.hardware import FabricHardware
from fabricplan.topology import FabricSize

Category = Literal["switches", "nics", "optics", "cables"]
CATEGORIES: tuple[Category, ...] = ("switches", "nics", "optics", "cables")


class BomLine(BaseModel):
    category: Category
    item_id: str
    name: str
    role: str
    quantity: int
    unit_price_usd: float
    unit_power_w: float

    @property
    def price_usd(self) -> float:
        return self.quantity * self.unit_price_usd

    @property
    def power_w(self) -> float:
        return self.quantity * self.unit_power_w


class PricedPart(Protocol):
    """What the BOM needs of a catalog item (switches, NICs and optics all have it)."""

    id: str
    name: str
    price_usd: Range
    power_w: float


class PartCount(NamedTuple):
    category: Category
    item: PricedPart
    role: str
    quantity: int


def modules_for_links(links: int, optic: Optic) -> int:
    """Modules needed on one end of `links` logical links when one module serves several."""
    return math.ceil(links / optic.logical_ports)


def count_parts(size: FabricSize, hardware: FabricHardware) -> list[PartCount]:
    """Every part of the fabric with its quantity; parts with zero quantity are left out."""
    parts = [
        PartCount("switches", hardware.switch, "switches, all tiers", size.total_switches),
        PartCount("nics", hardware.nic, "backend NICs", size.endpoints),
    ]
    host_links = size.host_links
    if size.host_links_in_rack and hardware.host_dac is not None:
        parts.append(PartCount("cables", hardware.host_dac, "in-rack host DAC",
                               modules_for_links(host_links, hardware.host_dac)))
    else:
        parts.append(PartCount("optics", hardware.nic_optic, "NIC-side host optics", host_links))
        parts.append(PartCount("optics", hardware.switch_optic, "switch-side host optics",
                               modules_for_links(host_links, hardware.switch_optic)))
        if hardware.fibre is not None:
            parts.append(PartCount("cables", hardware.fibre, "host fibre", host_links))
    fabric_links = size.leaf_spine_links + size.spine_core_links + size.core_super_core_links
    if fabric_links:
        parts.append(PartCount("optics", hardware.interswitch_optic,
                               "switch-to-switch optics (both ends)",
                               2 * modules_for_links(fabric_links, hardware.interswitch_optic)))
        if hardware.fibre is not None:
            parts.append(PartCount("cables", hardware.fibre, "switch-to-switch fibre", fabric_links))
    return [part for part in parts if part.quantity > 0]


def bill_of_materials(size: FabricSize, hardware: FabricHardware,
                      price_point: PricePoint = "default",
                      price_multipliers: dict[str, float] | None = None) -> list[BomLine]:
    """Priced BOM lines. `price_multipliers` scales a category's prices (sensitivity analysis)."""
    multipliers = price_multipliers or {}
    unknown = set(multipliers) - set(CATEGORIES)
    if unknown:
        raise ValueError(f"unknown price category {sorted(unknown)}; expected some of {list(CATEGORIES)}")
    return [
        BomLine(category=part.category, item_id=part.item.id, name=part.item.name, role=part.role,
                quantity=part.quantity,
                unit_price_usd=part.item.price_usd.at(price_point) * multipliers.get(part.category, 1.0),
                unit_power_w=part.item.power_w)
        for part in count_parts(size, hardware)
    ]
