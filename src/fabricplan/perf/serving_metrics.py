"""What a serving job does on one fabric (``fabricplan.perf.serving``), the record a serving job's
``StepResult.serving`` holds; a module of its own so the step result can name it without
importing the serving model."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ServingMetrics:
    """What a serving job does on one fabric (times [s], rates per second)."""

    offered_tokens_per_s: float        # output tokens per second the requests ask for
    served_tokens_per_s: float         # what the decode replicas deliver (less when overloaded)
    tokens_per_s_per_gpu: float        # served / the job's GPUs
    decode_batch: float                # sequences a decode replica batches (Little's law)
    decode_iteration_s: float          # one decode iteration: T(B), before prefill interference
    tpot_s: float                      # time per output token as the user sees it
    prefill_s: float                   # one request's prefill on its replica
    ttft_s: float                      # mean time to first token: wait + prefill + KV transfer
    kv_bytes_per_request: float        # the request's KV cache (every rank's share)
    kv_transfer_s: float               # its transfer to the decode replica (0 colocated)
    kv_fabric_gbytes_per_s: float      # KV bytes the fabric carries per second (request rate x cache)
    weight_sync_s: float               # one weight broadcast to the replicas (0 without updates)
    weight_pause_share: float          # share of replica time paused for weight updates
    prefill_utilisation: float         # busy share of the prefill replicas (rho)
    ttft_attainment: float             # P(TTFT <= SLO)
    tpot_met: bool                     # TPOT within its SLO
    slo_attainment: float              # share of requests within both SLOs (and served)
    useful_share: float                # share of the job's GPU-time running kernels for requests within SLO
    ttft_slo_s: float
    tpot_slo_s: float
    overloaded: bool                   # the decode replicas cannot keep up at their batch cap
