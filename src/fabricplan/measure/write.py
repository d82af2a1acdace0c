"""Print nccl-tests and perftest tables in the tools' own layout (for synthetic logs: the round-trip
test generates logs from the model with known parameters, and the readers' property tests print
random tables and read them back).

Column widths follow nccl-tests ``src/common.cu`` (``%12li %12li %8s %6s %6i`` then ``%7s %6.2f
%6.2f %5s`` per column block, as in the published logs of tests/fixtures/measure/README.md) and
perftest's report lines.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from fabricplan.measure.records import NCCL_TESTS_BINARIES

TABLE_TITLE = ("#                                                              out-of-place                       in-place          ")
TABLE_HEADER = ("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong")
TABLE_UNITS = ("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       ")


def _time(us: float) -> str:
    """nccl-tests prints a time as ``%7.0f`` from 10,000 us, ``%7.1f`` from 100 us, else ``%7.2f``."""
    if us >= 1e4:
        return f"{us:7.0f}"
    if us >= 100:
        return f"{us:7.1f}"
    return f"{us:7.2f}"


def nccl_row_text(size_bytes: int, oop_us: float, ip_us: float, n_ranks: int, operation: str,
                  dtype: str = "float", wrong: str = "0") -> str:
    """One table row; algbw and busbw recomputed from size and time as nccl-tests does."""
    from fabricplan.perf.collectives import bus_bandwidth_factor

    factor = bus_bandwidth_factor(operation, n_ranks)
    word = {"float": 4, "half": 2, "double": 8, "bfloat16": 2, "int8": 1}.get(dtype, 4)
    redop = "sum" if operation in ("all_reduce", "reduce_scatter", "reduce") else "none"
    root = "0" if operation in ("broadcast", "reduce") else "-1"
    count = size_bytes // word
    cells = f"{size_bytes:12d}  {count:12d}  {dtype:>8s}  {redop:>6s}  {root:>6s}"
    for t in (oop_us, ip_us):
        algbw = size_bytes / (t * 1000.0)
        cells += f"  {_time(t)}  {algbw:6.2f}  {algbw * factor:6.2f}  {wrong:>5s}"
    return cells


def nccl_tests_text(operation: str, n_ranks: int, ranks_per_node: int, rows: Iterable[tuple[int, float, float]], *,
                    gpu_name: str = "NVIDIA H100 80GB HBM3", nccl_version: str | None = None,
                    debug_lines: Sequence[str] = (), footer: bool = True, command: bool = True) -> str:
    """A whole nccl-tests run: command line, header, devices, table (``rows`` = (size, oop us, in-place us))
    and footer."""
    binary = next(b for b, op in NCCL_TESTS_BINARIES.items() if op == operation)
    rows = list(rows)
    lines = []
    if command:
        lines.append(f"$ mpirun -np {n_ranks} -npernode {ranks_per_node} ./build/{binary} -b {rows[0][0]} "
                     f"-e {rows[-1][0]} -f 2 -g 1")
    lines.append(f"# nThread 1 nGpus 1 minBytes {rows[0][0]} maxBytes {rows[-1][0]} step: 2(factor) warmup iters: 5 "
                 "iters: 20 agg iters: 1 validation: 1 graph: 0")
    lines.append("#")
    lines.append("# Using devices")
    for rank in range(n_ranks):
        node, device = divmod(rank, ranks_per_node)
        lines.append(f"#  Rank {rank:2d} Group  0 Pid {10000 + rank:6d} on node-{node:03d} device {device:2d} "
                     f"[0x{0x10 + device:02x}] {gpu_name}")
    if nccl_version:
        lines.append(f"node-000:10000:10000 [0] NCCL INFO NCCL version {nccl_version}+cuda12.2")
    lines.extend(debug_lines)
    lines += ["#", TABLE_TITLE, TABLE_HEADER, TABLE_UNITS]
    for size, oop, ip in rows:
        lines.append(nccl_row_text(size, oop, ip, n_ranks, operation))
    if footer:
        lines.append("# Out of bounds values : 0 OK")
        mean = sum(size / (t * 1000.0) for size, t, _ in rows) / max(len(rows), 1)
        lines.append(f"# Avg bus bandwidth    : {mean:.4f} ")
        lines.append("#")
    return "\n".join(lines) + "\n"


def perftest_text(tool: str, rows: Iterable[tuple], *, device: str = "mlx5_0", link_type: str = "IB") -> str:
    """A perftest report: ``ib_write_bw`` rows (size, iterations, peak Gb/s, average Gb/s, Mpps) or
    ``ib_*_lat`` rows (size, iterations, t_min, t_max, t_typical, t_avg, t_stdev, p99, p99.9 [us])."""
    title = {"ib_write_bw": "RDMA_Write BW Test", "ib_write_lat": "RDMA_Write Latency Test",
             "ib_send_lat": "Send Latency Test", "ib_send_bw": "Send BW Test"}[tool]
    dashes = "-" * 87
    lines = [dashes, f"                    {title}",
             f" Dual-port       : OFF\t\tDevice         : {device}",
             " Number of qps   : 1\t\tTransport type : IB",
             " Connection type : RC\t\tUsing SRQ      : OFF",
             " Mtu             : 4096[B]",
             f" Link type       : {link_type}",
             dashes]
    if tool.endswith("_bw"):
        lines.append(" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]")
        for size, iters, peak, avg, rate in rows:
            lines.append(f" {size:<10d} {iters:<10d}       {peak:<7.2f}            {avg:<7.2f}\t\t   {rate:.6f}")
    else:
        lines.append(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
                     "t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] ")
        for size, iters, *values in rows:
            lines.append(f" {size:<7d} {iters:<10d}    " + "   ".join(f"{v:<12.2f}" for v in values))
    lines.append(dashes)
    return "\n".join(lines) + "\n"
