"""Telemetry readers for captured files: ``ethtool -S`` snapshots, RDMA ``hw_counters`` dumps,
``perfquery`` output, RTT CSV and fabricplan's own ``.npz`` save; each into ``ops.telemetry``.

Snapshot files (ethtool, hw_counters, perfquery) hold one or more snapshots, each introduced by a
header comment with the capture time and, if the text does not say it, where it was taken::

    # time=2026-12-01T08:00:00Z host=node01 device=eth2
    NIC statistics:
         rx_prio3_pause: 18234
         ...

``time`` is epoch seconds or ISO 8601 (``Z`` or an offset; naive times are UTC). ``host``
defaults to the file's stem; ``device`` (ethtool: the netdev) to ``eth``; ``rdma=mlx5_0/1`` on an
ethtool header names the port by its RDMA device instead, so that its ethtool and hw_counters
counters form one port. Formats (reference/ops_formats.md section 4):

* ethtool: ``NIC statistics:`` then ``name: value`` lines (mlx5 names; ``rx_prioN_*`` become the
  counter ``rx_*`` with priority N; other drivers' names are kept as they are);
* hw_counters / sysfs counters: ``grep -H . /sys/class/infiniband/*/ports/*/{hw_counters,counters}/*``
  lines (``/sys/class/infiniband/mlx5_0/ports/1/hw_counters/np_cnp_sent:123``);
* perfquery: ``# Port counters: Lid 3 port 1 ...`` or ``# Port extended counters: ...`` then
  ``Name:.....value`` lines; non-extended counters carry their IBA field width (they saturate);
* RTT CSV: a header ``time,src,dst,rtt_us`` then one sample a row.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

from fabricplan.errors import InputError
from fabricplan.ops import defaults
from fabricplan.ops.readers._common import MAX_DIGITS as _MAX_DIGITS  # noqa: F401
from fabricplan.ops.readers._common import (  # noqa: F401 (also this module's API)
    MAX_TELEMETRY_BYTES,  # noqa: F401 (this module's API)
    canonical_ethtool,
    parse_time,
)
from fabricplan.ops.readers._common import parse_header as _header
from fabricplan.ops.readers._common import parse_reading as _number
from fabricplan.ops.readers._common import read_telemetry_text as read_text
from fabricplan.ops.telemetry import SAMPLE, Series, SeriesBuilder, Telemetry, prefill

_ETHTOOL_LINE = re.compile(r"^\s+([^:\s][^:]*):\s*(-?\d+)\s*$")
_SYSFS_LINE = re.compile(r"^(?:\S*/)?infiniband/([^/\s]+)/ports/(\d+)/(hw_counters|counters|counters_ext)/([^:/\s]+):\s*(\d+)\s*$")
_PERFQUERY_HEAD = re.compile(r"^#\s*Port (extended )?counters:\s*Lid\s+(\d+)\s+port\s+(\d+)")
_PERFQUERY_LINE = re.compile(r"^(\w+):\.+(\S+)$")
#: perfquery field -> sysfs counter name (reference/ops_formats.md section 4.3).
PERFQUERY_NAMES = {
    "SymbolErrorCounter": "symbol_error", "LinkErrorRecoveryCounter": "link_error_recovery",
    "LinkDownedCounter": "link_downed", "PortRcvErrors": "port_rcv_errors",
    "PortRcvRemotePhysicalErrors": "port_rcv_remote_physical_errors",
    "PortRcvSwitchRelayErrors": "port_rcv_switch_relay_errors", "PortXmitDiscards": "port_xmit_discards",
    "PortXmitConstraintErrors": "port_xmit_constraint_errors", "PortRcvConstraintErrors": "port_rcv_constraint_errors",
    "LocalLinkIntegrityErrors": "local_link_integrity_errors",
    "ExcessiveBufferOverrunErrors": "excessive_buffer_overrun_errors", "VL15Dropped": "VL15_dropped",
    "PortXmitWait": "port_xmit_wait", "PortXmitData": "port_xmit_data", "PortRcvData": "port_rcv_data",
    "PortXmitPkts": "port_xmit_packets", "PortRcvPkts": "port_rcv_packets",
    "PortUnicastXmitPkts": "unicast_xmit_packets", "PortUnicastRcvPkts": "unicast_rcv_packets",
    "PortMulticastXmitPkts": "multicast_xmit_packets", "PortMulticastRcvPkts": "multicast_rcv_packets",
    "QP1Dropped": "qp1_dropped",
}


def _split_rdma(value: str, location: str) -> tuple[str, str]:
    device, sep, port = value.partition("/")
    if not sep or not device or not port.isdigit():
        raise InputError(f"rdma must be DEVICE/PORT (mlx5_0/1), got {value[:40]!r}", location=location)
    return device, port


def read_ethtool(path: Path | str) -> Telemetry:
    """Snapshots of ``ethtool -S IF`` (each under a ``# time=... host=... device=...`` header)."""
    text = read_text(path)
    builder = SeriesBuilder()
    stem = Path(path).stem
    snap: dict[str, Any] | None = None
    count = 0
    source = str(path)
    for number, line in enumerate(text.splitlines(), 1):
        head = _header(line)
        if head is not None:
            where = f"{path}:{number}"
            if "time" not in head:
                raise InputError("snapshot header needs time=<epoch or ISO 8601>", location=where)
            snap = {"t": parse_time(head["time"], where), "host": head.get("host", stem),
                    "device": head.get("device", "eth"), "port": "", "where": where}
            if "rdma" in head:
                snap["device"], snap["port"] = _split_rdma(head["rdma"], where)
            count += 1
            continue
        m = _ETHTOOL_LINE.match(line)
        if m is None:
            stripped = line.strip()
            if not stripped or stripped.startswith("#") or stripped == "NIC statistics:":
                continue
            raise InputError(f"expected '     counter: value' under 'NIC statistics:', got {stripped[:50]!r}",
                             location=f"{path}:{number}")
        if snap is None:
            raise InputError("counter before any '# time=...' snapshot header", location=f"{path}:{number}")
        counter, prio = canonical_ethtool(m.group(1).strip())
        raw = m.group(2)
        value = float(raw) if raw.isdigit() and len(raw) < _MAX_DIGITS else _number(raw, f"{path}:{number}", counter)
        builder.add(counter, snap["host"], snap["device"], snap["port"], prio, snap["t"], value, source,
                    where=snap["where"])
    if count == 0:
        raise InputError("no snapshot: expected '# time=... host=... device=...' then 'NIC statistics:'",
                         location=str(path))
    return Telemetry(builder.build(), [str(path)])


def read_sysfs_counters(path: Path | str, catalog: Any) -> Telemetry:
    """Snapshots of ``grep -H . /sys/class/infiniband/*/ports/*/{hw_counters,counters}/*``; the IBA
    widths of PortCounters from ``catalog`` (``health.ib_counter_width_bits``)."""
    text = read_text(path)
    builder = SeriesBuilder()
    stem = Path(path).stem
    snap: dict[str, Any] | None = None
    count = 0
    for number, line in enumerate(text.splitlines(), 1):
        where = f"{path}:{number}"
        head = _header(line)
        if head is not None:
            if "time" not in head:
                raise InputError("snapshot header needs time=<epoch or ISO 8601>", location=where)
            snap = {"t": parse_time(head["time"], where), "host": head.get("host", stem), "where": where}
            count += 1
            continue
        if not line.strip() or line.strip().startswith("#"):
            continue
        m = _SYSFS_LINE.match(line.strip())
        if not m:
            raise InputError("expected '/sys/class/infiniband/DEV/ports/N/hw_counters/NAME:VALUE' "
                             f"(grep -H output), got {line.strip()[:60]!r}", location=where)
        if snap is None:
            raise InputError("counter before any '# time=...' snapshot header", location=where)
        device, port, folder, name, value = m.groups()
        width = None
        if folder == "counters":  # PortCounters: each counter stops at its IBA field width
            width = defaults.value("health.ib_counter_width_bits", catalog).get(name)
        elif folder == "counters_ext":
            name = name.removesuffix("_64")
        builder.add(name, snap["host"], device, port, None, snap["t"], _number(value, where, name), str(path),
                    where=snap["where"], width_bits=width)
    if count == 0:
        raise InputError("no snapshot: expected '# time=... host=...' then grep -H lines of hw_counters",
                         location=str(path))
    return Telemetry(builder.build(), [str(path)])


def read_perfquery(path: Path | str, catalog: Any) -> Telemetry:
    """Snapshots of ``perfquery [-x] LID PORT`` output; non-extended counters saturate at their
    IBA width (``health.ib_counter_width_bits`` of ``catalog``), extended (``-x``) ones are 64-bit."""
    text = read_text(path)
    builder = SeriesBuilder()
    stem = Path(path).stem
    widths = defaults.value("health.ib_counter_width_bits", catalog)
    head: dict[str, Any] | None = None
    block: dict[str, Any] | None = None
    count = 0
    for number, line in enumerate(text.splitlines(), 1):
        where = f"{path}:{number}"
        stripped = line.strip()
        if not stripped:
            continue
        parsed = _header(stripped)
        if parsed is not None:
            if "time" not in parsed:
                raise InputError("snapshot header needs time=<epoch or ISO 8601>", location=where)
            head = {"t": parse_time(parsed["time"], where), "host": parsed.get("host", stem),
                    "device": parsed.get("device"), "where": where}
            block = None
            continue
        m = _PERFQUERY_HEAD.match(stripped)
        if m:
            if head is None:
                raise InputError("perfquery block before any '# time=...' snapshot header", location=where)
            block = {"extended": bool(m.group(1)), "device": head["device"] or f"lid{m.group(2)}", "port": m.group(3)}
            count += 1
            continue
        if stripped.startswith("#"):
            continue
        m = _PERFQUERY_LINE.match(stripped)
        if not m:
            raise InputError(f"expected 'Name:.....value' (perfquery), got {stripped[:50]!r}", location=where)
        if block is None or head is None:
            raise InputError("counter line before a '# Port counters: Lid N port P' line", location=where)
        field, raw = m.groups()
        if field in ("PortSelect", "CounterSelect", "CounterSelect2"):
            continue
        name = PERFQUERY_NAMES.get(field, field)
        width = None if block["extended"] else widths.get(name)
        value = _number(raw, where, field)
        builder.add(name, head["host"], block["device"], block["port"], None, head["t"], value, str(path),
                    where=head["where"], width_bits=width)
    if count == 0:
        raise InputError("no perfquery block: expected '# time=...' then '# Port counters: Lid N port P'",
                         location=str(path))
    return Telemetry(builder.build(), [str(path)])


def read_rtt_csv(path: Path | str) -> Telemetry:
    """RTT samples: CSV with the header ``time,src,dst,rtt_us`` (extra columns ignored)."""
    text = read_text(path)
    rows = csv.reader(io.StringIO(text))
    try:
        header = next(rows)
    except StopIteration:
        raise InputError("empty RTT file; expected the header time,src,dst,rtt_us", location=str(path)) from None
    names = [h.strip() for h in header]
    missing = [c for c in ("time", "src", "dst", "rtt_us") if c not in names]
    if missing:
        raise InputError(f"RTT CSV header lacks {', '.join(missing)}; expected time,src,dst,rtt_us",
                         location=f"{path}:1")
    col = {c: names.index(c) for c in ("time", "src", "dst", "rtt_us")}
    builder = SeriesBuilder()
    times: dict[str, float] = {}
    for number, row in enumerate(rows, 2):
        if not row or not any(cell.strip() for cell in row):
            continue
        where = f"{path}:{number}"
        if len(row) < len(names):
            raise InputError(f"expected {len(names)} columns ({','.join(names)}), got {len(row)}", location=where)
        stamp = row[col["time"]].strip()
        t = times.get(stamp)
        if t is None:
            t = times[stamp] = parse_time(stamp, f"{where}:time")
        src, dst = row[col["src"]].strip(), row[col["dst"]].strip()
        if not src or not dst:
            raise InputError("src and dst must not be empty", location=where)
        rtt = _number(row[col["rtt_us"]], f"{where}:rtt_us", "rtt_us")
        builder.add("rtt_us", src, "rtt", dst, None, t + 0.0, rtt, str(path))
    # RTT samples may share a time (several probes per second): keep them all, ordered by time.
    series = _rtt_series(builder)
    if not series:
        raise InputError("no RTT samples after the header", location=str(path))
    return Telemetry(series, [str(path)])


def _rtt_series(builder: SeriesBuilder) -> list[Series]:
    import numpy as np

    out = []
    for (counter, host, device, port, prio), (ts, vs, source, _extra) in builder._points.items():  # noqa: SLF001
        t = np.asarray(ts, dtype=float)
        order = np.argsort(t, kind="stable")
        out.append(Series(counter, host, device, port, prio, t[order], np.asarray(vs, dtype=float)[order], source,
                          kind=SAMPLE))
    return out


def read_npz(path: Path | str) -> Telemetry:
    """The model as ``fabricplan health --save-telemetry`` wrote it."""
    import zipfile

    import numpy as np

    where = str(path)
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(bytes(data["meta"]).decode())
            series = []
            groups: dict[int, tuple[np.ndarray, np.ndarray]] = {}
            members: dict[int, list[Series]] = {}
            for i, (counter, host, device, port, prio, source, kind, width, from_rate, j, row) in enumerate(
                    meta["series"]):
                if j not in groups:
                    groups[j] = (data[f"t{int(j)}"].astype(float, copy=False),
                                 data[f"v{int(j)}"].astype(float, copy=False))
                    members[j] = []
                t, matrix = groups[j]
                if matrix.ndim != 2 or matrix.shape[1] != t.shape[0] or t.ndim != 1 or not 0 <= row < matrix.shape[0]:
                    raise InputError(f"series {i} ({counter}): values do not match their times", location=where)
                series.append(Series(str(counter), str(host), str(device), str(port), None if prio < 0 else int(prio),
                                     t, matrix[int(row)], str(source), kind=str(kind),
                                     width_bits=None if width < 0 else int(width), from_rate=bool(from_rate)))
                if len(members[j]) != int(row):
                    raise InputError(f"series {i} ({counter}): rows out of order", location=where)
                _check_saved(series[-1], i, where)
                members[j].append(series[-1])
            for j, (t, matrix) in groups.items():
                if len(members[j]) == matrix.shape[0]:
                    prefill(members[j], t, matrix)
            return Telemetry(series, [str(s) for s in meta.get("sources", [])] or [where])
    except InputError:
        raise
    except FileNotFoundError:
        raise InputError("file not found", location=where) from None
    except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"not a fabricplan telemetry .npz ({type(exc).__name__})", location=where) from None


def _check_saved(series: Series, index: int, where: str) -> None:
    """The readings of one saved series are ones a reader could have produced: times finite and in
    order, counter readings finite, >= 0 and at most 2^64 - 1 (a series integrated from Prometheus
    rates may hold NaN: an unknown rate), RTT samples finite and >= 0; else an InputError naming
    the file and the series."""
    import numpy as np

    from fabricplan.ops.readers._common import check_u64

    what = f"series {index} ({series.label} of {series.entity})"
    t, v = series.t_s, series.values
    if not len(t):
        raise InputError(f"{what}: no readings", location=where)
    if not np.isfinite(t).all():
        raise InputError(f"{what}: a time is NaN or infinite", location=where)
    if series.kind == SAMPLE:
        if (np.diff(t) < 0).any():
            raise InputError(f"{what}: sample times run backwards", location=where)
    elif (np.diff(t) <= 0).any():
        raise InputError(f"{what}: times run backwards (or repeat), so no interval is known", location=where)
    bad = np.isinf(v) | (v < 0)
    if not series.from_rate or series.kind == SAMPLE:
        bad |= np.isnan(v)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"{what}: reading {i} is {v[i]:g} (readings must be finite and >= 0)", location=where)
    if series.kind != SAMPLE and len(v) and np.nanmax(v) > float(2**64):
        check_u64(float(np.nanmax(v)), where, what)


#: ``--input`` kinds and their readers (the exposition-text reader lives in prom_text.py; SONiC
#: ``show pfcwd stats`` and ``rdma statistic show`` in switch_telemetry.py).
KINDS = ("ethtool", "hw_counters", "perfquery", "prom", "rtt", "npz", "pfcwd", "rdma_stat")


def read_input(kind: str, path: Path | str, catalog: Any) -> Telemetry:
    """Read one telemetry file of ``kind`` (one of :data:`KINDS`); counter widths from ``catalog``."""
    if kind == "ethtool":
        return read_ethtool(path)
    if kind == "hw_counters":
        return read_sysfs_counters(path, catalog)
    if kind == "perfquery":
        return read_perfquery(path, catalog)
    if kind == "rtt":
        return read_rtt_csv(path)
    if kind == "npz":
        return read_npz(path)
    if kind == "prom":
        from fabricplan.ops.readers.prom_text import read_exposition

        return read_exposition(path, catalog)
    if kind in ("pfcwd", "rdma_stat"):
        from fabricplan.ops.readers.switch_telemetry import read_pfcwd_stats, read_rdma_statistic

        return read_pfcwd_stats(path) if kind == "pfcwd" else read_rdma_statistic(path)
    raise InputError(f"unknown input kind {kind!r}; known: {', '.join(KINDS)}", location="--input")
