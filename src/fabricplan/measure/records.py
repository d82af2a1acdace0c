"""What the readers of measurement logs return: runs of nccl-tests and perftest, row by row.

Every value keeps the file and line it came from, so a fit report can name the rows it left out
and why, and a bad row can be reported as ``FILE:LINE``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: nccl-tests binaries the readers know, and the collective (``perf.collectives.OPERATIONS``) each runs.
NCCL_TESTS_BINARIES = {"all_reduce_perf": "all_reduce", "all_gather_perf": "all_gather",
                       "reduce_scatter_perf": "reduce_scatter", "alltoall_perf": "all_to_all",
                       "sendrecv_perf": "send_recv", "broadcast_perf": "broadcast", "reduce_perf": "reduce"}
#: NCCL's algorithm and protocol indexes as its TUNING lines print them ("Algo 1 proto 2";
#: NVIDIA/nccl src/include/device.h NCCL_ALGO_* and NCCL_PROTO_*).
NCCL_ALGORITHM_INDEX = ("tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat")
NCCL_PROTOCOL_INDEX = ("ll", "ll128", "simple")


@dataclass(frozen=True)
class NcclRow:
    """One size of an nccl-tests table: out-of-place and in-place columns (``None`` where absent)."""

    line: int
    size_bytes: int
    count: int
    dtype: str
    redop: str
    root: int | None
    oop_time_us: float | None
    oop_algbw_gbytes_per_s: float | None
    oop_busbw_gbytes_per_s: float | None
    oop_wrong: float | None  # #wrong (or the older "error" column); None for N/A (-c 0)
    ip_time_us: float | None
    ip_algbw_gbytes_per_s: float | None
    ip_busbw_gbytes_per_s: float | None
    ip_wrong: float | None

    @property
    def time_us(self) -> float | None:
        """The time a fit uses: out-of-place (the column published tables quote), else in-place."""
        return self.oop_time_us if self.oop_time_us is not None else self.ip_time_us

    @property
    def busbw_gbytes_per_s(self) -> float | None:
        return self.oop_busbw_gbytes_per_s if self.oop_time_us is not None else self.ip_busbw_gbytes_per_s

    @property
    def wrong(self) -> float:
        """Wrong values in either column (0 when not checked)."""
        return max(self.oop_wrong or 0.0, self.ip_wrong or 0.0)


@dataclass(frozen=True)
class NcclDebug:
    """What ``NCCL_DEBUG=INFO`` lines say about the run (all optional; empty without them)."""

    nccl_version: str | None = None
    transport: str | None = None  # "IB", "Socket", "Libfabric" (NCCL's "Using network ...")
    link_layer: str | None = None  # "IB" or "RoCE" from "NET/IB : Using [0]mlx5_0:1/RoCE"
    net_devices: int | None = None  # NICs listed by NET/IB or NET/Socket "Using [0]... [1]..."
    channels: int | None = None  # rings: "Channel 00/16 :" -> 16
    gdr: bool | None = None  # True: some channel "via NET/IB/0/GDRDMA"; False: channels via NET without it
    collnet: bool | None = None  # True: a CollNet (SHARP) plugin loaded or collnet channels built
    forced_algorithm: str | None = None  # NCCL_ALGO set by environment
    forced_protocol: str | None = None  # NCCL_PROTO set by environment
    algorithm_by_size: dict[int, tuple[str, str]] = field(default_factory=dict)  # TUNING "N Bytes -> Algo a proto p"
    nranks: int | None = None  # "Init COMPLETE ... nranks N"
    lines: int = 0  # NCCL INFO/WARN lines read
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class NcclRun:
    """One nccl-tests run: header, NCCL_DEBUG facts and the table."""

    file: str
    line: int  # the "# nThread ..." header
    binary: str | None  # all_reduce_perf ... (from the command line, the file name or NCCL INFO lines)
    operation: str | None
    header: dict[str, str]
    ranks: int | None
    ranks_per_node: int | None
    nodes: int | None
    devices: tuple[str, ...]  # GPU names of the "Using devices" lines
    hosts: tuple[str, ...]
    debug: NcclDebug
    rows: tuple[NcclRow, ...]
    complete: bool  # the "# Avg bus bandwidth" footer was seen
    avg_busbw_gbytes_per_s: float | None
    notes: tuple[str, ...] = ()  # truncation, dropped fragments

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class PerftestRow:
    """One message size of a perftest table (bandwidth in Gb/s, latency in microseconds)."""

    line: int
    size_bytes: int
    iterations: int
    bw_peak_gbits_per_s: float | None = None
    bw_average_gbits_per_s: float | None = None
    msg_rate_mpps: float | None = None
    t_min_us: float | None = None
    t_max_us: float | None = None
    t_typical_us: float | None = None
    t_avg_us: float | None = None
    t_stdev_us: float | None = None
    t_p99_us: float | None = None
    t_p999_us: float | None = None


@dataclass(frozen=True)
class PerftestRun:
    """One perftest table: ``ib_write_bw``, ``ib_write_lat``, ``ib_send_lat`` (and the other BW/lat tests)."""

    file: str
    line: int  # the title line ("RDMA_Write BW Test") or the table header
    tool: str  # ib_write_bw, ib_write_lat, ib_send_lat, ib_send_bw, ib_read_bw, ib_read_lat
    kind: str  # "bw" or "lat"
    settings: dict[str, str]
    rows: tuple[PerftestRow, ...]
    complete: bool  # the closing dashed line was seen
    notes: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class MeasurementLog:
    """Everything read from one file."""

    file: str
    nccl_runs: tuple[NcclRun, ...]
    perftest_runs: tuple[PerftestRun, ...]
    ignored_lines: int  # lines that are neither header, table nor known NCCL INFO (warnings, shell noise)
