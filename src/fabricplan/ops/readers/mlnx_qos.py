"""Reader for ``mlnx_qos -i IF`` output (NVIDIA/Mellanox ``mlnx-tools``).

Accepted input is the text the tool prints (``pretty_print()`` in ``mlnx-tools/python/mlnx_qos``)::

    DCBX mode: OS controlled
    Priority trust state: dscp
    dscp2prio mapping:
    \tprio:3 dscp:31,30,29,28,27,26,25,24,
    Receive buffer size (bytes): 130944,130944,0,0,0,0,0,0,max_buffer_size=262016
    Cable len: 7
    PFC configuration:
    \tpriority    0   1   2   3   4   5   6   7
    \tenabled     0   0   0   1   0   0   0   0
    \tbuffer      0   0   0   1   0   0   0   0
    tc: 3 ratelimit: unlimited, tsa: ets, bw: 50%
    \t priority:  3

Every layout the tool has printed since 2017 is accepted (``Mellanox/mlnx-tools`` history of
``ofed_scripts/utils/mlnx_qos`` and ``python/mlnx_qos``; :data:`LAYOUTS` names them):

* ``ofed-4.2`` (commit d1b0709, 2017-09): no receive-buffer line, no ``buffer`` row; wrapped
  dscp lists continue on a line indented by a tab and spaces.
* ``ofed-4.6`` (commit 1259c00, 2019-02): ``Receive buffer size (bytes): a,b,…,h,`` (trailing
  comma, no total) and the PFC ``buffer`` row; wrapped dscp lists repeat ``prio:N dscp:``.
* ``2021-default-prio`` (commit a60252a, 2021-05 until 374d9b5, 2024-11): a ``default priority:``
  block (``\tprio:N`` per EtherType app entry, often empty) after the trust/dscp block, and the
  receive-buffer line ending ``total_size=N``.
* ``2023-max-buffer`` (commit b8c08c5, 2023-05): ``total_size=`` renamed ``max_buffer_size=``
  (the same number: what buffers 0-7 may use together).
* ``2024-no-default-prio`` (commit 374d9b5, 2024-11, still current): ``default priority:`` removed.

Both ``priority:`` spellings (one or two spaces), ``tsa: vendor``/``unknown``, ``ratelimit: 12.5
Gbps`` and wrapped dscp lists are accepted. Blank lines and lines starting with ``#``,
``Warning``, ``Note`` or ``******`` (the lldpad warning) are skipped; any other unknown line is an
error with its line number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fabricplan.errors import InputError
from fabricplan.ops.limits import CABLE_RANGE_M, DSCP_RANGE, PRIORITY_RANGE, U32_MAX
from fabricplan.ops.model import NicTc
from fabricplan.ops.readers._common import parse_bounded_int as _int

_DCBX = re.compile(r"^DCBX mode:\s*(.+?)\s*$")
_TRUST = re.compile(r"^Priority trust (?:state|mode):\s*(\S+)\s*$")
_DSCP_HEADER = re.compile(r"^dscp2prio mapping:\s*$")
_DSCP_ROW = re.compile(r"^prio:\s*(\d+)\s+dscp:\s*([\d,\s]*)$")
_DSCP_CONT = re.compile(r"^(\d+\s*,\s*)*\d+\s*,?\s*$")
_RXBUF = re.compile(
    r"^Receive buffer size \(bytes\):\s*([\d,\s]+?)(?:,?\s*(max_buffer_size|total_size)=(\d+))?\s*$")
_DEFAULT_PRIO_HEADER = re.compile(r"^default priority:\s*$")
_DEFAULT_PRIO_ROW = re.compile(r"^prio:\s*(\d+)\s*$")
_CABLE = re.compile(r"^Cable len:\s*(\d+)\s*(?:m)?\s*$")
_PFC_HEADER = re.compile(r"^PFC configuration:\s*$")
_PFC_ROW = re.compile(r"^(priority|enabled|buffer)((?:\s+\d+)+)\s*$")
_TC = re.compile(
    r"^tc:\s*(\d+)\s+ratelimit:\s*([^,]+?)\s*,\s*tsa:\s*(\w+)\s*(?:,\s*bw:\s*(\d+)\s*%)?\s*$"
)
_TC_PRIO = re.compile(r"^priority:\s*(\d+)\s*$")
_SKIP = re.compile(r"^(#|Warning|warning|Note|note|\*+ WARNING)")
_TSA = {"ets", "strict", "vendor", "unknown"}

#: Output layouts of ``mlnx_qos`` by release (see the module docstring), oldest first.
LAYOUTS = ("ofed-4.2", "ofed-4.6", "2021-default-prio", "2023-max-buffer", "2024-no-default-prio")


@dataclass
class MlnxQos:
    """What ``mlnx_qos`` says about one port; ``locations`` maps field -> ``file:line``."""

    dcbx: str | None = None
    trust: str | None = None
    dscp2prio: dict[int, int] = field(default_factory=dict)
    buffer_sizes: tuple[int, ...] | None = None
    max_buffer_size: int | None = None
    cable_len_m: int | None = None
    pfc_enabled: frozenset[int] = frozenset()
    prio2buffer: tuple[int, ...] | None = None
    tcs: dict[int, NicTc] = field(default_factory=dict)
    default_priorities: tuple[int, ...] = ()
    layout: str | None = None  # which of LAYOUTS the text follows
    locations: dict[str, str] = field(default_factory=dict)


def _row_values(text: str, where: str, what: str, lo: int, hi: int) -> tuple[int, ...]:
    items = text.split()
    if len(items) != 8:
        raise InputError(f"{what} row must have 8 values, got {len(items)}", location=where)
    return tuple(_int(v, where, f"{what} row value", lo, hi) for v in items)


def parse_mlnx_qos(text: str, source: str, line_offset: int = 0) -> MlnxQos:
    """Parse ``mlnx_qos -i IF`` output.

    Parameters
    ----------
    text : str
        The tool's output.
    source : str
        File name used in locations.
    line_offset : int
        Lines before ``text`` in ``source`` (when it is a section of a larger capture).

    Raises
    ------
    InputError
        On any line it cannot understand, impossible values, or when the trust state, the PFC
        ``enabled`` row or the TC table is missing.
    """
    out = MlnxQos()
    section: str | None = None
    last_prio: int | None = None
    current_tc: NicTc | None = None
    seen_rows: set[str] = set()
    total_label: str | None = None
    has_default_prio = False
    for index, raw in enumerate(text.splitlines(), start=1):
        where = f"{source}:{index + line_offset}"
        line = raw.strip()
        if not line or _SKIP.match(line):
            continue
        indented = raw[:1] in ("\t", " ")
        if m := _DCBX.match(line):
            out.dcbx, section = m.group(1), None
            out.locations["dcbx"] = where
        elif m := _TRUST.match(line):
            trust = m.group(1).lower()
            if trust not in ("dscp", "pcp"):
                raise InputError(f"trust state must be dscp or pcp, got {m.group(1)!r}", location=where)
            out.trust, section = trust, None
            out.locations["trust"] = where
        elif _DSCP_HEADER.match(line):
            section = "dscp"
            out.locations["dscp2prio"] = where
        elif section == "dscp" and (m := _DSCP_ROW.match(line)):
            prio = _int(m.group(1), where, "dscp2prio priority", *PRIORITY_RANGE)
            _add_dscps(out, prio, m.group(2), where)
            last_prio = prio
        elif section == "dscp" and indented and last_prio is not None and _DSCP_CONT.match(line):
            _add_dscps(out, last_prio, line, where)
        elif _DEFAULT_PRIO_HEADER.match(line):
            section, has_default_prio = "default_prio", True
            out.locations["default_priority"] = where
        elif section == "default_prio" and (m := _DEFAULT_PRIO_ROW.match(line)):
            prio = _int(m.group(1), where, "default priority", *PRIORITY_RANGE)
            out.default_priorities = (*out.default_priorities, prio)
        elif m := _RXBUF.match(line):
            items = m.group(1).replace(",", " ").split()
            if len(items) != 8:
                raise InputError(f"receive buffer sizes must list 8 buffers, got {len(items)}", location=where)
            out.buffer_sizes = tuple(_int(v, where, "receive buffer size", 0, U32_MAX) for v in items)
            out.max_buffer_size = _int(m.group(3), where, m.group(2), 0, U32_MAX) if m.group(3) else None
            total_label = m.group(2)
            out.locations["buffer_sizes"] = where
            section = None
        elif m := _CABLE.match(line):
            out.cable_len_m, section = _int(m.group(1), where, "Cable len", *CABLE_RANGE_M), None
            out.locations["cable_len_m"] = where
        elif _PFC_HEADER.match(line):
            section = "pfc"
            out.locations["pfc"] = where
        elif section == "pfc" and (m := _PFC_ROW.match(line)):
            kind = m.group(1)
            if kind in seen_rows:
                raise InputError(f"PFC '{kind}' row appears twice", location=where)
            seen_rows.add(kind)
            if kind == "priority":
                if _row_values(m.group(2), where, kind, 0, 7) != tuple(range(8)):
                    raise InputError("PFC priority header must read 0 1 2 3 4 5 6 7", location=where)
            elif kind == "enabled":
                flags = _row_values(m.group(2), where, kind, 0, 1)
                out.pfc_enabled = frozenset(p for p, f in enumerate(flags) if f)
                out.locations["pfc_enabled"] = where
            else:
                out.prio2buffer = _row_values(m.group(2), where, kind, 0, 7)
                out.locations["prio2buffer"] = where
        elif m := _TC.match(line):
            current_tc = _parse_tc(m, where, out)
            section = "tc"
        elif section == "tc" and current_tc is not None and (m := _TC_PRIO.match(line)):
            prio = _int(m.group(1), where, "priority", *PRIORITY_RANGE)
            current_tc.priorities = (*current_tc.priorities, prio)
        else:
            raise InputError(f"unrecognised mlnx_qos line: {line[:60]!r}", location=where)
    end = f"{source}:{len(text.splitlines()) + line_offset}"
    if out.trust is None:
        raise InputError("no 'Priority trust state:' line (is this mlnx_qos output?)", location=end)
    if "enabled" not in seen_rows:
        raise InputError("no PFC 'enabled' row (output truncated?)", location=end)
    if not out.tcs:
        raise InputError("no 'tc:' table (output truncated?)", location=end)
    _check_tcs(out, end)
    out.layout = _layout(out, total_label, has_default_prio, "buffer" in seen_rows)
    return out


def _layout(out: MlnxQos, total_label: str | None, has_default_prio: bool, has_buffer_row: bool) -> str:
    """Which release's ``pretty_print()`` layout the text follows (one of :data:`LAYOUTS`)."""
    if has_default_prio:
        return "2023-max-buffer" if total_label == "max_buffer_size" else "2021-default-prio"
    if total_label == "max_buffer_size":
        return "2024-no-default-prio"
    if total_label == "total_size":
        return "2021-default-prio"
    if out.buffer_sizes is not None or has_buffer_row:
        return "ofed-4.6"
    return "ofed-4.2"


def _add_dscps(out: MlnxQos, prio: int, text: str, where: str) -> None:
    for item in text.replace(" ", "").split(","):
        if not item:
            continue
        dscp = _int(item, where, "DSCP", *DSCP_RANGE)
        if dscp in out.dscp2prio and out.dscp2prio[dscp] != prio:
            raise InputError(f"DSCP {dscp} mapped to priorities {out.dscp2prio[dscp]} and {prio}", location=where)
        out.dscp2prio[dscp] = prio


def _parse_tc(m: re.Match[str], where: str, out: MlnxQos) -> NicTc:
    tc = _int(m.group(1), where, "tc", *PRIORITY_RANGE)
    if tc in out.tcs:
        raise InputError(f"tc {tc} appears twice", location=where)
    tsa = m.group(3).lower()
    if tsa not in _TSA:
        raise InputError(f"tsa must be ets, strict or vendor, got {m.group(3)!r}", location=where)
    bw = _int(m.group(4), where, "bw [%]", 0, 100) if m.group(4) is not None else 0
    entry = NicTc(tc=tc, tsa=tsa, bw_percent=bw, priorities=(), ratelimit=m.group(2))
    out.tcs[tc] = entry
    out.locations[f"tc{tc}"] = where
    return entry


def _check_tcs(out: MlnxQos, where: str) -> None:
    seen: dict[int, int] = {}
    for tc in out.tcs.values():
        for prio in tc.priorities:
            if prio in seen:
                raise InputError(f"priority {prio} listed under tc {seen[prio]} and tc {tc.tc}",
                                 location=out.locations.get(f"tc{tc.tc}", where))
            seen[prio] = tc.tc
