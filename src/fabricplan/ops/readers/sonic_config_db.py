"""Reader for SONiC ``config_db.json`` QoS tables -> one :class:`SwitchPortQos` per port.

Tables read (field names from sonic-buildimage ``src/sonic-yang-models/doc/Configuration.md``):
``DEVICE_METADATA``, ``PORT``, ``PORT_QOS_MAP``, ``DSCP_TO_TC_MAP``, ``DOT1P_TO_TC_MAP``,
``TC_TO_PRIORITY_GROUP_MAP``, ``TC_TO_QUEUE_MAP``, ``MAP_PFC_PRIORITY_TO_QUEUE``, ``QUEUE``,
``SCHEDULER``, ``WRED_PROFILE``, ``BUFFER_POOL``, ``BUFFER_PROFILE``, ``BUFFER_PG``,
``BUFFER_QUEUE``, ``CABLE_LENGTH``, ``PFC_WD``, ``LOSSLESS_TRAFFIC_PATTERN``,
``DEFAULT_LOSSLESS_BUFFER_PARAMETER``.

Two layouts are read: the nested one ``sonic-cfggen``/``config save`` writes
(``{"PORT": {"Ethernet0": {...}}}``) and the flat one of redis dumps and sonic-utilities' mock
tables (``{"PORT|Ethernet0": {...}}``, the value optionally wrapped as
``{"type": "hash", "value": {...}}``; list fields ending ``@`` lose the ``@``).

References may be written ``"[TABLE|name]"`` (older images) or as the bare name (YANG leafref).
Keys may list several ports (``"Ethernet0,Ethernet4|3-4"``) and index ranges.
Every bad value raises :class:`InputError` located as ``file:$.TABLE.key.field``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from fabricplan.errors import CatalogError, InputError
from fabricplan.ops import defaults
from fabricplan.ops.defaults import span
from fabricplan.ops.limits import CABLE_RANGE_M, MTU_RANGE_BYTES, SPEED_RANGE_MBPS, U32_MAX
from fabricplan.ops.model import (
    BufferPool,
    BufferProfile,
    PfcWatchdog,
    QueueConfig,
    Scheduler,
    SwitchPortQos,
    WredProfile,
)
from fabricplan.ops.readers._common import json_path, parse_bounded_int, parse_decimal, parse_int, read_structured

_REF = re.compile(r"^\[([A-Z0-9_]+)\|([^\]]+)\]$")
_INDEX = re.compile(r"^(\d+)(?:-(\d+))?$")
_PRIO_LIST = re.compile(r"^\s*([0-7](\s*,\s*[0-7])*)?\s*$")
_CABLE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*m\s*$")
_BOOL = {"true": True, "false": False}
_ECN_MODES = {"ecn_none", "ecn_green", "ecn_yellow", "ecn_red", "ecn_green_yellow", "ecn_green_red",
              "ecn_yellow_red", "ecn_all"}


class _Db:
    """config_db content plus a cache of parsed named objects."""

    def __init__(self, data: dict[str, Any], source: str, flat: bool = False) -> None:
        self.data = data
        self.source = source
        self.flat = flat  # input used the flat "TABLE|key" layout: locations follow it
        self.cache: dict[tuple[str, str], Any] = {}

    def loc(self, *parts: str | int) -> str:
        if self.flat and len(parts) >= 2:
            return f"{self.source}:{json_path(f'{parts[0]}|{parts[1]}', *parts[2:])}"
        return f"{self.source}:{json_path(*parts)}"

    def table(self, name: str) -> dict[str, Any]:
        table = self.data.get(name, {})
        if not isinstance(table, dict):
            raise InputError(f"table {name} must be an object", location=self.loc(name))
        return table

    def row(self, table: str, key: str) -> dict[str, Any]:
        row = self.table(table)[key]
        if not isinstance(row, dict):
            raise InputError("entry must be an object of field: value", location=self.loc(table, key))
        return row

    def str_field(self, table: str, key: str, name: str, row: dict[str, Any]) -> str | None:
        value = row.get(name)
        if value is None:
            return None
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise InputError(f"{name} must be a string, got {type(value).__name__}", location=self.loc(table, key, name))
        return str(value)

    def int_field(self, table: str, key: str, name: str, row: dict[str, Any],
                  lo: int | None = 0, hi: int | None = U32_MAX) -> int | None:
        value = row.get(name)
        if value is None:
            return None
        return parse_int(value, self.loc(table, key, name), name, lo, hi)

    def resolve(self, expected_table: str, ref: Any, location: str) -> str:
        """A reference's target key in ``expected_table`` (accepts ``[TABLE|name]`` and ``name``)."""
        if not isinstance(ref, str) or not ref.strip():
            raise InputError(f"expected a reference to {expected_table}, got {ref!r}", location=location)
        ref = ref.strip()
        m = _REF.match(ref)
        if m:
            table, key = m.group(1), m.group(2)
            if table != expected_table:
                raise InputError(f"reference points to {table}, expected {expected_table}", location=location)
        else:
            key = ref
        if key not in self.table(expected_table):
            raise InputError(f"{expected_table} has no entry {key!r}", location=location)
        return key


def _index_range(text: str, location: str, hi: int = 7) -> list[int]:
    m = _INDEX.match(text.strip())
    if not m:
        raise InputError(f"index {text[:40]!r} must be N or N-M", location=location)
    lo_i = parse_bounded_int(m.group(1), location, "index", 0, hi)
    hi_i = parse_bounded_int(m.group(2), location, "index", 0, hi) if m.group(2) else lo_i
    if lo_i > hi_i or hi_i > hi:
        raise InputError(f"index range {text!r} must be within 0..{hi}", location=location)
    return list(range(lo_i, hi_i + 1))


def _split_key(key: str, location: str) -> tuple[list[str], list[int]]:
    """``"Ethernet0,Ethernet4|3-4"`` -> (["Ethernet0", "Ethernet4"], [3, 4])."""
    ports_text, sep, index_text = key.partition("|")
    if not sep:
        raise InputError(f"key {key!r} must be PORT|INDEX", location=location)
    ports = [p.strip() for p in ports_text.split(",") if p.strip()]
    if not ports:
        raise InputError(f"key {key!r} names no port", location=location)
    return ports, _index_range(index_text, location)


def _prio_set(text: str | None, location: str) -> frozenset[int]:
    if text is None:
        return frozenset()
    if not _PRIO_LIST.match(text):
        raise InputError(f"priority list {text!r} must look like '3' or '3,4'", location=location)
    return frozenset(int(p) for p in text.replace(" ", "").split(",") if p)


def _map(db: _Db, table: str, ref: Any, location: str, key_hi: int, value_hi: int) -> dict[int, int]:
    name = db.resolve(table, ref, location)
    cached = db.cache.get((table, name))
    if cached is not None:
        return cached
    row = db.row(table, name)
    out: dict[int, int] = {}
    for k, v in row.items():
        k_int = parse_int(k, db.loc(table, name, k), f"{table} key", 0, key_hi)
        out[k_int] = parse_int(v, db.loc(table, name, k), f"{table} value", 0, value_hi)
    db.cache[(table, name)] = out
    return out


def _scheduler(db: _Db, ref: Any, location: str) -> Scheduler:
    name = db.resolve("SCHEDULER", ref, location)
    if ("SCHEDULER", name) not in db.cache:
        row = db.row("SCHEDULER", name)
        db.cache[("SCHEDULER", name)] = Scheduler(
            name=name,
            type=(db.str_field("SCHEDULER", name, "type", row) or None),
            weight=db.int_field("SCHEDULER", name, "weight", row),
        )
    return db.cache[("SCHEDULER", name)]


def _bool(db: _Db, table: str, key: str, name: str, row: dict[str, Any]) -> bool:
    text = db.str_field(table, key, name, row)
    if text is None:
        return False
    if text.lower() not in _BOOL:
        raise InputError(f"{name} must be true or false, got {text!r}", location=db.loc(table, key, name))
    return _BOOL[text.lower()]


def _wred(db: _Db, ref: Any, location: str) -> WredProfile:
    name = db.resolve("WRED_PROFILE", ref, location)
    if ("WRED_PROFILE", name) not in db.cache:
        t = "WRED_PROFILE"
        row = db.row(t, name)
        ecn = db.str_field(t, name, "ecn", row) or "ecn_none"
        if ecn not in _ECN_MODES:
            raise InputError(f"ecn must be one of {', '.join(sorted(_ECN_MODES))}, got {ecn!r}",
                             location=db.loc(t, name, "ecn"))
        db.cache[(t, name)] = WredProfile(
            name=name,
            ecn=ecn,
            green_enable=_bool(db, t, name, "wred_green_enable", row),
            green_min_bytes=db.int_field(t, name, "green_min_threshold", row, 0),
            green_max_bytes=db.int_field(t, name, "green_max_threshold", row, 0),
            green_drop_probability=db.int_field(t, name, "green_drop_probability", row),
        )
    return db.cache[("WRED_PROFILE", name)]


def _pool(db: _Db, ref: Any, location: str) -> BufferPool:
    name = db.resolve("BUFFER_POOL", ref, location)
    if ("BUFFER_POOL", name) not in db.cache:
        t = "BUFFER_POOL"
        row = db.row(t, name)
        db.cache[(t, name)] = BufferPool(
            name=name,
            type=db.str_field(t, name, "type", row),
            mode=db.str_field(t, name, "mode", row),
            size_bytes=db.int_field(t, name, "size", row, 0),
            xoff_bytes=db.int_field(t, name, "xoff", row, 0),
        )
    return db.cache[("BUFFER_POOL", name)]


def _profile(db: _Db, ref: Any, location: str) -> BufferProfile:
    if isinstance(ref, str) and ref.strip() == "NULL":
        # Dynamic buffer model: SONiC computes the lossless headroom itself.
        return BufferProfile(name="NULL", pool=None, size_bytes=None, xon_bytes=None, xoff_bytes=None,
                             dynamic_th=None, static_th=None, computed=True)
    name = db.resolve("BUFFER_PROFILE", ref, location)
    if ("BUFFER_PROFILE", name) not in db.cache:
        t = "BUFFER_PROFILE"
        row = db.row(t, name)
        pool_ref = row.get("pool")
        db.cache[(t, name)] = BufferProfile(
            name=name,
            pool=_pool(db, pool_ref, db.loc(t, name, "pool")) if pool_ref is not None else None,
            size_bytes=db.int_field(t, name, "size", row, 0),
            xon_bytes=db.int_field(t, name, "xon", row, 0),
            xoff_bytes=db.int_field(t, name, "xoff", row, 0),
            dynamic_th=db.int_field(t, name, "dynamic_th", row, -8, 8),
            static_th=db.int_field(t, name, "static_th", row, 0),
        )
    return db.cache[("BUFFER_PROFILE", name)]


def _load(path: Path) -> dict[str, Any]:
    """The JSON object of a config_db file, read strictly (``fabricplan.io``): a duplicated key,
    NaN, a huge number or deep nesting is an error with line and column."""
    _text, data = read_structured(path, as_json=True)
    if data is None:
        raise InputError("file is empty; expected config_db JSON (an object of tables)", location=str(path))
    if not isinstance(data, dict):
        raise InputError("config_db.json must be a JSON object of tables", location=f"{path}:$")
    return data


_FLAT_KEY = re.compile(r"^([A-Z][A-Z0-9_]*)\|(.+)$")


def unflatten(data: dict[str, Any], source: str = "<config_db>") -> dict[str, Any]:
    """Turn the flat ``"TABLE|key": {fields}`` layout into the nested one; nested input is returned as is.

    Flat rows may wrap their fields as redis dumps do (``{"type": "hash", "value": {...}}``); list
    fields written ``name@`` become ``name``. A table given in both layouts is merged (a key in
    both is an error).
    """
    if not any(isinstance(k, str) and _FLAT_KEY.match(k) for k in data):
        return data
    out: dict[str, Any] = {}
    for top, value in data.items():
        m = _FLAT_KEY.match(top) if isinstance(top, str) else None
        if m is None:
            if not isinstance(value, dict):
                raise InputError("expected a table (object) or a flat 'TABLE|key' row",
                                 location=f"{source}:{json_path(top)}")
            table = out.setdefault(top, {})
            for key, row in value.items():
                if key in table:
                    raise InputError(f"{top}|{key} is given twice (nested and flat)", location=f"{source}:{json_path(top, key)}")
                table[key] = row
            continue
        table_name, key = m.group(1), m.group(2)
        where = f"{source}:{json_path(top)}"
        if isinstance(value, dict) and set(value) >= {"type", "value"} and isinstance(value.get("value"), dict):
            if value["type"] != "hash":
                raise InputError(f"flat row must be a hash, got type {value['type']!r}", location=where)
            value = value["value"]
        if not isinstance(value, dict):
            raise InputError("flat row 'TABLE|key' must be an object of field: value", location=where)
        row = {(f[:-1] if isinstance(f, str) and f.endswith("@") else f): v for f, v in value.items()}
        table = out.setdefault(table_name, {})
        if key in table:
            raise InputError(f"{table_name}|{key} is given twice (nested and flat)", location=where)
        table[key] = row
    return out


def _switch_name(db: _Db, path: Path) -> str:
    meta = db.table("DEVICE_METADATA").get("localhost")
    if isinstance(meta, dict) and isinstance(meta.get("hostname"), str) and meta["hostname"].strip():
        return meta["hostname"].strip()
    return path.parent.name if path.stem == "config_db" and path.parent.name else path.stem


def read_config_db(path: Path | str, catalog: Any) -> list[SwitchPortQos]:
    """Read one ``config_db.json`` into one resolved :class:`SwitchPortQos` per port.

    Ports are those in ``PORT`` and ``PORT_QOS_MAP`` (``global`` is applied to every port as a
    fallback). The switch name is ``DEVICE_METADATA.localhost.hostname``, else the file name.

    Raises
    ------
    InputError
        Unreadable file, invalid JSON (``file:line``), or a bad value / dangling reference
        (``file:$.TABLE.key.field``).
    """
    p = Path(path)
    raw = _load(p)
    data = unflatten(raw, str(p))
    db = _Db(data, str(p), flat=data is not raw)
    switch = _switch_name(db, p)
    ports: dict[str, SwitchPortQos] = {}

    def port(name: str) -> SwitchPortQos:
        if name not in ports:
            ports[name] = SwitchPortQos(switch=switch, port=name, source=db.source)
        return ports[name]

    _read_metadata(db)
    for name in db.table("PORT"):
        row = db.row("PORT", name)
        sp = port(name)
        sp.speed_mbps = db.int_field("PORT", name, "speed", row, *SPEED_RANGE_MBPS)
        sp.mtu = db.int_field("PORT", name, "mtu", row, *MTU_RANGE_BYTES)
        sp.admin_status = db.str_field("PORT", name, "admin_status", row)
        lanes = db.str_field("PORT", name, "lanes", row)
        if lanes:
            sp.lanes = len([x for x in lanes.split(",") if x.strip()])
            sp.locations["lanes"] = db.loc("PORT", name, "lanes")
        sp.locations["speed"] = db.loc("PORT", name, "speed")
        sp.locations["mtu"] = db.loc("PORT", name, "mtu")
    qos_rows: dict[str, tuple[str, dict[str, Any]]] = {}
    global_row: tuple[str, dict[str, Any]] | None = None
    for key in db.table("PORT_QOS_MAP"):
        row = db.row("PORT_QOS_MAP", key)
        if key.lower() == "global":
            global_row = (key, row)
            continue
        for name in (k.strip() for k in key.split(",") if k.strip()):
            qos_rows[name] = (key, row)
            port(name)
    for name, sp in ports.items():
        _apply_qos_map(db, sp, qos_rows.get(name), global_row, catalog)
    _read_queues(db, port)
    _read_buffers(db, port)
    _read_cable_lengths(db, ports)
    _read_pfc_wd(db, ports)
    meta = db.cache[("meta", "")]
    for sp in ports.values():
        sp.buffer_model = meta["buffer_model"]
        sp.platform = meta["platform"]
        sp.hwsku = meta["hwsku"]
        sp.subtype = meta["subtype"]
        # every port gets a location naming the key a missing value belongs to
        for attr, field_name in (("pfc_enable", "pfc_enable"), ("dscp_to_tc", "dscp_to_tc_map"),
                                 ("tc_to_pg", "tc_to_pg_map"), ("tc_to_queue", "tc_to_queue_map")):
            sp.locations.setdefault(attr, db.loc("PORT_QOS_MAP", sp.port, field_name))
        sp.locations.setdefault("pfc_wd", db.loc("PFC_WD", sp.port))
        sp.locations["platform"] = db.loc("DEVICE_METADATA", "localhost", "platform")
        sp.locations["hwsku"] = db.loc("DEVICE_METADATA", "localhost", "hwsku")
        sp.shared_headroom_pool = meta["shared_headroom_pool"]
        sp.lossless_mtu = meta["lossless_mtu"]
        sp.small_packet_percentage = meta["small_packet_percentage"]
        sp.pfcwd_poll_ms = meta["poll_ms"]
        if meta["poll_ms"] is not None:
            sp.locations["pfcwd_poll"] = db.loc("PFC_WD", "GLOBAL", "POLL_INTERVAL")
    return list(ports.values())


def _read_metadata(db: _Db) -> None:
    meta: dict[str, Any] = {"buffer_model": None, "shared_headroom_pool": False, "lossless_mtu": None,
                            "small_packet_percentage": None, "poll_ms": None, "platform": None, "hwsku": None,
                            "subtype": None}
    dm = db.table("DEVICE_METADATA")
    if "localhost" in dm:
        row = db.row("DEVICE_METADATA", "localhost")
        for name in ("buffer_model", "platform", "hwsku", "subtype"):
            meta[name] = db.str_field("DEVICE_METADATA", "localhost", name, row)
    pools = db.table("BUFFER_POOL")
    if "ingress_lossless_pool" in pools:
        pool = _pool(db, "ingress_lossless_pool", db.loc("BUFFER_POOL"))
        meta["shared_headroom_pool"] = bool(pool.xoff_bytes)
    params = db.table("DEFAULT_LOSSLESS_BUFFER_PARAMETER")
    for key in params:
        ratio = db.str_field("DEFAULT_LOSSLESS_BUFFER_PARAMETER", key, "over_subscribe_ratio", db.row("DEFAULT_LOSSLESS_BUFFER_PARAMETER", key))
        if ratio not in (None, "", "0"):
            meta["shared_headroom_pool"] = True
    pattern = db.table("LOSSLESS_TRAFFIC_PATTERN")
    for key in pattern:
        row = db.row("LOSSLESS_TRAFFIC_PATTERN", key)
        meta["lossless_mtu"] = db.int_field("LOSSLESS_TRAFFIC_PATTERN", key, "mtu", row, 1, 65535)
        meta["small_packet_percentage"] = db.int_field("LOSSLESS_TRAFFIC_PATTERN", key, "small_packet_percentage", row, 0, 100)
    wd = db.table("PFC_WD")
    if "GLOBAL" in wd:
        meta["poll_ms"] = db.int_field("PFC_WD", "GLOBAL", "POLL_INTERVAL", db.row("PFC_WD", "GLOBAL"), 0)
    db.cache[("meta", "")] = meta


_MAPS = (
    # field, table, attribute (key/value ranges: what SONiC's YANG accepts, lint.yang_map_ranges)
    ("dscp_to_tc_map", "DSCP_TO_TC_MAP", "dscp_to_tc"),
    ("dot1p_to_tc_map", "DOT1P_TO_TC_MAP", "dot1p_to_tc"),
    ("tc_to_pg_map", "TC_TO_PRIORITY_GROUP_MAP", "tc_to_pg"),
    ("tc_to_queue_map", "TC_TO_QUEUE_MAP", "tc_to_queue"),
    ("pfc_to_queue_map", "MAP_PFC_PRIORITY_TO_QUEUE", "pfc_to_queue"),
)


def _apply_qos_map(db: _Db, sp: SwitchPortQos, own: tuple[str, dict[str, Any]] | None,
                   global_row: tuple[str, dict[str, Any]] | None, catalog: Any) -> None:
    ranges = _map_ranges(catalog)
    for field_name, table, attr in _MAPS:
        key_hi, value_hi = ranges[table]["key_max"], ranges[table]["value_max"]
        for src in (own, global_row):
            if src is None or field_name not in src[1]:
                continue
            location = db.loc("PORT_QOS_MAP", src[0], field_name)
            setattr(sp, attr, _map(db, table, src[1][field_name], location, key_hi, value_hi))
            sp.locations[attr] = location
            # where each entry of the resolved map sits: "<attr>[<key>]"
            sp.locations[f"{attr}[]"] = db.loc(table, db.resolve(table, src[1][field_name], location))
            break
    if own is None:
        return
    key, row = own
    sp.has_qos_row = True
    sp.locations["qos_map"] = db.loc("PORT_QOS_MAP", key)
    sp.locations["pfc_enable"] = db.loc("PORT_QOS_MAP", key, "pfc_enable")
    sp.pfc_enable = _prio_set(db.str_field("PORT_QOS_MAP", key, "pfc_enable", row), sp.locations["pfc_enable"])
    wd_text = db.str_field("PORT_QOS_MAP", key, "pfcwd_sw_enable", row)
    if wd_text is not None:
        sp.locations["pfcwd_sw_enable"] = db.loc("PORT_QOS_MAP", key, "pfcwd_sw_enable")
        sp.pfcwd_sw_enable = _prio_set(wd_text, sp.locations["pfcwd_sw_enable"])


def _map_ranges(catalog: Any) -> dict[str, dict[str, int]]:
    """``lint.yang_map_ranges``, checked (a catalog overlay may have changed it)."""
    ranges = defaults.value("lint.yang_map_ranges", catalog)
    where = defaults.where("lint.yang_map_ranges", catalog)
    for _field, table, _attr in _MAPS:
        row = ranges.get(table) if isinstance(ranges, dict) else None
        if not isinstance(row, dict):
            raise CatalogError(f"has no {table} entry with key_max and value_max", location=where)
        for bound in ("key_max", "value_max"):
            defaults.check_number(row.get(bound), f"{where}.{table}.{bound}", 0, 255, integer=True)
    return ranges


def _read_queues(db: _Db, port: Any) -> None:
    for key in db.table("QUEUE"):
        location = db.loc("QUEUE", key)
        names, queues = _split_key(key, location)
        row = db.row("QUEUE", key)
        sched = _scheduler(db, row["scheduler"], db.loc("QUEUE", key, "scheduler")) if "scheduler" in row else None
        wred = _wred(db, row["wred_profile"], db.loc("QUEUE", key, "wred_profile")) if "wred_profile" in row else None
        for name in names:
            sp = port(name)
            for q in queues:
                sp.queues[q] = QueueConfig(scheduler=sched, wred=wred)
                sp.locations[f"queue{q}"] = location


def _read_buffers(db: _Db, port: Any) -> None:
    for table, attr, prefix in (("BUFFER_PG", "buffer_pg", "pg"), ("BUFFER_QUEUE", "buffer_queue", "bq")):
        for key in db.table(table):
            location = db.loc(table, key)
            names, indexes = _split_key(key, location)
            row = db.row(table, key)
            if "profile" not in row:
                raise InputError("entry has no profile", location=location)
            profile = _profile(db, row["profile"], db.loc(table, key, "profile"))
            for name in names:
                sp = port(name)
                for i in indexes:
                    getattr(sp, attr)[i] = profile
                    sp.locations[f"{prefix}{i}"] = db.loc(table, key, "profile")


def _read_cable_lengths(db: _Db, ports: dict[str, SwitchPortQos]) -> None:
    for key in db.table("CABLE_LENGTH"):
        row = db.row("CABLE_LENGTH", key)
        for name, text in row.items():
            location = db.loc("CABLE_LENGTH", key, name)
            m = _CABLE.match(text[:200]) if isinstance(text, str) else None
            if not m:
                shown = text if not isinstance(text, str) or len(text) <= 40 else text[:37] + "..."
                raise InputError(f"cable length must look like '5m' (metres, {span(*CABLE_RANGE_M)}), got {shown!r}",
                                 location=location)
            length = parse_decimal(m.group(1), location, "cable length", *CABLE_RANGE_M, unit=" m")
            for port_name in (n.strip() for n in name.split(",")):
                if port_name in ports:
                    ports[port_name].cable_length_m = length
                    ports[port_name].locations["cable_length"] = location
    for sp in ports.values():
        sp.locations.setdefault("cable_length", db.loc("CABLE_LENGTH"))


def _read_pfc_wd(db: _Db, ports: dict[str, SwitchPortQos]) -> None:
    t = "PFC_WD"
    for key in db.table(t):
        if key == "GLOBAL":
            continue
        row = db.row(t, key)
        wd = PfcWatchdog(
            action=db.str_field(t, key, "action", row),
            detection_ms=db.int_field(t, key, "detection_time", row, 0),
            restoration_ms=db.int_field(t, key, "restoration_time", row, 0),
        )
        for name in (n.strip() for n in key.split(",")):
            if name in ports:
                ports[name].pfc_wd = wd
                ports[name].locations["pfc_wd"] = db.loc(t, key)
