"""Reader of perftest output (linux-rdma/perftest: ``ib_write_bw``, ``ib_write_lat``, ``ib_send_lat``
and the other ``ib_*_bw`` / ``ib_*_lat`` tests).

Layout (perftest ``src/perftest_parameters.c`` ``ctx_print_test_info`` and the report headers of
``src/perftest_resources.c``; published outputs in linux-rdma/perftest#234, #273, #65, #214 and
tests/fixtures/measure/README.md)::

    ---------------------------------------------------------------------------------------
                        RDMA_Write BW Test
     Dual-port       : OFF          Device         : mlx5_0
     Link type       : IB
     ...
    ---------------------------------------------------------------------------------------
     #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
     65536      5000             97.65              97.61                0.186185
    ---------------------------------------------------------------------------------------

Latency tests print ``#bytes #iterations t_min[usec] t_max[usec] t_typical[usec] t_avg[usec]
t_stdev[usec] 99% percentile[usec] 99.9% percentile[usec]`` (older releases only the first five).
Bandwidth is in Gb/s with ``--report_gbits``, else MB/s (converted here to Gb/s: x 8 / 1000, perftest's
MB = 2^20 bytes: ``x 8 x 1.048576 / 1000``). Lines such as "Conflicting CPU frequency values
detected" may sit inside a table; they are skipped.
"""

from __future__ import annotations

import math
import re

from fabricplan.errors import InputError
from fabricplan.measure.records import PerftestRow, PerftestRun

TITLE = re.compile(r"^\s*(RDMA_Write|RDMA_Read|Send|Atomic\S*)\s+(BW|Latency)\s+Test\s*$", re.IGNORECASE)
TOOLS = {("rdma_write", "bw"): "ib_write_bw", ("rdma_write", "lat"): "ib_write_lat",
         ("rdma_read", "bw"): "ib_read_bw", ("rdma_read", "lat"): "ib_read_lat",
         ("send", "bw"): "ib_send_bw", ("send", "lat"): "ib_send_lat"}
SETTING = re.compile(r"([A-Za-z][A-Za-z .#/_()-]*?)\s*:\s*(\S[^:]*?)(?=\s{2,}[A-Za-z]|\t|$)")
BW_HEADER = re.compile(r"^\s*#bytes\s+#iterations\s+BW peak\[(Gb|MB)/sec\]\s+BW average\[(Gb|MB)/sec\]", re.IGNORECASE)
LAT_HEADER = re.compile(r"^\s*#bytes\s+#iterations\s+t_min\[usec\]", re.IGNORECASE)
DASHES = re.compile(r"^\s*-{20,}\s*$")
NUMBER = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")
LAT_COLUMNS = ("t_min_us", "t_max_us", "t_typical_us", "t_avg_us", "t_stdev_us", "t_p99_us", "t_p999_us")
#: perftest's MB/sec is 2^20 bytes per second.
MBYTES_TO_GBITS = 8 * 1.048576 / 1000


def _value(token: str, what: str, where: str) -> float:
    if not NUMBER.match(token):
        raise InputError(f"{what} '{token}' is not a number", location=where)
    value = float(token)
    if not math.isfinite(value) or value < 0:
        raise InputError(f"{what} {token} must be a finite number >= 0", location=where)
    return value


def read_perftest(text: str, file: str) -> tuple[list[PerftestRun], int]:
    """All perftest tables in ``text`` and the number of lines skipped inside them."""
    runs: list[PerftestRun] = []
    skipped = 0
    title: tuple[int, str, str] | None = None  # (line, operation, kind)
    settings: dict[str, str] = {}
    table: dict | None = None

    def close(complete: bool, end: int) -> None:
        nonlocal table, title, settings
        if table is None:
            return
        notes = [] if complete else [f"table cut off before its closing line (line {end})"]
        line, op, kind = title if title else (table["line"], "", table["kind"])
        tool = TOOLS.get((op, kind), f"ib_{op or 'unknown'}_{kind}".replace("rdma_", ""))
        runs.append(PerftestRun(file=file, line=line, tool=tool, kind=kind, settings=dict(settings),
                                rows=tuple(table["rows"]), complete=complete, notes=tuple(notes)))
        table = None
        title = None
        settings = {}

    lines = text.splitlines()
    for number, raw in enumerate(lines, start=1):
        where = f"{file}:{number}"
        line = raw.rstrip("\r\n")
        if m := TITLE.match(line):
            close(False, number)
            op = m.group(1).lower()
            title = (number, op, "bw" if m.group(2).lower() == "bw" else "lat")
            settings = {}
            continue
        if m := BW_HEADER.match(line):
            close(False, number)
            table = {"line": number, "kind": "bw", "unit": m.group(2).lower(), "rows": []}
            continue
        if LAT_HEADER.match(line):
            close(False, number)
            columns = len(line.split()) - 2  # after #bytes #iterations; "99% percentile[usec]" is 2 words
            columns -= line.count("percentile")
            table = {"line": number, "kind": "lat", "columns": columns, "rows": []}
            continue
        if table is None:
            if title is not None and ":" in line and not line.strip().startswith("#"):
                for key, value in SETTING.findall(line):
                    settings[key.strip()] = value.strip()
            continue
        if DASHES.match(line):
            if table["rows"]:
                close(True, number)
            continue
        tokens = line.split()
        if not tokens:
            continue
        if not tokens[0].isdigit() or len(tokens) < 3:
            skipped += 1  # a warning inside the table ("Conflicting CPU frequency values detected")
            continue
        size = int(tokens[0]) if len(tokens[0]) <= 15 else -1
        if not 0 < size <= 2 ** 40:
            raise InputError(f"message size '{tokens[0]}' must be between 1 byte and 1 TiB", location=where)
        if not tokens[1].isdigit() or len(tokens[1]) > 15:
            raise InputError(f"#iterations '{tokens[1]}' is not a whole number", location=where)
        iterations = int(tokens[1])
        values = [_value(t, "value", where) for t in tokens[2:]]
        if table["kind"] == "bw":
            if len(values) != 3:
                raise InputError(f"a bandwidth row has 5 fields (#bytes #iterations BW peak BW average MsgRate), "
                                 f"got {len(tokens)}", location=where)
            scale = 1.0 if table["unit"] == "gb" else MBYTES_TO_GBITS
            row = PerftestRow(number, size, iterations, bw_peak_gbits_per_s=values[0] * scale,
                              bw_average_gbits_per_s=values[1] * scale, msg_rate_mpps=values[2])
        else:
            if not 3 <= len(values) <= len(LAT_COLUMNS):
                raise InputError(f"a latency row has 5 to 9 fields, got {len(tokens)}", location=where)
            row = PerftestRow(number, size, iterations, **dict(zip(LAT_COLUMNS, values)))
        table["rows"].append(row)
    close(False, len(lines) + 1)
    return runs, skipped
