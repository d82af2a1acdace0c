"""Resolve a fabric choice into concrete catalog hardware at a port speed."""

from __future__ import annotations

from dataclasses import dataclass

from fabricplan.catalog import Catalog, FabricProfile, Nic, Optic, Switch
from fabricplan.errors import InputError
from fabricplan.spec import ClusterSpec, FabricChoice
from fabricplan.spec.load import check_fabric_choice, chosen_part, owned_entry, part_at_speed, port_speeds


@dataclass(frozen=True)
class FabricHardware:
    """The parts one fabric is built from, and the port speed and radix they run at."""

    profile: FabricProfile
    switch: Switch
    nic: Nic
    switch_optic: Optic
    nic_optic: Optic
    interswitch_optic: Optic
    host_dac: Optic | None
    fibre: Optic | None
    port_speed_gbps: int
    radix: int
    planes: int = 1  # multi_plane: each NIC's ports, one per plane, each at port_speed_gbps
    owned_switches: int = 0  # a reused estate: how many of its switches the team owns (no capex)
    owned_cabling: bool = False  # ... and the cables and optics between them

    @property
    def nic_speed_gbps(self) -> int:
        """What one NIC carries: its ports on every plane together (the port speed on one plane)."""
        return self.port_speed_gbps * self.planes


def built_options(profile: FabricProfile, chosen: dict[str, bool] | None = None, *,
                  where: str = "fabric") -> dict[str, object]:
    """The profile fields a built fabric changes by its options: ``in_network_reduction`` with SHARP
    off, ``routing: ecmp`` with adaptive routing off (``FabricProfile.option_on``: the spec's
    ``chosen`` value, else what a fresh install runs). InputError for an option the switches cannot
    do (SHARP on Ethernet, adaptive routing on a hashing-only fabric)."""
    chosen = chosen or {}
    for name, on in chosen.items():
        capable = profile.in_network_reduction if name == "sharp" else profile.routing == "adaptive"
        if on and not capable:
            what = ("in-network reduction (SHARP needs InfiniBand Quantum switches)" if name == "sharp"
                    else "adaptive routing (its switches hash flows by ECMP)")
            raise InputError(f"fabric '{profile.id}' has no {what}; remove {name}: true or choose another profile",
                             location=f"{where}.{name}")
    update: dict[str, object] = {}
    if profile.in_network_reduction and not profile.option_on("sharp", chosen.get("sharp")):
        update["in_network_reduction"] = False
    if profile.routing == "adaptive" and not profile.option_on("adaptive_routing", chosen.get("adaptive_routing")):
        update["routing"] = "ecmp"
    return update


def fabric_as_built(catalog: Catalog, fabric: str | FabricProfile, **options: bool) -> FabricProfile:
    """The profile ``fabric`` (a catalog id or a profile) as a cluster runs it with ``options``
    (``sharp=True``, ``adaptive_routing=False``) and the other options as installed."""
    profile = catalog.fabric(fabric, field="fabric") if isinstance(fabric, str) else fabric
    update = built_options(profile, options)
    return profile.model_copy(update=update) if update else profile


def effective_profile(catalog: Catalog, choice: FabricChoice, port_speed_gbps: int | None = None) -> FabricProfile:
    """The fabric profile with the spec's hardware overrides applied, so that the performance
    models see the switch and NIC the fabric is really built from. At a port speed other than the
    profile's link rate, the effective per-NIC bandwidth keeps the profile's efficiency
    (effective / link rate), e.g. RoCE at 800G gets twice its 400G figure."""
    profile = catalog.fabric(choice.profile)
    overrides = {name: getattr(choice, name) for name in ("switch", "nic", "switch_optic", "nic_optic",
                                                           "interswitch_optic") if getattr(choice, name)}
    update: dict[str, object] = built_options(profile, choice.options(), where=f"fabrics[{choice.profile}]")
    if overrides:
        update["hardware"] = profile.hardware.model_copy(update=overrides)
    update.update(_speed_update(profile, port_speed_gbps))
    return profile.model_copy(update=update) if update else profile


def _speed_update(profile: FabricProfile, port_speed_gbps: float | None) -> dict[str, object]:
    """The profile fields a port speed other than its link rate changes: the link rate, and the
    effective per-NIC bandwidth at the profile's efficiency (effective / link rate)."""
    if not port_speed_gbps or port_speed_gbps == profile.link_rate_gbps:
        return {}
    efficiency = profile.effective_bandwidth_gbytes_per_s / profile.link_rate_gbps
    return {"link_rate_gbps": port_speed_gbps, "effective_bandwidth_gbytes_per_s": efficiency * port_speed_gbps}


def fabric_at_nic_speed(catalog: Catalog, fabric: str | FabricProfile, speed_gbps: int | None,
                        where: str = "nic-speed", switch: str | None = None, prefix: str = "") -> FabricProfile:
    """The fabric ``fabric`` (a catalog id or a profile) as built with NICs at ``speed_gbps`` (None:
    its link rate) on ``switch`` (a catalog id; None: the fabric's default): what a spec's
    ``cluster.nic_speed_gbps`` and a fabric's ``switch`` override do to its profile
    (:func:`effective_profile`: link rate, and the effective per-NIC bandwidth at the profile's
    efficiency), for a design without a spec (the ``collective`` command's ``--nic-speed``). The
    switch must be of the fabric's family with ports at the speed, the NIC as fast (the spec's
    check: ``check_fabric_choice``), else InputError at ``where`` naming the switches that would do
    (as the ``{prefix}switch`` setting: ``--switch`` on the command line)."""
    profile = fabric_as_built(catalog, fabric)
    speed = int(speed_gbps or profile.link_rate_gbps)
    chosen = catalog.switch(switch or part_at_speed(catalog, profile, "switch", speed, speed),
                            field=f"{prefix}switch" if switch else f"fabrics[{profile.id}].switch")
    if chosen.family != profile.family:
        raise InputError(f"switch '{chosen.id}' is {chosen.family}, but fabric '{profile.id}' is {profile.family}",
                         location=f"{prefix}switch")
    nic = catalog.nic(part_at_speed(catalog, profile, "nic", speed, speed), field=f"fabrics[{profile.id}].nic")
    if chosen.radix_at(speed) is None:
        speeds = ", ".join(f"{s}G" for s in sorted(chosen.ports_by_speed_gbps))
        others = sorted(s.id for s in catalog.section("switches").values()
                        if s.family == profile.family and s.radix_at(speed))
        hint = (f"; give {prefix}switch {' or '.join(others)} (its family's switches with {speed}G ports)" if others
                else f"; no {profile.family} switch in the catalog has {speed}G ports")
        raise InputError(f"fabric '{profile.id}' cannot run {speed}G NICs: switch '{chosen.id}' has no {speed}G ports "
                         f"(it offers {speeds}){hint}", location=where)
    if nic.speed_gbps < speed:
        raise InputError(f"fabric '{profile.id}' cannot run {speed}G NICs: its NIC '{nic.id}' runs at "
                         f"{nic.speed_gbps}G", location=where)
    update = _speed_update(profile, speed)
    parts = {name: part.id for name, part in (("switch", chosen), ("nic", nic))
             if part.id != getattr(profile.hardware, name)}
    if parts:
        update["hardware"] = profile.hardware.model_copy(update=parts)
    return profile.model_copy(update=update) if update else profile


def optic_for_ports(catalog: Catalog, default_id: str, ports: int, speed: int,
                    kind: str = "transceiver") -> Optic | None:
    """The optic ``default_id`` if it serves ``ports`` logical ports of ``speed`` G, else the cheapest
    catalog part of ``kind`` (a transceiver, or a DAC ``cable``) that does, of the default's basis
    (vendor or third-party) if one is; else the default if its ports run at ``speed`` (the profile's
    own part, one module per port); None if none of these."""
    default = catalog.optic(default_id)
    if default.logical_ports == ports and default.speed_gbps == ports * speed:
        return default
    fits = [o for o in catalog.section("optics").values()
            if isinstance(o, Optic) and o.kind == kind and o.logical_ports == ports
            and o.speed_gbps == ports * speed]
    if fits:
        return min(fits, key=lambda o: (o.basis != default.basis, o.price_usd.default))
    # no part fills the cage: the default still runs at the port speed (one module per port)
    return default if default.kind == kind and default.speed_gbps == default.logical_ports * speed else None


def _optics_at(catalog: Catalog, choice: FabricChoice, switch: Switch, port_speed: int,
               picked: dict[str, str], where: str, planes: int = 1) -> dict[str, Optic]:
    """The fabric's optics at its switch port speed: the switch side and switch-to-switch links serve as
    many logical ports as a cage does at that speed (a 400G cage as 4 x 100G needs a 4-port breakout
    module), the NIC side one port per module (a multi-plane NIC has one on each plane). The profile's
    default where it fits (:func:`optic_for_ports`), else the cheapest that does; a part the spec names
    itself is kept; InputError when the catalog has no transceiver for a slot."""
    cage = switch.ports_per_cage(port_speed)
    out = {}
    for name, ports in (("switch_optic", cage), ("interswitch_optic", cage), ("nic_optic", 1)):
        if getattr(choice, name):
            out[name] = catalog.optic(picked[name], field=f"{where}.{name}")
            continue
        optic = optic_for_ports(catalog, picked[name], ports, port_speed)
        if optic is None:
            what = "a multi-plane fabric" if planes > 1 else f"{port_speed}G ports"
            raise InputError(f"no catalog transceiver serves {ports} x {port_speed}G for the {name.replace('_', ' ')} "
                             f"of {what} on '{switch.id}'; add one with --catalog or set "
                             f"fabrics[{choice.profile}].{name}",
                             location="topology.planes" if planes > 1 else f"{where}.{name}")
        out[name] = optic
    return out


def _host_dac(catalog: Catalog, default_id: str | None, switch: Switch, port_speed: int) -> Optic | None:
    """The in-rack DAC of a ToR design at the port speed: the profile's if it serves a cage's logical ports
    at that speed (a twin-port 800G to 2 x 400G splitter at 400G), else the cheapest catalog DAC that does
    (a 400G to 4 x 100G breakout at 100G); None (optics instead) for a profile without one or no fit."""
    if not default_id:
        return None
    return optic_for_ports(catalog, default_id, switch.ports_per_cage(port_speed), port_speed, kind="cable")


def resolve_hardware(spec: ClusterSpec, catalog: Catalog, choice: FabricChoice) -> FabricHardware:
    """Pick each part from the spec's override or the profile's default, and check they fit. A
    multi-plane fabric's switches, links and optics run at the plane's port speed
    (:func:`fabricplan.spec.load.port_speeds`; ``check_fabric_choice`` refuses an uneven split)."""
    profile = catalog.fabric(choice.profile)
    where = f"fabrics[{choice.profile}]"
    default = profile.hardware

    def pick(name: str) -> str:
        return chosen_part(catalog, choice, name, spec)

    check_fabric_choice(spec, catalog, choice)  # the spec's one check: families, port speed, optic kinds
    switch = catalog.switch(pick("switch"), field=f"{where}.switch")
    nic = catalog.nic(pick("nic"), field=f"{where}.nic")
    _, speed = port_speeds(spec, catalog, choice)
    planes = spec.topology.plane_count
    radix = switch.radix_at(speed)
    owned = owned_entry(spec, choice)
    if owned is not None:  # the estate's switches, with the ports they have free
        radix = min(radix, owned.ports_free or radix)
    picked = {name: pick(name) for name in ("switch_optic", "nic_optic", "interswitch_optic")}
    optics = _optics_at(catalog, choice, switch, speed, picked, where, planes)
    return FabricHardware(
        profile=profile,
        switch=switch,
        nic=nic,
        **optics,
        host_dac=_host_dac(catalog, default.host_dac, switch, speed),
        fibre=catalog.optic(default.fibre) if default.fibre else None,
        port_speed_gbps=speed,
        radix=radix,
        planes=planes,
        owned_switches=owned.count if owned is not None else 0,
        owned_cabling=bool(owned is not None and spec.estate.cabling),
    )
