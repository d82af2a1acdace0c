"""Serving jobs against published measurements: KV-cache transfer of disaggregated prefill/decode.

Each row runs the serving model (:func:`fabricplan.perf.serving.serving_time`) on a design built
like the published system and compares its KV-transfer time, row by row. One row sets a number of
the model and says so (``calibrated``): the smallest prompt fixes the connector's per-request
handshake (``serving_kv_transfer_setup_us``); the others check it. The bandwidth itself comes from
the fabric's send/recv model at the transfer engine's share of NCCL's rate, a microbenchmark figure
(``serving_kv_transfer_engine_efficiency``), not from these rows.
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


def kv_transfer(prompt_tokens: int, fabric: str = "roce-v2", catalog=None):
    """(KV bytes of the request, its transfer time [s]) on the published system, by the serving model."""
    catalog = catalog or default_catalog()
    spec = mooncake_spec(prompt_tokens, fabric)
    design = resolve(spec, catalog, spec.fabric_choices()[0])
    metrics = serving_time(spec.jobs[0], design.network, catalog=catalog).serving
    return metrics.kv_bytes_per_request, metrics.kv_transfer_s


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
