"""Serving jobs against published measurements: KV-cache transfer of disaggregated prefill/decode,
and the expert-parallel decode's dispatch and combine all-to-alls.

Each row runs the serving model (:func:`fabricplan.perf.serving.serving_time`) on a design built
like the published system and compares its KV-transfer time, row by row. One row sets a number of
the model and says so (``calibrated``): the smallest prompt fixes the connector's per-request
handshake (``serving_kv_transfer_setup_us``); the others check it. The bandwidth itself comes from
the fabric's send/recv model at the transfer engine's share of NCCL's rate, a microbenchmark figure
(``serving_kv_transfer_engine_efficiency``), not from these rows. The expert-parallel rows time
the serving model's dispatch and combine (``collective_time("all_to_all", ...)``, the function
``perf/serving.py`` calls per MoE layer) at DeepEP's decode setting; no number is set from them.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricplan.catalog import default_catalog
from fabricplan.design import resolve
from fabricplan.perf.serving import serving_time
from fabricplan.spec import parse_spec

MOONCAKE_VLLM = ("Mooncake docs, 'vLLM V1 with Mooncake Transfer Engine benchmark' (kvcache-ai/Mooncake "
                 "doc/en/vllm-v1-support-benchmark, 2025-11): 2 x 8 H800, 8 x ConnectX-7 RoCE (~200 GB/s per node), "
                 "Qwen3-8B, vLLM 0.11.2, MooncakeConnector, 1P1D at TP 8, one request at a time (max-concurrency 1)")
#: (prompt tokens, published KV size as printed, measured transfer time [ms]) from the source's table.
MOONCAKE_ROWS = ((128, "20 MB", 0.54), (256, "38 MB", 0.61), (512, "74 MB", 0.92), (1024, "146 MB", 1.50),
                 (2048, "290 MB", 2.51), (4096, "578 MB", 4.75), (8192, "1.13 GB", 8.84), (16384, "2.25 GB", 16.43),
                 (32768, "4.50 GB", 31.65))
#: The row the per-request handshake is read from (the smallest prompt: the wire is a quarter of it).
CALIBRATED_PROMPT = 128
#: A row's tolerance: the transfer engine's rate is a microbenchmark figure with a range (0.51-1.0 of
#: NCCL's), so a mid-size transfer may sit 15-20 % off before the range is exhausted.
TOLERANCE = 0.20


DEEPEP = ("deepseek-ai/DeepEP README, 'Low-latency kernels with pure RDMA' (2025-04): H800, one ConnectX-7 "
          "InfiniBand 400 Gb/s NIC per GPU, 8 GPUs per node; DeepSeek-V3 decode setting: 128 tokens per rank, hidden "
          "7168, top-8 experts, FP8 dispatch (one fp32 scale per 128 elements), BF16 combine")
#: (EP ranks, dispatch latency [us], combine latency [us]) from the source's table.
DEEPEP_ROWS = ((8, 77, 114), (16, 118, 195), (32, 155, 273), (64, 173, 314), (128, 192, 369), (256, 194, 360))
DEEPEP_TOKENS, DEEPEP_HIDDEN, DEEPEP_TOPK = 128, 7168, 8
#: Within one node the kernels of that release went through the NIC too (NVLink came in 2025-06,
#: DeepEP #173); the model sends intra-node bytes over NVLink, so EP 8 is shown, not gated.
DEEPEP_GATED_FROM_EP = 16
#: A row's tolerance: NCCL's all-to-all model stands in for DeepEP's IBGDA kernels (their per-peer
#: and start-up latencies differ); at 16 ranks half the bytes stay in the node, where that matters most.
DEEPEP_TOLERANCE = 0.25


@dataclass(frozen=True)
class ServingRow:
    name: str
    quantity: str
    published: float
    model: float
    tolerance: float | None
    calibrated: bool
    detail: str

    @property
    def error(self) -> float:
        return self.model / self.published - 1.0

    @property
    def ok(self) -> bool | None:
        if self.calibrated or self.tolerance is None:
            return None
        return abs(self.error) <= self.tolerance


def mooncake_spec(prompt_tokens: int, fabric: str = "roce-v2"):
    """The published 1P1D system as a spec: two 8-GPU nodes (H100 for H800: the same SXM5 compute and
    HBM3), eight 200G NICs each, prefill on one node and decode on the other, TP 8."""
    return parse_spec({
        "name": "mooncake-1p1d", "cluster": {"gpu": "h100-sxm", "gpus": 16, "nic_speed_gbps": 200},
        "fabrics": [fabric],
        "jobs": [{"kind": "serving", "name": "qwen3-8b-1p1d", "model": "qwen3-8b", "tp": 8, "disaggregated": True,
                  "prefill_gpus": 8, "prompt_tokens": prompt_tokens, "output_tokens": 128,
                  "request_rate_per_s": 0.1}]}, where="mooncake-1p1d")


#: The source's mean TTFT and transfer time at its longest prompt [ms] (what prefill took, less the transfer).
MOONCAKE_TTFT_32K_MS, MOONCAKE_TRANSFER_32K_MS = 749.62, 31.65


def mooncake_metrics(prompt_tokens: int, fabric: str = "roce-v2", catalog=None):
    """The serving model's metrics of one request on the published system."""
    catalog = catalog or default_catalog()
    spec = mooncake_spec(prompt_tokens, fabric)
    design = resolve(spec, catalog, spec.fabric_choices()[0])
    return serving_time(spec.jobs[0], design.network, catalog=catalog).serving


def kv_transfer(prompt_tokens: int, fabric: str = "roce-v2", catalog=None):
    """(KV bytes of the request, its transfer time [s]) on the published system, by the serving model."""
    metrics = mooncake_metrics(prompt_tokens, fabric, catalog)
    return metrics.kv_bytes_per_request, metrics.kv_transfer_s


def deepep_bytes(kind: str) -> float:
    """Bytes one rank sends in a decode dispatch (FP8 with its scales) or combine (BF16): tokens x
    top-k copies x the token's bytes."""
    per_token = DEEPEP_HIDDEN + DEEPEP_HIDDEN / 128 * 4 if kind == "dispatch" else DEEPEP_HIDDEN * 2
    return DEEPEP_TOKENS * DEEPEP_TOPK * per_token


def deepep_rows(catalog=None) -> list[ServingRow]:
    from fabricplan.perf.collectives import collective_time

    catalog = catalog or default_catalog()
    rows = []
    for ep, dispatch_us, combine_us in DEEPEP_ROWS:
        for kind, published in (("dispatch", dispatch_us), ("combine", combine_us)):
            size = deepep_bytes(kind)
            result = collective_time("all_to_all", int(size), ep, min(ep, 8), fabric=catalog.fabric("infiniband-ndr"),
                                     gpu=catalog.gpu("h100-sxm"), catalog=catalog)
            gated = ep >= DEEPEP_GATED_FROM_EP
            rows.append(ServingRow(
                name=f"DeepEP decode {kind}, EP {ep}", quantity="latency [us]", published=float(published),
                model=result.time_us, tolerance=DEEPEP_TOLERANCE if gated else None, calibrated=False,
                detail=(f"{size / 1e6:.2f} MB per rank; model {size / result.time_us / 1e3:,.0f} GB/s, published "
                        f"{size / published / 1e3:,.0f} GB/s" + ("" if gated else "; not gated: that release sent "
                                                                  "intra-node bytes through the NIC"))))
    return rows


def serving_rows(catalog=None) -> list[ServingRow]:
    catalog = catalog or default_catalog()
    rows = []
    for prompt, size, published_ms in MOONCAKE_ROWS:
        kv_bytes, seconds = kv_transfer(prompt, catalog=catalog)
        calibrated = prompt == CALIBRATED_PROMPT
        rows.append(ServingRow(
            name=f"Mooncake 1P1D, {prompt:,}-token prompt", quantity="KV transfer time [ms]", published=published_ms,
            model=seconds * 1e3, tolerance=None if calibrated else TOLERANCE, calibrated=calibrated,
            detail=(f"KV {kv_bytes / 2**20:,.0f} MiB (published {size}); model "
                    f"{kv_bytes / seconds / 1e9:,.1f} GB/s, at the published time "
                    f"{kv_bytes / (published_ms * 1e-3) / 1e9:,.1f} GB/s")))
    return rows
