"""Serving (inference) jobs on a design's network: decode iterations, prefill, KV-cache transfer
between disaggregated prefill and decode replicas, expert-parallel decode and weight updates from
trainers (issue 29). The job is :class:`fabricplan.spec.serving.ServingJobSpec`.

A replica is ``tp x ep`` GPUs (``ep`` attention groups of ``tp`` GPUs holding the experts between
them). Every time below is built from the same per-operation compute (``perf/compute.py``: GEMM
curves with the HBM roofline floor, the attention kernel rate) and the same collectives
(``perf/collectives.py`` ``collective_time`` on the design's network) that the training step uses.

* **Decode iteration** of a replica batching ``B`` sequences of mean context ``c = P + O/2``
  (continuous batching, Yu et al., "Orca", OSDI '22): per layer, the GEMMs of ``B/ep`` tokens on a
  GPU (``layer_gemm_shapes``; skinny GEMMs are bound by reading their weights from HBM), the
  attention reading the KV cache, ``(B/ep) c kv_rank_bytes / HBM`` (Kwon et al., "vLLM", SOSP '23:
  decode is memory-bound), the output layer; then the tensor-parallel all-reduces (two per layer of
  ``(B/ep) h`` activations) and, with ``ep > 1``, the dispatch and combine all-to-alls of each MoE
  layer (``(B/ep)/tp x k x h`` bytes per rank, across the nodes the replica spans). Nothing
  overlaps (vLLM and SGLang run them in sequence without two-batch overlap):
  ``T(B) = compute(B) + comm(B)``.
* **The batch** follows from Little's law: a replica offered ``r`` output tokens per second holds
  ``B = r T(B)`` sequences (solved by fixed-point iteration, ``T`` grows with ``B``), at most the
  job's ``max_batch_sequences`` and what the KV cache in memory holds. At the cap the replica is
  overloaded: it serves ``B_max / T(B_max)`` tokens per second and the rest of the load waits.
* **Prefill** of one ``P``-token request: the forward pass of ``P`` tokens (the training step's
  per-operation layer forward, no recomputation) plus its tensor- and expert-parallel collectives.
* **KV transfer** (disaggregated): each of a prefill replica's ``tp`` ranks sends its share of the
  request's cache, ``P x 2 L max(kv/tp, 1) d_head x bytes``, to its decode peer over its own NIC at
  the same time (GPUDirect RDMA, as Mooncake's transfer engine and NIXL do), timed as the fabric's
  send/recv between two nodes at the transfer engine's share of NCCL's rate
  (``serving_kv_transfer_engine_efficiency``), plus the connector's per-request handshake
  (``serving_kv_transfer_setup_us``). The fabric carries ``lambda x`` the request's cache per second.
* **Queueing for TTFT**: prefill replicas are M/M/1 servers of mean service ``S`` (Kleinrock,
  "Queueing Systems" vol. 1, 1975, §3.2: the wait exceeds ``t`` with probability
  ``rho exp(-(1 - rho) t / S)``), so ``P(TTFT <= SLO) = 1 - rho exp(-(1 - rho)(SLO - S - t_kv) / S)``
  (0 when ``SLO < S + t_kv`` or ``rho >= 1``). Colocated serving runs prefill on the decode replicas:
  the share ``lambda_r S`` of their time goes to prefill and stretches every decode iteration by
  ``1 / (1 - lambda_r S)`` (the prefill-decode interference that DistServe removes).
* **Weight updates** (RL): every ``weight_update_interval_s`` the trainers broadcast fresh weights,
  each GPU's shard ``(dense / tp + experts / (tp ep)) x bytes`` in a broadcast over one GPU per
  replica and the trainer's; replicas pause for it (verl and OpenRLHF pause generation while NCCL
  updates the weights), a share ``t_sync / interval`` of their time.
* **Useful work** of the job's GPU-time, as for training (compute over step time): each pool's
  iteration (decode) or request (prefill) time less its exposed communication and its pauses, over
  the job's GPUs by pool, times the share of requests within both SLOs (DistServe's goodput). Load
  below the replicas' capacity is not counted against a fabric: it idles every fabric alike.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fabricplan.errors import InputError
from fabricplan.perf.serving_metrics import ServingMetrics

#: Bytes per element of each dtype the serving job names (definitions).
DTYPE_BYTES = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0}
#: Fixed-point iterations for the decode batch (Little's law): it converges in a few; the bound is a
#: program limit.
BATCH_ITERATIONS = 60
#: How close to saturation (utilisation 1) an operating point may be and count as stable, and the
#: bisection steps of the admitted rate under overload (numerical settings, not physics).
STABLE_MARGIN = 1e-3
ADMISSION_BISECTIONS = 40


def kv_bytes_per_token(dims, tp: int, element_bytes: float) -> float:
    """KV cache one token holds on one tensor-parallel rank [bytes]: ``2 L max(kv/tp, 1) d_head x
    bytes`` (keys and values of every layer; KV heads split over ``tp``, replicated when fewer than
    ``tp``, as vLLM shards them)."""
    head_dim = dims.hidden / dims.heads
    return 2.0 * dims.layers * max(dims.kv_heads / tp, 1.0) * head_dim * element_bytes


def request_kv_bytes(dims, prompt_tokens: float, tp: int, element_bytes: float) -> float:
    """A request's KV cache after prefill, every rank's share [bytes]: ``P x tp x kv_bytes_per_token``."""
    return prompt_tokens * tp * kv_bytes_per_token(dims, tp, element_bytes)


def weight_bytes_per_gpu(dims, tp: int, ep: int, element_bytes: float) -> float:
    """Weights one GPU of a replica holds [bytes]: attention, embeddings and dense FFNs split over
    ``tp``, experts over ``tp x ep``."""
    experts = dims.expert_parameters()
    return ((dims.parameters() - experts) / tp + experts / (tp * ep)) * element_bytes


def decode_attention_time_s(sequences: float, context_tokens: float, kv_layer_bytes_per_token: float,
                            hbm_tbytes_per_s: float) -> float:
    """One layer's decode attention on one GPU [s]: reading the batch's KV cache,
    ``sequences x context x kv_layer_bytes_per_token / HBM`` (memory-bound, vLLM SOSP '23)."""
    return sequences * context_tokens * kv_layer_bytes_per_token / (hbm_tbytes_per_s * 1e12)


def mm1_wait_exceeds(rho: float, service_s: float, slack_s: float) -> float:
    """P(wait > slack) in an M/M/1 queue of utilisation ``rho`` and mean service ``service_s``:
    ``rho exp(-(1 - rho) slack / service)`` (Kleinrock 1975, §3.2); 1 at or beyond saturation."""
    if rho >= 1.0:
        return 1.0
    if slack_s <= 0:
        return 1.0
    return rho * math.exp(-(1.0 - rho) * slack_s / service_s)


def mm1_mean_wait_s(rho: float, service_s: float) -> float:
    """Mean wait in an M/M/1 queue: ``rho S / (1 - rho)`` (infinite at saturation)."""
    return math.inf if rho >= 1.0 else rho * service_s / (1.0 - rho)


def little_batch(offered_tokens_per_s: float, iteration_s, max_batch: float) -> float:
    """The decode batch ``B = r T(B)`` (Little's law), by fixed-point iteration from one sequence,
    capped at ``max_batch`` (``iteration_s``: B -> T(B), increasing)."""
    batch = 1.0
    for _ in range(BATCH_ITERATIONS):
        new = min(max(offered_tokens_per_s * iteration_s(batch), 1e-6), max_batch)
        if abs(new - batch) <= 1e-6 * max(batch, 1.0):
            return new
        batch = new
    return batch


@dataclass(frozen=True)
class _Serving:
    """The job laid out on the network: what every step reads."""

    job: object
    network: object
    catalog: object
    efficiency: object
    dims: object
    layout: object
    peak: float
    weight_bytes: float
    kv_bytes: float
    activation_bytes: float
    collective: object   # (op, size, ranks, ranks_per_node, span_nodes) -> s
    log: list


def _lay_out(job, network, catalog, efficiency_model) -> _Serving:
    from fabricplan.perf.efficiency import efficiency_model as resolve_efficiency_model
    from fabricplan.perf.flops import model_dims
    from fabricplan.perf.latency import perf_parameter
    from fabricplan.perf.step import _collective_s
    from fabricplan.spec.serving import serving_layout

    where = f"jobs[{job.name}]"
    dims = model_dims(job.model, catalog)
    layout = serving_layout(job, job.gpus or network.gpus, network.scale_up_domain, dims.experts, where)
    gpu = network.gpu
    if getattr(gpu, "compute", None) is None:
        raise InputError(f"serving needs the GPU's per-operation compute data (gpus.yaml compute: GEMM curves, HBM "
                         f"bandwidth); '{getattr(gpu, 'id', 'gpu')}' has none", location=f"{where}.kind")
    peak = (gpu.peak_dense_tflops or {}).get(job.precision)
    if not peak:
        raise InputError(f"GPU '{getattr(gpu, 'id', 'gpu')}' has no {job.precision} peak", location=f"{where}.precision")
    efficiency = resolve_efficiency_model(efficiency_model)
    log: list = []

    def collective(op: str, size: float, ranks: int, ranks_per_node: int, span_nodes: int | None = None) -> float:
        return _collective_s(op, size, ranks, ranks_per_node, network, catalog, None, efficiency, span_nodes, log)

    return _Serving(job=job, network=network, catalog=catalog, efficiency=efficiency, dims=dims, layout=layout,
                    peak=peak, weight_bytes=DTYPE_BYTES[job.precision], kv_bytes=DTYPE_BYTES[job.kv_dtype],
                    activation_bytes=perf_parameter("activation_bytes_per_element", catalog),
                    collective=collective, log=log)


def _ranks_per_node(s: _Serving, ranks: int, stride: int) -> int:
    """Ranks of a group of ``ranks`` GPUs ``stride`` apart that share one node (the scale-up domain),
    as many on every node: the largest divisor of ``ranks`` that fits (a group of 12 over 8-GPU
    nodes runs 4 per node)."""
    return max(1, math.gcd(ranks, max(s.network.gpus_per_node // max(stride, 1), 1)))


def _collectives(s: _Serving, tokens: float) -> dict[str, float]:
    """The tensor- and expert-parallel communication of one forward pass over ``tokens`` tokens of
    an attention group [s] (module docstring)."""
    job, dims = s.job, s.dims
    hidden_bytes = tokens * dims.hidden * s.activation_bytes
    tp = 0.0
    if job.tp > 1:
        per_layer = 2 if job.ep == 1 or dims.experts == 1 else 1  # MoE with EP: the combine does the MLP's reduction
        tp = dims.layers * per_layer * s.collective("all_reduce", hidden_bytes, job.tp, _ranks_per_node(s, job.tp, 1))
    ep = 0.0
    if job.ep > 1:
        send = hidden_bytes / job.tp * dims.experts_per_token  # each tp rank dispatches its 1/tp of the tokens
        ep = dims.layers * 2 * s.collective("all_to_all", send, job.ep, _ranks_per_node(s, job.ep, job.tp))
    return {"tp": tp, "ep": ep}


def _decode_compute_s(s: _Serving, batch: float, context: float) -> float:
    """One decode iteration's kernels on one GPU for a replica batching ``batch`` sequences [s]."""
    from fabricplan.perf.compute import gemm_points, gemm_time_s, layer_gemm_shapes, logits_gemm_shape

    job, dims, gpu_compute = s.job, s.dims, s.network.gpu.compute
    tokens = batch / job.ep
    kw = dict(peak_tflops=s.peak, points=gemm_points(gpu_compute, job.precision),
              hbm_tbytes_per_s=gpu_compute.hbm.tbytes_per_s, element_bytes=s.weight_bytes)
    layer = sum(count * gemm_time_s(m, n, k, **kw) for _, m, n, k, count in layer_gemm_shapes(dims, tokens, job.tp,
                                                                                              job.ep))
    layer += decode_attention_time_s(tokens, context, kv_bytes_per_token(dims, job.tp, s.kv_bytes) / dims.layers,
                                     gpu_compute.hbm.tbytes_per_s)
    _, m, n, k, _ = logits_gemm_shape(dims, tokens, job.tp)
    return dims.layers * layer + gemm_time_s(m, n, k, **kw)


def _prefill_compute_s(s: _Serving) -> float:
    """One request's prefill forward on one GPU of its replica [s] (the training layer forward)."""
    from fabricplan.perf.compute import layer_compute

    job, gpu = s.job, s.network.gpu
    layer = layer_compute(s.dims, gpu.compute, peak_tflops=s.peak, precision=job.precision, micro_batch=1,
                          seq_tokens=job.prompt_tokens, tp=job.tp, cp=1, ep=job.ep, recompute="none",
                          sequence_parallel=job.tp > 1, catalog=s.catalog)
    return s.dims.layers * layer.total.forward_s


def kv_transfer_s(s: _Serving) -> float:
    """One request's KV cache from its prefill replica to its decode replica [s]: the connector's
    handshake plus each rank's share over its own NIC, the ranks in parallel (module docstring)."""
    from fabricplan.perf.latency import perf_parameter

    if not s.job.disaggregated:
        return 0.0
    per_rank = s.job.prompt_tokens * kv_bytes_per_token(s.dims, s.job.tp, s.kv_bytes)
    return (perf_parameter("serving_kv_transfer_setup_us", s.catalog) * 1e-6
            + s.collective("send_recv", per_rank, 2, 1) / perf_parameter("serving_kv_transfer_engine_efficiency",
                                                                          s.catalog))


def weight_sync_s(s: _Serving) -> float:
    """One weight update: each GPU's shard broadcast to the GPU holding it in every replica (one
    broadcast per shard, the shards in parallel; the trainer's copy enters at one of them), with the
    replicas that share a node on that node [s]; 0 without updates."""
    if s.job.weight_update_interval_s is None:
        return 0.0
    replicas = s.layout.prefill_replicas + s.layout.decode_replicas
    per_node = max(1, min(replicas, s.network.gpus_per_node // s.layout.replica_gpus))
    ranks = max(replicas - replicas % per_node, per_node)
    shard = weight_bytes_per_gpu(s.dims, s.job.tp, s.job.ep, s.weight_bytes)
    return s.collective("broadcast", shard, ranks, per_node)


def _capacity_bytes(gpu) -> float:
    """The GPU's memory [bytes], as the training memory model counts it (``perf/memory.py``: GB x 10^9)."""
    return gpu.hbm_gbytes * 1e9


def kv_room_bytes(job, dims, gpu, catalog) -> float:
    """Memory one GPU of a replica has for the KV cache [bytes]: the GPU's memory less the
    ``serving_memory_reserved_share`` (activations, CUDA graphs, fragmentation) and its weights."""
    from fabricplan.perf.latency import perf_parameter

    reserved = perf_parameter("serving_memory_reserved_share", catalog)
    return (_capacity_bytes(gpu) * (1.0 - reserved)
            - weight_bytes_per_gpu(dims, job.tp, job.ep, DTYPE_BYTES[job.precision]))


def replica_holds(job, dims, gpu, catalog) -> bool:
    """Whether a replica's GPUs hold the weights and one sequence of the job's full context."""
    context = job.prompt_tokens + job.output_tokens
    return kv_room_bytes(job, dims, gpu, catalog) >= context * kv_bytes_per_token(dims, job.tp,
                                                                                  DTYPE_BYTES[job.kv_dtype])


def _kv_capacity_sequences(s: _Serving, context: float) -> float:
    """Sequences a decode replica's KV cache holds (:func:`kv_room_bytes` over each sequence's cache
    per GPU; ``ep`` attention groups hold ``B/ep`` sequences each)."""
    room = kv_room_bytes(s.job, s.dims, s.network.gpu, s.catalog)
    return max(room, 0.0) / (context * kv_bytes_per_token(s.dims, s.job.tp, s.kv_bytes)) * s.job.ep


@dataclass(frozen=True)
class _Pools:
    """The job's prefill and its replicas' time: one request's prefill (kernels and all), where it
    runs, the weight updates' pause and the decode batch's cap."""

    prefill_compute_s: float
    prefill_s: float
    prefill_replicas: int
    sync_s: float
    pause: float
    running: float
    cap: float
    context: float


def _pools(s: _Serving, speed: float) -> _Pools:
    """Prefill, weight updates and the batch cap of the laid-out job (module docstring)."""
    from fabricplan.perf.latency import perf_parameter

    job, lay = s.job, s.layout
    max_batch = float(job.max_batch_sequences or perf_parameter("serving_max_batch_sequences", s.catalog))
    kv_room = _kv_capacity_sequences(s, job.prompt_tokens + job.output_tokens)
    if kv_room < 1.0:
        raise InputError(f"does not fit: a replica of {lay.replica_gpus} GPUs cannot hold the weights and one "
                         "sequence's KV cache of its context; raise tp or ep", location=f"jobs[{job.name}]")
    prefill_compute = _prefill_compute_s(s) / speed
    prefill_s = prefill_compute + sum(_collectives(s, job.prompt_tokens / job.ep).values())
    sync_s = weight_sync_s(s)
    pause = min(sync_s / job.weight_update_interval_s, 1.0) if job.weight_update_interval_s else 0.0
    if pause >= 1.0:
        raise InputError(f"weight updates every {job.weight_update_interval_s:g} s take {sync_s:.3g} s each: the "
                         "replicas would never serve", location=f"jobs[{job.name}].weight_update_interval_s")
    return _Pools(prefill_compute_s=prefill_compute, prefill_s=prefill_s,
                  prefill_replicas=lay.prefill_replicas if job.disaggregated else lay.decode_replicas,
                  sync_s=sync_s, pause=pause, running=1.0 - pause, cap=min(max_batch, kv_room),
                  context=job.prompt_tokens + job.output_tokens / 2.0)


@dataclass(frozen=True)
class _Operating:
    """The job at the rate it is admitted: prefill utilisation, decode batch, TPOT, the decode
    iteration's kernels and communication, and whether the offered rate was more than it takes."""

    admitted_per_s: float
    rho: float
    batch: float
    tpot_s: float
    decode_compute_s: float
    decode_comm_s: dict
    overloaded: bool

    @property
    def iteration_s(self) -> float:
        return self.decode_compute_s + sum(self.decode_comm_s.values())


def _operate(s: _Serving, p: _Pools, speed: float) -> _Operating:
    """Little's law for the batch at each rate, the colocated prefill's interference, and beyond what
    the replicas take the largest rate they keep up with (module docstring)."""
    job, lay = s.job, s.layout
    iterations: dict[float, tuple[float, dict[str, float]]] = {}

    def iteration(batch: float) -> tuple[float, dict[str, float]]:
        if batch not in iterations:
            iterations[batch] = (_decode_compute_s(s, batch, p.context) / speed, _collectives(s, batch / job.ep))
        return iterations[batch]

    def point(rate: float) -> tuple[float, float, float, float]:
        """(prefill utilisation, decode batch, TPOT, decode capacity [tokens/s]) at ``rate`` requests/s."""
        rho = rate * p.prefill_s / (p.prefill_replicas * p.running)
        interference = 1.0 if job.disaggregated else 1.0 / max(1.0 - min(rho, 1.0 - STABLE_MARGIN), STABLE_MARGIN)

        def iteration_s(batch: float) -> float:
            compute, comm = iteration(batch)
            return (compute + sum(comm.values())) * interference

        batch = little_batch(rate * job.output_tokens / lay.decode_replicas / p.running, iteration_s, p.cap)
        tpot = iteration_s(batch)
        return rho, batch, tpot, batch / tpot * lay.decode_replicas * p.running

    def stable(rate: float) -> bool:
        rho, _, _, capacity = point(rate)
        return rho < 1.0 - STABLE_MARGIN and capacity >= rate * job.output_tokens * (1.0 - 1e-6)

    # Beyond what the replicas can take, the scheduler admits the most it can keep up with (Mooncake's
    # early rejection, FAST '25 §7): the largest stable rate, by bisection; the rest is not served.
    admitted = job.request_rate_per_s
    overloaded = not stable(admitted)
    if overloaded:
        low, high = 0.0, admitted
        for _ in range(ADMISSION_BISECTIONS):
            middle = 0.5 * (low + high)
            low, high = (middle, high) if stable(middle) else (low, middle)
        admitted = low
    rho, batch, tpot, _ = point(admitted)
    compute, comm = iteration(batch)
    return _Operating(admitted_per_s=admitted, rho=rho, batch=batch, tpot_s=tpot, decode_compute_s=compute,
                      decode_comm_s=comm, overloaded=overloaded)


def _metrics(s: _Serving, p: _Pools, o: _Operating) -> ServingMetrics:
    """TTFT (M/M/1 wait, prefill, KV transfer), the SLOs met, and the useful share of the job's
    GPU-time (module docstring)."""
    from fabricplan.perf.latency import perf_parameter

    job, lay = s.job, s.layout
    offered = job.request_rate_per_s * job.output_tokens
    served = o.admitted_per_s * job.output_tokens
    kv_s = kv_transfer_s(s)
    ttft_slo = (job.ttft_slo_ms or perf_parameter("serving_ttft_slo_ms", s.catalog)) / 1e3
    tpot_slo = (job.tpot_slo_ms or perf_parameter("serving_tpot_slo_ms", s.catalog)) / 1e3
    slack = ttft_slo - p.prefill_s - kv_s
    ttft_ok = 0.0 if o.rho >= 1.0 or slack < 0 or served <= 0 else 1.0 - mm1_wait_exceeds(o.rho, p.prefill_s, slack)
    tpot_met = o.tpot_s <= tpot_slo
    attainment = ttft_ok * (1.0 if tpot_met else 0.0) * (served / offered if offered else 0.0)
    # useful shares: a replica's time less its exposed communication and its pauses
    decode_useful = o.decode_compute_s / o.iteration_s * p.running
    prefill_useful = p.prefill_compute_s / p.prefill_s * p.running
    if job.disaggregated:
        prefill_gpus = lay.prefill_replicas * lay.replica_gpus
        useful = (prefill_gpus * prefill_useful + (lay.gpus - prefill_gpus) * decode_useful) / lay.gpus
    else:  # colocated: prefill takes rho of the replicas' time, decode the rest
        share = min(o.rho, 1.0)
        useful = share * prefill_useful + (1.0 - share) * decode_useful
    kv_request = request_kv_bytes(s.dims, job.prompt_tokens, job.tp, s.kv_bytes)
    return ServingMetrics(
        offered_tokens_per_s=offered, served_tokens_per_s=served, tokens_per_s_per_gpu=served / lay.gpus,
        decode_batch=o.batch, decode_iteration_s=o.iteration_s, tpot_s=o.tpot_s, prefill_s=p.prefill_s,
        ttft_s=mm1_mean_wait_s(o.rho, p.prefill_s) + p.prefill_s + kv_s, kv_bytes_per_request=kv_request,
        kv_transfer_s=kv_s, kv_fabric_gbytes_per_s=job.request_rate_per_s * kv_request / 1e9 if job.disaggregated
        else 0.0, weight_sync_s=p.sync_s, weight_pause_share=p.pause, prefill_utilisation=o.rho,
        ttft_attainment=ttft_ok, tpot_met=tpot_met, slo_attainment=attainment, useful_share=useful * attainment,
        ttft_slo_s=ttft_slo, tpot_slo_s=tpot_slo, overloaded=o.overloaded)


def serving_time(job, network, *, catalog, efficiency_model=None, compute_efficiency_multiplier: float = 1.0):
    """A serving job on a design's network -> a :class:`fabricplan.perf.step.StepResult` whose
    step is one decode iteration, with the job's :class:`ServingMetrics` in ``serving`` (module
    docstring). ``compute_efficiency_multiplier`` divides kernel times (the decision's efficiency lever).

    The model runs in named steps: :func:`_lay_out` (replicas on the network), :func:`_pools`
    (prefill, weight updates, the batch cap), :func:`_operate` (the admitted rate, batch and TPOT),
    :func:`_metrics` (TTFT, SLOs, useful share) and :func:`_result` (the StepResult)."""
    s = _lay_out(job, network, catalog, efficiency_model)
    pools = _pools(s, compute_efficiency_multiplier)
    operating = _operate(s, pools, compute_efficiency_multiplier)
    return _result(s, pools, operating, _metrics(s, pools, operating))


def _result(s: _Serving, p: _Pools, o: _Operating, metrics: ServingMetrics):
    """The StepResult of a serving job: its step a decode iteration, compute over step its useful share."""
    from fabricplan.perf.memory import MemoryEstimate
    from fabricplan.perf.step import StepCollective, StepResult

    job, lay, network = s.job, s.layout, s.network
    exposed = {kind: value for kind, value in o.decode_comm_s.items() if value > 0}
    if metrics.kv_transfer_s:
        exposed["kv"] = 0.0  # the transfer delays the first token, not the decode iterations
    kv_cache = o.batch / job.ep * p.context * kv_bytes_per_token(s.dims, job.tp, s.kv_bytes)
    memory = MemoryEstimate(breakdown_bytes={"weights": weight_bytes_per_gpu(s.dims, job.tp, job.ep, s.weight_bytes),
                                             "kv_cache": kv_cache}, capacity_bytes=_capacity_bytes(network.gpu))
    served = metrics.served_tokens_per_s
    flops = 2.0 * s.dims.active_parameters() * served
    distinct = list({(c.operation, c.size_bytes, c.n_gpus, c.gpus_per_node, c.span_nodes): c
                     for c in s.log if isinstance(c, StepCollective)}.values())
    notes = [f"serving: {lay.prefill_replicas} prefill + {lay.decode_replicas} decode replicas of {lay.replica_gpus} "
             f"GPUs" if job.disaggregated else f"serving: {lay.decode_replicas} colocated replicas of "
             f"{lay.replica_gpus} GPUs"]
    if o.overloaded:
        notes.append("overloaded: the replicas cannot keep up with the request rate")
    return StepResult(
        job=job.name, fabric=network.profile.id, model=s.dims.name, gpus=lay.gpus, tp=job.tp, pp=1,
        dp=lay.prefill_replicas + lay.decode_replicas, cp=1, ep=job.ep, micro_batches=1, step_time_s=o.tpot_s,
        compute_s=o.tpot_s * metrics.useful_share, bubble_s=0.0, exposed_comm_s=exposed,
        total_comm_s=dict(o.decode_comm_s), model_flops_per_step=flops * o.tpot_s,
        hardware_flops_per_step=flops * o.tpot_s, mfu=flops / (lay.gpus * s.peak * 1e12),
        hfu=flops / (lay.gpus * s.peak * 1e12), tokens_per_step=int(round(o.batch * lay.decode_replicas)),
        tokens_per_s=served, gpu_hours_for_budget=None, token_budget=None, notes=notes,
        memory_per_gpu_bytes=memory.total_bytes, memory_breakdown_bytes=dict(memory.breakdown_bytes),
        memory_capacity_bytes=memory.capacity_bytes, memory_fits=memory.fits, collectives=distinct,
        serving=metrics)
