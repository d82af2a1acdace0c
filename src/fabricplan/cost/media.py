"""Cable and optic class per link tier, by reach: the cheapest medium whose reach covers the run.

A fabric profile lists candidate media (``hardware.host_media`` for NIC-leaf links,
``hardware.interswitch_media`` for switch-to-switch links; catalog ``LinkMedium``): a cable (DAC,
active copper, AOC) or a pair of transceivers joined by fibre. For each tier the floor plan gives
the longest run (:mod:`fabricplan.cost.floorplan`); the chosen medium is the cheapest per link
among those whose reach is at least that run:

    price per link = cable / logical ports                                    (a cable)
                   = switch end / its logical ports + far end / its logical ports + fibre
                                                                              (transceivers)

and if none reaches, the longest-reaching one (flagged ``reaches=False``). The candidates are priced at
the fabric's optics basis (:func:`part_at_basis`: a vendor part, e.g. NVIDIA LinkX, or its
third-party equivalent). A profile without
candidates, or a spec that overrides the profile's optics, keeps the fixed parts of
:class:`fabricplan.design.hardware.FabricHardware` (``host_dac`` in-rack, else ``switch_optic`` +
``nic_optic``; ``interswitch_optic`` between switches).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pydantic import BaseModel

from fabricplan.catalog import Catalog, LinkMedium, Optic, PricePoint
from fabricplan.catalog.models import OpticsBasis
from fabricplan.cost.floorplan import TierRuns
from fabricplan.design.hardware import FabricHardware
from fabricplan.spec import FabricChoice
from fabricplan.topology import FabricSize


@dataclass(frozen=True)
class Medium:
    """A resolved link medium: a cable, or a switch-end and a far-end transceiver with fibre."""

    switch_end: Optic
    far_end: Optic | None  # None for a cable
    fibre: Optic | None

    @property
    def is_cable(self) -> bool:
        return self.far_end is None

    @property
    def reach_m(self) -> float:
        return self.switch_end.reach_m if self.far_end is None else min(self.switch_end.reach_m, self.far_end.reach_m)

    def price_per_link_usd(self, point: PricePoint) -> float:
        """The medium's price for one logical link (module docstring)."""
        end = self.switch_end.price_usd.at(point) / self.switch_end.logical_ports
        if self.far_end is None:
            return end
        far = self.far_end.price_usd.at(point) / self.far_end.logical_ports
        return end + far + (self.fibre.price_usd.at(point) if self.fibre is not None else 0.0)

    @property
    def label(self) -> str:
        if self.far_end is None:
            return f"{self.switch_end.id} (cable, {self.reach_m:g} m)"
        return f"{self.switch_end.id} + {self.far_end.id} ({self.reach_m:g} m)"


class TierMedium(BaseModel):
    """The medium chosen for one link tier: what, how far it must reach and how far it does."""

    tier: str
    links: int
    run_m: float
    medium: str
    reach_m: float
    reaches: bool
    price_per_link_usd: float


def part_at_basis(catalog: Catalog, optic: Optic, basis: OpticsBasis | None) -> Optic:
    """The part priced for ``optic`` at an optics basis: at ``third_party``, a vendor part's
    ``third_party_part`` (the same class from a third-party maker); otherwise the part itself (a
    third-party part has no vendor twin in the catalog: white-box switches qualify MSA parts)."""
    if basis == "third_party" and optic.third_party_part is not None:
        return catalog.optic(optic.third_party_part)
    return optic


def hardware_at_basis(hardware: FabricHardware, catalog: Catalog, basis: OpticsBasis | None,
                      choice: FabricChoice | None = None) -> FabricHardware:
    """The fabric's fixed optics and cables at ``basis``; a part the spec names itself is kept."""
    if basis is None:
        return hardware
    named = {slot for slot in ("switch_optic", "nic_optic", "interswitch_optic")
             if choice is not None and getattr(choice, slot)}
    update = {slot: part_at_basis(catalog, getattr(hardware, slot), basis)
              for slot in ("switch_optic", "nic_optic", "interswitch_optic", "host_dac", "fibre")
              if slot not in named and getattr(hardware, slot) is not None}
    return replace(hardware, **update)


def resolve(catalog: Catalog, candidates: list[LinkMedium], fibre: Optic | None, interswitch: bool,
            basis: OpticsBasis | None = None) -> list[Medium]:
    """Catalog ids of ``candidates`` -> :class:`Medium` at the optics ``basis`` (:func:`part_at_basis`;
    an inter-switch far end defaults to the switch end)."""
    media = []
    for candidate in candidates:
        end = part_at_basis(catalog, catalog.optic(candidate.switch_end), basis)
        if candidate.far_end is not None:
            media.append(Medium(end, part_at_basis(catalog, catalog.optic(candidate.far_end), basis), fibre))
        elif end.kind == "transceiver" and interswitch:
            media.append(Medium(end, end, fibre))
        else:
            media.append(Medium(end, None, None))
    return media


def choose(media: list[Medium], run_m: float, point: PricePoint) -> tuple[Medium, bool]:
    """The cheapest medium per link that reaches ``run_m`` (ties: the longer reach), else the
    longest-reaching one with ``False``."""
    reaching = [m for m in media if m.reach_m >= run_m]
    if reaching:
        return min(reaching, key=lambda m: (m.price_per_link_usd(point), -m.reach_m)), True
    return max(media, key=lambda m: (m.reach_m, -m.price_per_link_usd(point))), False


@dataclass(frozen=True)
class LinkMedia:
    """Per-tier media of one design: ``host`` and the switch-to-switch tiers with links."""

    host: Medium | None
    tiers: dict[str, Medium]
    chosen: list[TierMedium]


def _at_port_speed(catalog: Catalog, candidates: list[LinkMedium] | None, port_speed: int,
                   cage_ports: int) -> list[LinkMedium]:
    """The candidates whose switch end fills one of the switch's cages at ``port_speed``: ``cage_ports``
    logical ports of that speed (a profile's twin-port media fit a twin-port cage at its link rate, not a
    single-port 400G cage or a multi-plane fabric's slower plane ports; those keep the fixed parts)."""
    out = []
    for candidate in candidates or []:
        end = catalog.optic(candidate.switch_end)
        if end.logical_ports == cage_ports and end.speed_gbps == cage_ports * port_speed:
            out.append(candidate)
    return out


def tier_links(size: FabricSize) -> dict[str, int]:
    """Links per tier (host, leaf_spine, spine_core, core_super_core)."""
    return {"host": size.host_links, "leaf_spine": size.leaf_spine_links, "spine_core": size.spine_core_links,
            "core_super_core": size.core_super_core_links}


def link_media(size: FabricSize, hardware: FabricHardware, catalog: Catalog, runs: TierRuns,
               point: PricePoint, choice: FabricChoice | None = None, basis: OpticsBasis | None = None) -> LinkMedia:
    """Choose each tier's medium (module docstring) among the candidates at the optics ``basis``. Tiers
    keep the fixed parts (None / absent) when the profile lists no candidates or the spec overrides
    that tier's optics."""
    profile_hw = hardware.profile.hardware
    links = tier_links(size)
    run_by_tier = runs.as_dict()
    host_override = choice is not None and (choice.switch_optic or choice.nic_optic)
    inter_override = choice is not None and choice.interswitch_optic
    chosen: list[TierMedium] = []
    host = None
    speed = hardware.port_speed_gbps
    cage = hardware.switch.ports_per_cage(speed)
    host_media = _at_port_speed(catalog, profile_hw.host_media, speed, cage)
    inter_media = _at_port_speed(catalog, profile_hw.interswitch_media, speed, cage)
    if host_media and not host_override and links["host"]:
        host, ok = choose(resolve(catalog, host_media, hardware.fibre, False, basis), run_by_tier["host"],
                          point)
        chosen.append(TierMedium(tier="host", links=links["host"], run_m=run_by_tier["host"], medium=host.label,
                                 reach_m=host.reach_m, reaches=ok, price_per_link_usd=host.price_per_link_usd(point)))
    tiers: dict[str, Medium] = {}
    if inter_media and not inter_override and not hardware.owned_cabling:  # owned cabling is what it is
        media = resolve(catalog, inter_media, hardware.fibre, True, basis)
        for tier in ("leaf_spine", "spine_core", "core_super_core"):
            if links[tier]:
                medium, ok = choose(media, run_by_tier[tier], point)
                tiers[tier] = medium
                chosen.append(TierMedium(tier=tier, links=links[tier], run_m=run_by_tier[tier], medium=medium.label,
                                         reach_m=medium.reach_m, reaches=ok,
                                         price_per_link_usd=medium.price_per_link_usd(point)))
    return LinkMedia(host=host, tiers=tiers, chosen=chosen)
