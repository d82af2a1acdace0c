"""Reader of nccl-tests output (``all_reduce_perf``, ``all_gather_perf``, ``reduce_scatter_perf``,
``alltoall_perf``, ``sendrecv_perf``, ``broadcast_perf``, ``reduce_perf``).

Layout, as the binaries print it (NVIDIA/nccl-tests ``src/common.cu``; published logs in
NVIDIA/nccl-tests#107, #249, NVIDIA/nccl#583, #1453, coreweave/nccl-tests#43; tests/fixtures/measure/README.md)::

    # nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
    #
    # Using devices
    #  Rank  0 Group  0 Pid  12345 on   node-001 device  0 [0x07] NVIDIA H100 80GB HBM3
    #                                                              out-of-place                       in-place
    #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
    #        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
               8             2     float     sum      -1    37.30    0.00    0.00      0    34.44    0.00    0.00      0
    # Out of bounds values : 0 OK
    # Avg bus bandwidth    : 57.7386

Older releases print no ``root`` column, ``error`` (a float such as ``0e+00``) instead of
``#wrong``, and may lack the ``Group`` field; ``-c 0`` prints ``N/A`` in the check column. mpirun
may prefix every line (``[1,0]<stdout>:``, ``[0] ``), and ``NCCL_DEBUG=INFO`` lines
(``host:pid:tid [dev] NCCL INFO ...``) can cut a table row in two (NVIDIA/nccl#1453): the row's
tail then follows on a later line and is joined back.

Tolerated: warnings and other lines anywhere (counted, ignored), a run cut off before its footer
(``complete=False``), a last row cut mid-line (dropped with a note), several runs in one file.
Refused (InputError at ``FILE:LINE``, the CLI exits 2): a table row whose fields are all there but
are not numbers, are negative or not finite, or has more fields than the table header; a row whose
size is not whole bytes from 1 to 1 TiB (``-512``, ``5e2``, ``1e30``: never dropped silently, so a
fit never runs without it unnoticed).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from fabricplan.errors import InputError
from fabricplan.measure.records import (
    NCCL_ALGORITHM_INDEX,
    NCCL_PROTOCOL_INDEX,
    NCCL_TESTS_BINARIES,
    NcclDebug,
    NcclRow,
    NcclRun,
)

#: mpirun / srun prefixes of each output line: "[1,0]<stdout>:", "[0] ", "0: ".
PREFIX = re.compile(r"^(?:\[\d+,\d+\]<std(?:out|err)>:|\[\d+\]\s|\d+:\s)")
HEADER = re.compile(r"^#?\s*nThread\s+(\d+)\s+nGpus\s+(\d+)\s+minBytes\s+(\d+)\s+maxBytes\s+(\d+)(.*)$")
RANK = re.compile(r"^#\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+(\d+)\s+\[[^\]]*\]\s*(.*)$")
NCCL_LINE = re.compile(r"(?P<host>[A-Za-z][\w.\-]*):(?P<pid>\d+):(?P<tid>\d+)\s+\[(?P<dev>\d+)\]\s+NCCL\s+(?P<level>INFO|WARN)\s?(?P<text>.*)$")
TABLE_HEADER = re.compile(r"^#\s*size\s+count\s+type\b(?P<rest>.*)$")
FOOTER_AVG = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(\S+)")
FOOTER_OOB = re.compile(r"^#\s*Out of bounds values\s*:")
VERSION_TESTS = re.compile(r"nccl-tests version\s+(\S+).*?nccl-library=(\d+)")
BINARY = re.compile(r"\b(" + "|".join(NCCL_TESTS_BINARIES) + r")\b")
COLL_NAMES = {"AllReduce": "all_reduce", "AllGather": "all_gather", "ReduceScatter": "reduce_scatter",
              "AllToAll": "all_to_all", "Broadcast": "broadcast", "Reduce": "reduce"}
NUMBER = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")
#: Program limit: a row's size is at most 1 TiB (the collective model's own bound).
MAX_SIZE_BYTES = 2 ** 40


def version_from_code(code: int) -> str:
    """NCCL_VERSION_CODE -> "2.18.3" (codes >= 21000 are major*10000 + minor*100 + patch; older ones *1000 + *100)."""
    if code >= 10000:
        return f"{code // 10000}.{code // 100 % 100}.{code % 100}"
    return f"{code // 1000}.{code // 100 % 10}.{code % 100}"


def _strip(raw: str) -> str:
    line = raw.rstrip("\r\n")
    for _ in range(2):  # "[1,0]<stdout>:" then a "[0] " inside it
        match = PREFIX.match(line)
        if not match:
            break
        line = line[match.end():]
    return line


class _Table:
    """The column layout of one table header: leading fields before the first ``time`` column."""

    def __init__(self, header_rest: str) -> None:
        tokens = header_rest.split()
        self.redop = "redop" in tokens[:3]
        self.root = "root" in tokens[:3]
        self.lead = 3 + int(self.redop) + int(self.root)  # size count type [redop] [root]
        self.times = sum(1 for t in tokens if t == "time")  # 2: out-of-place and in-place; 1: one of them
        self.blocks = max(self.times, 1)
        self.fields = self.lead + 4 * self.blocks


class _Builder:
    def __init__(self, file: str, line: int, header: dict[str, str]) -> None:
        self.file, self.line, self.header = file, line, header
        self.ranks: dict[int, tuple[str, str]] = {}
        self.rows: list[NcclRow] = []
        self.table: _Table | None = None
        self.complete = False
        self.avg: float | None = None
        self.notes: list[str] = []
        self.fragment: tuple[int, list[str]] | None = None  # a row cut by an interleaved line


def _number(token: str, what: str, where: str, *, allow_na: bool = False) -> float | None:
    if allow_na and token.upper() in ("N/A", "NA", "-"):
        return None
    if not NUMBER.match(token):
        raise InputError(f"{what} '{token}' is not a number (an nccl-tests table row has numbers in every "
                         "column)", location=where)
    value = float(token)
    if not math.isfinite(value) or value < 0:
        raise InputError(f"{what} {token} must be a finite number >= 0", location=where)
    return value


def _integer(token: str, what: str, where: str) -> int:
    if not re.fullmatch(r"\d{1,15}", token):
        raise InputError(f"{what} '{token}' is not a whole number", location=where)
    return int(token)


def _row(tokens: list[str], table: _Table, where: str, line: int) -> NcclRow:
    size = _integer(tokens[0], "size", where)
    if not 0 < size <= MAX_SIZE_BYTES:
        raise InputError(f"size {size} must be between 1 byte and 1 TiB", location=where)
    count = _integer(tokens[1], "count", where)
    dtype = tokens[2]
    redop = tokens[3] if table.redop else ""
    root = None
    if table.root:
        token = tokens[3 + int(table.redop)]
        if not re.fullmatch(r"-?\d{1,9}", token):
            raise InputError(f"root '{token}' is not a whole number", location=where)
        root = int(token)
    values = tokens[table.lead:]
    blocks = []
    for b in range(table.blocks):
        time, algbw, busbw, wrong = values[4 * b: 4 * b + 4]
        blocks.append((_number(time, "time", where), _number(algbw, "algbw", where),
                       _number(busbw, "busbw", where), _number(wrong, "#wrong", where, allow_na=True)))
    if len(blocks) == 1:
        blocks.append((None, None, None, None))
    (ot, oa, ob, ow), (it, ia, ib, iw) = blocks
    if (ot is not None and ot <= 0) or (it is not None and it <= 0):
        raise InputError("time must be > 0 us", location=where)
    return NcclRow(line, size, count, dtype, redop, root, ot, oa, ob, ow, it, ia, ib, iw)


def _is_row_start(tokens: list[str]) -> bool:
    return bool(tokens) and tokens[0].isdigit() and len(tokens) >= 2 and tokens[1].isdigit()


def _is_bad_size_row(tokens: list[str]) -> bool:
    """A table row (size, count, then the data type's name) whose size is a number but not whole
    bytes: negative, a fraction or an exponent form."""
    return len(tokens) >= 3 and bool(NUMBER.match(tokens[0])) and not tokens[0].isdigit() \
        and bool(NUMBER.match(tokens[1])) and bool(re.fullmatch(r"[A-Za-z_]\w*", tokens[2]))


def _debug_update(state: dict, text: str, level: str, host: str) -> None:
    state["lines"] += 1
    if level == "WARN":
        state["warnings"].append(text.strip()[:200])
        return
    if m := re.search(r"NCCL version (\d+\.\d+\.\d+)", text):
        state["nccl_version"] = m.group(1)
    if m := re.search(r"Using network (\w+)", text):
        state["transport"] = m.group(1)
    if m := re.match(r"\s*NET/(IB|Socket)\s*:\s*Using\s+(.*)", text):
        listed = re.findall(r"\[\d+\]\S+", m.group(2))
        state.setdefault("net_devices_by_host", {})[host] = len(listed)
        if m.group(1) == "IB":
            state["link_layer"] = "RoCE" if any(d.endswith("/RoCE") for d in listed) else "IB"
        state.setdefault("transport", "IB" if m.group(1) == "IB" else "Socket")
    if (m := re.match(r"\s*Channel\s+\d+/(\d+)\s*:\s+\d", text)) and "->" not in text and int(m.group(1)) > 0:
        state["channels"] = max(state.get("channels") or 0, int(m.group(1)))  # a ring listing, not a connection
    if m := re.search(r"via NET/(\w+)/\d+(/GDRDMA)?", text):
        state["via_net"] = True
        if m.group(2):
            state["gdr"] = True
    if re.search(r"collnet", text, re.IGNORECASE):
        if m := re.search(r"(\d+)\s+collnet channels", text):
            state["collnet"] = bool(state.get("collnet")) or int(m.group(1)) > 0
        elif re.search(r"(?i)sharp|loaded|plugin", text) and not re.search(r"(?i)fail|disabled|not", text):
            state["collnet"] = True
    if m := re.search(r"NCCL_ALGO set by environment to (\S+)", text):
        state["forced_algorithm"] = m.group(1).split(",")[0].lower()
    if m := re.search(r"NCCL_PROTO set by environment to (\S+)", text):
        state["forced_protocol"] = m.group(1).split(",")[0].lower()
    if m := re.search(r"(\d+) Bytes -> Algo (\d+) proto (\d+)", text):
        a, p = int(m.group(2)), int(m.group(3))
        if a < len(NCCL_ALGORITHM_INDEX) and p < len(NCCL_PROTOCOL_INDEX):
            state["algorithm_by_size"][int(m.group(1))] = (NCCL_ALGORITHM_INDEX[a], NCCL_PROTOCOL_INDEX[p])
    if m := re.search(r"nranks (\d+)", text):
        state["nranks"] = int(m.group(1))
    if m := re.match(r"\s*(AllReduce|AllGather|ReduceScatter|AllToAll|Broadcast|Reduce)\s*:\s*opCount", text):
        state["collective"] = COLL_NAMES[m.group(1)]


def _debug(state: dict) -> NcclDebug:
    gdr = state.get("gdr")
    if gdr is None and state.get("via_net"):
        gdr = False
    hosts = state.get("net_devices_by_host") or {}
    return NcclDebug(nccl_version=state.get("nccl_version"), transport=state.get("transport"),
                     link_layer=state.get("link_layer"), net_devices=max(hosts.values()) if hosts else None,
                     channels=state.get("channels"), gdr=gdr, collnet=state.get("collnet"),
                     forced_algorithm=state.get("forced_algorithm"), forced_protocol=state.get("forced_protocol"),
                     algorithm_by_size=dict(state["algorithm_by_size"]), nranks=state.get("nranks"),
                     lines=state["lines"], warnings=tuple(state["warnings"][:20]))


def _new_state() -> dict:
    return {"lines": 0, "warnings": [], "algorithm_by_size": {}}


def _binary_from_name(name: str) -> str | None:
    lowered = name.lower()
    for binary in NCCL_TESTS_BINARIES:
        if binary in lowered or binary.replace("_perf", "") in lowered.replace("-", "_"):
            return binary
    return None


def _finished_run(b: _Builder, state: dict, file: str, end_line: int, binary_seen: str | None,
                  tests_version: str | None, operation: str | None) -> NcclRun:
    """The run ``b`` gathered, with what the NCCL lines (``state``) and the command said of it."""
    if b.fragment is not None:
        b.notes.append(f"row at line {b.fragment[0]} cut off (truncated output); left out")
    if not b.complete and b.rows:
        b.notes.append(f"no '# Avg bus bandwidth' footer before line {end_line}: the run was cut off "
                       f"after {len(b.rows)} rows")
    hosts_by_rank = {rank: host for rank, (host, _dev) in b.ranks.items()}
    hosts = tuple(dict.fromkeys(hosts_by_rank.values()))
    debug = _debug(state)
    ranks = len(b.ranks) or debug.nranks
    per_node = None
    if b.ranks and hosts:
        counts = [list(hosts_by_rank.values()).count(h) for h in hosts]
        per_node = max(counts)
    binary = b.header.get("binary") or binary_seen or _binary_from_name(Path(file).name)
    op = NCCL_TESTS_BINARIES.get(binary) if binary else None
    op = op or state.get("collective") or operation
    if debug.nccl_version is None and tests_version:
        debug = NcclDebug(**{**debug.__dict__, "nccl_version": tests_version})
    return NcclRun(file=file, line=b.line, binary=binary, operation=op, header=b.header, ranks=ranks,
                   ranks_per_node=per_node, nodes=len(hosts) or None,
                   devices=tuple(dict.fromkeys(d for _h, d in b.ranks.values())), hosts=hosts,
                   debug=debug, rows=tuple(b.rows), complete=b.complete, avg_busbw_gbytes_per_s=b.avg,
                   notes=tuple(b.notes))


def _table_line(builder: _Builder, tokens: list[str], file: str, number: int) -> bool:
    """Take one line of a run's table (a row, or the rest of a row cut over lines); False if it is none."""
    where = f"{file}:{number}"
    table = builder.table
    if builder.fragment is not None and all(NUMBER.match(t) or t.upper() == "N/A" for t in tokens) \
            and len(builder.fragment[1]) + len(tokens) <= table.fields:
        start, pending = builder.fragment
        pending = pending + tokens
        if len(pending) == table.fields:
            builder.fragment = None
            builder.rows.append(_row(pending, table, f"{file}:{start}", start))
        else:
            builder.fragment = (start, pending)
        return True
    if not _is_row_start(tokens):
        if _is_bad_size_row(tokens):  # a row whose size is not whole bytes (-512, 5e2, 1e30): refused, not dropped
            raise InputError(f"size '{tokens[0]}' is not a whole number of bytes from 1 to 1 TiB (nccl-tests prints "
                             "sizes as whole bytes); fix or remove the row", location=where)
        return False
    if builder.fragment is not None:
        builder.notes.append(f"row at line {builder.fragment[0]} cut off; left out")
        builder.fragment = None
    if len(tokens) > table.fields:
        raise InputError(f"row has {len(tokens)} fields, the table header has {table.fields}", location=where)
    if len(tokens) < table.fields:
        # Check what is there now: a bad value is an error even in a cut row.
        for index, token in enumerate(tokens[table.lead:]):
            if index % 4 != 3:
                _number(token, "value", where)
        builder.fragment = (number, tokens)
        return True
    builder.rows.append(_row(tokens, table, where, number))
    return True


def _new_run(m, number: int, file: str, binary_seen: str | None) -> _Builder:
    """A run started by its ``# nThread ... nGpus ...`` header line (match ``m``)."""
    header = {"nThread": m.group(1), "nGpus": m.group(2), "minBytes": m.group(3), "maxBytes": m.group(4)}
    for key, value in re.findall(r"(warmup iters|agg iters|iters|validation|graph|step):\s*(\S+)", m.group(5)):
        header[key] = value
    if binary_seen:
        header["binary"] = binary_seen
    return _Builder(file, number, header)


def read_nccl_tests(text: str, file: str, *, operation: str | None = None) -> tuple[list[NcclRun], int]:
    """All nccl-tests runs in ``text`` (the contents of ``file``) and the number of ignored lines.

    ``operation`` (e.g. ``all_reduce``) names the collective when neither the command line, the
    file name nor NCCL INFO lines do.
    """
    runs: list[NcclRun] = []
    ignored = 0
    builder: _Builder | None = None
    state = _new_state()
    binary_seen: str | None = None  # the last nccl-tests binary named on a line (the command)
    tests_version: str | None = None

    def finish(end_line: int) -> None:
        nonlocal builder, state
        if builder is None:  # NCCL lines seen so far belong to the run that starts next
            return
        runs.append(_finished_run(builder, state, file, end_line, binary_seen, tests_version, operation))
        builder = None
        state = _new_state()

    for number, raw in enumerate(text.splitlines(), start=1):
        line = _strip(raw)
        # An NCCL INFO line, possibly glued after the start of a table row (nccl#1453).
        info = NCCL_LINE.search(line)
        head = line[: info.start()] if info else line
        if info:  # the cut-off row ends with the next line's mpirun prefix ("... -1[0] host:pid:...")
            head = re.sub(r"\[\d+(?:,\d+)?\](?:<std\w+>:)?\s*$", "", head)
            _debug_update(state, info.group("text"), info.group("level"), info.group("host"))
        if m := BINARY.search(head):
            if not head.lstrip().startswith("#") or "perf" in head:
                binary_seen = m.group(1)
                if builder is not None and not builder.rows:
                    builder.header.setdefault("binary", binary_seen)
        if m := VERSION_TESTS.search(head):
            tests_version = version_from_code(int(m.group(2)))
        stripped = head.strip()
        if not stripped:  # blank lines are layout, not noise
            continue
        if m := HEADER.match(stripped):
            finish(number)
            builder = _new_run(m, number, file, binary_seen)  # NCCL init lines before it belong to this run
            continue
        if builder is None:
            ignored += 0 if info else 1
            continue
        if m := RANK.match(stripped):
            builder.ranks[int(m.group(1))] = (m.group(2), m.group(4).strip())
        elif m := TABLE_HEADER.match(stripped):
            builder.table = _Table(m.group("rest"))
        elif m := FOOTER_AVG.match(stripped):
            builder.complete = True
            try:
                builder.avg = float(m.group(1))
            except ValueError:
                builder.avg = None
            finish(number)  # NCCL lines after the footer belong to the next run
        elif FOOTER_OOB.match(stripped) or stripped.startswith("#"):
            continue
        elif builder.table is None or not _table_line(builder, stripped.split(), file, number):
            ignored += 0 if info else 1
    finish(len(text.splitlines()) + 1)
    return runs, ignored
