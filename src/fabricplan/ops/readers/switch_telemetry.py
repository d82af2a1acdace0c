"""Telemetry readers for SONiC's PFC watchdog (``show pfcwd stats``) and iproute2's
``rdma statistic show``; each into ``ops.telemetry`` like the other snapshot readers.

Both take one or more snapshots, each under a ``# time=<epoch or ISO 8601> host=<name>`` header
(``host`` defaults to the file's stem):

* ``show pfcwd stats`` (sonic-utilities ``pfcwd/main.py``): a table whose first line names the
  columns (``QUEUE  STATUS  STORM DETECTED/RESTORED  TX OK/DROP  RX OK/DROP  TX LAST OK/DROP  RX
  LAST OK/DROP``), a dashed line, then one row per ``Ethernet0:3`` (port:queue). The pairs are
  the COUNTERS_DB fields ``PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED``/``..._DEADLOCK_RESTORED``,
  ``..._TX_PACKETS``/``..._TX_DROPPED_PACKETS``, ``..._RX_PACKETS``/``..._RX_DROPPED_PACKETS``
  (reference/ops_formats.md section 5); they become the counters ``pfcwd_storm_detected``,
  ``pfcwd_storm_restored``, ``pfcwd_tx_ok``, ``pfcwd_tx_drop``, ``pfcwd_rx_ok``,
  ``pfcwd_rx_drop`` of host/port with the queue as priority. ``N/A`` cells (a queue the watchdog
  has not polled) are left out, so a check reports them as not available. The ``LAST`` columns
  (the last storm's counts, not cumulative) and ``STATUS`` are not counters and are skipped.
* ``rdma statistic show`` (iproute2 ``rdma/stat.c``): one ``link mlx5_0/1 name value name value
  ...`` line per port (the same counters as sysfs ``hw_counters``), or its JSON form
  (``rdma -j statistic show``: a list of objects with ``ifname``, ``port`` and the counters).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from fabricplan.errors import InputError
from fabricplan.ops.readers._common import U64_MAX
from fabricplan.ops.readers._common import parse_header as _header
from fabricplan.ops.readers._common import parse_reading as _number
from fabricplan.ops.readers._common import read_telemetry_text as read_text
from fabricplan.ops.telemetry import SeriesBuilder, Telemetry

#: ``show pfcwd stats`` column -> the two counters of its ``A/B`` cells (None: not a counter).
PFCWD_COLUMNS: dict[str, tuple[str, str] | None] = {
    "STORM DETECTED/RESTORED": ("pfcwd_storm_detected", "pfcwd_storm_restored"),
    "TX OK/DROP": ("pfcwd_tx_ok", "pfcwd_tx_drop"),
    "RX OK/DROP": ("pfcwd_rx_ok", "pfcwd_rx_drop"),
    "TX LAST OK/DROP": None, "RX LAST OK/DROP": None,
}
#: The COUNTERS_DB field each counter comes from (documentation, and names for other exports).
PFCWD_COUNTERS_DB = {
    "pfcwd_storm_detected": "PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED",
    "pfcwd_storm_restored": "PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED",
    "pfcwd_tx_ok": "PFC_WD_QUEUE_STATS_TX_PACKETS", "pfcwd_tx_drop": "PFC_WD_QUEUE_STATS_TX_DROPPED_PACKETS",
    "pfcwd_rx_ok": "PFC_WD_QUEUE_STATS_RX_PACKETS", "pfcwd_rx_drop": "PFC_WD_QUEUE_STATS_RX_DROPPED_PACKETS",
}
_QUEUE = re.compile(r"^([A-Za-z][\w./-]*):(\d)$")
_PAIR = re.compile(r"^(\d+|N/A)/(\d+|N/A)$")
_RDMA_LINK = re.compile(r"^link\s+([^/\s]+)/(\d+)((?:\s+\S+)*)\s*$")
_NAME = re.compile(r"^[A-Za-z_][\w.-]*$")


def _snapshot_header(line: str, where: str, stem: str) -> dict[str, Any] | None:
    from fabricplan.ops.readers._common import parse_time

    head = _header(line)
    if head is None:
        return None
    if "time" not in head:
        raise InputError("snapshot header needs time=<epoch or ISO 8601>", location=where)
    return {"t": parse_time(head["time"], where), "host": head.get("host", stem), "where": where}


def read_pfcwd_stats(path: Path | str) -> Telemetry:
    """Snapshots of SONiC ``show pfcwd stats`` (module docstring)."""
    text = read_text(path)
    builder = SeriesBuilder()
    stem = Path(path).stem
    snap: dict[str, Any] | None = None
    columns: list[str] | None = None
    tables = 0
    for number, line in enumerate(text.splitlines(), 1):
        where = f"{path}:{number}"
        stripped = line.strip()
        head = _snapshot_header(stripped, where, stem)
        if head is not None:
            snap, columns = head, None
            continue
        if not stripped or stripped.startswith("#") or set(stripped) <= {"-", " "}:
            continue
        if stripped.startswith("QUEUE"):
            columns = [c.strip() for c in re.split(r"\s{2,}", stripped)]
            if columns[:2] != ["QUEUE", "STATUS"] or not all(c in PFCWD_COLUMNS for c in columns[2:]):
                raise InputError(f"expected the 'show pfcwd stats' header QUEUE  STATUS  STORM DETECTED/RESTORED  "
                                 f"TX OK/DROP  RX OK/DROP ..., got {stripped[:60]!r}", location=where)
            tables += 1
            continue
        if snap is None:
            raise InputError("table before any '# time=...' snapshot header", location=where)
        if columns is None:
            raise InputError(f"row before the 'QUEUE  STATUS ...' header line, got {stripped[:50]!r}", location=where)
        cells = stripped.split()
        if len(cells) != len(columns):
            raise InputError(f"expected {len(columns)} columns ({', '.join(columns)}), got {len(cells)}", location=where)
        m = _QUEUE.match(cells[0])
        if not m:
            raise InputError(f"QUEUE must be PORT:QUEUE (Ethernet0:3), got {cells[0][:40]!r}", location=where)
        port, queue = m.group(1), int(m.group(2))
        for column, cell in zip(columns[2:], cells[2:], strict=True):
            names = PFCWD_COLUMNS[column]
            pm = _PAIR.match(cell)
            if not pm:
                raise InputError(f"{column} must be A/B counts (or N/A), got {cell[:40]!r}", location=where)
            if names is None:
                continue
            for name, raw in zip(names, pm.groups(), strict=True):
                if raw == "N/A":
                    continue
                builder.add(name, snap["host"], port, "", queue, snap["t"], _number(raw, where, name), str(path),
                            where=snap["where"])
    if tables == 0:
        raise InputError("no 'show pfcwd stats' table: expected '# time=... host=...' then the QUEUE  STATUS ... header",
                         location=str(path))
    return Telemetry(builder.build(), [str(path)])


def read_rdma_statistic(path: Path | str) -> Telemetry:
    """Snapshots of ``rdma statistic show`` (text or ``-j`` JSON; module docstring)."""
    text = read_text(path)
    builder = SeriesBuilder()
    stem = Path(path).stem
    snap: dict[str, Any] | None = None
    count = 0
    lines = text.splitlines()
    number = 0
    while number < len(lines):
        line = lines[number]
        number += 1
        where = f"{path}:{number}"
        stripped = line.strip()
        head = _snapshot_header(stripped, where, stem)
        if head is not None:
            snap = head
            continue
        if not stripped or stripped.startswith("#"):
            continue
        if snap is None:
            raise InputError("counters before any '# time=...' snapshot header", location=where)
        if stripped.startswith("["):  # rdma -j: one JSON document, possibly over several lines
            first = number
            block = [stripped]
            while not _balanced("".join(block)) and number < len(lines):
                block.append(lines[number].strip())
                number += 1
            _json_block("".join(block), f"{path}:{first}", snap, builder, str(path))
            count += 1
            continue
        m = _RDMA_LINK.match(stripped)
        if not m:
            raise InputError(f"expected 'link DEV/PORT name value ...' (rdma statistic show), got {stripped[:50]!r}",
                             location=where)
        device, port, rest = m.group(1), m.group(2), m.group(3).split()
        if len(rest) % 2:
            raise InputError(f"counter {rest[-1][:30]!r} has no value", location=where)
        for name, raw in zip(rest[::2], rest[1::2], strict=True):
            if not _NAME.match(name):
                raise InputError(f"counter name must be a word, got {name[:30]!r}", location=where)
            if not raw.isdigit():
                raise InputError(f"{name} must be a whole number, got {raw[:30]!r}", location=where)
            builder.add(name, snap["host"], device, port, None, snap["t"], _number(raw, where, name), str(path),
                            where=snap["where"])
        count += 1
    if count == 0:
        raise InputError("no 'link DEV/PORT name value ...' line (rdma statistic show) after a '# time=...' header",
                         location=str(path))
    return Telemetry(builder.build(), [str(path)])


def _balanced(text: str) -> bool:
    return text.count("[") == text.count("]") and text.count("{") == text.count("}")


def _json_block(text: str, where: str, snap: dict[str, Any], builder: SeriesBuilder, source: str) -> None:
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        raise InputError("not valid JSON (rdma -j statistic show)", location=where) from None
    if not isinstance(data, list):
        raise InputError("expected a JSON list of ports (rdma -j statistic show)", location=where)
    for i, item in enumerate(data):
        at = f"{where}:$[{i}]"
        if not isinstance(item, dict) or not isinstance(item.get("ifname"), str) or "port" not in item:
            raise InputError("each entry needs ifname and port", location=at)
        port = item["port"]
        if isinstance(port, bool) or not isinstance(port, int) or port < 0:
            raise InputError(f"port must be a whole number, got {str(port)[:20]!r}", location=f"{at}.port")
        for name, value in item.items():
            if name in ("ifname", "port", "ifindex"):
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 0 or value > U64_MAX:
                raise InputError(f"{name} must be a whole number from 0 to 2^64 - 1, got {str(value)[:30]!r}",
                                 location=f"{at}.{name}")
            builder.add(str(name), snap["host"], item["ifname"], str(port), None, snap["t"], float(value), source,
                        where=snap["where"])
