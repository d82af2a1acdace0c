"""The designs a vendor could propose for one fabric: every switch model of the catalog that fits
the fabric, under every topology style the spec leaves open.

A 64-port and a 128-port switch change the tier boundaries (64, 2,048, 65,536 NIC ports for a
non-blocking radix-64 fabric; 128, 8,192 for radix 128: Al-Fares et al., SIGCOMM 2008, k, k²/2,
k³/4), so the cheapest design at one size is not the cheapest at another. This module only lists
the options; the model chain (:mod:`fabricplan.plan`) costs and runs each, and picks the cheapest
per useful GPU-hour. Explicit choices in the spec are honoured: a fabric entry that names its
``switch`` (or optics) keeps it, and a ``topology.style`` written in the spec is not changed.

A switch fits when it is of the profile's family and has ports at the fabric's port speed. Its
switch-side optic must serve as many logical ports as one of its cages does at that speed (a
twin-port module in a twin-port cage, a 400G module as 4 x 100G): the profile's default optic if it
does, else the cheapest catalog transceiver that does (:func:`fabricplan.design.hardware.optic_for_ports`,
chosen when the design is resolved, at the style's port speed); with none, the option is listed as
not buildable.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricplan.catalog import Catalog, Switch
from fabricplan.spec import ClusterSpec, FabricChoice
from fabricplan.spec.load import owned_entry
from fabricplan.topology.layout import STYLES


@dataclass(frozen=True)
class DesignOption:
    """One candidate design of a fabric: the spec (style set) and fabric choice (switch, optics) to
    resolve, or why it cannot be built."""

    style: str
    switch: str
    spec: ClusterSpec
    choice: FabricChoice
    problem: str | None = None

    @property
    def label(self) -> str:
        return f"{self.switch} / {self.style}" + (" (owned)" if self.choice.reuse_estate is not None else "")


def style_fixed(spec: ClusterSpec) -> bool:
    """The spec writes ``topology.style`` itself (then it is not searched)."""
    return spec.style_pinned


def _styled(spec: ClusterSpec, style: str) -> ClusterSpec:
    """``spec`` with ``topology.style`` set to ``style`` (the spec itself when it already is)."""
    return spec if style == spec.topology.style else spec.model_copy(
        update={"topology": spec.topology.model_copy(update={"style": style})})


def _reuse_options(spec: ClusterSpec, catalog: Catalog, choice: FabricChoice, styles: list[str]) -> list[DesignOption]:
    """The estate's owned switches of the fabric's family as designs (issue 29): each entry under each
    style, NICs at the entry's speed, its switches at no capex; a design the entry cannot carry is
    listed as not buildable (``design.resolve``). A fabric that names its switch or already reuses one
    gets none."""
    if spec.estate is None or choice.switch or choice.reuse_estate is not None:
        return []
    family = catalog.fabric(choice.profile).family
    options = []
    for index, entry in enumerate(spec.estate.switches):
        if catalog.switch(entry.model).family != family:
            continue
        at_speed = spec.model_copy(update={"cluster": spec.cluster.model_copy(update={"nic_speed_gbps": entry.speed_gbps})})
        variant = choice.model_copy(update={"reuse_estate": index})
        for style in styles:
            if style == "multi_plane" and not style_fixed(spec):
                continue  # owned ports run at the estate's speed, not split over planes
            options.append(DesignOption(style=style, switch=entry.model, spec=_styled(at_speed, style), choice=variant))
    return options


def design_options(spec: ClusterSpec, catalog: Catalog, choice: FabricChoice) -> list[DesignOption]:
    """Every (switch model, style) the spec leaves open for ``choice``; the spec's own first."""
    profile = catalog.fabric(choice.profile)
    speed = spec.cluster.nic_speed_gbps or profile.link_rate_gbps
    own_switch = choice.switch or profile.hardware.switch
    no_ports = []
    owned = owned_entry(spec, choice)
    if owned is not None:  # a fabric pinned to the estate: its owned switch only
        own_switch, speed = owned.model, owned.speed_gbps
    if choice.switch or owned is not None:
        switches = [catalog.switch(choice.switch or owned.model)]
    else:
        family = [s for s in catalog.section("switches").values()
                  if isinstance(s, Switch) and s.family == profile.family]
        switches = sorted((s for s in family if s.radix_at(speed)), key=lambda s: (s.id != own_switch, s.id))
        no_ports = sorted((s for s in family if not s.radix_at(speed)), key=lambda s: s.id)
    styles = [spec.topology.style] if style_fixed(spec) else [spec.topology.style] + [
        s for s in STYLES if s != spec.topology.style]
    options = []
    planes = spec.topology.planes
    for switch in switches:
        # another switch than the profile's: its optics follow its cages at the port speed (resolve_hardware)
        variant = choice if switch.id == own_switch else choice.model_copy(update={"switch": switch.id})
        for style in styles:
            if style == "multi_plane" and not style_fixed(spec) and (speed % planes or not switch.radix_at(speed // planes)):
                continue  # no ports at the plane's speed: not a design this switch offers
            options.append(DesignOption(style=style, switch=switch.id, spec=_styled(spec, style), choice=variant))
    options += _reuse_options(spec, catalog, choice, styles)
    for switch in no_ports:  # listed so the report shows why they were not considered
        speeds = ", ".join(f"{s}G" for s in sorted(switch.ports_by_speed_gbps))
        options.append(DesignOption(style=spec.topology.style, switch=switch.id, spec=spec, choice=choice,
                                    problem=f"no {speed}G ports (it offers {speeds})"))
    return options
