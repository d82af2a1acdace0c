"""Model-versus-measurement comparisons with stated tolerances (used by tests and the report).

Each function returns rows of (input, published, model, relative error) for one published source
in ``catalog/data/published_perf.yaml``; ``scripts/validate_perf.py`` writes them all to
``docs/validation.md`` and ``tests/perf/test_validation.py`` asserts the tolerances. A gated row is a
:class:`GatedRow`: its tolerance and the tolerance's reason come from the data file, beside the
published row (``tolerance``, ``tolerance_reason``; null = shown, not gated).

The EDR and HDR profiles (``fabrics.yaml``) take their per-NIC bandwidth from the RDMA NIC
efficiency observed on NDR (47 of 50 GB/s), so the EDR/HDR rows are a genuine check of that
transfer, not a restatement of their own numbers. The AWS EFA rows calibrate one constant (the
EFA host stack, on the 2 x p5 8-byte row) and check the rest.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricplan.catalog import default_catalog
from fabricplan.catalog.files import load_data_file
from fabricplan.design import bare_network
from fabricplan.perf.collectives import collective_time
from fabricplan.perf.latency import perf_parameter
from fabricplan.perf.step import ClusterShape, step_time


def published_data() -> dict:
    """``catalog/data/published_perf.yaml``, parsed (a fresh object per call: callers may change it)."""
    return load_data_file("published_perf.yaml")


def _reason(entry: dict) -> str:
    """An entry's ``tolerance_reason`` with each run of whitespace as one space (the data file wraps it)."""
    return " ".join(str(entry["tolerance_reason"]).split())


@dataclass(frozen=True)
class ValidationRow:
    """One compared quantity: published value, model value and relative error (model/published - 1)."""

    case: str
    quantity: str
    published: float
    model: float
    detail: str = ""

    @property
    def error(self) -> float:
        return self.model / self.published - 1.0


@dataclass(frozen=True)
class GatedRow(ValidationRow):
    """A row with its own tolerance (None = shown, not gated) and the tolerance's reason."""

    tolerance: float | None = None
    reason: str = ""


def row_tolerance(row: ValidationRow) -> float | None:
    """The row's tolerance; None: shown, not gated (a row that is not a :class:`GatedRow` is never gated)."""
    return row.tolerance if isinstance(row, GatedRow) else None


#: The catalog's InfiniBand profile per link rate (fabrics.yaml: switches and NICs with those ports).
INFINIBAND_BY_LINK_RATE = {100: "infiniband-edr", 200: "infiniband-hdr", 400: "infiniband-ndr", 800: "infiniband-xdr"}


def rdma_fabric(link_rate_gbps: int, fabric_id: str | None = None, catalog=None):
    """The catalog's InfiniBand profile at ``link_rate_gbps`` (EDR, HDR, NDR, XDR: its own switch, NIC
    and per-NIC bandwidth = line rate x the NDR NIC efficiency), without in-network reduction: the
    published runs it is compared with used no SHARP plugin. A rate without a profile: ``fabric_id``
    (default NDR) at that rate, per-NIC bandwidth = line rate x ``rdma_nic_bandwidth_efficiency``."""
    catalog = catalog or default_catalog()
    known = INFINIBAND_BY_LINK_RATE.get(link_rate_gbps)
    if known is not None and fabric_id is None:
        return catalog.fabric(known).model_copy(update={"in_network_reduction": False})
    base = catalog.fabric(fabric_id or "infiniband-ndr")
    effective = link_rate_gbps / 8.0 * perf_parameter("rdma_nic_bandwidth_efficiency", catalog)
    return base.model_copy(update={"id": f"infiniband-{link_rate_gbps}g", "link_rate_gbps": link_rate_gbps,
                                   "effective_bandwidth_gbytes_per_s": effective, "in_network_reduction": False})


def _azure_gate(table: dict, quantity: str, size: int) -> tuple[float | None, str]:
    """(tolerance, reason) of one Azure row: the first ``tolerances`` entry for its quantity and size."""
    for gate in table["tolerances"]:
        if gate["quantity"] == quantity and gate["min_size_bytes"] <= size <= gate["max_size_bytes"]:
            return float(gate["tolerance"]), _reason(gate)
    return None, "shown, not gated: no tolerance of the table covers this quantity at this size"


def azure_allreduce_rows(catalog=None) -> list[GatedRow]:
    """Every row of the Azure NDm A100 v4 2-node table: time (oop) and busbw, model vs published, each
    with the tolerance of its quantity and size (``azure_ndv4_allreduce.tolerances``)."""
    catalog = catalog or default_catalog()
    table = published_data()["azure_ndv4_allreduce"]
    fabric = rdma_fabric(table["nic_link_rate_gbps"], catalog=catalog)
    gpu = catalog.gpu(table["gpu"])
    n = table["gpus"]
    rows = []
    for size, oop_us, _inplace_us in table["rows"]:
        result = collective_time("all_reduce", int(size), n, table["gpus_per_node"], fabric, gpu,
                                 nics_per_node=table["nics_per_node"], nccl_version=table["nccl_version"],
                                 cpu_vendor=table["cpu_vendor"], catalog=catalog)
        busbw = size / (oop_us * 1000.0) * 2 * (n - 1) / n
        detail = f"{result.algorithm}/{result.protocol}"
        for quantity, published, model in (("time_us", float(oop_us), result.time_us),
                                           ("busbw", busbw, result.busbw_gbytes_per_s)):
            tolerance, reason = _azure_gate(table, quantity, int(size))
            rows.append(GatedRow("azure_ndv4", f"{quantity}@{size}", published, model, detail,
                                 tolerance=tolerance, reason=reason))
    return rows


def nic_ceiling_rows(catalog=None) -> list[GatedRow]:
    """Per-NIC busbw at 8 GiB, 2 nodes x 8 GPUs x 8 NICs, Ring forced (as in nccl-tests#290)."""
    catalog = catalog or default_catalog()
    gpu = catalog.gpu("h100-sxm")
    rows = []
    for entry in published_data()["per_nic_ceilings"]:
        fabric = rdma_fabric(entry["link_rate_gbps"], catalog=catalog)  # its own EDR/HDR/NDR switch
        network = bare_network(catalog, fabric, gpu, gpus=16, gpus_per_node=8, nics_per_node=8)
        result = collective_time("all_reduce", 8 * 2**30, 16, 8, algorithm="ring", catalog=catalog, network=network)
        published = (entry["low_gbytes_per_s"] + entry["high_gbytes_per_s"]) / 2
        rows.append(GatedRow("nic_ceiling", f"{entry['generation']} GB/s per NIC", published,
                             result.busbw_gbytes_per_s / 8, entry["source"], tolerance=float(entry["tolerance"]),
                             reason=_reason(entry)))
    return rows


def gpt3_rows(catalog=None, scatter_gather: bool | None = None) -> list[GatedRow]:
    """GPT-3 175B on 1,024 A100 (Selene, HDR): step time and TFLOP/s per GPU (HFU-style), both gated
    at the entry's tolerance; the pipeline sends as the entry's ``layout`` gives the 2021 code's
    (``scatter_gather``: instead, for the sensitivity in docs/validation.md)."""
    from fabricplan.spec import JobSpec

    catalog = catalog or default_catalog()
    published = published_data()["gpt3_175b_selene"]
    gpu = catalog.gpu("a100-sxm-80gb")
    job = JobSpec(name="gpt3-175b-selene", model="gpt3-175b", tp=8, pp=16, global_batch_sequences=1536,
                  micro_batch_sequences=1, seq_len_tokens=2048, precision="fp16", recompute="full",
                  sequence_parallel=False, zero_stage=0, dp_overlap=False, attention_kernel="unfused",
                  pipeline_scatter_gather=bool(published.get("layout", {}).get("pipeline_scatter_gather", True)
                                               if scatter_gather is None else scatter_gather))
    cluster = ClusterShape(gpu=gpu, gpus=1024, gpus_per_node=8, scale_up_domain=8, nics_per_node=8)
    result = step_time(job, cluster, rdma_fabric(200, catalog=catalog), catalog=catalog)
    tflops = result.hardware_flops_per_step / result.step_time_s / 1024 / 1e12
    detail = f"MFU {result.mfu:.1%}, HFU {result.hfu:.1%}"
    gate = {"tolerance": float(published["tolerance"]), "reason": _reason(published)}
    return [GatedRow("gpt3_175b", "step_time_s", published["step_time_s"], result.step_time_s, detail, **gate),
            GatedRow("gpt3_175b", "tflops_per_gpu", published["tflops_per_gpu"], tflops, detail, **gate)]


def nvls_single_node_rows(catalog=None) -> list[GatedRow]:
    """8 x H100 in one node, NVLS all-reduce busbw at >= 1 GiB vs the published ~480 GB/s; the model's
    algbw is NCCL's NVLink bandwidth x NVLS efficiency x n/(n+1) (NVLS traffic (n+1)/n)."""
    catalog = catalog or default_catalog()
    entry = published_data()["h100_nvls_single_node_allreduce"]
    gpu = catalog.gpu(entry["gpu"])
    rows = []
    smallest = entry["min_size_bytes"]
    for size in (smallest, 4 * smallest, 8 * smallest):
        result = collective_time("all_reduce", size, entry["gpus"], entry["gpus"], "infiniband-ndr", gpu,
                                 catalog=catalog)
        rows.append(GatedRow("nvls_1node", f"busbw@{size}", entry["busbw_gbytes_per_s"],
                             result.busbw_gbytes_per_s,
                             f"{result.algorithm}/{result.protocol}, algbw {result.algbw_gbytes_per_s:.0f}",
                             tolerance=float(entry["tolerance"]), reason=_reason(entry)))
    return rows


def sharp_collnet_chain_rows(catalog=None) -> list[GatedRow]:
    """64 x H100 (8 nodes, 8 NDR NICs each) with IB SHARP, CollNetChain forced: the model's busbw against the
    mean of the published out-of-place and in-place columns (``published_perf.yaml``
    ``h100_sharp_collnet_chain_allreduce``, CoreWeave)."""
    catalog = catalog or default_catalog()
    entry = published_data()["h100_sharp_collnet_chain_allreduce"]
    gpu, fabric = catalog.gpu(entry["gpu"]), catalog.fabric(entry["fabric"])
    rows = []
    for size, *columns in entry["rows"]:
        result = collective_time("all_reduce", int(size), entry["gpus"], entry["gpus_per_node"], fabric, gpu,
                                 nics_per_node=entry["nics_per_node"], algorithm=entry["algorithm"],
                                 catalog=catalog, nccl_version=entry["nccl_version"])
        measured = sum(columns) / len(columns)
        rows.append(GatedRow("h100_64_sharp", f"busbw@{int(size)}", measured, result.busbw_gbytes_per_s,
                             f"{result.algorithm}/{result.protocol}, {result.channels} ch, algbw "
                             f"{result.algbw_gbytes_per_s:.0f}; published {columns[0]:.1f} / {columns[1]:.1f}",
                             tolerance=float(entry["tolerance"]), reason=_reason(entry)))
    return rows


def llama3_405b_results(catalog=None, fabric: str = "roce-v2", **overrides) -> list[tuple[dict, object]]:
    """(configuration, StepResult) of each of Meta's Table 4 configurations of Llama 3 405B (H100).

    The pipeline layout is the one section 3.3.2 describes (``published_perf.yaml``
    ``llama3_405b_meta.layout``: one-layer chunks, v = 8, the embedding and the loss in chunks of
    their own), the recomputation per configuration as published or assumed there. ``overrides``
    replace job fields on every configuration (sensitivity: ``virtual_pipeline_stages=4``,
    ``recompute="none"``).
    """
    from fabricplan.spec import JobSpec

    catalog = catalog or default_catalog()
    published = published_data()["llama3_405b_meta"]
    out = []
    for config in published["configurations"]:
        fields = dict(published["layout"], recompute=config["recompute"])
        fields.update(overrides)
        job = JobSpec(name="llama3-405b-meta", model="llama3-405b", tp=config["tp"], cp=config["cp"], pp=config["pp"],
                      dp=config["dp"], global_batch_sequences=config["global_batch_sequences"],
                      micro_batch_sequences=1, seq_len_tokens=config["seq_len_tokens"], precision="bf16",
                      **fields)
        cluster = ClusterShape(gpu=catalog.gpu("h100-sxm"), gpus=config["gpus"], gpus_per_node=8,
                               scale_up_domain=8, nics_per_node=8)
        out.append((config, step_time(job, cluster, fabric, catalog=catalog)))
    return out


def llama3_405b_rows(catalog=None, fabric: str = "roce-v2", **overrides) -> list[GatedRow]:
    """Llama 3 405B on 8,192 and 16,384 H100 (Meta's Table 4, its three configurations): model MFU
    against each configuration's published BF16 MFU (``llama3_405b_results``), each with the tolerance
    and reason ``published_perf.yaml`` gives it.

    Checked only: the H100's compute data are kernel microbenchmarks (gpus.yaml ``compute``), nothing
    was fitted to these runs.
    """
    rows = []
    for config, result in llama3_405b_results(catalog, fabric, **overrides):
        detail = (f"v={result.virtual_pipeline_stages}, recompute {overrides.get('recompute', config['recompute'])}, "
                  f"{fabric}, t{config['tp']} c{config['cp']} p{config['pp']} d{config['dp']}, m "
                  f"{result.micro_batches}; step {result.step_time_s:.2f} s, compute {result.compute_s:.2f} s, "
                  f"bubble {result.bubble_s:.2f} s, exposed comm {sum(result.exposed_comm_s.values()):.2f} s; "
                  f"published {config['tflops_per_gpu']} TFLOP/s")
        rows.append(GatedRow("llama3_405b", f"mfu@{config['gpus']:,} GPUs, {config['seq_len_tokens']:,} tokens",
                             config["mfu"], result.mfu, detail, tolerance=config["tolerance"],
                             reason=config["tolerance_reason"]))
    return rows


# --- NCCL socket transport (kernel TCP): docs/reference/socket_transport.md §7 ---------------------

@dataclass(frozen=True)
class SocketValidationRow(GatedRow):
    """A socket-transport (or EFA) row: a :class:`GatedRow` with its group (calibrated / checked)."""

    group: str = "checked"


def socket_row_setup(entry: dict, catalog=None):
    """(profile, gpu, catalog) of one published socket-transport row: ``ethernet-tcp`` with the row's
    link rate, NIC vendor, threads x sockets, MTU, per-flow cap and PCIe layout; the row's GPU."""
    from fabricplan.catalog.models import Gpu

    catalog = catalog or default_catalog()
    block = published_data()["socket_transport"]
    spec = block["gpus"][entry["gpu"]]
    gpu = Gpu(id=entry["gpu"], architecture=spec["architecture"], peak_dense_tflops={"fp16": 125.0},
              hbm_gbytes=16.0, hbm_bandwidth_tbytes_per_s=spec["hbm_bandwidth_tbytes_per_s"],
              nvlink_bandwidth_gbytes_per_s=spec["nvlink_bandwidth_gbytes_per_s"], power_w=300.0,
              compute_capability=spec["compute_capability"], nvlink_links=spec["nvlink_links"],
              source=spec["source"], date=str(spec["date"]))
    base = catalog.fabric("ethernet-tcp")
    socket = base.socket.model_copy(update={
        "nic_vendor": entry["nic_vendor"], "nthreads": entry.get("nthreads"),
        "nsocks_per_thread": entry.get("nsocks_per_thread"), "per_flow_cap_gbps": entry.get("per_flow_cap_gbps"),
        "mtu_bytes": entry["mtu_bytes"],
        "gpu_nic_share_pcie_uplink": entry.get("gpu_nic_share_pcie_uplink", True)})
    profile = base.model_copy(update={"id": f"ethernet-tcp-{entry['link_rate_gbps']}g",
                                      "link_rate_gbps": entry["link_rate_gbps"], "socket": socket})
    if "channels_per_nic" in entry:
        catalog = catalog.with_values({"perf_defaults.parameters.nccl_channels_per_nic.value":
                                       entry["channels_per_nic"]})
    return profile, gpu, catalog


def socket_transport_rows(catalog=None) -> list[SocketValidationRow]:
    """Every public socket-transport figure of ``published_perf.yaml`` ``socket_transport`` vs the model.

    One NIC per node, the row's NCCL tuner release, algorithm/protocol if the run forced them.
    """
    rows = []
    for entry in published_data()["socket_transport"]["rows"]:
        profile, gpu, row_catalog = socket_row_setup(entry, catalog)
        n = entry["nodes"] * entry["gpus_per_node"]
        # A few nodes on one switch: the catalog's Ethernet switch has no 25-100G ports, so it stands in
        # at its largest port count (as for the EDR/HDR ceilings).
        switch = row_catalog.switch(profile.hardware.switch)
        network = bare_network(row_catalog, profile, gpu, gpus=n, gpus_per_node=entry["gpus_per_node"],
                               nics_per_node=1, radix=max(switch.ports_by_speed_gbps.values()))
        result = collective_time(entry["op"], int(entry["size_bytes"]), n, entry["gpus_per_node"],
                                 algorithm=entry.get("algorithm"), protocol=entry.get("protocol"),
                                 nccl_version=entry["nccl_version"], catalog=row_catalog, network=network)
        model = result.time_us if entry["quantity"] == "time_us" else result.busbw_gbytes_per_s
        detail = (f"{entry['nodes']}×{entry['gpus_per_node']} {entry['link_rate_gbps']}G, "
                  f"{result.algorithm}/{result.protocol}, per-NIC {result.per_nic_bandwidth_gbytes_per_s:.2f} GB/s")
        rows.append(SocketValidationRow("socket", f"{entry['id']}: {entry['quantity']}", float(entry["published"]),
                                        float(model), detail, group=entry["group"],
                                        tolerance=entry.get("tolerance"), reason=entry["tolerance_reason"]))
    return rows


def calibrated_tcp_host_stack_us(catalog=None) -> float:
    """The kernel-TCP host-stack latency that makes the calibration row (nccl-tests#82) exact [us].

    The model's 8-byte time is linear in the host stack (one network hop), so the value is the
    catalog's plus the row's published - model gap. ``fabrics.yaml`` ``ethernet-tcp`` holds it.
    """
    catalog = catalog or default_catalog()
    row = next(r for r in socket_transport_rows(catalog) if r.group == "calibrated")
    return catalog.fabric("ethernet-tcp").host_stack_latency_us + row.published - row.model


def socket_transport_failures(rows: list[SocketValidationRow]) -> list[SocketValidationRow]:
    """The gated socket rows outside their tolerance (empty = the model holds)."""
    return [row for row in rows if row.tolerance is not None and abs(row.error) > row.tolerance]


# --- Per-operation compute: microbenchmarks (calibrated on) -------------------------------------

def compute_microbench_rows(catalog=None) -> list[GatedRow]:
    """Every GEMM-curve and attention point of the GPUs of ``compute_microbench_points`` vs the model
    at that point, gated at that block's tolerance.

    These are the numbers the compute model is calibrated on (docs/reference/compute_microbench.md);
    the rows show the curves pass through them (case ``compute_point``). Detail = source block.
    """
    from fabricplan.perf.compute import gemm_efficiency, interpolate_log

    catalog = catalog or default_catalog()
    block = published_data()["compute_microbench_points"]
    gate = {"tolerance": float(block["tolerance"]), "reason": _reason(block)}
    rows = []
    for gpu_id in block["gpus"]:
        compute = catalog.gpu(gpu_id).compute
        for dtype, curve in compute.gemm_efficiency.items():
            for flops, fraction in curve.points:
                rows.append(GatedRow("compute_point", f"{gpu_id} {dtype} GEMM eff @{flops:.3g} FLOP",
                                     fraction, gemm_efficiency(curve.points, flops), "gpus.yaml compute", **gate))
        for kernel, curve in compute.attention.items():
            for seq, tflops in curve.points:
                rows.append(GatedRow("compute_point", f"{gpu_id} {kernel} attention TFLOP/s @s={seq:g}",
                                     tflops, interpolate_log(curve.points, seq), "gpus.yaml compute", **gate))
    return rows


def gemm_off_curve_rows(catalog=None) -> list[ValidationRow]:
    """Measured GEMM efficiencies of shapes that are not curve points vs the curve (reported only;
    the shapes, measured fractions of dense peak and sources are in ``published_perf.yaml``
    ``gemm_off_curve``: shape effects beyond FLOPs, short K and skinny N, are outside the curve)."""
    from fabricplan.perf.compute import gemm_efficiency, gemm_flops

    catalog = catalog or default_catalog()
    rows = []
    for m, n, k, gpu_id, dtype, measured, source in published_data()["gemm_off_curve"]["rows"]:
        points = catalog.gpu(gpu_id).compute.gemm_efficiency[dtype].points
        rows.append(ValidationRow("gemm_off_curve", f"{gpu_id} {dtype} {m}x{n}x{k}", measured,
                                  gemm_efficiency(points, gemm_flops(m, n, k)), source))
    return rows


def training_rows(catalog=None) -> list[GatedRow]:
    """End-to-end training runs, checked only: the GPT-3 README run, Llama 3 405B and every
    ``training_runs`` row of ``published_perf.yaml``."""
    return [*gpt3_rows(catalog), *llama3_405b_rows(catalog), *training_run_rows(catalog)]


def step_time_error(row: ValidationRow) -> float | None:
    """Model step time / the published one - 1 (negative: the model is fast), or None for rows that
    are not step-time-like (the GPT-3 row's TFLOP/s duplicates its step time). MFU and rates are
    inverse to step time."""
    if isinstance(row, TrainingRunRow):
        return row.step_error
    if row.quantity == "step_time_s":
        return row.error
    if row.quantity.startswith("mfu"):
        return row.published / row.model - 1.0
    return None


def training_error_summary(rows: list[ValidationRow], gated_only: bool = False) -> tuple[float, float]:
    """(mean, worst) absolute step-time error of the step-time-like rows (``step_time_error``);
    ``gated_only``: of the rows with a tolerance only (``row_tolerance``)."""
    errors = [abs(e) for row in rows if (e := step_time_error(row)) is not None
              and not (gated_only and row_tolerance(row) is None)]
    return sum(errors) / len(errors), max(errors)


def training_summary_bounds() -> dict[str, tuple[float, str]]:
    """``{"mean": (bound, reason), "worst": (bound, reason)}`` on the gated training rows' absolute
    step-time errors (``published_perf.yaml`` ``training_runs.summary``)."""
    summary = published_data()["training_runs"]["summary"]
    return {key: (float(summary[key]["tolerance"]), _reason(summary[key])) for key in ("mean", "worst")}


def training_failures(rows: list[ValidationRow]) -> list[str]:
    """Gated rows outside their step-time tolerance and the gated rows' summary past its bounds
    (empty = the model holds)."""
    out = []
    for row in rows:
        error, tolerance = step_time_error(row), row_tolerance(row)
        if error is not None and tolerance is not None and abs(error) > tolerance:
            out.append(f"{row.quantity}: step-time error {error:+.1%}")
    mean, worst = training_error_summary(rows, gated_only=True)
    bounds = training_summary_bounds()
    if mean > bounds["mean"][0]:
        out.append(f"mean step-time error {mean:.1%} > {bounds['mean'][0]:.0%}")
    if worst > bounds["worst"][0]:
        out.append(f"worst step-time error {worst:.1%} > {bounds['worst'][0]:.0%}")
    return out

# --- AWS EFA (SRD): several NICs per GPU (p5) and fewer NICs than GPUs (p4de) ----------------------

def efa_rows(catalog=None, host_stack_latency_us: float | None = None) -> list[SocketValidationRow]:
    """The 2-node EFA all-reduce rows of ``published_perf.yaml`` ``aws_efa_allreduce``: time, model vs
    published, with group (calibrated / checked), tolerance and reason (``SocketValidationRow``)."""
    catalog = catalog or default_catalog()
    table = published_data()["aws_efa_allreduce"]
    profile = catalog.fabric(table["fabric"])
    if host_stack_latency_us is not None:
        profile = profile.model_copy(update={"host_stack_latency_us": host_stack_latency_us})
    rows = []
    for system, size, published, group, tolerance, reason in table["rows"]:
        shape = table["systems"][system]
        gpu = catalog.gpu(shape["gpu"])
        network = bare_network(catalog, profile, gpu, gpus=table["gpus"], gpus_per_node=table["gpus_per_node"],
                               nics_per_node=shape["nics_per_node"])
        result = collective_time("all_reduce", int(size), table["gpus"], table["gpus_per_node"], catalog=catalog,
                                 network=network, nccl_version=table["nccl_version"])
        detail = (f"{system}, {shape['nics_per_node']} × 100G EFA, {result.algorithm}/{result.protocol}, "
                  f"{result.channels} ch, busbw {result.busbw_gbytes_per_s:.1f} GB/s")
        rows.append(SocketValidationRow("efa", f"{system}: time_us@{size}", float(published), float(result.time_us),
                                        detail, group=group, tolerance=tolerance, reason=reason))
    return rows


def calibrated_efa_host_stack_us(catalog=None) -> float:
    """The EFA host-stack latency that makes the calibration row (2 x p5, 8 B) exact [us]: the 8-byte
    Tree/LL time is linear in it (two network hops), so two evaluations give the line."""
    catalog = catalog or default_catalog()
    base = catalog.fabric("aws-efa").host_stack_latency_us

    def calibration_row(value):
        return next(r for r in efa_rows(catalog, value) if r.group == "calibrated")

    low, high = calibration_row(base), calibration_row(base + 1.0)
    slope = high.model - low.model
    return base + (low.published - low.model) / slope


# --- End-to-end training runs (checked only): published_perf.yaml training_runs -------------------

#: The JobSpec fields a training_runs row may set (the rest are the row's hardware and bookkeeping).
_JOB_FIELDS = ("model", "tp", "pp", "cp", "virtual_pipeline_stages", "global_batch_sequences",
               "micro_batch_sequences", "seq_len_tokens", "precision", "recompute", "sequence_parallel",
               "zero_stage", "dp_overlap", "tp_overlap", "attention_kernel", "gradient_dtype",
               "account_for_embedding_in_pipeline_split", "account_for_loss_in_pipeline_split",
               "activation_offload_layers", "pipeline_scatter_gather", "tp_overlap_config",
               "tp_overlap_sms")


@dataclass(frozen=True)
class TrainingRunRow(GatedRow):
    """A training-run row: ``quantity`` compared as published, and ``step_error`` = model step time /
    the step time the published figure implies - 1 (for rates: published rate / model rate - 1),
    gated at its source's step-time tolerance (``training_runs.tolerances``)."""

    step_error: float = 0.0
    group: str = "checked"
    assumed: str = ""
    source: str = ""


def training_run_job(entry: dict, catalog=None):
    """(JobSpec, ClusterShape, fabric) of one ``training_runs`` row; the GPU and fabric from ``catalog``
    (default: the bundled one), so a varied catalog reaches the row's hardware too."""
    from fabricplan.spec import JobSpec

    catalog = catalog or default_catalog()
    fields = {key: entry[key] for key in _JOB_FIELDS if key in entry}
    job = JobSpec(name=entry["id"], gpus=entry["gpus"], **fields)
    cluster = ClusterShape(gpu=catalog.gpu(entry["gpu"]), gpus=entry["gpus"], gpus_per_node=entry["gpus_per_node"],
                           scale_up_domain=entry["gpus_per_node"], nics_per_node=entry["nics_per_node"])
    return job, cluster, rdma_fabric(entry["link_rate_gbps"], catalog=catalog)


def training_run_rows(catalog=None, ids: tuple[str, ...] | None = None) -> list[TrainingRunRow]:
    """Every ``training_runs`` row of ``published_perf.yaml`` (or those in ``ids``) vs the step model."""
    catalog = catalog or default_catalog()
    block = published_data()["training_runs"]
    rows = []
    for entry in block["rows"]:
        if ids is not None and entry["id"] not in ids:
            continue
        prefix = entry["id"].split("_")[0]
        gate = block["tolerances"][prefix]  # every source's rows carry a step-time tolerance
        if "tolerance" in entry:  # a row's own gate (null: shown, not gated), with its reason
            gate = {"tolerance": entry["tolerance"], "tolerance_reason": entry["tolerance_reason"]}
        job, cluster, fabric = training_run_job(entry, catalog)
        result = step_time(job, cluster, fabric, catalog=catalog)
        gpus = entry["gpus"]
        quantity, published = entry["quantity"], float(entry["published"])
        if quantity == "step_time_s":
            model = result.step_time_s
            step_error = model / published - 1.0
        elif quantity == "tflops_per_gpu":
            model = result.hardware_flops_per_step / result.step_time_s / gpus / 1e12
            step_error = published / model - 1.0
        elif quantity == "tokens_per_s_per_gpu":
            model = result.tokens_per_s / gpus
            step_error = published / model - 1.0
        elif quantity == "mfu":  # the source's FLOP count is the model's (Megatron's, Narayanan's Appendix)
            model = result.mfu
            step_error = published / model - 1.0
        else:  # pragma: no cover - the data file's own vocabulary
            raise ValueError(f"unknown training-run quantity {quantity!r}")
        detail = (f"{gpus} GPUs, t{result.tp} p{result.pp} d{result.dp} c{result.cp} v{result.virtual_pipeline_stages}, "
                  f"m {result.micro_batches}; step {result.step_time_s:.3g} s, bubble {result.bubble_s:.3g} s, "
                  f"exposed comm {sum(result.exposed_comm_s.values()):.3g} s, MFU {result.mfu:.1%}")
        rows.append(TrainingRunRow(prefix, f"{entry['id']}: {quantity}", published, float(model),
                                   detail, tolerance=None if gate["tolerance"] is None else float(gate["tolerance"]),
                                   reason=_reason(gate),
                                   step_error=step_error, assumed=entry.get("assumed", ""),
                                   source=" ".join(str(entry["source"]).split())))
    return rows


def training_run_sensitivity(prefix: str, catalog=None, **overrides) -> dict[str, float]:
    """Step-time error of the ``training_runs`` rows whose id starts with ``prefix`` when their assumed
    layout fields take ``overrides`` (e.g. ``micro_batch_sequences=2``), on ``catalog`` (default: the
    bundled one; pass ``with_values`` of it to vary a model number); rows where the override is
    not a valid layout (batch not divisible, interleaving without pipeline, memory) are left out."""
    from fabricplan.errors import InputError

    catalog = catalog or default_catalog()
    out = {}
    for entry in published_data()["training_runs"]["rows"]:
        if not entry["id"].startswith(prefix):
            continue
        changed = dict(entry, **overrides)
        if changed.get("virtual_pipeline_stages", 1) > 1 and changed.get("pp", 1) == 1:
            continue
        try:
            job, cluster, fabric = training_run_job(changed, catalog)
            result = step_time(job, cluster, fabric, catalog=catalog)
        except (InputError, ValueError):
            continue
        published = float(entry["published"])
        if entry["quantity"] == "step_time_s":
            out[entry["id"]] = result.step_time_s / published - 1.0
        elif entry["quantity"] == "tflops_per_gpu":
            out[entry["id"]] = published / (result.hardware_flops_per_step / result.step_time_s / entry["gpus"] / 1e12) - 1.0
        elif entry["quantity"] == "mfu":
            out[entry["id"]] = published / result.mfu - 1.0
        else:
            out[entry["id"]] = published / (result.tokens_per_s / entry["gpus"]) - 1.0
    return out


# --- Memory per GPU (checked only): published_perf.yaml memory_per_gpu ----------------------------

#: The JobSpec fields a memory_per_gpu row may set.
_MEMORY_JOB_FIELDS = ("model", "tp", "pp", "cp", "dp", "virtual_pipeline_stages", "global_batch_sequences",
                      "micro_batch_sequences", "seq_len_tokens", "recompute", "sequence_parallel", "zero_stage",
                      "attention_kernel", "precision", "gradient_dtype", "activation_offload_layers",
                      "account_for_embedding_in_pipeline_split", "account_for_loss_in_pipeline_split")


@dataclass(frozen=True)
class MemoryValidationRow(SocketValidationRow):
    """A memory row (GiB per GPU): group, tolerance and its reason as the socket rows, plus what the
    row assumed and the model's parts."""

    assumed: str = ""
    source: str = ""


def memory_row_estimate(entry: dict, catalog=None):
    """(MemoryEstimate, model GiB comparable with the published quantity) of one ``memory_per_gpu`` row.

    The published quantities are PyTorch allocator figures (``max_allocated``: tensors; ``max_reserved``:
    the allocator's segments), which hold neither the CUDA context nor NCCL's buffers: the model side
    is its model states + activations + output layer, without the ``reserved`` allowance (context,
    NCCL, workspace and fragmentation). The row's ``gradient_dtype`` is its framework's gradient dtype."""
    from fabricplan.perf.flops import model_dims
    from fabricplan.perf.memory import GIB, memory_per_gpu
    from fabricplan.spec import JobSpec

    catalog = catalog or default_catalog()
    fields = {key: entry[key] for key in _MEMORY_JOB_FIELDS if key in entry}
    job = JobSpec(name=entry["id"], **fields)
    dims = model_dims(entry["model"], catalog)
    gpu = catalog.gpu(entry["gpu"]).model_copy(update={"hbm_gbytes": float(entry["hbm_gbytes"])})
    micro_batches = entry["global_batch_sequences"] // (entry["dp"] * entry["micro_batch_sequences"])
    estimate = memory_per_gpu(job, dims, gpu, tp=entry["tp"], pp=entry["pp"], dp=entry["dp"], cp=entry.get("cp", 1),
                              ep=1, micro_batches=micro_batches,
                              virtual_stages=entry.get("virtual_pipeline_stages", 1), catalog=catalog)
    tensors = sum(value for name, value in estimate.breakdown_bytes.items() if name != "reserved")
    return estimate, tensors / GIB


def memory_rows(catalog=None) -> list[MemoryValidationRow]:
    """Every ``memory_per_gpu`` row of ``published_perf.yaml``: published GiB per GPU vs the model's
    (``memory_row_estimate``), with tolerance (None: reported, not gated) and its reason."""
    from fabricplan.perf.memory import GIB

    rows = []
    for entry in published_data()["memory_per_gpu"]["rows"]:
        estimate, model_gib = memory_row_estimate(entry, catalog)
        parts = estimate.breakdown_bytes
        detail = (f"t{entry['tp']} p{entry['pp']} d{entry['dp']} c{entry.get('cp', 1)}, b {entry['micro_batch_sequences']}"
                  f" × {entry['seq_len_tokens']}, {entry['recompute']}, ZeRO {entry['zero_stage']}; states "
                  f"{(parts['weights'] + parts['gradients'] + parts['optimizer_states']) / GIB:.1f}, activations "
                  f"{parts['activations'] / GIB:.1f}, output {parts['output_layer'] / GIB:.1f} GiB")
        rows.append(MemoryValidationRow("memory", f"{entry['id']}: {entry['quantity']} GiB", float(entry["published_gib"]),
                                        float(model_gib), detail, group="checked", tolerance=entry.get("tolerance"),
                                        reason=" ".join(str(entry["tolerance_reason"]).split()),
                                        assumed=" ".join(str(entry.get("assumed", "")).split()),
                                        source=" ".join(str(entry["source"]).split())))
    return rows


def memory_failures(rows: list[MemoryValidationRow]) -> list[MemoryValidationRow]:
    """The gated memory rows outside their tolerance (empty = the model holds)."""
    return [row for row in rows if row.tolerance is not None and abs(row.error) > row.tolerance]


# --- Collectives by size decade (calibrated / checked): published_perf.yaml collective_sweeps ------

@dataclass(frozen=True)
class SweepPoint:
    """One size of a published sweep: published and model time [us], the model's choice, whether the
    size calibrated a constant (then named in ``calibrates``)."""

    system: str
    size_bytes: int
    published_us: float
    model_us: float
    detail: str
    calibrates: str = ""

    @property
    def busbw_error(self) -> float:
        """Model busbw / published busbw - 1 (= published time / model time - 1)."""
        return self.published_us / self.model_us - 1.0


def sweep_system(system: str, catalog=None):
    """``(entry, network, rows, nccl_version, cpu_vendor)`` of one ``collective_sweeps`` system."""
    catalog = catalog or default_catalog()
    data = published_data()
    entry = data["collective_sweeps"]["systems"][system]
    if "rows_from" in entry:  # the Azure table: its own block holds the rows and the setup
        table = data[entry["rows_from"]]
        fabric = rdma_fabric(table["nic_link_rate_gbps"], catalog=catalog)
        gpu, nics, version, vendor = catalog.gpu(table["gpu"]), table["nics_per_node"], table["nccl_version"], \
            table["cpu_vendor"]
        rows = [(int(r[0]), float(r[1])) for r in table["rows"]]
    else:
        fabric = catalog.fabric(entry["fabric"])
        if "link_rate_gbps" in entry:
            fabric = fabric.model_copy(update={"id": f"{fabric.id}-{entry['link_rate_gbps']}g",
                                               "link_rate_gbps": entry["link_rate_gbps"]})
        gpu, nics, version, vendor = catalog.gpu(entry["gpu"]), entry["nics_per_node"], entry["nccl_version"], \
            entry["cpu_vendor"]
        rows = [(int(r[0]), float(r[1])) for r in entry["rows"]]
    network = bare_network(catalog, fabric, gpu, gpus=16, gpus_per_node=8, nics_per_node=nics, radix=64)
    return entry, network, rows, version, vendor


def sweep_points(system: str, catalog=None) -> list[SweepPoint]:
    """Every size of one published 2 x 8 all_reduce sweep vs ``collective_time`` (the system's NCCL
    release, CPU vendor, NICs per node; NCCL's own choice)."""
    catalog = catalog or default_catalog()
    entry, network, rows, version, vendor = sweep_system(system, catalog)
    calibrated = {int(k): str(v) for k, v in (entry.get("calibrated") or {}).items()}
    points = []
    for size, published in rows:
        result = collective_time("all_reduce", size, 16, 8, catalog=catalog, network=network, nccl_version=version,
                                 cpu_vendor=vendor)
        detail = (f"{result.algorithm}/{result.protocol}, {result.channels} ch, NCCL estimate "
                  f"{result.nccl_estimate_us:.4g} us")
        points.append(SweepPoint(system, size, published, float(result.time_us), detail, calibrated.get(size, "")))
    return points


def size_decade(size_bytes: int) -> int:
    """The decade of a size: 0 for 1-9 B, 1 for 10-99 B, ... (exact on powers of two)."""
    return len(str(int(size_bytes))) - 1


def collective_decade_rows(catalog=None) -> list[GatedRow]:
    """Per system and size decade, the median busbw error of the checked sizes (calibrated sizes left
    out) as a :class:`GatedRow` (published 1, model 1 + median, so ``error`` is the median); gated at
    ``collective_sweeps.decade_tolerance`` on systems marked ``gated``, shown otherwise."""
    import statistics

    block = published_data()["collective_sweeps"]
    tolerance = float(block["decade_tolerance"])
    rows = []
    for system, entry in block["systems"].items():
        by_decade: dict[int, list[SweepPoint]] = {}
        for point in sweep_points(system, catalog):
            if not point.calibrates:
                by_decade.setdefault(size_decade(point.size_bytes), []).append(point)
        gated = bool(entry["gated"])
        reason = _reason(block) if gated else " ".join(str(entry["not_gated_reason"]).split())
        for decade, points in sorted(by_decade.items()):
            median = statistics.median(p.busbw_error for p in points)
            worst = max(points, key=lambda p: abs(p.busbw_error))
            detail = (f"{len(points)} sizes; worst {worst.size_bytes:,} B {worst.busbw_error:+.0%} "
                      f"({worst.detail.split(',')[0]})")
            rows.append(GatedRow(system, f"median busbw error, 1e{decade} B", 1.0, 1.0 + median, detail,
                                 tolerance=tolerance if gated else None, reason=reason))
    return rows


def collective_decade_failures(rows: list[GatedRow]) -> list[GatedRow]:
    """The gated decade rows outside their tolerance (empty = the model holds)."""
    return [row for row in rows if row.tolerance is not None and abs(row.error) > row.tolerance]


def _solve_linear(evaluate, low: float, high: float) -> float:
    """The value where ``evaluate`` (model - published, increasing in it) crosses 0, by bisection."""
    for _ in range(50):
        mid = (low + high) / 2.0
        if evaluate(mid) > 0:
            high = mid
        else:
            low = mid
    return (low + high) / 2.0


def _point_gap(system: str, size: int, path: str, value: float, catalog) -> float:
    changed = catalog.with_values({path: value})
    point = next(p for p in sweep_points(system, changed) if p.size_bytes == size)
    return point.model_us - point.published_us


def calibrated_proxy_op_us(catalog=None) -> float:
    """``nccl_proxy_op_us`` that makes the Azure 8 B row exact (a calibrated row of the sweep)."""
    catalog = catalog or default_catalog()
    return _solve_linear(lambda v: _point_gap("azure_ndv4", 8, "perf_defaults.parameters.nccl_proxy_op_us.value",
                                              v, catalog), 0.0, 30.0)


def calibrated_proxy_step_us(catalog=None) -> float:
    """``nccl_proxy_step_us`` that makes the Azure 4 MiB row exact (a calibrated row of the sweep)."""
    catalog = catalog or default_catalog()
    return _solve_linear(lambda v: _point_gap("azure_ndv4", 4194304,
                                              "perf_defaults.parameters.nccl_proxy_step_us.value", v, catalog),
                         0.0, 30.0)


def calibrated_proxy_message_cpu_us(catalog=None) -> float:
    """``nccl_proxy_message_cpu_us_libfabric`` that makes the p5 128 MiB row exact (calibrated row)."""
    catalog = catalog or default_catalog()
    path = "perf_defaults.parameters.nccl_proxy_message_cpu_us_libfabric.value"
    return _solve_linear(lambda v: _point_gap("aws_p5", 134217728, path, v, catalog), 0.0, 10.0)


def small_message_rows(catalog=None) -> list[GatedRow]:
    """The ``small_message_scale`` rows: the published 8 B time (middle of its range) vs ``collective_time``
    on the row's InfiniBand generation without SHARP, NCCL's own choice; gated at the row's tolerance."""
    catalog = catalog or default_catalog()
    rows = []
    for entry in published_data()["small_message_scale"]["rows"]:
        n = entry["nodes"] * entry["gpus_per_node"]
        result = collective_time("all_reduce", int(entry["size_bytes"]), n, entry["gpus_per_node"],
                                 rdma_fabric(entry["link_rate_gbps"], catalog=catalog), catalog.gpu(entry["gpu"]),
                                 nccl_version=entry["nccl_version"], catalog=catalog)
        published = (float(entry["low_us"]) + float(entry["high_us"])) / 2
        detail = (f"{entry['nodes']} × {entry['gpus_per_node']}, {result.algorithm}/{result.protocol}, NCCL estimate "
                  f"{result.nccl_estimate_us:.1f} us + proxy {result.proxy_overhead_us:.1f} us; published "
                  f"{entry['low_us']:g}-{entry['high_us']:g} us")
        rows.append(GatedRow("small_message", f"{entry['id']}: time_us", published, float(result.time_us), detail,
                             tolerance=float(entry["tolerance"]), reason=_reason(entry)))
    return rows
# --- Recipes that ran (issue 27): the model's memory must fit the GPU ------------------------------

#: training_runs sources whose rows are framework recipes that ran as published (their memory must fit).
RECIPE_SOURCES = ("nemo2407", "nemo2409", "mb2511")


@dataclass(frozen=True)
class RecipeFitRow(GatedRow):
    """A recipe that ran: ``published`` = the GPU's memory [GiB], ``model`` = the model's tensors plus
    the CUDA context and NCCL (``memory_reserved_bytes_per_gpu``) [GiB]; gated one-sided (must fit)."""

    source: str = ""
    assumed: str = ""

    @property
    def fits(self) -> bool:
        """Within the GPU's memory, or over it by at most the block's one-sided tolerance."""
        return self.model <= self.published * (1.0 + (self.tolerance or 0.0))


def _recipe_entries() -> list[dict]:
    """Every recipe layout: the recipe rows of ``training_runs`` and ``recipe_memory.rows``."""
    data = published_data()
    out = []
    for entry in data["training_runs"]["rows"]:
        if entry["id"].split("_")[0] in RECIPE_SOURCES:
            dp = entry["gpus"] // (entry["tp"] * entry["pp"] * entry.get("cp", 1))
            out.append(dict(entry, dp=dp))
    out += [dict(entry) for entry in data["recipe_memory"]["rows"]]
    return out


def recipe_fit_rows(catalog=None) -> list[RecipeFitRow]:
    """Each recipe that ran: the model's memory per GPU (tensors + context and NCCL, without the
    fragmentation allowance ``step`` adds) against the GPU's memory."""
    from fabricplan.perf.memory import GIB

    catalog = catalog or default_catalog()
    block = published_data()["recipe_memory"]
    context = perf_parameter("memory_reserved_bytes_per_gpu", catalog) / GIB
    rows = []
    for entry in _recipe_entries():
        gpu = catalog.gpu(entry["gpu"])
        entry.setdefault("hbm_gbytes", gpu.hbm_gbytes)
        estimate, tensors_gib = memory_row_estimate(entry, catalog)
        parts = estimate.breakdown_bytes
        detail = (f"{entry['gpu']}, t{entry['tp']} p{entry['pp']} d{entry['dp']} c{entry.get('cp', 1)} "
                  f"v{entry.get('virtual_pipeline_stages', 1)}, b {entry['micro_batch_sequences']}, {entry['precision']}, "
                  f"recompute {entry['recompute']}, ZeRO {entry['zero_stage']}"
                  + (f", {entry['activation_offload_layers']} layers offloaded" if entry.get("activation_offload_layers")
                     else "")
                  + f"; states {(parts['weights'] + parts['gradients'] + parts['optimizer_states']) / GIB:.1f}, "
                  f"activations {parts['activations'] / GIB:.1f}, output {parts['output_layer'] / GIB:.1f} GiB")
        rows.append(RecipeFitRow("recipe_memory", entry["id"], float(entry["hbm_gbytes"]) * 1e9 / GIB,
                                 tensors_gib + context, detail, tolerance=float(block["tolerance"]),
                                 reason=_reason(block),
                                 source=" ".join(str(entry["source"]).split()),
                                 assumed=" ".join(str(entry.get("assumed", "")).split())))
    return rows


def recipe_fit_failures(rows: list[RecipeFitRow]) -> list[RecipeFitRow]:
    """The recipes whose modelled memory exceeds the GPU's (empty = every recipe fits)."""
    return [row for row in rows if not row.fits]
