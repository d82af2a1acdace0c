"""Bill of materials: count switches, NICs, optics and cables for a sized fabric.

Counting rules (NVIDIA twin-port scheme; shared reference docs/reference/costs.md §2.3, docs/reference/topology.md §1.5):
* switch-side modules = used switch ports / logical ports per module (twin-port: 2);
* one single-port optic per NIC port for optical host links (a multi-plane NIC has a port on each plane);
* a single node with no scale-out fabric (tiers 0) buys no backend NICs (nothing would connect them);
* in-rack host links (ToR style) use DAC splitters and no optics;
* a switch-to-switch link needs a module share on both ends and one fibre;
* with candidate media in the fabric profile, each tier's cable or optic class is chosen by reach
  from the floor plan (:mod:`fabricplan.cost.media`, :mod:`fabricplan.cost.floorplan`): a cable
  (DAC/ACC) replaces both transceivers and the fibre.
"""

from __future__ import annotations

import math
from typing import Literal, NamedTuple, Protocol

from pydantic import BaseModel

from fabricplan.catalog import Optic, PricePoint, Range
from fabricplan.catalog.inputs import Inputs, Num
from fabricplan.cost.media import LinkMedia, Medium
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
    unit_price_usd: Num
    unit_power_w: Num

    @property
    def price_usd(self) -> Num:
        return self.quantity * self.unit_price_usd

    @property
    def power_w(self) -> Num:
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
    owned: bool = False  # the team owns it (a reused estate): no capex, its power still counts


def modules_for_links(links: int, optic: Optic) -> int:
    """Modules needed on one end of `links` logical links when one module serves several."""
    return math.ceil(links / optic.logical_ports)


_TIER_NAMES = {"leaf_spine": "leaf-spine", "spine_core": "spine-core", "core_super_core": "core-super-core"}


def _medium_parts(medium: Medium, links: int, what: str, both_ends_alike: bool) -> list[PartCount]:
    """Parts of ``links`` links built from one medium (a cable, or transceivers + fibre)."""
    if medium.is_cable:
        return [PartCount("cables", medium.switch_end, f"{what} cable", modules_for_links(links, medium.switch_end))]
    far = medium.far_end
    assert far is not None
    if both_ends_alike:
        parts = [PartCount("optics", medium.switch_end, f"{what} optics (both ends)",
                           2 * modules_for_links(links, medium.switch_end))]
    else:
        parts = [PartCount("optics", far, f"NIC-side {what} optics", modules_for_links(links, far)),
                 PartCount("optics", medium.switch_end, f"switch-side {what} optics",
                           modules_for_links(links, medium.switch_end))]
    if medium.fibre is not None:
        parts.append(PartCount("cables", medium.fibre, f"{what} fibre", links))
    return parts


def count_parts(size: FabricSize, hardware: FabricHardware, media: LinkMedia | None = None) -> list[PartCount]:
    """Every part of the fabric with its quantity; parts with zero quantity are left out.

    ``media`` (:func:`fabricplan.cost.media.link_media`) gives the cable or optic class of each
    tier chosen by reach; tiers it leaves out use the hardware's fixed parts.
    """
    owned = hardware.owned_switches > 0
    parts = [
        PartCount("switches", hardware.switch, "owned switches, reused" if owned else "switches, all tiers",
                  size.total_switches, owned),
        # No fabric (one node, tiers 0): nothing connects the backend NICs, so none are bought.
        PartCount("nics", hardware.nic, "backend NICs", size.endpoints if size.tiers > 0 else 0),
    ]
    host_links = size.host_links
    if media is not None and media.host is not None:
        parts += _medium_parts(media.host, host_links, "host", both_ends_alike=False)
    elif size.host_links_in_rack and hardware.host_dac is not None:
        parts.append(PartCount("cables", hardware.host_dac, "in-rack host DAC",
                               modules_for_links(host_links, hardware.host_dac)))
    else:
        parts.append(PartCount("optics", hardware.nic_optic, "NIC-side host optics",
                               modules_for_links(host_links, hardware.nic_optic)))
        parts.append(PartCount("optics", hardware.switch_optic, "switch-side host optics",
                               modules_for_links(host_links, hardware.switch_optic)))
        if hardware.fibre is not None:
            parts.append(PartCount("cables", hardware.fibre, "host fibre", host_links))
    by_tier = {"leaf_spine": size.leaf_spine_links, "spine_core": size.spine_core_links,
               "core_super_core": size.core_super_core_links}
    chosen = media.tiers if media is not None else {}
    for tier, medium in chosen.items():
        if by_tier[tier]:
            parts += _medium_parts(medium, by_tier[tier], _TIER_NAMES[tier], both_ends_alike=True)
    fabric_links = sum(links for tier, links in by_tier.items() if tier not in chosen)
    cabled = hardware.owned_cabling
    if fabric_links:
        parts.append(PartCount("optics", hardware.interswitch_optic,
                               "owned switch-to-switch optics (both ends)" if cabled else
                               "switch-to-switch optics (both ends)",
                               2 * modules_for_links(fabric_links, hardware.interswitch_optic), cabled))
        if hardware.fibre is not None:
            parts.append(PartCount("cables", hardware.fibre, "owned switch-to-switch fibre" if cabled else
                                   "switch-to-switch fibre", fabric_links, cabled))
    return [part for part in parts if part.quantity > 0]


def bill_of_materials(size: FabricSize, hardware: FabricHardware,
                      price_point: PricePoint = "default",
                      price_multipliers: dict[str, float] | None = None,
                      media: LinkMedia | None = None, inputs: Inputs | None = None) -> list[BomLine]:
    """Priced BOM lines. `price_multipliers` scales a category's prices (sensitivity analysis).

    Each unit price and power comes from ``inputs`` (:class:`fabricplan.catalog.inputs.Inputs`,
    keys ``price:<id>`` and ``power:<id>``): the catalog's value at the price point, or its draws."""
    multipliers = price_multipliers or {}
    unknown = set(multipliers) - set(CATEGORIES)
    if unknown:
        raise ValueError(f"unknown price category {sorted(unknown)}; expected some of {list(CATEGORIES)}")
    inputs = inputs or Inputs.point(price_point)
    lines = []
    for part in count_parts(size, hardware, media):
        item = part.item
        price = item.price_usd.at(price_point) * multipliers.get(part.category, 1.0)
        lines.append(BomLine(
            category=part.category, item_id=item.id, name=item.name, role=part.role, quantity=part.quantity,
            unit_price_usd=0.0 if part.owned else inputs.of_range(f"price:{item.id}", item.price_usd, price),
            unit_power_w=inputs.of_field(f"power:{item.id}", item, "power_w")))
    return lines
