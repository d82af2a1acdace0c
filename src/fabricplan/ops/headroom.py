"""PFC headroom (XOFF/XON) models: pure functions, one per published formula.

Four models, each returning a :class:`HeadroomResult` with the size of every term:

* :func:`generic_headroom` — the vendor-neutral IEEE 802.1Qbb accounting (frames in flight on
  both sides, the PFC frame, the round-trip wire delay, the peer's response time).
* :func:`sonic_headroom` — SONiC's dynamic buffer calculation for NVIDIA Spectrum-1..6
  (``buffer_headroom_mellanox.lua`` as of 2026-08), bit for bit, including its 1 KB rounding;
  its steps are small functions beside it (``_sonic_port``, ``_spectrum``, ``_peer_response``,
  ``_cell_occupancy``, ``_propagation_terms``, ``_sonic_xoff``, ``_pipeline_latency``,
  ``_spectrum_headroom``).
* :func:`broadcom_headroom` — Broadcom Trident/Tomahawk as SONiC configures them: the row of the
  SKU's (or the ASIC's reference) ``pg_profile_lookup.ini``, XOFF interpolated in cable length;
  the ``sonic`` model hands a Broadcom ASIC to it.
* :func:`mlx5_headroom` — the ConnectX NIC driver's ``calculate_xoff()`` in integer arithmetic and
  the minimum lossless buffer size the driver accepts.

:func:`compute` picks one by the name ``MODELS`` lists (``generic``, ``sonic``, ``mlx5``; Broadcom
through ``sonic``).

Every constant comes from ``catalog/data/ops_defaults.yaml`` (``headroom.*``), with its source.
Speeds are in Mb/s as SONiC's ``PORT.speed`` and the kernel use them (100G = 100000).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from fabricplan.errors import CatalogError, InputError
from fabricplan.ops import defaults
from fabricplan.ops.limits import CABLE_RANGE_M, MTU_RANGE_BYTES, SPEED_RANGE_MBPS

if TYPE_CHECKING:
    from fabricplan.catalog import Catalog

MODELS = ("generic", "sonic", "mlx5")


@dataclass(frozen=True)
class HeadroomTerm:
    """One additive term of a headroom computation."""

    name: str
    bytes: float
    detail: str


@dataclass(frozen=True)
class HeadroomResult:
    """Result of one headroom model.

    ``xoff_bytes`` is the headroom that must remain free above the XOFF threshold,
    ``xon_bytes`` the model's XON value (``None`` when the model defines none) and
    ``size_bytes`` the buffer (or PG reservation) the model asks for. ``terms`` add up to the
    unrounded XOFF before the model's own rounding/scaling, explained in ``notes``.
    """

    model: str
    xoff_bytes: int
    xon_bytes: int | None
    size_bytes: int
    terms: tuple[HeadroomTerm, ...]
    inputs: dict[str, Any]
    notes: tuple[str, ...] = ()
    references: tuple[str, ...] = field(default_factory=tuple)


def _ceil(x: float, step: int = 1) -> int:
    """Round up to a multiple of ``step``, ignoring float noise below 1e-9 of a byte."""
    return int(math.ceil(x / step - 1e-9)) * step


def pause_quanta(speed_mbps: int, catalog: Catalog) -> int | None:
    """Peer response time in pause quanta for a port speed, or ``None`` if the table lacks it.

    Parameters
    ----------
    speed_mbps : int
        Port speed [Mb/s].

    References
    ----------
    sonic-net/sonic-swss ``cfgmgr/buffer_headroom_mellanox.lua`` pause-quanta table, citing
    IEEE 802.3 31B.3.7 (``ops_defaults.yaml: headroom.pause_quanta_by_speed_mbps``).
    """
    path = "headroom.pause_quanta_by_speed_mbps"
    table = defaults.value(path, catalog)
    if not isinstance(table, dict):
        raise CatalogError("must be a table of speed [Mb/s]: pause quanta", location=defaults.where(path, catalog))
    quanta = table.get(int(speed_mbps))
    if quanta is not None:
        defaults.check_number(quanta, f"{defaults.where(path, catalog)}.{int(speed_mbps)}", 0, 1e6, integer=True)
    return quanta


def _check_common(speed_mbps: float, cable_m: float, mtu_bytes: int) -> None:
    """Inputs within :mod:`fabricplan.ops.limits` (positive, finite, physically plausible)."""
    for value, (lo, hi), what, where, unit in (
            (speed_mbps, SPEED_RANGE_MBPS, "speed", "speed", " Mb/s"),
            (cable_m, CABLE_RANGE_M, "cable length", "cable", " m"),
            (mtu_bytes, MTU_RANGE_BYTES, "MTU", "mtu", " bytes")):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InputError(f"{what} must be a number, got {str(value)[:40]!r}", location=where)
        if not (math.isfinite(value) and lo <= value <= hi) or (what == "speed" and value <= 0):
            raise InputError(f"{what} must be in {defaults.span(lo, hi)}{unit}, got {defaults.show(value)}",
                             location=where)


def generic_headroom(
    speed_mbps: int,
    cable_m: float,
    mtu_bytes: int,
    peer_mtu_bytes: int | None = None,
    ns_per_m: float | None = None,
    *, catalog: Catalog,
) -> HeadroomResult:
    """Vendor-neutral lower bound of PFC headroom (IEEE 802.1Qbb accounting).

    ``headroom = MTU_local + MTU_peer + PFC frame + 2 * cable * ns_per_m * rate / 8
    + pause_quanta(speed) * 512 / 8``. Interface (D-Intf), gearbox and FEC latencies are not
    included: the result is a lower bound.

    Parameters
    ----------
    speed_mbps : int
        Link speed [Mb/s].
    cable_m : float
        Cable length [m].
    mtu_bytes : int
        Largest frame the local port may be sending when it emits PFC [bytes].
    peer_mtu_bytes : int, optional
        Largest frame the peer may have started [bytes]; default ``mtu_bytes``.
    ns_per_m : float, optional
        One-way propagation delay [ns/m]; default ``headroom.generic.ns_per_m`` (5.0).

    Returns
    -------
    HeadroomResult
        ``xoff_bytes`` = ``size_bytes`` = the headroom [bytes]; ``xon_bytes`` is ``None``.

    References
    ----------
    .. [1] Cisco, "Priority Flow Control: Build Reliable Layer 2 Infrastructure", white paper,
       pp. 2-3 (the five terms).
    .. [2] Cisco Press, "Congestion management in Ethernet storage networks", ch. 7 (bit-time
       terms; PFC frame 672 bit times).
    .. [3] IEEE 802.3 Annex 31B (pause quanta), via the sonic-swss pause-quanta table.
    """
    _check_common(speed_mbps, cable_m, mtu_bytes)
    peer_mtu = mtu_bytes if peer_mtu_bytes is None else peer_mtu_bytes
    ns = defaults.number("headroom.generic.ns_per_m", catalog, lo=0, hi=1e6) if ns_per_m is None else ns_per_m
    pfc_frame = defaults.number("headroom.generic.pfc_frame_bytes", catalog, lo=0, hi=1e6)
    quanta = pause_quanta(speed_mbps, catalog)
    if quanta is None:
        raise InputError(
            f"no pause-quanta entry for {speed_mbps} Mb/s; known speeds: "
            + ", ".join(str(s) for s in sorted(defaults.value("headroom.pause_quanta_by_speed_mbps", catalog))),
            location="speed",
        )
    bits_per_quantum = defaults.number("headroom.bits_per_pause_quantum", catalog, lo=0, hi=1e6)
    # ns * Mb/s = 1e-3 bit, so bytes = ns * Mb/s / 8000 (kept in this order to stay exact).
    cable_bytes = 2 * cable_m * ns * speed_mbps / 8000
    peer_response = quanta * bits_per_quantum / 8
    terms = (
        HeadroomTerm("local_frame_in_flight", mtu_bytes, "MTU[R]: frame the receiver is already sending"),
        HeadroomTerm("peer_frame_in_flight", peer_mtu, "MTU[S]: frame the sender had started"),
        HeadroomTerm("pfc_frame", pfc_frame, "PFC frame + IFG + preamble"),
        HeadroomTerm("cable_round_trip", cable_bytes, f"2 x {cable_m:g} m x {ns:g} ns/m at {speed_mbps} Mb/s"),
        HeadroomTerm("peer_response", peer_response, f"{quanta} pause quanta x {bits_per_quantum} bits"),
    )
    total = _ceil(sum(t.bytes for t in terms))
    return HeadroomResult(
        model="generic",
        xoff_bytes=total,
        xon_bytes=None,
        size_bytes=total,
        terms=terms,
        inputs={"speed_mbps": speed_mbps, "cable_m": cable_m, "mtu_bytes": mtu_bytes,
                "peer_mtu_bytes": peer_mtu, "ns_per_m": ns},
        notes=("lower bound: interface, gearbox and FEC delays are not included",),
        references=(defaults.source("headroom.generic.ns_per_m", catalog),
                    defaults.source("headroom.pause_quanta_by_speed_mbps", catalog)),
    )


def supported_asics(catalog: Catalog) -> list[str]:
    """Names of the ASICs the ``sonic`` model has constants for: Spectrum (``headroom.sonic.asic``)
    and Broadcom Trident/Tomahawk (``headroom.broadcom.asic``)."""
    return sorted(defaults.group("headroom.sonic.asic", catalog)) + broadcom_asics(catalog)


def broadcom_asics(catalog: Catalog) -> list[str]:
    """Broadcom ASICs with a reference lossless table (``headroom.broadcom.asic``)."""
    return sorted(defaults.group("headroom.broadcom.asic", catalog))


def _asic_of(name: str, spectrum_map: str, broadcom_key: dict[str, str], catalog: Catalog) -> str | None:
    """The ASIC of a SKU or platform: NVIDIA's map (``spectrum_map`` in ops_defaults), else the
    Broadcom table that lists it (``broadcom_key``: ``{"sku": ...}`` or ``{"platform": ...}``)."""
    table = defaults.value(spectrum_map, catalog)
    if name in table:
        return table[name]
    found = broadcom_table(**broadcom_key, catalog=catalog)
    return found[1]["value"]["asic"] if found else None


def sku_model_inputs(sku: str | None, catalog: Catalog) -> dict[str, Any] | None:
    """The LOSSLESS_TRAFFIC_PATTERN inputs and algorithm version under which the sonic model
    reproduces the SKU's own vendor table (``model_inputs`` of ``headroom.vendor_pg_profiles``:
    lossless_mtu, small_packet_percentage, shared_headroom_pool, algorithm), or None."""
    if not sku:
        return None
    for entry in defaults.group("headroom.vendor_pg_profiles", catalog).values():
        if sku in entry["value"].get("skus", []):
            return entry["value"].get("model_inputs")
    return None


#: Inputs of the sonic model a SKU's ``model_inputs`` can supply: compute() keyword -> (catalog key, name).
SKU_INPUTS = {"lossless_mtu_bytes": ("lossless_mtu", "lossless MTU"),
              "small_packet_percentage": ("small_packet_percentage", "small-packet share"),
              "shared_headroom_pool": ("shared_headroom_pool", "shared headroom pool"),
              "algorithm": ("algorithm", "algorithm")}


def sku_defaults(sku: str | None, given: dict[str, Any],
                 catalog: Catalog) -> tuple[dict[str, Any], list[str]]:
    """``given`` (compute() keywords of SKU_INPUTS; None, or False for the pool, = not given) with the
    ones not given taken from the inputs that reproduce the SKU's own vendor table
    (:func:`sku_model_inputs`), and the names of those taken. The CLI and the API both use it."""
    inputs = sku_model_inputs(sku, catalog)
    filled, taken = dict(given), []
    if inputs:
        for keyword, (key, name) in SKU_INPUTS.items():
            if filled.get(keyword) in (None, False) and inputs[key] not in (None, False):
                filled[keyword] = str(inputs[key]) if keyword == "algorithm" else inputs[key]
                taken.append(name)
    return filled, taken


def vendor_table_row(sku: str, speed_mbps: int, cable_m: float,
                     catalog: Catalog) -> tuple[str, list[int]] | None:
    """(table name, [speed, cable, size, xon, xoff]) of the SKU's bundled lossless lookup table
    (NVIDIA ``headroom.vendor_pg_profiles`` or Broadcom ``headroom.broadcom.tables``) at exactly
    this speed and cable length; ``None`` when the SKU has no bundled table or no such row."""
    tables = list(defaults.group("headroom.vendor_pg_profiles", catalog).items())
    tables += list(defaults.group("headroom.broadcom.tables", catalog).items())
    for name, entry in tables:
        if sku in entry["value"].get("skus", []):
            for row in entry["value"]["rows"]:
                if row[0] == speed_mbps and float(row[1]) == float(cable_m):
                    return name, list(row)
            return None
    return None


def with_vendor_check(result: HeadroomResult, sku: str | None, speed_mbps: int, cable_m: float,
                      catalog: Catalog, taken: list[str] | None = None) -> HeadroomResult:
    """The result with the SKU's own vendor table row beside it, when one exists: a note, and a
    warning when the vendor asks for more XOFF than the model (configuring the model's value would
    leave the lossless class short of headroom; the vendor's table is the reference then). ``taken``
    names the inputs :func:`sku_defaults` took from the SKU (said in a note)."""
    if taken:
        result = replace(result, notes=(*result.notes, f"{', '.join(taken)} from the inputs that reproduce "
                                                      f"{sku}'s vendor table (override with the flags)"))
    found = vendor_table_row(sku, speed_mbps, cable_m, catalog) if sku else None
    if found is None:
        return result
    name, row = found
    vendor_xoff = int(row[4])
    inputs = {**result.inputs, "vendor_table": name, "vendor_xoff_bytes": vendor_xoff, "vendor_size_bytes": int(row[2])}
    if vendor_xoff > result.xoff_bytes:
        note = (f"WARNING: the vendor's table {name} asks for XOFF {vendor_xoff:,} B at this speed and cable, "
                f"{vendor_xoff / result.xoff_bytes - 1:.0%} more than this model; configure at least the vendor's "
                "value (docs/validation.md, headroom section, says which tables the model does not reproduce)")
    else:
        note = f"the vendor's table {name} gives XOFF {vendor_xoff:,} B at this speed and cable"
    return replace(result, inputs=inputs, notes=(*result.notes, note))


def vendor_floor_xoff(asic: str, sku: str | None, speed_mbps: int, cable_m: float, catalog: Catalog,
                      gearbox: bool = False) -> tuple[str, int, str] | None:
    """(table, XOFF [bytes], how) of NVIDIA's shipped static lossless tables for this port: the SKU's
    own table when it has one, else every table of the ASIC (``headroom.vendor_pg_profiles`` whose
    ``asic`` it is; those of gearbox platforms, ``headroom.sonic.sku_gearbox_delay``, only for a port
    with a gearbox), the largest XOFF among them. In a table, the row at the speed and cable, or
    linear in cable length between the two rows around it (the tables are linear in it), rounded up
    to 1 KB (``headroom.sonic.kb_bytes``); below the shortest cable, the shortest row. None when no
    table of the ASIC has the speed, or the cable is beyond the longest row (no extrapolation)."""
    tables = defaults.group("headroom.vendor_pg_profiles", catalog)
    geared = set(defaults.value("headroom.sonic.sku_gearbox_delay", catalog))
    own = [(name, entry) for name, entry in tables.items() if sku and sku in entry["value"].get("skus", [])]
    chosen = own or [(name, entry) for name, entry in tables.items() if entry["value"].get("asic") == asic
                     and (gearbox or geared.isdisjoint(entry["value"].get("skus", [])))]
    kb = defaults.number("headroom.sonic.kb_bytes", catalog, lo=1, hi=1e6, integer=True)
    best: tuple[str, int, str] | None = None
    for name, entry in chosen:
        points = sorted((float(r[1]), int(r[4])) for r in entry["value"]["rows"] if r[0] == speed_mbps)
        if not points or cable_m > points[-1][0]:
            continue
        upper = next(i for i, (cable, _x) in enumerate(points) if cable_m <= cable)
        if upper == 0 or points[upper][0] == cable_m:
            xoff, how = points[upper][1], f"its {points[upper][0]:g} m row"
        else:
            (c0, x0), (c1, x1) = points[upper - 1], points[upper]
            xoff = _ceil(x0 + (x1 - x0) * (cable_m - c0) / (c1 - c0), kb)
            how = f"between its {c0:g} m and {c1:g} m rows"
        if best is None or xoff > best[1]:
            best = (name, xoff, how)
    return best


def with_vendor_floor(result: HeadroomResult, sku: str | None, speed_mbps: int, cable_m: float,
                      catalog: Catalog) -> HeadroomResult:
    """The sonic model's result never below NVIDIA's shipped static table for the port's Spectrum
    ASIC (:func:`vendor_floor_xoff`): the larger XOFF of the two (the size grows with it unless the
    XOFF lives in a shared headroom pool), the dynamic calculation's own XOFF and size kept beside
    it (``inputs.dynamic_xoff_bytes``, ``dynamic_size_bytes``) and a note naming the table. SONiC's
    dynamic default can ask for less than the vendor ships (a smaller small-packet share, a newer
    accounting); configuring less than the vendor's value is a risk the vendor does not take.
    Broadcom results (already the vendor's table) and ASICs without a bundled table are unchanged
    but for a note."""
    asic = result.inputs.get("asic")
    if result.model != "sonic" or asic in broadcom_asics(catalog):
        return result
    found = vendor_floor_xoff(asic, sku, speed_mbps, cable_m, catalog,
                              gearbox=bool(result.inputs.get("gearbox_delay")))
    inputs = {**result.inputs, "dynamic_xoff_bytes": result.xoff_bytes, "dynamic_size_bytes": result.size_bytes}
    if found is None:
        note = (f"no NVIDIA static table of {asic} covers {speed_mbps} Mb/s at {cable_m:g} m: the dynamic "
                "calculation alone")
        return replace(result, inputs=inputs, notes=(*result.notes, note))
    name, vendor_xoff, how = found
    inputs.update(vendor_floor_table=name, vendor_floor_xoff_bytes=vendor_xoff)
    if vendor_xoff <= result.xoff_bytes:
        note = (f"at least NVIDIA's static table {name} for {asic} (XOFF {vendor_xoff:,} B, {how}): the "
                "dynamic calculation's value")
        return replace(result, inputs=inputs, notes=(*result.notes, note))
    raise_by = vendor_xoff - result.xoff_bytes
    size = result.size_bytes if result.inputs.get("shared_headroom_pool") else result.size_bytes + raise_by
    note = (f"XOFF raised to NVIDIA's static table {name} for {asic} ({vendor_xoff:,} B, {how}): SONiC's dynamic "
            f"calculation gives {result.xoff_bytes:,} B (size {result.size_bytes:,} B), "
            f"{1 - result.xoff_bytes / vendor_xoff:.0%} less; --no-vendor-floor for the dynamic value alone")
    return replace(result, xoff_bytes=vendor_xoff, size_bytes=size, inputs=inputs, notes=(*result.notes, note))


def broadcom_table(asic: str | None = None, sku: str | None = None, platform: str | None = None,
                   *, catalog: Catalog) -> tuple[str, dict[str, Any]] | None:
    """The bundled Broadcom ``pg_profile_lookup.ini`` for a SKU (its own), else for a platform, else
    the ASIC's reference table; ``None`` when none applies. Returns (table name, entry)."""
    tables = defaults.group("headroom.broadcom.tables", catalog)
    for key, field_ in ((sku, "skus"), (platform, "platforms")):
        if key:
            for name, entry in tables.items():
                if key in entry["value"].get(field_, []) and (asic is None or entry["value"]["asic"] == asic):
                    return name, entry
    if asic and asic in broadcom_asics(catalog):
        ref = defaults.value(f"headroom.broadcom.asic.{asic}", catalog)["reference_table"]
        if ref not in tables:
            raise CatalogError(f"reference_table {ref!r} is not in headroom.broadcom.tables",
                               location=defaults.where(f"headroom.broadcom.asic.{asic}", catalog))
        return ref, tables[ref]
    return None


def asic_for(asic: str | None = None, sku: str | None = None, platform: str | None = None,
             location: str = "asic", *, catalog: Catalog) -> str:
    """Resolve the ASIC of the ``sonic`` model from an ASIC name, a SKU (``DEVICE_METADATA.hwsku``)
    or a platform (``DEVICE_METADATA.platform``), in that order.

    Raises
    ------
    InputError
        Nothing given, or a name without a model; the message lists the supported ones.
    """
    supported = supported_asics(catalog)
    if asic:
        name = asic.strip().lower()
        if name in supported:
            return name
        raise InputError(f"no headroom model for ASIC {asic!r}; supported: {', '.join(supported)}", location=location)
    if sku:
        found = _asic_of(sku, "headroom.sonic.sku_asic", {"sku": sku}, catalog)
        if found:
            return found
        table = defaults.value("headroom.sonic.sku_asic", catalog)
        raise InputError(f"unknown SKU {sku!r}: no ASIC known for it; supported ASICs: {', '.join(supported)} "
                         f"(give --asic, or one of the {len(table)} SKUs in ops_defaults.yaml headroom.sonic.sku_asic)",
                         location=location)
    if platform:
        found = _asic_of(platform, "headroom.sonic.platform_asic", {"platform": platform}, catalog)
        if found:
            return found
        raise InputError(f"no headroom model for platform {platform!r}; supported ASICs: {', '.join(supported)}",
                         location=location)
    raise InputError(f"the sonic model needs an ASIC (--asic or --sku); supported: {', '.join(supported)}",
                     location=location)


def sonic_headroom(speed_mbps: int, cable_m: float, port_mtu_bytes: int | None = None,
                   lossless_mtu_bytes: int | None = None, asic: str | None = None,
                   small_packet_percentage: float | None = None, gearbox_delay: float | None = None,
                   eight_lanes: bool = False, shared_headroom_pool: bool = False, *, catalog: Catalog,
                   sku: str | None = None, algorithm: str = "current") -> HeadroomResult:
    """SONiC's dynamic PFC headroom for NVIDIA Spectrum-1..6 (``buffer_headroom_mellanox.lua``, 2026-08).

    With ``wcf = ceil(cell/64 if cell > 128 else 2*cell/(1+cell))`` (worst-case cells per small
    packet), the byte share of small packets ``p_b = 100*64 / ((p*64 + (100-p)*lossless_mtu)/100)``
    and ``occupancy = (100 - p_b + p_b*wcf)/100``::

        propagation = port_mtu + 2*cable*speed/c/8 + 2*gearbox + mac_phy + peer_response + tile
        xoff = ceil_1024(lossless_mtu + propagation * occupancy) + spc6_compensation
        xoff += 2048  if no shared headroom pool, p != 100 and xoff + 2048 < ceil_1024(lossless_mtu
                      + propagation * wcf)
        xon  = ceil_1024(pipeline_latency * (2 if 8 lanes else 1))
        size = ceil_1024(xon) with a shared headroom pool, else ceil_1024(xoff + xon + (port_mtu if 8 lanes))

    ``tile`` = speed [Gb/s] * 120 / 8 bytes on Spectrum-4/5; ``spc6_compensation`` = 18 KB on
    Spectrum-6; ``peer_response`` = pause quanta(speed) * 64 bytes, or the ASIC's
    ``peer_response_time`` for speeds without a quanta entry.

    Parameters
    ----------
    speed_mbps : int
        Port speed [Mb/s] (``PORT.speed``).
    cable_m : float
        Cable length [m] (``CABLE_LENGTH|AZURE``).
    port_mtu_bytes : int, optional
        Port MTU [bytes] (``PORT.mtu``); default 9100.
    lossless_mtu_bytes : int, optional
        ``LOSSLESS_TRAFFIC_PATTERN|AZURE.mtu`` [bytes]; default 1024.
    asic : str
        One of :func:`supported_asics` (``spectrum`` … ``spectrum-6``); required.
    small_packet_percentage : float, optional
        ``LOSSLESS_TRAFFIC_PATTERN|AZURE.small_packet_percentage`` [% of packets]; default 50
        (SONiC's default since 2024-12; it was 100 before).
    gearbox_delay : float
        ``PERIPHERAL_TABLE`` gearbox delay, in SONiC's unit (the plugin adds
        ``speed_mbps * gearbox_delay / 8192`` bytes per crossing; ``/ 8000`` with ``algorithm="2020"``);
        0 = no gearbox; default: the SKU's platform value (``headroom.sonic.sku_gearbox_delay``, 400 on SN3800), else 0.
    eight_lanes : bool
        8-lane port (``PORT.lanes`` lists 8 lanes): pipeline latency doubled, one port MTU of
        speed overhead in the size.
    shared_headroom_pool : bool
        ``BUFFER_POOL|ingress_lossless_pool.xoff`` != 0 or ``over_subscribe_ratio`` != 0.
    sku : str, optional
        ``DEVICE_METADATA.hwsku``; for a Broadcom ASIC the SKU's own bundled table is used.
    algorithm : str
        ``current`` (default), ``2024`` (sonic-swss 3943093d: no reduced-share and no Spectrum-6
        compensation) or ``2020`` (the accounting of NVIDIA's static 2020 tables: peer response =
        the ASIC's ``peer_response_time``, unrounded worst-case factor, small-packet share counted in
        packets, no tile or compensation terms, default share 100 %); ``headroom.sonic.algorithm``.

    A Broadcom ASIC (:func:`broadcom_asics`) is sized by :func:`broadcom_headroom` instead.

    Returns
    -------
    HeadroomResult
        xoff, xon and size [bytes], each a multiple of 1024.

    References
    ----------
    .. [1] sonic-net/sonic-swss ``cfgmgr/buffer_headroom_mellanox.lua`` (commit 422271e7, 2026-08-01;
       algorithm update 3943093d, 2024-09-11; reduced small-packet compensation b20a5969, 2026-07-28).
    .. [2] sonic-net/sonic-buildimage ``platform/mellanox/asic_table.j2`` (commit fb4dee11): ASIC constants.
    .. [3] sonic-net/sonic-buildimage ``files/build_templates/buffers_config.j2``: LOSSLESS_TRAFFIC_PATTERN.
    """
    alg = _sonic_algorithm(algorithm, catalog)
    port = _sonic_port(speed_mbps, cable_m, port_mtu_bytes, lossless_mtu_bytes, small_packet_percentage, algorithm,
                       alg, eight_lanes=eight_lanes, shared_headroom_pool=shared_headroom_pool, catalog=catalog)
    asic_name = asic_for(asic, catalog=catalog)
    if asic_name in broadcom_asics(catalog):
        if algorithm != "current":
            raise InputError(f"--algorithm {algorithm} applies to Spectrum ASICs, not {asic_name}", location="algorithm")
        return broadcom_headroom(speed_mbps, cable_m, asic_name, sku=sku, port_mtu_bytes=port.port_mtu, catalog=catalog)
    spectrum = _spectrum(asic_name, alg, catalog)
    peer = _peer_response(speed_mbps, spectrum, catalog)
    cells = _cell_occupancy(spectrum, port.small_pct, port.lossless_mtu)
    port = replace(port, gearbox_delay=_sku_gearbox_delay(sku, catalog) if gearbox_delay is None else gearbox_delay)
    return _spectrum_headroom(port, spectrum, peer, cells, catalog)


def _sonic_algorithm(algorithm: str, catalog: Catalog) -> dict[str, Any]:
    """The switches of one version of the Lua's accounting (``headroom.sonic.algorithm``)."""
    versions = defaults.group("headroom.sonic.algorithm", catalog)
    if algorithm not in versions:
        raise InputError(f"unknown algorithm {str(algorithm)[:30]!r}; choose one of {', '.join(sorted(versions))}", location="algorithm")
    return versions[algorithm]["value"]


@dataclass(frozen=True)
class _SonicPort:
    """The sonic model's inputs for one port, with SONiC's defaults applied and checked."""

    speed_mbps: int
    cable_m: float
    port_mtu: int
    lossless_mtu: int
    small_pct: float
    algorithm: str
    eight_lanes: bool
    shared_headroom_pool: bool
    gearbox_delay: float = 0


def _sonic_port(speed_mbps: int, cable_m: float, port_mtu_bytes: int | None, lossless_mtu_bytes: int | None,
                small_packet_percentage: float | None, algorithm: str, alg: dict[str, Any], *, eight_lanes: bool,
                shared_headroom_pool: bool, catalog: Catalog) -> _SonicPort:
    """The port's inputs: PORT.mtu and the LOSSLESS_TRAFFIC_PATTERN (SONiC's defaults where not
    given; the 2020 and 2024 accountings have their own default small-packet share), checked."""
    port_mtu = defaults.number("headroom.sonic.default_port_mtu_bytes", catalog, lo=MTU_RANGE_BYTES[0], hi=MTU_RANGE_BYTES[1], integer=True) if port_mtu_bytes is None else port_mtu_bytes
    _check_common(speed_mbps, cable_m, port_mtu)
    lossless_mtu = defaults.number("headroom.sonic.lossless_mtu_bytes", catalog, lo=1, hi=MTU_RANGE_BYTES[1], integer=True) if lossless_mtu_bytes is None else lossless_mtu_bytes
    small_pct = (defaults.number("headroom.sonic.small_packet_percentage", catalog, lo=0, hi=100)
                 if algorithm == "current" else alg["default_small_packet_percentage"]) \
        if small_packet_percentage is None else small_packet_percentage
    if not 0 <= small_pct <= 100:
        raise InputError(f"small packet percentage must be in 0..100, got {small_pct:g}", location="small_packet_percentage")
    if not lossless_mtu > 0:
        raise InputError(f"lossless MTU must be positive, got {lossless_mtu}", location="lossless_mtu")
    return _SonicPort(speed_mbps=speed_mbps, cable_m=cable_m, port_mtu=port_mtu, lossless_mtu=lossless_mtu,
                      small_pct=small_pct, algorithm=algorithm, eight_lanes=eight_lanes,
                      shared_headroom_pool=shared_headroom_pool)


@dataclass(frozen=True)
class _Spectrum:
    """One Spectrum ASIC's constants (``headroom.sonic.asic``, checked), the Lua's own numbers and the
    algorithm version's switches (``alg``)."""

    name: str
    entry: dict[str, Any]
    constants: dict[str, Any]
    alg: dict[str, Any]
    kb: int
    step: int
    light: float
    minimal_packet: float
    bits_per_quantum: float
    compensation: int

    @property
    def cell(self) -> int:
        return self.constants["cell_size_bytes"]


def _spectrum(asic_name: str, alg: dict[str, Any], catalog: Catalog) -> _Spectrum:
    """The ASIC's constants and the Lua's numbers (KB, rounding step, speed of light, minimal packet,
    bits per pause quantum, reduced-share compensation), each within its bounds."""
    entry = defaults.group("headroom.sonic.asic", catalog)[asic_name]
    constants = _asic_constants(asic_name, entry["value"], catalog)
    return _Spectrum(
        name=asic_name, entry=entry, constants=constants, alg=alg,
        kb=defaults.number("headroom.sonic.kb_bytes", catalog, lo=1, hi=1e6, integer=True),
        step=defaults.number("headroom.sonic.rounding_bytes", catalog, lo=1, hi=1e9, integer=True),
        light=defaults.number("headroom.sonic.speed_of_light_m_per_s", catalog, lo=1, hi=1e12),
        minimal_packet=defaults.number("headroom.sonic.minimal_packet_size_bytes", catalog, lo=1, hi=MTU_RANGE_BYTES[1]),
        bits_per_quantum=defaults.number("headroom.bits_per_pause_quantum", catalog, lo=0, hi=1e6),
        compensation=defaults.number("headroom.sonic.reduced_small_packet_compensation_bytes", catalog, lo=0, hi=1e9,
                                     integer=True))


def _peer_response(speed_mbps: int, spectrum: _Spectrum, catalog: Catalog) -> HeadroomTerm:
    """The peer's response time: pause quanta(speed) x bits per quantum, or the ASIC's
    ``peer_response_time`` (speeds without a quanta entry, and the 2020 accounting)."""
    quanta = pause_quanta(speed_mbps, catalog) if spectrum.alg["peer_response"] == "quanta" else None
    if quanta is not None:
        return HeadroomTerm("peer_response", quanta * spectrum.bits_per_quantum / 8,
                            f"{quanta} pause quanta x {spectrum.bits_per_quantum} bits")
    response_kb = spectrum.constants["peer_response_time_kb"]
    return HeadroomTerm("peer_response", response_kb * spectrum.kb, f"ASIC peer_response_time {response_kb} KB")


@dataclass(frozen=True)
class _CellOccupancy:
    """Worst-case cells per small packet (``raw`` before the Lua's rounding), the small packets'
    share of the bytes [%] and the cell occupancy that scales the propagation bytes."""

    raw_factor: float
    worst_case_factor: float
    small_by_byte: float
    occupancy: float


def _cell_occupancy(spectrum: _Spectrum, small_pct: float, lossless_mtu: int) -> _CellOccupancy:
    """``wcf = ceil(cell/64 if cell > 128 else 2*cell/(1+cell))``, the byte share of small packets
    ``p_b = 100*64 / ((p*64 + (100-p)*lossless_mtu)/100)`` and ``occupancy = (100 - p_b + p_b*wcf)/100``
    (unrounded factor and the share in packets for the 2020 accounting)."""
    cell, minimal_packet, alg = spectrum.cell, spectrum.minimal_packet, spectrum.alg
    raw_factor = cell / minimal_packet if cell > 2 * minimal_packet else (2 * cell) / (1 + cell)
    worst_case_factor = math.ceil(raw_factor - 1e-12) if alg["round_worst_case_factor"] else raw_factor
    small_by_byte = (100 * minimal_packet / ((small_pct * minimal_packet + (100 - small_pct) * lossless_mtu) / 100)
                     if alg["small_packet_share"] == "bytes" else small_pct)
    return _CellOccupancy(raw_factor=raw_factor, worst_case_factor=worst_case_factor, small_by_byte=small_by_byte,
                          occupancy=(100 - small_by_byte + small_by_byte * worst_case_factor) / 100)


def _sku_gearbox_delay(sku: str | None, catalog: Catalog) -> float:
    """The SKU's platform gearbox delay (``headroom.sonic.sku_gearbox_delay``), else 0."""
    gearbox_delay = defaults.value("headroom.sonic.sku_gearbox_delay", catalog).get(sku, 0) if sku else 0
    defaults.check_number(gearbox_delay, defaults.where("headroom.sonic.sku_gearbox_delay", catalog) + f".{sku}", 0, 1e6)
    return gearbox_delay


def _propagation_terms(port: _SonicPort, spectrum: _Spectrum, peer: HeadroomTerm) -> tuple[HeadroomTerm, ...]:
    """``port_mtu + 2*cable*speed/c/8 + 2*gearbox + mac_phy + peer_response + tile``: the bytes that
    arrive after the XOFF threshold is crossed, before the cell-occupancy scaling."""
    speed_mbps, cable_m, constants, alg = port.speed_mbps, port.cable_m, spectrum.constants, spectrum.alg
    gearbox_divisor = 8000 if alg.get("gearbox_term") == "exact" else 8 * spectrum.kb
    bytes_on_gearbox = 0.0 if port.gearbox_delay == 0 else speed_mbps * port.gearbox_delay / gearbox_divisor
    # Round trip: 2 * L / c seconds at speed Mb/s = 2 * L * speed * 1e6 / c bits (Lua: *1e9 / (8*1000)).
    bytes_on_cable = 2 * cable_m * speed_mbps * 1e6 / spectrum.light / 8
    tile = speed_mbps / 1000 * constants.get("tile_bytes_per_gbps", 0) if alg["tile_term"] else 0
    return (
        HeadroomTerm("port_mtu", port.port_mtu, "frame in flight (PORT.mtu)"),
        HeadroomTerm("cable_round_trip", bytes_on_cable,
                     f"2 x {cable_m:g} m at {speed_mbps} Mb/s, c = {spectrum.light} m/s"),
        HeadroomTerm("gearbox", 2 * bytes_on_gearbox, "2 x bytes on gearbox"),
        HeadroomTerm("mac_phy_delay", constants["mac_phy_delay_kb"] * spectrum.kb,
                     f"{constants['mac_phy_delay_kb']} KB ({spectrum.name})"),
        peer,
        HeadroomTerm("tile", tile, f"{constants.get('tile_bytes_per_gbps', 0)} B per Gb/s on the tile ({spectrum.name})"),
    )


@dataclass(frozen=True)
class _Xoff:
    """The sonic XOFF [bytes], the scaled propagation it holds and its two compensations."""

    bytes: int
    scaled: float
    asic_compensation: float
    small_compensation: int
    note: str | None  # on the reduced-share compensation, when it applies


def _sonic_xoff(port: _SonicPort, spectrum: _Spectrum, propagation: float, cells: _CellOccupancy) -> _Xoff:
    """``ceil_1024(lossless_mtu + propagation * occupancy) + spc6_compensation``, plus 2048 without a
    shared headroom pool when the reduced small-packet share leaves the XOFF more than that below
    the 100 % one."""
    step, alg = spectrum.step, spectrum.alg
    scaled = propagation * cells.occupancy
    xoff = _ceil(port.lossless_mtu + scaled, step)
    asic_compensation = spectrum.constants.get("xoff_compensation_kb", 0) * spectrum.kb if alg["asic_compensation"] else 0
    xoff += asic_compensation
    small_compensation, note, compensation = 0, None, spectrum.compensation
    if alg["reduced_share_compensation"] and not port.shared_headroom_pool and port.small_pct != 100:
        full = _ceil(port.lossless_mtu + propagation * cells.worst_case_factor, step)
        if xoff + compensation < full:
            small_compensation = compensation
            xoff += compensation
            note = f"+{compensation} B: reduced small-packet share still more than {compensation} B below the 100 % xoff {full}"
    return _Xoff(bytes=xoff, scaled=scaled, asic_compensation=asic_compensation, small_compensation=small_compensation,
                 note=note)


def _pipeline_latency(port: _SonicPort, spectrum: _Spectrum) -> tuple[float, int]:
    """(pipeline latency [bytes]: the XON, speed overhead in the size): an 8-lane port doubles the
    latency (less the version's ``eight_lane_pipeline_less_kb``) and adds one port MTU to the size."""
    pipeline_latency = spectrum.constants["pipeline_latency_kb"] * spectrum.kb
    if not port.eight_lanes:
        return pipeline_latency, 0
    return pipeline_latency * 2 - spectrum.alg.get("eight_lane_pipeline_less_kb", 0) * spectrum.kb, port.port_mtu


def _spectrum_headroom(port: _SonicPort, spectrum: _Spectrum, peer: HeadroomTerm, cells: _CellOccupancy,
                       catalog: Catalog) -> HeadroomResult:
    """The sonic model's result: XOFF with every term, XON from the pipeline latency and the PG size
    (XON with a shared headroom pool, else XOFF + XON (+ port MTU on 8 lanes)), each rounded up."""
    alg, step = spectrum.alg, spectrum.step
    propagation_terms = _propagation_terms(port, spectrum, peer)
    propagation = sum(t.bytes for t in propagation_terms)
    xoff = _sonic_xoff(port, spectrum, propagation, cells)
    pipeline_latency, speed_overhead = _pipeline_latency(port, spectrum)
    notes = [f"worst-case factor {'ceil(' if alg['round_worst_case_factor'] else '('}{cells.raw_factor:.4g}) = "
             f"{cells.worst_case_factor:.4g} cells per small packet; "
             f"{port.small_pct:g} % small packets = {cells.small_by_byte:.3g} % of bytes",
             f"xoff rounded up to {step} B; xon = pipeline latency {pipeline_latency:g} B rounded up",
             *([xoff.note] if xoff.note else [])]
    terms = (
        HeadroomTerm("lossless_mtu", port.lossless_mtu, "LOSSLESS_TRAFFIC_PATTERN mtu"),
        *propagation_terms,
        HeadroomTerm("cell_occupancy_overhead", xoff.scaled - propagation,
                     f"propagation x (cell occupancy {cells.occupancy:.4g} - 1), cell {spectrum.cell} B"),
        HeadroomTerm("asic_compensation", xoff.asic_compensation, f"{spectrum.name} xoff compensation"),
        HeadroomTerm("small_packet_compensation", xoff.small_compensation, "reduced small-packet share compensation"),
    )
    xon = _ceil(pipeline_latency, step)
    shared = port.shared_headroom_pool
    size = _ceil(xon, step) if shared else _ceil(xoff.bytes + xon + speed_overhead, step)
    notes.append("size = xon (shared headroom pool)" if shared
                 else "size = xoff + xon" + (" + port MTU (8 lanes)" if port.eight_lanes else "") + " (no shared headroom pool)")
    return HeadroomResult(
        model="sonic", xoff_bytes=xoff.bytes, xon_bytes=xon, size_bytes=size, terms=terms,
        inputs={"speed_mbps": port.speed_mbps, "cable_m": port.cable_m, "port_mtu_bytes": port.port_mtu,
                "lossless_mtu_bytes": port.lossless_mtu, "asic": spectrum.name,
                "small_packet_percentage": port.small_pct, "gearbox_delay": port.gearbox_delay,
                "eight_lanes": port.eight_lanes, "shared_headroom_pool": shared, "algorithm": port.algorithm},
        notes=tuple(notes),
        references=(defaults.source("headroom.sonic.speed_of_light_m_per_s", catalog), spectrum.entry["source"]),
    )


def broadcom_headroom(speed_mbps: int, cable_m: float, asic: str, sku: str | None = None,
                      port_mtu_bytes: int | None = None, *, catalog: Catalog) -> HeadroomResult:
    """Lossless PG of a Broadcom Trident/Tomahawk switch as SONiC configures it (cell-based accounting).

    SONiC computes no headroom for Broadcom: buffermgrd (traditional buffer model) takes the
    ``(speed, cable)`` row of the SKU's ``pg_profile_lookup.ini``; SKUs share one table per ASIC
    generation (``device/common/profiles/<gen>/.../BALANCED``). This model uses the SKU's own
    bundled table (``sku``), else the ASIC's reference table, and for a cable length between two rows
    of the speed interpolates ``xoff`` linearly in cable length (the tables are linear in it), beyond
    the longest extrapolates with the last segment's slope, below the shortest takes the shortest::

        xoff = cell * ceil(xoff_interp(cable) / cell)
        size, xon, dynamic_th, xon_offset = the row's (size is the PG's guaranteed minimum when
                                            size < xoff: xoff is taken from the pool's shared headroom)

    Parameters
    ----------
    speed_mbps : int
        ``PORT.speed`` [Mb/s]; must be a speed of the table (else SONiC configures no lossless PG).
    cable_m : float
        ``CABLE_LENGTH`` [m].
    asic : str
        One of :func:`broadcom_asics`.
    sku : str, optional
        ``DEVICE_METADATA.hwsku``: its own table when bundled.
    port_mtu_bytes : int, optional
        Not an input of the vendor tables (they assume jumbo frames); recorded only.

    Raises
    ------
    InputError
        The table has no row for the speed (lists the speeds it has).

    References
    ----------
    .. [1] sonic-net/sonic-buildimage ``device/common/profiles/{td2,th,th2}/*/BALANCED/pg_profile_lookup.ini``
       and the Dell/Arista SKU tables, each with commit in ``ops_defaults.yaml`` ``headroom.broadcom.tables``.
    .. [2] sonic-net/sonic-swss ``cfgmgr/buffermgr.cpp``: the traditional model reads ``pg_profile_lookup.ini``.
    """
    _check_common(speed_mbps, cable_m, port_mtu_bytes or 9100)
    found = broadcom_table(asic, sku=sku, catalog=catalog)
    if found is None:
        raise InputError(f"no Broadcom headroom model for ASIC {asic!r}; supported: {', '.join(broadcom_asics(catalog))}",
                         location="asic")
    name, entry = found
    constants = defaults.value(f"headroom.broadcom.asic.{asic}", catalog)
    cell = constants.get("cell_size_bytes") if isinstance(constants, dict) else None
    defaults.check_number(cell, defaults.where(f"headroom.broadcom.asic.{asic}", catalog) + ".cell_size_bytes", 1, 1e6, True)
    rows = sorted((r for r in entry["value"]["rows"] if r[0] == speed_mbps), key=lambda r: r[1])
    if not rows:
        speeds = sorted({r[0] for r in entry["value"]["rows"]})
        raise InputError(f"{name} (pg_profile_lookup.ini of {asic}) has no lossless profile for {speed_mbps} Mb/s "
                         f"(has {', '.join(str(s) for s in speeds)}): SONiC configures no lossless PG for such a port",
                         location="speed")
    raw, lower, base_row, how = broadcom_xoff(rows, cable_m)
    xoff = _ceil(raw, cell)
    size, xon, threshold, xon_offset = base_row[2], base_row[3], base_row[5], base_row[6]
    if size >= base_row[4]:  # size holds the headroom (Trident2: xoff + guaranteed minimum): it moves with xoff
        size = xoff + size - base_row[4]
    terms = (
        HeadroomTerm("table_xoff", float(lower[1]), f"{name}: {speed_mbps} Mb/s, {lower[0]} m row"),
        HeadroomTerm("cable_term", raw - lower[1], how),
        HeadroomTerm("cell_rounding", xoff - raw, f"rounded up to a whole {cell} B cell"),
    )
    notes = [f"Broadcom {asic}: table {name} ({'SKU ' + sku if sku and sku in entry['value']['skus'] else 'ASIC reference'})",
             f"size {size} B = {size // cell} cells " + ("guaranteed minimum; xoff from the shared headroom pool"
                                                        if size < xoff else "includes the headroom"),
             f"dynamic_th {threshold} (alpha 2^{threshold}), xon_offset {xon_offset} B"]
    return HeadroomResult(
        model="sonic",
        xoff_bytes=xoff,
        xon_bytes=xon,
        size_bytes=size,
        terms=terms,
        inputs={"speed_mbps": speed_mbps, "cable_m": cable_m, "port_mtu_bytes": port_mtu_bytes, "asic": asic,
                "table": name, "dynamic_th": threshold, "xon_offset_bytes": xon_offset, "cell_size_bytes": cell},
        notes=tuple(notes),
        references=(entry["source"], defaults.source("headroom.broadcom.cable_interpolation", catalog)),
    )


def broadcom_xoff(rows: list[list[int]], cable_m: float) -> tuple[float, tuple[int, int], list[int], str]:
    """XOFF of one speed's rows of a Broadcom table at a cable length, before cell rounding.

    ``rows`` are ``[speed, cable_m, size, xon, xoff, dynamic_th, xon_offset]`` of one speed.
    Linear in cable length between two rows; beyond the longest, the last segment's slope; at or
    below the shortest, the shortest row. Returns (xoff [bytes], (cable, xoff) of the row at or
    below the cable, the row whose size/xon/threshold/xon_offset apply, how it was obtained).
    """
    rows = sorted(rows, key=lambda r: r[1])
    points = [(r[1], r[4]) for r in rows]
    if cable_m <= points[0][0] or len(points) == 1:
        how = f"{points[0][0]} m row" + ("" if cable_m <= points[0][0] else " (one cable length: no cable term)")
        return float(points[0][1]), points[0], rows[0], how
    i = next((k for k in range(1, len(points)) if cable_m <= points[k][0]), len(points) - 1)
    (c0, x0), (c1, x1) = points[i - 1], points[i]
    raw = x0 + (x1 - x0) * (cable_m - c0) / (c1 - c0)
    how = f"interpolated between {c0} m and {c1} m" if cable_m <= c1 else f"extrapolated from {c0} m and {c1} m"
    lower = max((p for p in points if p[0] <= cable_m), default=points[0])
    return raw, lower, rows[i], how


# Constants of one ASIC in ``headroom.sonic.asic`` (optional ones default to 0) and their bounds.
_ASIC_FIELDS = {"cell_size_bytes": (1, 1e6, True), "pipeline_latency_kb": (0, 1e6, False),
                "mac_phy_delay_kb": (0, 1e6, False), "peer_response_time_kb": (0, 1e6, False)}
_ASIC_OPTIONAL = {"tile_bytes_per_gbps": (0, 1e6, False), "xoff_compensation_kb": (0, 1e6, False)}


def _asic_constants(asic: str, constants: Any, catalog: Catalog) -> dict[str, Any]:
    """The ASIC's constants, each checked (a catalog overlay may have changed them)."""
    where = defaults.where(f"headroom.sonic.asic.{asic}", catalog)
    if not isinstance(constants, dict):
        raise CatalogError("must be a mapping of the ASIC's constants", location=where)
    for name, (lo, hi, integer) in {**_ASIC_FIELDS, **_ASIC_OPTIONAL}.items():
        if name not in constants:
            if name in _ASIC_FIELDS:
                raise CatalogError(f"has no {name}", location=where)
            continue
        defaults.check_number(constants[name], f"{where}.{name}", lo, hi, integer)
    return constants


def mlx5_xoff(speed_mbps: int, cable_len_m: int, mtu_bytes: int, catalog: Catalog) -> int:
    """XOFF headroom of the ConnectX (mlx5) driver, integer arithmetic as in ``calculate_xoff()``.

    ``xoff = (301 + 216 * cable_len / 100) * max(speed, 40000) / 1000 + 272 * mtu / 100``.

    Parameters
    ----------
    speed_mbps : int
        Link speed [Mb/s]; floored at 40000.
    cable_len_m : int
        Cable length the driver knows (``mlnx_qos --cable_len``, default 7) [m].
    mtu_bytes : int
        Netdev MTU [bytes].

    Returns
    -------
    int
        Headroom above the XOFF threshold [bytes].

    References
    ----------
    .. [1] Linux ``drivers/net/ethernet/mellanox/mlx5/core/en/port_buffer.c``, ``calculate_xoff()``.
    """
    _check_common(speed_mbps, cable_len_m, mtu_bytes)
    base = defaults.number("headroom.mlx5.base_term", catalog, lo=0, hi=1e9, integer=True)
    per_cable = defaults.number("headroom.mlx5.cable_term_per_100m", catalog, lo=0, hi=1e9, integer=True)
    mtu_factor = defaults.number("headroom.mlx5.mtu_factor_percent", catalog, lo=0, hi=1e6, integer=True)
    speed = max(int(speed_mbps), defaults.number("headroom.mlx5.min_speed_mbps", catalog, lo=0, hi=SPEED_RANGE_MBPS[1], integer=True))
    cable = int(cable_len_m)
    mtu = int(mtu_bytes)
    return (base + per_cable * cable // 100) * speed // 1000 + mtu_factor * mtu // 100


def mlx5_headroom(speed_mbps: int, cable_len_m: int, mtu_bytes: int,
                  max_mtu_bytes: int | None = None, cell_size_bytes: int | None = None,
                  *, catalog: Catalog) -> HeadroomResult:
    """ConnectX NIC receive-buffer headroom: XOFF and the smallest lossless buffer the driver accepts.

    ``size_min = xoff + max_mtu + cell``; the driver then sets ``xoff_threshold = size - xoff`` and
    ``xon_threshold = xoff_threshold - max_mtu`` (so ``xon_bytes`` here is the XOFF-XON gap).

    Parameters
    ----------
    speed_mbps : int
        Link speed [Mb/s].
    cable_len_m : int
        ``Cable len`` known to the driver [m].
    mtu_bytes : int
        Netdev MTU [bytes].
    max_mtu_bytes : int, optional
        ``max(netdev max_mtu, 9216)`` [bytes]; default 9216.
    cell_size_bytes : int, optional
        Port-buffer cell [bytes]; default 128.

    References
    ----------
    .. [1] Linux ``mlx5/core/en/port_buffer.c``: ``calculate_xoff()``, ``update_xoff_threshold()``,
       ``MINIMUM_MAX_MTU``; ``port_buffer.h``: ``MLX5E_DEFAULT_CABLE_LEN``.
    """
    xoff = mlx5_xoff(speed_mbps, cable_len_m, mtu_bytes, catalog)
    max_mtu = defaults.number("headroom.mlx5.max_mtu_bytes", catalog, lo=0, hi=1e9, integer=True) if max_mtu_bytes is None else max_mtu_bytes
    cell = defaults.number("headroom.mlx5.cell_size_bytes", catalog, lo=0, hi=1e9, integer=True) if cell_size_bytes is None else cell_size_bytes
    base = defaults.number("headroom.mlx5.base_term", catalog, lo=0, hi=1e9, integer=True)
    per_cable = defaults.number("headroom.mlx5.cable_term_per_100m", catalog, lo=0, hi=1e9, integer=True)
    mtu_factor = defaults.number("headroom.mlx5.mtu_factor_percent", catalog, lo=0, hi=1e6, integer=True)
    speed = max(int(speed_mbps), defaults.number("headroom.mlx5.min_speed_mbps", catalog, lo=0, hi=SPEED_RANGE_MBPS[1], integer=True))
    rate_part = base * speed // 1000
    mtu_part = mtu_factor * int(mtu_bytes) // 100
    terms = (
        HeadroomTerm("rate_term", rate_part, f"{base} B per Gb/s at {speed} Mb/s"),
        HeadroomTerm("cable_term", xoff - rate_part - mtu_part,
                     f"{per_cable} x {int(cable_len_m)} m / 100 B per Gb/s (integer arithmetic)"),
        HeadroomTerm("mtu_term", mtu_part, f"{mtu_factor} % of MTU {int(mtu_bytes)}"),
    )
    return HeadroomResult(
        model="mlx5",
        xoff_bytes=xoff,
        xon_bytes=max_mtu,
        size_bytes=xoff + max_mtu + cell,
        terms=terms,
        inputs={"speed_mbps": speed_mbps, "cable_len_m": cable_len_m, "mtu_bytes": mtu_bytes,
                "max_mtu_bytes": max_mtu, "cell_size_bytes": cell},
        notes=(f"speed floored at {defaults.number('headroom.mlx5.min_speed_mbps', catalog, lo=0, hi=SPEED_RANGE_MBPS[1], integer=True)} Mb/s",
               "xon = gap between XOFF and XON thresholds (max_mtu)",
               "size = smallest lossless buffer: xoff + max_mtu + one cell"),
        references=(defaults.source("headroom.mlx5.base_term", catalog),),
    )


def compute(model: str, speed_mbps: int, cable_m: float, mtu_bytes: int, catalog: Catalog,
            **options: Any) -> HeadroomResult:
    """Dispatch to one model by name (``generic``, ``sonic`` or ``mlx5``); ``catalog`` supplies every
    constant, so a ``--catalog`` overlay of ``ops_defaults.headroom`` moves the result."""
    if model == "generic":
        return generic_headroom(speed_mbps, cable_m, mtu_bytes, catalog=catalog, **options)
    if model == "sonic":
        return sonic_headroom(speed_mbps, cable_m, mtu_bytes, catalog=catalog, **options)
    if model == "mlx5":
        return mlx5_headroom(speed_mbps, int(math.ceil(cable_m)), mtu_bytes, catalog=catalog, **options)
    raise InputError(f"unknown headroom model {model!r}; choose one of {', '.join(MODELS)}", location="model")


def parse_speed_mbps(text: str, location: str = "speed") -> int:
    """``"400G"``, ``"400Gbps"``, ``"100000"`` (a bare number is Mb/s, as SONiC writes it) -> whole Mb/s,
    within :data:`~fabricplan.ops.limits.SPEED_RANGE_MBPS` (the one rate parser: :mod:`fabricplan.units`)."""
    from fabricplan.units import parse_rate

    lo, hi = SPEED_RANGE_MBPS
    return parse_rate(str(text), location, unit="Mb/s", lo=lo, hi=hi, whole=True, noun="speed")


def parse_length_m(text: str, location: str = "cable") -> float:
    """``"30m"`` or ``"30"`` -> 30.0 m, within :data:`~fabricplan.ops.limits.CABLE_RANGE_M`
    (the one length parser: :mod:`fabricplan.units`)."""
    from fabricplan.units import parse_length

    lo, hi = CABLE_RANGE_M
    return parse_length(str(text), location, lo=lo, hi=hi, noun="cable length")

