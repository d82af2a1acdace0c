"""Published nccl-tests all-reduce figures on multi-host NVLink domains (GB200 and GB300 NVL72) and the model's
number for each: the rows of docs/validation.md "NVLink domains" (``scripts/validate_nvlink_domains.py``)
and of ``tests/perf/test_nvlink_domain.py``.

Each row gives the system as measured (GPUs, GPUs per NVLink domain and per host, NICs per domain, the
fabric profile closest to it), the message size, the measured busbw [GB/s] (out-of-place, in-place), its
source, whether the model was calibrated on it, its tolerance and the reason for that tolerance. The
model side is :func:`fabricplan.perf.collectives.collective_time` with NCCL's default choice (or the
algorithm the source forced).

``kind``: ``"match"`` rows pass when ``|model / measured - 1| <= tolerance``; ``"bound"`` rows pass when
the measurement is at or below the model (the model states what the hardware allows) and the model is at
or below the one-domain figure.
"""

from __future__ import annotations

from dataclasses import dataclass

COREWEAVE = ("coreweave/nccl-tests README.md @0120901 \"Expected Performance / GB200\" (NCCL 2.26.2, GB200 NVL72, "
             "4 x ConnectX-7 400G per 4-GPU tray, InfiniBand; the jobs set no NCCL_COLLNET_ENABLE (default 0) and the "
             "multi-rack MPIJob sets NCCL_NET_PLUGIN=none, so no SHARP/CollNet: multi-node NVLS is unavailable)")
VERDA = ("Verda (formerly DataCrunch), \"NVIDIA GB300 NVL72: GPU Architecture & Performance\", "
         "verda.com/blog/gb300-nvl72-architecture, 2025, section \"Multi-Node NVLINK NCCL / all_reduce\": nccl-tests "
         "all_reduce_perf -b 1G -e 16G -f 2 -g 1 -n 1000 over one GB300 NVL72 rack (18 compute trays x 4 GPUs, "
         "72 GPUs in one NVLink domain), float sum; NCCL release not stated, CollNet not enabled")
AZURE = ("Azure/AI-benchmarking-guide Azure_Results/ND_GB200_v6_results.md @2a370be (NCCL 2.25.1, one ND GB200 v6 "
         "VM = one 4-GPU compute tray, all_reduce Ring, in-place); Azure/AI-benchmarking-guide#7: 4 GPUs of one host")


@dataclass(frozen=True)
class DomainRow:
    name: str
    gpus: int
    domain_gpus: int
    gpus_per_host: int
    nics_per_domain: int
    fabric: str
    size_bytes: int
    measured_busbw: tuple[float, ...]
    source: str
    calibrated: bool
    tolerance: float
    reason: str
    algorithm: str | None = None
    kind: str = "match"
    collnet: bool = False  # SHARP via CollNet: off unless the run enabled it (NCCL_COLLNET_ENABLE default 0)
    gpu: str = "gb200"  # the catalog GPU (gb200: GB200 NVL72; gb300: GB300 NVL72, Blackwell Ultra)

    @property
    def measured(self) -> float:
        """The mean of the published columns (out-of-place and in-place)."""
        return sum(self.measured_busbw) / len(self.measured_busbw)


GIB = 2 ** 30
ROWS = (
    DomainRow("1 rack (72 GPUs), 8 GiB", 72, 72, 4, 72, "infiniband-ndr", 8 * GIB, (834.57, 846.82), COREWEAVE,
              True, 0.03, "calibrated: mnnvl_nvls_data_path_efficiency is this row's mean over the model "
              "without it; 3 % = the spread of the two columns (1.5 %) twice"),
    DomainRow("1 rack (72 GPUs), 4 GiB", 72, 72, 4, 72, "infiniband-ndr", 4 * GIB, (839.16, 835.32), COREWEAVE,
              False, 0.05, "same system, another size: run-to-run spread of nccl-tests (~2-3 %) plus the "
              "launch and latency terms"),
    DomainRow("1 rack (72 GPUs), 2 GiB", 72, 72, 4, 72, "infiniband-ndr", 2 * GIB, (757.78, 773.62), COREWEAVE,
              False, 0.10, "below 4 GiB the measured curve still rises (586 -> 681 -> 758 GB/s from 512 MiB "
              "to 2 GiB); NVLS per-step latency is not modelled beyond NCCL's constants: 10 %"),
    DomainRow("2 racks (144 GPUs), 16 GiB", 144, 72, 4, 72, "infiniband-ndr", 16 * GIB, (810.41, 820.36),
              COREWEAVE, False, 0.05, "multi-rack: the one-domain NVLS figure bounds it and 2 racks stay "
              "within 3 % of one rack in the measurement; 5 % as for the one-rack sizes"),
    DomainRow("2 racks (144 GPUs), 8 GiB", 144, 72, 4, 72, "infiniband-ndr", 8 * GIB, (793.06, 791.88),
              COREWEAVE, False, 0.08, "still rising at 8 GiB (793 -> 810 -> 820 GB/s): the latency term "
              "of the 2-rack run (~1 ms from a two-size fit) is larger than the model's; 8 %"),
    DomainRow("20 racks (1,440 GPUs), 16 GiB", 1440, 72, 4, 72, "infiniband-ndr", 16 * GIB, (405.74, 404.77),
              COREWEAVE, False, 0.0, "bound only: a two-size fit of the published times (8 and 16 GiB) gives ~5.4 ms of "
              "fixed time, consistent with a ring's 2 x 1,439 steps at ~1.9 us, and half the one-rack rate, "
              "far below what 32 head NICs x 47 GB/s per rack allow; the mechanism (NCCL's choice at 20 "
              "cliques or the fabric between scalable units) is not identified, so the model, which states "
              "the hardware's bound, must be at or above the measurement and at or below one rack",
              kind="bound"),
    DomainRow("1 compute tray (4 GPUs), 8 GiB", 4, 4, 4, 4, "infiniband-ndr", 8 * GIB, (679.61,), AZURE,
              False, 0.08, "one host, Ring forced: NCCL's ring over 18 NVLink5 links x 40.1 GB/s; 8 % "
              "(one run, no second column)", algorithm="ring"),
    # GB300 NVL72 (Verda): NCCL has no Blackwell Ultra constant of its own (sm103 takes the sm100 rows:
    # topo.h SM100_NVLINK_BW for cc >= 100, tuning.cc's Blackwell nvlsEfficiency 0.74, nvls.cc's 24 NVLS
    # channels in one domain), so the model is the GB200 one but for the in-domain data-path efficiency,
    # calibrated on the 8 GiB row as GB200's is; the tolerances are the GB200 rows' by size.
    DomainRow("GB300 1 rack (72 GPUs), 16 GiB", 72, 72, 4, 72, "infiniband-ndr", 16 * GIB, (918.77, 918.89), VERDA,
              False, 0.05, "as the GB200 one-rack 4 GiB row: run-to-run spread of nccl-tests (~2-3 %) plus the "
              "launch and latency terms; 5 %", gpu="gb300"),
    DomainRow("GB300 1 rack (72 GPUs), 8 GiB", 72, 72, 4, 72, "infiniband-ndr", 8 * GIB, (883.45, 884.61), VERDA,
              True, 0.03, "calibrated: mnnvl_nvls_data_path_efficiency_sm103 is this row's mean over the model "
              "without it, at the size of the GB200 calibration row; 3 % as there (the columns differ by 0.1 %)",
              gpu="gb300"),
    DomainRow("GB300 1 rack (72 GPUs), 4 GiB", 72, 72, 4, 72, "infiniband-ndr", 4 * GIB, (849.36, 848.54), VERDA,
              False, 0.05, "as the GB200 one-rack 4 GiB row; 5 %", gpu="gb300"),
    DomainRow("GB300 1 rack (72 GPUs), 2 GiB", 72, 72, 4, 72, "infiniband-ndr", 2 * GIB, (806.13, 805.72), VERDA,
              False, 0.10, "as the GB200 one-rack 2 GiB row: the measured curve still rises (727 -> 806 -> 849 "
              "GB/s from 1 to 4 GiB); NVLS per-step latency is not modelled beyond NCCL's constants: 10 %",
              gpu="gb300"),
)


def model_busbw(row: DomainRow, catalog=None, nccl_version: str | None = None) -> float:
    """The model's busbw [GB/s] for ``row`` (its GPU, NCCL's default choice unless the row forced one)."""
    from fabricplan.catalog.catalog import default_catalog
    from fabricplan.perf.collectives import collective_time

    catalog = catalog or default_catalog()
    host = row.gpus_per_host if row.gpus_per_host < row.domain_gpus else None
    fabric = catalog.fabric(row.fabric)
    if not row.collnet:  # the runs did not enable CollNet/SHARP: NCCL's algorithms without it
        fabric = fabric.model_copy(update={"in_network_reduction": False})
    result = collective_time("all_reduce", row.size_bytes, row.gpus, row.domain_gpus, fabric,
                             catalog.gpu(row.gpu), nics_per_node=row.nics_per_domain, gpus_per_host=host,
                             algorithm=row.algorithm, catalog=catalog, nccl_version=nccl_version)
    return result.busbw_gbytes_per_s


def one_domain_busbw(row: DomainRow, catalog=None) -> float:
    """The model's busbw of one NVLink domain at the row's size (the ceiling of a multi-domain row)."""
    single = DomainRow(row.name, row.domain_gpus, row.domain_gpus, row.gpus_per_host, row.nics_per_domain,
                       row.fabric, row.size_bytes, row.measured_busbw, row.source, False, 0.0, "", gpu=row.gpu)
    return model_busbw(single, catalog)


def check(row: DomainRow, catalog=None) -> tuple[float, float, bool]:
    """``(model busbw, error = model / measured - 1, within tolerance)`` of one row."""
    model = model_busbw(row, catalog)
    error = model / row.measured - 1.0
    if row.kind == "bound":
        return model, error, row.measured <= model <= one_domain_busbw(row, catalog) * (1 + 1e-9)
    return model, error, abs(error) <= row.tolerance
