"""HDRM001 — switch PG headroom (xoff) is at least what speed, cable length and MTU need.

For every lossless PG profile on a port with PFC, computes the required headroom with SONiC's
Spectrum algorithm (``ops.headroom.sonic_headroom``; option ``headroom_model: generic`` uses the
IEEE 802.1Qbb lower bound instead) from ``PORT.speed``, ``PORT.lanes`` (8 lanes),
``CABLE_LENGTH`` (or the longer real cable from the cabling file), ``PORT.mtu`` and
``LOSSLESS_TRAFFIC_PATTERN``, and compares it with ``BUFFER_PROFILE.xoff`` and ``size``.

The ASIC comes from the option ``asic`` if set, else from ``DEVICE_METADATA.hwsku`` /
``platform`` (``ops_defaults.yaml`` ``headroom.sonic.sku_asic`` / ``platform_asic``, and the SKUs
and platforms of ``headroom.broadcom.tables``). A Broadcom Trident/Tomahawk switch is sized with
its SKU's table (``ops.headroom.broadcom_headroom``: xoff at the cable length, size = guaranteed
minimum). A switch whose ASIC has no model is not sized with another ASIC's numbers: it gets one
``info`` finding naming the key, unless its profile is the vendor's own. A profile equal to the
SKU's row of the vendor's ``pg_profile_lookup.ini`` (``headroom.vendor_pg_profiles``) is the
vendor's reference and passes. A lossless port without ``CABLE_LENGTH`` is reported, and so is,
with the traditional buffer model, a port without a lossless profile in CONFIG_DB whose (speed,
``CABLE_LENGTH``) pair is not a row of its SKU's bundled table: buffermgrd then configures no
lossless PG for it.

Passing::

    ACS-MSN3800 (Spectrum-2), Ethernet0 100G, CABLE_LENGTH 5m, mtu 9100, shared headroom pool
    -> need xoff 57344 (with the SN3800 gearbox), size 19456; pg_lossless_100000_5m_profile xoff 81920, size 100352

Failing::

    CABLE_LENGTH Ethernet0 = "300m" -> need xoff 103424 (with the SN3800 gearbox) > 81920: drops before the pause lands
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fabricplan.errors import InputError
from fabricplan.ops import defaults as ops_defaults
from fabricplan.ops import headroom
from fabricplan.ops.lint.finding import Finding
from fabricplan.ops.lint.options import from_catalog
from fabricplan.ops.lint.rules._common import finding, hset
from fabricplan.ops.model import BufferProfile, Link, SwitchPortQos

ID = "HDRM001"
SEVERITY = "error"
SCOPE = "link"
TITLE = "Switch PG headroom (xoff) covers speed, cable length and MTU"
OPTIONS: dict[str, str] = {"headroom_model": "lint.headroom_model"}


def defaults(catalog: Any) -> dict[str, Any]:
    """Default options: ``headroom_model`` from the catalog; ``asic`` "" = from DEVICE_METADATA."""
    return {**from_catalog(OPTIONS, catalog), "asic": ""}


def check_option(key: str, value: Any, where: str, catalog: Any) -> None:
    """An ``asic`` option names a supported ASIC (InputError at ``where``, the lint config's field)."""
    if key == "asic" and value:
        headroom.asic_for(value, location=where, catalog=catalog)


def vendor_row(port: SwitchPortQos, cable: float, catalog: Any) -> tuple[str, list[int]] | None:
    """(table name, [speed, cable, size, xon, xoff]) of the port's SKU for its speed and cable, if bundled."""
    if not port.hwsku or port.speed_mbps is None:
        return None
    for name, entry in ops_defaults.group("headroom.vendor_pg_profiles", catalog).items():
        if port.hwsku in entry["value"]["skus"]:
            for row in entry["value"]["rows"]:
                if row[0] == port.speed_mbps and row[1] == cable:
                    return name, row
            return None
    return None


def _is_vendor_profile(profile: BufferProfile, row: list[int] | None) -> bool:
    return row is not None and (profile.size_bytes, profile.xon_bytes, profile.xoff_bytes) == tuple(row[2:5])


def check(link: Link, options: dict[str, Any], catalog: Any) -> Iterator[Finding]:
    port = link.switch
    if port is None or not port.pfc_enable:
        return
    profiles = {p.name: p for p in port.buffer_pg.values() if p.lossless and not p.computed}
    missing = None if profiles else _missing_pair(link, port, catalog)
    if missing is not None:
        yield missing
    if not profiles and not port.buffer_pg:
        return
    if port.cable_length_m is None:
        yield finding(ID, link, f"lossless port {port.port} has no CABLE_LENGTH; headroom cannot be sized",
                      hset("CABLE_LENGTH|AZURE", port.port, f"{link.cable_m:g}m" if link.cable_m else "<length>m"),
                      {"switch": {"pfc_enable": sorted(port.pfc_enable), "cable_length": None}},
                      port.where("cable_length"))
        return
    if port.speed_mbps is None:
        return
    cable = port.cable_length_m
    if link.cable_m is not None and link.cable_m > cable:
        yield finding(ID, link, f"CABLE_LENGTH {cable:g} m is shorter than the real cable {link.cable_m:g} m",
                      hset("CABLE_LENGTH|AZURE", port.port, f"{link.cable_m:g}m"),
                      {"switch": {"cable_length_m": cable}, "cabling": {"length_m": link.cable_m}},
                      port.where("cable_length"))
        cable = link.cable_m
    mtu = port.mtu if port.mtu is not None else ops_defaults.value("headroom.sonic.default_port_mtu_bytes", catalog)
    vendor = vendor_row(port, cable, catalog)
    profiles = {n: p for n, p in profiles.items() if not _is_vendor_profile(p, vendor[1] if vendor else None)}
    if not profiles:
        return
    try:
        if options["headroom_model"] == "generic":
            need = headroom.generic_headroom(port.speed_mbps, cable, mtu, catalog=catalog)
        else:
            asic = _asic(port, options, catalog)
            if asic is None:
                key = "hwsku" if port.hwsku else "platform"
                yield Finding(rule_id=ID, link=link.name, location=port.where(key), max_severity="info",
                              message=(f"no headroom model for {key} {getattr(port, key) or '(none)'}: PG headroom not "
                                       f"checked; supported ASICs: {', '.join(headroom.supported_asics(catalog))}"),
                              fix="set the lint option HDRM001 asic: <one of the supported ASICs> if the switch has one",
                              evidence={"switch": {"platform": port.platform, "hwsku": port.hwsku}},
                              reason="the Spectrum model must not size other ASICs")
                return
            if asic in headroom.broadcom_asics(catalog):
                try:
                    need = headroom.broadcom_headroom(port.speed_mbps, cable, asic, sku=port.hwsku,
                                                      port_mtu_bytes=mtu, catalog=catalog)
                except InputError as exc:  # the SKU's table has no row for the speed: nothing to size against
                    yield Finding(rule_id=ID, link=link.name, location=port.where("speed"), max_severity="info",
                                  message=f"PG headroom not checked: {exc.message}",
                                  fix="add the speed to the SKU's pg_profile_lookup.ini, or size the profile by hand",
                                  evidence={"switch": {"hwsku": port.hwsku, "speed_mbps": port.speed_mbps}},
                                  reason="the Broadcom model has no row to compare with")
                    return
            else:
                need = headroom.sonic_headroom(port.speed_mbps, cable, mtu, port.lossless_mtu, asic,
                                               port.small_packet_percentage, eight_lanes=port.lanes == 8,
                                               shared_headroom_pool=port.shared_headroom_pool, catalog=catalog,
                                               sku=port.hwsku)
    except InputError as exc:  # e.g. a speed without a pause-quanta entry for the generic model
        raise InputError(exc.message, location=port.where("speed")) from None
    for name, profile in sorted(profiles.items()):
        short = []
        if (profile.xoff_bytes or 0) < need.xoff_bytes:
            short.append(f"xoff {profile.xoff_bytes} < {need.xoff_bytes}")
        if need.model == "sonic" and profile.size_bytes is not None and profile.size_bytes < need.size_bytes:
            short.append(f"size {profile.size_bytes} < {need.size_bytes}")
        if not short:
            continue
        pgs = sorted(i for i, p in port.buffer_pg.items() if p is profile)
        yield finding(ID, link,
                      f"PG headroom too small for {port.speed_mbps // 1000}G, {cable:g} m, MTU {mtu} "
                      f"({need.model} model): " + ", ".join(short),
                      _fix(port.port, pgs, profile, need, cable),
                      {"switch": {"profile": name, "xoff": profile.xoff_bytes, "size": profile.size_bytes,
                                  "speed_mbps": port.speed_mbps, "cable_m": cable, "mtu": mtu},
                       "required": {"xoff": need.xoff_bytes, "size": need.size_bytes, "model": need.model}},
                      port.locations.get(f"pg{pgs[0]}", port.source) if pgs else port.source)


def sku_table(port: SwitchPortQos, catalog: Any) -> tuple[str, list[list[int]]] | None:
    """(table name, rows) of the SKU's bundled ``pg_profile_lookup.ini`` (NVIDIA or Broadcom), if any."""
    if port.hwsku:
        for name, entry in ops_defaults.group("headroom.vendor_pg_profiles", catalog).items():
            if port.hwsku in entry["value"]["skus"]:
                return name, entry["value"]["rows"]
    found = headroom.broadcom_table(sku=port.hwsku, catalog=catalog) if port.hwsku else None
    return (found[0], found[1]["value"]["rows"]) if found else None


def _missing_pair(link: Link, port: SwitchPortQos, catalog: Any) -> Finding | None:
    """With the traditional buffer model and no lossless profile in CONFIG_DB, buffermgrd configures
    the lossless PG only for a (speed, cable) pair in the SKU's ``pg_profile_lookup.ini``
    (``doSpeedUpdateTask``: "No PG profile configured for speed ... and cable length ..."); a PFC port
    whose pair is missing gets none."""
    if port.buffer_model == "dynamic" or port.speed_mbps is None or port.cable_length_m is None:
        return None
    table = sku_table(port, catalog)
    if table is None:
        return None
    name, rows = table
    if any(r[0] == port.speed_mbps and r[1] == port.cable_length_m for r in rows):
        return None
    pairs = sorted({(r[0], r[1]) for r in rows})
    cables = sorted({c for s, c in pairs if s == port.speed_mbps})
    have = (f"for {port.speed_mbps} Mb/s it has {', '.join(f'{c:g}m' for c in cables)}" if cables
            else f"it has no row for {port.speed_mbps} Mb/s (speeds {', '.join(str(s) for s in sorted({s for s, _ in pairs}))})")
    fix = (hset("CABLE_LENGTH|AZURE", port.port, f"{min((c for c in cables if c >= port.cable_length_m), default=cables[-1]):g}m")
           + " (the next listed length at or above the real cable)") if cables else         "add a row for this speed to the SKU's pg_profile_lookup.ini, or configure BUFFER_PG with an explicit lossless profile"
    return finding(ID, link,
                   f"SKU {port.hwsku}'s pg_profile_lookup.ini ({name}) has no row for {port.speed_mbps} Mb/s, "
                   f"{port.cable_length_m:g} m: buffermgrd configures no lossless PG on {port.port} ({have})",
                   fix, {"switch": {"hwsku": port.hwsku, "speed_mbps": port.speed_mbps,
                                    "cable_length_m": port.cable_length_m, "buffer_model": port.buffer_model or "traditional"},
                         "table": {"name": name, "cables_for_speed_m": cables}},
                   port.where("cable_length"))


def _asic(port: SwitchPortQos, options: dict[str, Any], catalog: Any) -> str | None:
    """The option, else the ASIC of DEVICE_METADATA hwsku / platform; None when neither has a model."""
    if options.get("asic"):
        return headroom.asic_for(options["asic"], location="HDRM001.asic", catalog=catalog)
    if port.hwsku and port.hwsku in ops_defaults.value("headroom.sonic.sku_asic", catalog):
        return headroom.asic_for(sku=port.hwsku, catalog=catalog)
    if port.platform and port.platform in ops_defaults.value("headroom.sonic.platform_asic", catalog):
        return headroom.asic_for(platform=port.platform, catalog=catalog)
    found = headroom.broadcom_table(sku=port.hwsku, platform=port.platform, catalog=catalog)
    return found[1]["value"]["asic"] if found else None


def _fix(port: str, pgs: list[int], profile: BufferProfile, need: headroom.HeadroomResult, cable: float) -> str:
    """A new per-(speed, cable) profile, as SONiC names them, and the PG pointed at it."""
    speed = need.inputs["speed_mbps"]
    new = f"pg_lossless_{speed}_{cable:g}m_profile"
    fields = {"pool": profile.pool.name if profile.pool else "ingress_lossless_pool", "xoff": need.xoff_bytes}
    if need.xon_bytes is not None:
        fields["xon"] = need.xon_bytes
    fields["size"] = max(need.size_bytes, need.xoff_bytes if need.model == "generic" else 0)
    if profile.dynamic_th is not None:
        fields["dynamic_th"] = profile.dynamic_th
    first, *rest = fields.items()
    steps = [hset(f"BUFFER_PROFILE|{new}", first[0], first[1], **dict(rest))]
    steps += [hset(f"BUFFER_PG|{port}|{pg}", "profile", new) for pg in pgs]
    return "; ".join(steps) + f" (from: fabricplan headroom --speed {speed} --cable {cable:g}m --mtu {need.inputs.get('port_mtu_bytes', need.inputs.get('mtu_bytes'))} --model {need.model}" + (f" --asic {need.inputs['asic']}" if need.inputs.get("asic") else "") + ")"
