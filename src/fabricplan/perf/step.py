"""Training step time of a job on a fabric: compute, pipeline bubble and exposed communication.

Per GPU and step, with ``m = global_batch / (dp x micro_batch)`` micro-batches per pipeline::

    t_mb      = compute_mb + exposed TP + exposed EP + exposed CP + v x PP send/recv    (one micro-batch)
    step      = (m + (pp - 1) / v) x t_mb + exposed DP            (1F1B, interleaved with v chunks)
    compute_mb = hardware FLOPs per micro-batch x (L_stage / L) / (tp x cp) / (peak x achievable fraction)
    L_stage    = ceil(L / pp)                                     (layers of the fullest stage)

* Stage size: one number, ``L_stage``, sizes every per-stage quantity (compute, TP/EP/CP traffic,
  DP gradients). Pipeline stages run in lock step, so when ``pp`` does not divide the ``L`` layers
  the fullest stage sets the pace for all of them; with an even split ``L_stage / L = 1/pp``. The
  layers are taken as balanced (stages differ by at most one layer, as Llama 3 405B's 126 layers
  on 16 stages: 8, with 7 on the first and last); a stage's ``v`` chunks may then differ by one
  layer too (``pp x v <= L`` leaves every chunk at least one).

* TP (inside the scale-up domain): per layer and micro-batch 2 all-reduces forward and 2 backward
  (+2 with full recomputation) of ``b x s/cp x h`` activations, or the same bytes as all-gather +
  reduce-scatter with sequence parallelism; with ``tp_overlap`` (Transformer Engine userbuffers,
  sequence parallelism) exposed as ``userbuffers_tp_exposed_s`` and the overlapped GEMMs run
  chunked (``compute.overlapped_gemm_time_s``); otherwise hidden by ``tp_overlap_efficiency`` (0).
* PP: one activation send forward and one backward per micro-batch and stage boundary
  (``b x s/cp x h / tp`` with Megatron's scatter/gather, ``b x s/cp x h`` per rank without it and
  without sequence parallelism: ``pipeline_send_split``), on the critical path. With the
  interleaved schedule (``v = virtual_pipeline_stages`` model chunks per stage) the bubble is
  ``(pp-1)/(v*m)`` of the ideal time and there are ``v`` times as many stage boundaries, so PP
  communication grows ``v``-fold ([1]_ §2.2.2).
* DP: the fullest stage's gradients (``params x L_stage / L / tp``) in two collectives: dense
  (attention, embeddings) over the ``dp x cp`` data-parallel ranks, and for MoE with ep > 1 the
  expert weights (``/ ep``) over the ``dp x cp / ep`` expert-data-parallel ranks (each expert
  shard is replicated only there; Megatron-Core's expert-data-parallel group). Each is an
  all-reduce (ZeRO 0/1), reduce-scatter + all-gather (ZeRO 2), or 2 all-gathers + reduce-scatter
  (ZeRO 3/FSDP), run one after the other; with ``dp_overlap`` only the part longer than the last
  micro-batch's backward (x ``dp_overlap_efficiency``) is exposed.
* EP: 2 all-to-alls forward (dispatch, combine) and 2 backward per MoE layer; CP: K/V all-gather
  forward and all-gather + reduce-scatter backward, hidden behind the layer's attention compute.

* Slowest GPU: every compute time is scaled by ``1 + slowest_gpu_slowdown(GPUs, sigma)`` (the
  persistent per-GPU throughput spread's expected maximum; ``sigma`` 0 by default, see there).

MFU = model FLOPs / (GPUs x peak x step time); HFU counts the recomputed FLOPs too (Megatron-LM's
published "TFLOP/s per GPU" are HFU-style, they include recomputation).

References
----------
.. [1] D. Narayanan et al., SC'21 (1F1B schedule, bubble (p-1)/m, scatter/gather, FLOPs).
.. [2] V. Korthikanti et al., MLSys 2023 (sequence parallelism, selective recomputation).
.. [3] S. Rajbhandari et al., "ZeRO", SC'20 (communication volume per stage).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache, partial
from typing import TYPE_CHECKING, Any

from fabricplan.catalog import Gpu
from fabricplan.design import FabricTopology, NetworkView, bare_network, cluster_gpu, layout_of
from fabricplan.design.groups import GroupShape
from fabricplan.design.groups import group_shapes as layout_group_shapes
from fabricplan.errors import InputError
from fabricplan.perf.collectives import collective_time, gpu_compute_capability
from fabricplan.perf.efficiency import EfficiencyModel
from fabricplan.perf.efficiency import efficiency_model as resolve_efficiency_model
from fabricplan.perf.flops import TransformerDims, forward_flops_per_token, model_dims, training_flops_per_token
from fabricplan.perf.latency import perf_parameter
from fabricplan.perf.memory import GIB, MemoryEstimate, memory_per_gpu
from fabricplan.perf.params import gradient_bytes_per_parameter, perf_table
from fabricplan.spec.job import job_layout, pipeline_stage_layers
from fabricplan.spec.models import GpuInline

if TYPE_CHECKING:
    from fabricplan.perf.serving_metrics import ServingMetrics

US = 1e-6


@dataclass(frozen=True)
class ClusterShape:
    """A cluster described without a spec: GPU, node shape, NICs and the fabric's topology.

    The step model runs on a design's :class:`~fabricplan.design.NetworkView`; a ClusterShape plus a
    fabric becomes one through :func:`network_for` (the same sizing rules). ``topology_style``,
    ``oversubscription`` (down:up per tier: leaf, spine), ``reserved_leaf_ports`` and
    ``topology_tiers`` (None = auto) are a spec's ``topology`` section;
    ``topology_aware_scheduling`` says whether jobs are packed onto whole leaf groups. The defaults
    (non-blocking rail-optimised, aligned placement) are the model without a spec.
    """

    gpu: Gpu | GpuInline
    gpus: int
    gpus_per_node: int
    scale_up_domain: int
    nics_per_node: int
    topology_style: str = "rail_optimized"
    oversubscription: tuple[float, ...] = (1.0, 1.0)
    reserved_leaf_ports: int = 0
    topology_tiers: int | None = None
    topology_aware_scheduling: bool = True
    gpus_per_host: int | None = None  # hosts smaller than the NVLink domain (gpus_per_node): NVL72 trays

    @property
    def layout(self) -> FabricTopology:
        """The topology as the design's sizing reads it (whole-cluster sizing)."""
        return FabricTopology(style=self.topology_style, oversubscription=tuple(self.oversubscription),
                              reserved_leaf_ports=self.reserved_leaf_ports, tiers=self.topology_tiers,
                              cluster_nodes=max(self.gpus // max(self.gpus_per_node, 1), 1),
                              topology_aware_scheduling=self.topology_aware_scheduling)


@dataclass(frozen=True)
class StepResult:
    """Step time and its parts [s] for one job on one fabric."""

    job: str
    fabric: str
    model: str
    gpus: int
    tp: int
    pp: int
    dp: int
    cp: int
    ep: int
    micro_batches: int
    step_time_s: float
    compute_s: float
    bubble_s: float
    exposed_comm_s: dict[str, float]
    total_comm_s: dict[str, float]
    model_flops_per_step: float
    hardware_flops_per_step: float
    mfu: float
    hfu: float
    tokens_per_step: int
    tokens_per_s: float
    gpu_hours_for_budget: float | None
    token_budget: float | None
    notes: list[str] = field(default_factory=list)
    virtual_pipeline_stages: int = 1
    #: Memory per GPU of the fullest pipeline stage [bytes] (fabricplan.perf.memory), its parts and
    #: the GPU's memory; ``memory_fits`` says whether the estimate is within it.
    memory_per_gpu_bytes: float = 0.0
    memory_breakdown_bytes: dict[str, float] = field(default_factory=dict)
    memory_capacity_bytes: float = 0.0
    memory_fits: bool = True
    #: Optimizer step (memory-bound Adam over the GPU's parameter shard), once per step [s].
    optimizer_s: float = 0.0
    #: The distinct collectives the step ran (each as ``fabricplan collective --spec`` reports it).
    collectives: list[StepCollective] = field(default_factory=list)
    #: Compute time lost to communication kernels running beside it (SMs and HBM bandwidth they
    #: take: :func:`overlap_contention_share`), once per step [s].
    contention_s: float = 0.0
    #: A serving job's metrics (``fabricplan.perf.serving``); its "step" is one decode iteration.
    serving: ServingMetrics | None = None

    def as_dict(self) -> dict:
        return asdict(self)

    def at_step_time(self, step_time_s, compute_s) -> StepResult:
        """This result at another step time and compute time (floats or arrays of draws): the MFU,
        HFU, tokens per second and GPU-hours for the budget follow the step time."""
        scale = self.step_time_s / step_time_s
        hours = self.gpu_hours_for_budget
        return replace(self, step_time_s=step_time_s, compute_s=compute_s, mfu=self.mfu * scale,
                       hfu=self.hfu * scale, tokens_per_s=self.tokens_per_s * scale,
                       gpu_hours_for_budget=None if hours is None else hours / scale)


def achievable_fraction(gpu, catalog) -> float:
    """Share of peak dense FLOPs ``gpu`` sustains in training: the GPU's own
    ``achievable_fraction_of_peak`` (catalog or inline GPU), else ``default_achievable_fraction_of_peak``
    from ``perf_defaults.yaml``. The one place this fallback lives (the step model and the decision's
    efficiency lever both use it)."""
    value = getattr(gpu, "achievable_fraction_of_peak", None)
    return float(value) if value else perf_parameter("default_achievable_fraction_of_peak", catalog)


def group_shapes(s: _Setup, kind: str) -> tuple[GroupShape, ...]:
    """The distinct shapes of the job's ``kind`` groups on the network's nodes, in Megatron-Core's
    rank order (:mod:`fabricplan.design.groups`): ranks, most and fewest on one node, nodes."""
    return layout_group_shapes(kind, tp=s.tp, cp=s.cp, dp=s.dp, pp=s.pp, ep=s.ep,
                               gpus_per_node=s.network.gpus_per_node)


def network_for(cluster: ClusterShape, fabric, catalog) -> NetworkView:
    """The network view of ``cluster`` on ``fabric`` (a catalog id or profile as built), sized for
    the whole cluster as :func:`fabricplan.design.bare_network` sizes it."""
    return bare_network(catalog, fabric, cluster.gpu, gpus=cluster.gpus, gpus_per_node=cluster.gpus_per_node,
                        nics_per_node=cluster.nics_per_node, scale_up_domain=cluster.scale_up_domain,
                        layout=cluster.layout, gpus_per_host=cluster.gpus_per_host)


def _collective_s(op: str, size_bytes: float, ranks: int, ranks_per_node: int, network: NetworkView, catalog,
                  nccl_version, efficiency, span_nodes: int | None = None, log: list | None = None,
                  n_nodes: int | None = None) -> float:
    if ranks < 2 or size_bytes <= 0:
        return 0.0
    result = collective_time(op, max(int(size_bytes), 1), ranks, ranks_per_node, catalog=catalog,
                             nccl_version=nccl_version, network=network, efficiency_model=efficiency,
                             span_nodes=span_nodes, n_nodes=n_nodes)
    if log is not None:
        log.append(StepCollective.of(result, span_nodes))
    return result.time_us * US


@dataclass(frozen=True)
class StepCollective:
    """One collective the step ran, as ``collective_time`` (and ``fabricplan collective --spec``) gives
    it for the same design: operation, buffer, communicator, NCCL's choice, time and busbw."""

    operation: str
    size_bytes: int
    n_gpus: int
    gpus_per_node: int
    span_nodes: int
    algorithm: str
    protocol: str
    time_us: float
    busbw_gbytes_per_s: float
    routing_efficiency: float
    #: nodes holding the communicator's ranks (``gpus_per_node`` is the fewest on one of them when
    #: they hold different numbers: ``collective --nodes``)
    n_nodes: int = 0
    channels: int = 0

    @property
    def even(self) -> bool:
        """Every node holds ``gpus_per_node`` of the ranks."""
        return self.n_nodes * self.gpus_per_node == self.n_gpus

    @classmethod
    def of(cls, result, span_nodes: int | None = None) -> StepCollective:
        return cls(operation=result.operation, size_bytes=result.size_bytes, n_gpus=result.n_gpus,
                   gpus_per_node=result.gpus_per_node, span_nodes=span_nodes or result.n_nodes,
                   algorithm=result.algorithm, protocol=result.protocol, time_us=result.time_us,
                   busbw_gbytes_per_s=result.busbw_gbytes_per_s, routing_efficiency=result.routing_efficiency,
                   n_nodes=result.n_nodes,
                   channels=int(getattr(result, "channels", 0) or 0))


def step_time(job, cluster: ClusterShape | NetworkView, fabric=None, *, catalog, nccl_version: str | None = None,
              efficiency_model: str | EfficiencyModel | None = None,
              compute_efficiency_multiplier: float = 1.0) -> StepResult:
    """Step time, compute, bubble and exposed communication of ``job`` (a JobSpec).

    ``cluster`` is a design's :class:`NetworkView` (``fabricplan.design.resolve(...).network``), or a
    :class:`ClusterShape` with ``fabric`` (a catalog fabric id or profile). ``efficiency_model``
    names the model that gives each collective's share of the NIC bandwidth (default ``analytic``).
    ``compute_efficiency_multiplier`` scales compute speed (the decision's efficiency lever): per-
    operation compute times are divided by it; a flat achievable fraction is multiplied (capped at 1).

    The model runs in named steps: :func:`_lay_out` (layout and placement), :func:`_compute`
    (one micro-batch's compute), :func:`_communication` (TP, PP, EP, CP and DP traffic, one
    function per kind), :func:`_exposure` (what the compute does not hide, the bubble) and
    :func:`_result` (the StepResult).
    """
    setup = _lay_out(job, _network_of(cluster, fabric, catalog), catalog, nccl_version=nccl_version,
                     efficiency_model=efficiency_model)
    compute = _compute(setup, compute_efficiency_multiplier)
    communication = _communication(setup, compute)
    result = _result(setup, compute, communication, _exposure(setup, compute, communication))
    _check_finite(result, job)
    return result


def _network_of(cluster: ClusterShape | NetworkView, fabric, catalog) -> NetworkView:
    """``cluster`` itself when it is a design's network view, else the view of the ClusterShape on ``fabric``."""
    if isinstance(cluster, NetworkView):
        return cluster
    if fabric is None:
        raise InputError("give the fabric the cluster runs on", location="fabric")
    return network_for(cluster, fabric, catalog)


@dataclass(frozen=True)
class _Setup:
    """What every step of the model reads: the job laid out on the network (parallel degrees,
    micro-batches, the fullest pipeline stage), its memory, the GPU's peak and the collectives'
    network, NCCL release and efficiency model."""

    job: Any
    network: NetworkView
    catalog: Any
    nccl_version: str | None
    efficiency: EfficiencyModel
    dims: TransformerDims
    gpus: int
    tp: int
    pp: int
    dp: int
    cp: int
    ep: int
    micro_batches: int
    virtual: int
    memory: MemoryEstimate
    memory_notes: list[str]
    peak: float
    #: the GPU's achievable fraction of peak and the slowest GPU's slowdown (slowest_gpu_slowdown)
    fraction: float
    straggler: float
    #: model and hardware (with recomputation) FLOPs per token
    model_flops_token: float
    hw_flops_token: float
    #: transformer layers per pipeline stage, the fullest stage's and its share of the model
    stage_layers: list[int]
    layers_per_stage: int
    stage_share: float
    #: one layer's activations of one micro-batch, b x s/cp x h [bytes]
    activation_bytes: float

    def where(self, field: str | None = None) -> str:
        return f"jobs[{self.job.name}]" + (f".{field}" if field else "")

    #: every collective the step ran (distinct ones are kept in StepResult.collectives)
    log: list = field(default_factory=list)

    def collective_s(self, op: str, size_bytes: float, ranks: int, ranks_per_node: int,
                     span_nodes: int | None = None, n_nodes: int | None = None) -> float:
        """Time [s] of one collective over ``ranks`` GPUs, ``ranks_per_node`` of them per node, whose
        ranks sit ``span_nodes`` consecutive nodes apart end to end (default: packed, ranks / per node);
        ``n_nodes`` for a group whose nodes hold different numbers of its ranks (``ranks_per_node``
        then the fewest)."""
        return _collective_s(op, size_bytes, ranks, ranks_per_node, self.network, self.catalog, self.nccl_version,
                             self.efficiency, span_nodes, self.log, n_nodes)

    def group_collective_s(self, op: str, size_bytes: float, kind: str) -> float:
        """Time [s] of one collective over each of the job's ``kind`` groups (``group_shapes``): they
        run at the same time and the slowest shape paces the step. A group whose nodes hold
        different numbers of its ranks is timed at the fewest per node on its nodes (NCCL aligns
        every rank's channels and bandwidths to the minimum: ``collective_time`` ``n_nodes``)."""
        return max(self.collective_s(op, size_bytes, g.ranks, g.min_per_node,
                                     n_nodes=None if g.even else g.nodes)
                   for g in group_shapes(self, kind))


def _lay_out(job, network: NetworkView, catalog, *, nccl_version, efficiency_model) -> _Setup:
    """Layout and placement: the job's parallel degrees on the network (``spec.job.job_layout``), the
    memory check of that layout, the GPU's peak at the job's precision and the fullest stage."""
    efficiency = resolve_efficiency_model(efficiency_model)
    dims: TransformerDims = model_dims(job.model, catalog)
    gpus = job.gpus or network.gpus
    layout = job_layout(job, gpus, network.scale_up_domain, dims.layers, dims.experts, f"jobs[{job.name}]")
    memory, memory_notes = _check_memory(job, dims, network.gpu, tp=layout.tp, pp=layout.pp, dp=layout.dp,
                                         cp=layout.cp, ep=layout.ep, micro_batches=layout.micro_batches,
                                         virtual=layout.virtual_pipeline_stages, catalog=catalog)
    peak = (network.gpu.peak_dense_tflops or {}).get(job.precision)
    if not peak:
        raise InputError(f"GPU '{getattr(network.gpu, 'id', 'gpu')}' has no {job.precision} peak", location="precision")
    fraction = achievable_fraction(network.gpu, catalog)
    # The slowest GPU paces every synchronous step: its persistent throughput deficit slows all compute.
    # The node's slowest GPU is compute_slowest_gpu_derate (perf/compute.py); this is the slowest
    # GPU of the job beyond it (order statistics over N against over one node).
    straggler = slowest_gpu_slowdown(gpus, perf_parameter("per_gpu_persistent_throughput_sigma", catalog),
                                     node_gpus=network.gpus_per_node)
    act_bytes = perf_parameter("activation_bytes_per_element", catalog)
    model_flops_token, hw_flops_token = training_flops_per_token(dims, job.seq_len_tokens, job.recompute)
    # Uneven stages: the fullest one (balanced split, spec.job.pipeline_stage_layers) sets the pace;
    # its share of the model sizes compute and every per-stage communication alike.
    stage_layers = pipeline_stage_layers(job, dims.layers, layout.pp)
    layers_per_stage = max(stage_layers)
    return _Setup(job=job, network=network, catalog=catalog, nccl_version=nccl_version, efficiency=efficiency,
                  dims=dims, gpus=gpus, tp=layout.tp, pp=layout.pp, dp=layout.dp, cp=layout.cp, ep=layout.ep,
                  micro_batches=layout.micro_batches, virtual=layout.virtual_pipeline_stages, memory=memory,
                  memory_notes=memory_notes, peak=peak, fraction=fraction, straggler=straggler,
                  model_flops_token=model_flops_token, hw_flops_token=hw_flops_token, stage_layers=stage_layers,
                  layers_per_stage=layers_per_stage,
                  stage_share=layers_per_stage / dims.layers,  # = 1/pp when pp divides the layers
                  activation_bytes=job.micro_batch_sequences * (job.seq_len_tokens / layout.cp) * dims.hidden
                  * act_bytes)


@dataclass(frozen=True)
class _Compute:
    """One micro-batch's compute on the slowest stage [s], the parts that hide communication, the
    optimizer step (once per step) and the note saying which compute model ran."""

    micro_batch_s: float
    backward_s: float  # without recomputation: the window the DP reduction overlaps
    attention_layer_s: float  # one layer's attention forward + backward: hides CP traffic
    gemm_s: float  # the stage's GEMMs: hide TP traffic under userbuffers overlap
    optimizer_s: float
    note: str


def _compute(s: _Setup, compute_efficiency_multiplier: float) -> _Compute:
    """Compute per micro-batch: per-operation (``perf/compute.py``) for a GPU with compute data and no
    flat override, else the flat achievable fraction of peak; both slowed by the slowest GPU and
    scaled by the decision's efficiency lever."""
    speed = compute_efficiency_multiplier / (1.0 + s.straggler)
    gpu = s.network.gpu
    if getattr(gpu, "compute", None) is not None and not getattr(gpu, "achievable_fraction_of_peak", None):
        compute_mb, backward_mb, attention_layer_s, optimizer_s, gemm_mb = _per_operation_compute(
            s.job, s.dims, gpu.compute, peak=s.peak, tp=s.tp, dp=s.dp, cp=s.cp, ep=s.ep, catalog=s.catalog,
            gpu_peaks=gpu.peak_dense_tflops, stage_layers=s.stage_layers,
            tp_overlap_sm_fractions=userbuffers_sm_fractions(s.job.tp_overlap_config, gpu_sm_count(gpu, s.catalog),
                                                             s.catalog, s.job.tp_overlap_sms))
        return _Compute(micro_batch_s=compute_mb / speed, backward_s=backward_mb / speed,
                        attention_layer_s=attention_layer_s / speed, gemm_s=gemm_mb / speed,
                        optimizer_s=optimizer_s / speed,
                        note="per-operation compute (GEMM curves, attention kernel rate, HBM-bound operations)")
    # Flat achievable fraction (override or default): the pre-per-operation model.
    fraction = min(1.0, s.fraction * speed)
    rate = s.peak * 1e12 * fraction
    tokens_mb = s.job.micro_batch_sequences * s.job.seq_len_tokens
    compute_mb = s.hw_flops_token * tokens_mb * s.stage_share / (s.tp * s.cp) / rate
    model_compute_mb = s.model_flops_token * tokens_mb * s.stage_share / (s.tp * s.cp) / rate
    attention_layer_s = (3 * forward_flops_per_token(s.dims, s.job.seq_len_tokens).layer_attention / s.dims.layers
                         * tokens_mb / (s.tp * s.cp) / rate)
    return _Compute(micro_batch_s=compute_mb, backward_s=model_compute_mb * 2.0 / 3.0,
                    attention_layer_s=attention_layer_s,
                    gemm_s=compute_mb,  # the flat model has no GEMM split: all compute bounds the TP overlap
                    optimizer_s=0.0, note=f"achievable fraction of peak {fraction:.3f} (flat)")


@dataclass(frozen=True)
class _Traffic:
    """One kind's communication per micro-batch [s]: all of it, and what the compute does not hide."""

    total_s: float
    exposed_s: float


@dataclass(frozen=True)
class _Communication:
    """Per micro-batch traffic of TP, PP, EP and CP, and DP's (once per step, once per micro-batch) [s]."""

    tp: _Traffic
    pp: _Traffic
    ep: _Traffic
    cp: _Traffic
    dp_step_s: float
    dp_micro_batch_s: float
    #: per kind, the share of overlapped compute its collectives take (:func:`overlap_contention_share`)
    contention: dict[str, float] = field(default_factory=dict)


def _contention_share(s: _Setup, collectives: list, count_sms: bool = True) -> float:
    """Time-weighted :func:`overlap_contention_share` of one kind's ``collectives`` on the job's GPU
    (``count_sms`` False: their HBM traffic only)."""
    total = sum(c.time_us for c in collectives)
    if total <= 0:
        return 0.0
    gpu = s.network.gpu
    sms = gpu_sm_count(gpu, s.catalog) if count_sms else None
    compute = getattr(gpu, "compute", None)
    hbm = getattr(gpu, "hbm_bandwidth_tbytes_per_s", None) or (compute.hbm.tbytes_per_s if compute else 0.0)
    per_byte = perf_parameter("nccl_hbm_bytes_per_bus_byte", s.catalog)
    return sum(c.time_us * overlap_contention_share(c.channels, c.busbw_gbytes_per_s, sm_count=sms,
                                                    hbm_tbytes_per_s=hbm, hbm_bytes_per_bus_byte=per_byte)
               for c in collectives) / total


def _communication(s: _Setup, compute: _Compute) -> _Communication:
    """Every kind's communication, each from its own function (in this order, which is also the order
    their layout errors are raised in)."""
    ran: dict[str, list] = {}
    # Transformer Engine's userbuffers move TP data with copy engines (ring exchange) or SMs the GEMM
    # already gives up (tp_overlap_pipeline_sm_fraction): only their HBM traffic is new contention.
    userbuffers = bool(s.job.tp_overlap and s.job.sequence_parallel and s.tp > 1)
    # ... except the bulk collectives' kernels, which run on SMs of their own beside the backward GEMMs.
    bulk = (userbuffers_bulk_sm_share(_bulk_sm_count(s.job.tp_overlap_config, s.catalog, s.job.tp_overlap_sms),
                                      gpu_sm_count(s.network.gpu, s.catalog), 2 * _tp_rounds_per_layer(s.job))
            if userbuffers else 0.0)

    def logged(kind: str, run):
        start = len(s.log)
        out = run()
        ran[kind] = s.log[start:]
        return out

    tp = logged("tp", lambda: _tensor_parallel(s, compute))
    pp = logged("pp", lambda: _pipeline_parallel(s))
    ep = logged("ep", lambda: _expert_parallel(s))
    cp = logged("cp", lambda: _context_parallel(s, compute))
    dp_step, dp_mb = logged("dp", lambda: _data_parallel(s))
    return _Communication(tp=tp, pp=pp, ep=ep, cp=cp, dp_step_s=dp_step, dp_micro_batch_s=dp_mb,
                          contention={kind: _contention_share(s, log, count_sms=not (kind == "tp" and userbuffers))
                                      + (bulk if kind == "tp" else 0.0) for kind, log in ran.items()})


def _tp_rounds_per_layer(job) -> int:
    """Tensor-parallel rounds per layer and micro-batch: 4 (2 forward, 2 backward), +2 with full
    recomputation; each is one all-reduce, or an all-gather and a reduce-scatter with sequence
    parallelism."""
    return 4 + (2 if job.recompute == "full" else 0)


def _tensor_parallel(s: _Setup, compute: _Compute) -> _Traffic:
    """Tensor parallel, inside one node / scale-up domain: per layer 4 all-reduces (+2 with full
    recomputation), or all-gather + reduce-scatter with sequence parallelism; exposed as userbuffers
    overlap leaves it, or by ``tp_overlap_efficiency``."""
    job, tp, activation = s.job, s.tp, s.activation_bytes
    tp_per_layer = _tp_rounds_per_layer(job)
    if job.sequence_parallel:
        one = (s.collective_s("all_gather", activation, tp, tp)
               + s.collective_s("reduce_scatter", activation, tp, tp))
    else:
        one = s.collective_s("all_reduce", activation, tp, tp)
    total = s.layers_per_stage * tp_per_layer * one
    if job.tp_overlap and job.sequence_parallel and tp > 1:
        exposed = userbuffers_tp_exposed_s(
            total, compute.gemm_s, chunks=tp,
            unhidden_share=perf_parameter("tp_overlap_unhidden_collective_share", s.catalog))
    else:  # no overlap asked for, or no sequence parallelism (userbuffers overlaps AG/RS only)
        exposed = total * (1 - perf_parameter("tp_overlap_efficiency", s.catalog))
    return _Traffic(total, exposed)


def _pipeline_parallel(s: _Setup) -> _Traffic:
    """Pipeline parallel: a send/recv forward and backward per micro-batch and stage boundary (``v``
    times as many with ``v`` chunks). Neighbouring stages sit tp*cp*dp ranks apart, on other nodes
    when that >= node."""
    # Neighbouring stages are tp*cp*dp ranks apart and run in lock step: a pipeline one of whose
    # boundaries crosses nodes sends between nodes, placed over the nodes from its first stage to
    # its last (group_shapes' span_nodes: (pp - 1) x stride / node + 1 for a stride of whole nodes);
    # the boundary that crosses a leaf paces them all, and every node sends to its peer at the same
    # time (collective_time's span_nodes). The slowest pipeline shape paces the step.
    size = s.activation_bytes / pipeline_send_split(s.tp, s.job.pipeline_scatter_gather, s.job.sequence_parallel)

    def boundary_s(g: GroupShape) -> float:
        if not g.crosses_nodes:
            return s.collective_s("send_recv", size, 2, 2)
        return s.collective_s("send_recv", size, 2, 1, span_nodes=g.span_nodes)

    total = 2 * s.virtual * max(boundary_s(g) for g in group_shapes(s, "pp")) if s.pp > 1 else 0.0
    return _Traffic(total, total * (1 - perf_parameter("pp_overlap_efficiency", s.catalog)))


def pipeline_send_split(tp: int, scatter_gather: bool, sequence_parallel: bool) -> int:
    """The ranks one stage-boundary activation is split over, so each tensor-parallel rank sends
    ``b x s/cp x h / split`` bytes: ``tp`` with Megatron-LM's scatter/gather optimization (each rank
    sends its 1/tp slice, the receiving stage all-gathers it over NVLink; Narayanan et al. SC'21
    §4.1, on by default since NVIDIA/Megatron-LM 72e4230, 2021-02-16) or with sequence parallelism
    (stage outputs already split over the sequence); 1 without either: every rank sends the whole
    ``(seq, micro-batch, hidden)`` tensor, as Megatron-LM's ``communicate`` did before
    (megatron/training.py @152aab3 L306-351, 2021-01)."""
    return tp if scatter_gather or sequence_parallel else 1


def _expert_parallel(s: _Setup) -> _Traffic:
    """Expert parallel: 2 all-to-alls forward and 2 backward (+2 with full recomputation) per MoE
    layer, all exposed."""
    job, dims, tp, ep = s.job, s.dims, s.tp, s.ep
    total = 0.0
    if dims.experts > 1 and ep > 1:
        tokens_bytes = s.activation_bytes * dims.experts_per_token / (tp if job.sequence_parallel else 1)
        a2a_per_layer = 4 + (2 if job.recompute == "full" else 0)
        total = s.layers_per_stage * a2a_per_layer * s.group_collective_s("all_to_all", tokens_bytes * ep, "ep")
    return _Traffic(total, total)


def _context_parallel(s: _Setup, compute: _Compute) -> _Traffic:
    """Context parallel: K/V all-gather forward, all-gather + reduce-scatter backward per layer,
    hidden behind the layer's attention compute."""
    cp, tp, dims = s.cp, s.tp, s.dims
    if cp <= 1:
        return _Traffic(0.0, 0.0)
    job = s.job
    kv_bytes = (2 * job.micro_batch_sequences * (job.seq_len_tokens / cp) * dims.hidden * dims.kv_heads / dims.heads
                * perf_parameter("activation_bytes_per_element", s.catalog) / tp)
    per_layer = (2 * s.group_collective_s("all_gather", kv_bytes * cp, "cp")
                 + s.group_collective_s("reduce_scatter", kv_bytes * cp, "cp"))
    return _Traffic(s.layers_per_stage * per_layer,
                    s.layers_per_stage * max(per_layer - compute.attention_layer_s, 0.0))


def _data_parallel_groups(s: _Setup) -> list[tuple[float, str]]:
    """(parameters of the fullest stage this GPU holds, kind of group) of each data-parallel
    reduction: dense weights over the dp*cp ranks (Megatron-Core's ``dp-cp`` group), and for MoE
    with ep > 1 the expert weights over the dp*cp/ep ranks holding the same expert shard (the
    expert-data-parallel group); every weight over dp*cp when ep == 1. Where the groups sit on
    the nodes: :func:`group_shapes`."""
    dims, tp, ep = s.dims, s.tp, s.ep
    # MoE: every expert's FFN is sharded over ep; attention and embeddings are replicated.
    expert_params = (dims.experts * dims.layers * dims.ffn_matrices * dims.hidden * dims.ffn_hidden
                     if dims.experts > 1 else 0.0)
    dense_params = dims.parameters() - expert_params
    dense_params_local = dense_params * s.stage_share / tp
    expert_params_local = expert_params * s.stage_share / (tp * ep)
    if ep > 1:
        return [(dense_params_local, "dp"), (expert_params_local, "edp")]
    # ep == 1: every weight, expert or not, is replicated over the same dp*cp ranks
    return [(dense_params_local + expert_params_local, "dp")]


def _data_parallel(s: _Setup) -> tuple[float, float]:
    """Data parallel: (once per step, once per micro-batch) traffic of the fullest stage's gradients
    and weights, its reductions run one after the other, each as the job's sharding scheme
    (:data:`DATA_PARALLEL_SHARDING`) moves them."""
    grad_per_param = gradient_bytes_per_parameter(s.job.precision, s.job.gradient_dtype, catalog=s.catalog)
    weight_per_param = perf_parameter("weight_bytes_per_parameter", s.catalog)
    parts = [_reduce_gradients(s.job.zero_stage, params * grad_per_param, params * weight_per_param,
                               partial(s.group_collective_s, kind=kind))
             for params, kind in _data_parallel_groups(s)]
    return sum(part[0] for part in parts), sum(part[1] for part in parts)


#: The time [s] of one collective ``(operation, bytes)`` over one data-parallel group.
GroupCollective = Callable[[str, float], float]


def _zero_0(gradient_bytes: float, weight_bytes: float, collective: GroupCollective) -> tuple[float, float]:
    """ZeRO 0: all-reduce of the gradients accumulated over the micro-batches, once per step."""
    return collective("all_reduce", gradient_bytes), 0.0


def _zero_1(gradient_bytes: float, weight_bytes: float, collective: GroupCollective) -> tuple[float, float]:
    """ZeRO 1 (distributed optimizer): reduce-scatter of the accumulated gradients and all-gather of
    the updated 16-bit weights, once per step."""
    return collective("reduce_scatter", gradient_bytes) + collective("all_gather", weight_bytes), 0.0


def _zero_2(gradient_bytes: float, weight_bytes: float, collective: GroupCollective) -> tuple[float, float]:
    """ZeRO 2 keeps only its shard of the gradients, so it reduce-scatters after every micro-batch's
    backward (DeepSpeed#2252: "gradient reduction is required after every backward because of
    gradient partitioning"); the weights are gathered once per step."""
    reduce_scatter = collective("reduce_scatter", gradient_bytes)
    return collective("all_gather", weight_bytes), reduce_scatter


def _zero_3(gradient_bytes: float, weight_bytes: float, collective: GroupCollective) -> tuple[float, float]:
    """ZeRO 3 (FSDP) also reshards the weights: an all-gather before each micro-batch's forward and
    backward, beside ZeRO 2's reduce-scatter after every backward."""
    reduce_scatter = collective("reduce_scatter", gradient_bytes)
    return 0.0, reduce_scatter + 2 * collective("all_gather", weight_bytes)


#: Data-parallel sharding schemes by the job's ``zero_stage``: each gives its (once per step, once
#: per micro-batch) traffic [s] from one group's gradient and weight bytes and that group's
#: collectives. A new scheme is one function here (and its stage in ``spec/job.py`` ``zero_stage``
#: and ``perf/memory.py`` ``memory_per_gpu``).
DATA_PARALLEL_SHARDING: dict[int, Callable[[float, float, GroupCollective], tuple[float, float]]] = {
    0: _zero_0, 1: _zero_1, 2: _zero_2, 3: _zero_3}


def _reduce_gradients(zero_stage: int, gradient_bytes: float, weight_bytes: float,
                      collective: GroupCollective) -> tuple[float, float]:
    """(once per step, once per micro-batch) data-parallel traffic [s] of one group whose gradients
    are ``gradient_bytes`` and weights ``weight_bytes`` on each GPU, under ``zero_stage``'s scheme
    (:data:`DATA_PARALLEL_SHARDING`); ``collective(operation, bytes)`` times one collective over the group."""
    scheme = DATA_PARALLEL_SHARDING.get(zero_stage)
    if scheme is None:
        raise InputError(f"unknown ZeRO stage {zero_stage!r}; known: {', '.join(map(str, DATA_PARALLEL_SHARDING))}",
                         location="zero_stage")
    return scheme(gradient_bytes, weight_bytes, collective)


@dataclass(frozen=True)
class _Exposure:
    """What the compute does not hide: one micro-batch's time with its exposed TP/PP/EP/CP traffic,
    the exposed DP traffic, the pipeline bubble [s] and notes on the DP queue."""

    micro_batch_s: float
    dp_exposed_s: float
    bubble_s: float
    notes: list[str]
    contention_s: float = 0.0


def _exposure(s: _Setup, compute: _Compute, comm: _Communication) -> _Exposure:
    """Overlap and exposure: the micro-batch period, the DP traffic queued behind the compute
    (:func:`data_parallel_exposed_s`) and the bubble of the (interleaved) 1F1B schedule."""
    t_mb = compute.micro_batch_s + comm.tp.exposed_s + comm.pp.exposed_s + comm.ep.exposed_s + comm.cp.exposed_s
    dp_mb, micro_batches = comm.dp_micro_batch_s, s.micro_batches
    dp_overlap = perf_parameter("dp_overlap_efficiency", s.catalog) if s.job.dp_overlap else 0.0
    dp_exposed = data_parallel_exposed_s(comm.dp_step_s, dp_mb, micro_batches=micro_batches, period_s=t_mb,
                                         backward_s=compute.backward_s, overlap_efficiency=dp_overlap)
    if dp_overlap:  # the last gradient bucket and the first weight bucket cannot hide (ddp_bucket_*)
        dp_exposed = max(dp_exposed, (comm.dp_step_s + dp_mb) * _last_bucket_share(s))
    m = micro_batches
    hidden = {"tp": m * (comm.tp.total_s - comm.tp.exposed_s), "pp": m * (comm.pp.total_s - comm.pp.exposed_s),
              "cp": m * (comm.cp.total_s - comm.cp.exposed_s),
              "dp": comm.dp_step_s + m * dp_mb - dp_exposed}
    contention = overlap_contention_s(hidden, comm.contention, m * compute.micro_batch_s)
    notes = []
    if dp_mb and micro_batches > 1:
        waits = "; the step waits on the network" if dp_mb > dp_overlap * t_mb else ""
        notes.append(f"ZeRO {s.job.zero_stage}: data-parallel traffic after every micro-batch ({dp_mb * 1e3:,.1f} ms "
                     f"against a {t_mb * 1e3:,.1f} ms micro-batch{waits})")
    bubble = (s.pp - 1) / s.virtual * t_mb  # Narayanan et al. SC'21 §2.2.2: (p-1)/(v*m) of the ideal time
    if contention > 0:
        notes.append(f"communication beside compute (SMs its channels hold, HBM its traffic takes): compute "
                     f"+{contention * 1e3:,.0f} ms per step")
    return _Exposure(micro_batch_s=t_mb, dp_exposed_s=dp_exposed, bubble_s=bubble, notes=notes,
                     contention_s=contention)


def _last_bucket_share(s: _Setup) -> float:
    """Share of the data-parallel traffic in one bucket of Megatron-Core's default size,
    ``max(ddp_bucket_min_parameters, ddp_bucket_parameters_per_dp_rank x dp x cp)`` parameters, of
    the fullest stage's local parameters (1: the whole reduction is one bucket)."""
    local = sum(params for params, _ in _data_parallel_groups(s))
    bucket = max(perf_parameter("ddp_bucket_min_parameters", s.catalog),
                 perf_parameter("ddp_bucket_parameters_per_dp_rank", s.catalog) * s.dp * s.cp)
    return min(bucket / local, 1.0) if local > 0 else 0.0


def _result(s: _Setup, compute: _Compute, comm: _Communication, exposure: _Exposure) -> StepResult:
    """Result assembly: the step time, its parts per step, FLOPs, MFU/HFU, throughput, GPU-hours for
    the token budget, memory and notes."""
    job, m, gpus, peak = s.job, s.micro_batches, s.gpus, s.peak
    step = (m * exposure.micro_batch_s + exposure.bubble_s + exposure.dp_exposed_s + compute.optimizer_s
            + exposure.contention_s)
    tokens_step = job.global_batch_sequences * job.seq_len_tokens
    model_flops_step = s.model_flops_token * tokens_step
    hardware_flops_step = s.hw_flops_token * tokens_step
    tokens_per_s = tokens_step / step
    budget = job.token_budget
    gpu_hours = budget / tokens_per_s * gpus / 3600.0 if budget else None
    exposed = {"tp": m * comm.tp.exposed_s, "pp": m * comm.pp.exposed_s, "dp": exposure.dp_exposed_s,
               "ep": m * comm.ep.exposed_s, "cp": m * comm.cp.exposed_s}
    total = {"tp": m * comm.tp.total_s, "pp": m * comm.pp.total_s, "dp": comm.dp_step_s + m * comm.dp_micro_batch_s,
             "ep": m * comm.ep.total_s, "cp": m * comm.cp.total_s}
    straggler = ([f"slowest of {gpus:,} GPUs paces the step: compute {s.straggler:+.1%}"] if s.straggler else [])
    memory = s.memory
    return StepResult(
        job=job.name, fabric=s.network.profile.id, model=s.dims.name, gpus=gpus, tp=s.tp, pp=s.pp, dp=s.dp,
        cp=s.cp, ep=s.ep, micro_batches=m, step_time_s=step, compute_s=m * compute.micro_batch_s,
        bubble_s=exposure.bubble_s, exposed_comm_s=exposed, total_comm_s=total,
        model_flops_per_step=model_flops_step, hardware_flops_per_step=hardware_flops_step,
        mfu=model_flops_step / (gpus * peak * 1e12 * step), hfu=hardware_flops_step / (gpus * peak * 1e12 * step),
        tokens_per_step=tokens_step, tokens_per_s=tokens_per_s, gpu_hours_for_budget=gpu_hours,
        token_budget=budget, notes=[compute.note, *s.memory_notes, *exposure.notes, *straggler],
        optimizer_s=compute.optimizer_s, virtual_pipeline_stages=s.virtual, memory_per_gpu_bytes=memory.total_bytes,
        memory_breakdown_bytes=dict(memory.breakdown_bytes), memory_capacity_bytes=memory.capacity_bytes,
        memory_fits=memory.fits, collectives=list(dict.fromkeys(s.log)), contention_s=exposure.contention_s)


def slowest_gpu_slowdown(gpus: int, sigma: float, node_gpus: int = 1) -> float:
    """Expected slowdown of a synchronous step's compute paced by the slowest of ``gpus`` GPUs, beyond
    the slowest of one node's ``node_gpus`` (which ``compute_slowest_gpu_derate`` already counts):
    ``sigma x (E[max of N] - E[max of node_gpus])`` standard normals (``node_gpus = 1``: the whole
    ``sigma x E[max of N]``), with Blom's approximation
    ``E[max] ~ Phi^-1((N - 0.375) / (N + 0.25))`` (G. Blom, "Statistical Estimates and Transformed
    Beta-Variables", 1958; within 1 % of the exact values 1.539, 2.508, 3.241 at N = 10, 100, 1000);
    0 for one GPU or ``sigma = 0``.

    ``sigma`` is the persistent (per-GPU, repeatable) spread of compute throughput as a share of the
    median GPU (``per_gpu_persistent_throughput_sigma``): tensor parallelism synchronises every layer,
    pipeline stages every micro-batch and data parallelism every step, so the whole job runs at its
    slowest GPU's rate. Transient, per-kernel variation averages over a step's thousands of kernels
    and is not counted. Source of the spread: Sinha et al., SC'22 (``perf_defaults.yaml``)."""
    if gpus < 2 or sigma <= 0:
        return 0.0
    return sigma * max(_expected_max_of_normals(int(gpus))
                       - _expected_max_of_normals(min(max(int(node_gpus), 1), int(gpus))), 0.0)


@lru_cache(maxsize=256)
def _expected_max_of_normals(n: int) -> float:
    """Blom's ``E[max of n standard normals] ~ Phi^-1((n - 0.375) / (n + 0.25))`` (0 for one)."""
    from statistics import NormalDist

    return NormalDist().inv_cdf((n - 0.375) / (n + 0.25)) if n > 1 else 0.0


def data_parallel_exposed_s(per_step_s: float, per_micro_batch_s: float, *, micro_batches: int,
                            period_s: float, backward_s: float, overlap_efficiency: float) -> float:
    """Data-parallel communication time left on the critical path of a step.

    A per-micro-batch reduction ``c`` (ZeRO 2/3) is issued when a micro-batch's backward ends, one per
    micro-batch period ``T``; the communication stream serves them in order while the GPU computes, in
    ``e x T`` of each period (``e`` = ``overlap_efficiency``, the share a bucketed reduction can use,
    Li et al. VLDB 2020). A queue with one arrival of ``c`` seconds of work per period, served ``e T``
    seconds per period, holds this much when the last micro-batch's gradients arrive::

        q = max(c, m c - (m - 1) e T)

    (``c`` when it keeps up; the backlog when ``c > e T``, so the step waits on the network). That
    backlog and the once-per-step traffic ``o`` (ZeRO 0/1's reduction, ZeRO 2's weight all-gather)
    overlap only the last micro-batch's backward ``B``::

        exposed = max(q + o - e B, 0)

    With ``e = 0`` (no overlap) everything is exposed, ``m c + o``; with ``m = 1`` this is the single
    reduction behind one backward. ZeRO 3's forward all-gather is issued before, not after, its
    micro-batch; counting it with the backward's traffic keeps the per-period demand, which is what
    decides whether the network keeps up.
    """
    m = max(int(micro_batches), 1)
    usable = overlap_efficiency * period_s
    backlog = max(per_micro_batch_s, m * per_micro_batch_s - (m - 1) * usable)
    return max(backlog + per_step_s - overlap_efficiency * backward_s, 0.0)


def gpu_sm_count(gpu, catalog) -> int:
    """Streaming multiprocessors of ``gpu`` (``perf_defaults`` ``gpu_sm_count`` by compute capability:
    the entry for the highest listed capability <= the GPU's, the lowest for older GPUs)."""
    table = {int(cc): int(v) for cc, v in perf_table("gpu_sm_count", catalog).items()}
    cc = gpu_compute_capability(gpu, catalog)
    eligible = [key for key in table if key <= cc]
    return table[max(eligible)] if eligible else table[min(table)]


def overlap_contention_share(channels: int, busbw_gbytes_per_s: float, *, sm_count: int | None,
                             hbm_tbytes_per_s: float, hbm_bytes_per_bus_byte: float) -> float:
    """Share of its speed compute loses while a collective runs beside it:
    ``channels / SMs + k x busbw / HBM`` (capped at 1).

    An NCCL channel is one CTA resident on one SM for the collective's whole duration, so the
    compute kernels beside it are scheduled on the other SMs (NVIDIA/nccl#1432: 15 % of the SMs
    active with NCCL alone, 85 % with compute beside it); and the collective streams ``k`` bytes of
    HBM traffic per byte it moves on the bus (``nccl_hbm_bytes_per_bus_byte``: staged through
    memory, then read back, with the user buffers 3x; sjeaugey in NVIDIA/nccl#1428). The two add:
    published slowdowns of compute-bound kernels under a concurrent collective exceed either alone
    (NVIDIA/nccl#1428 on A100: a GEMM 1.18 -> 2.08 ms, attention 0.18 -> 0.33 ms beside an
    AllGather; Lee et al., arXiv 2507.03114: 18.9 % average, 40 % worst compute slowdown when
    overlapped, 4 A100/H100), so this first-order sum is not an upper bound. ``sm_count`` None: the
    collective holds no SMs of its own (copy-engine transfers), only its HBM traffic counts."""
    sms = (channels / sm_count) if sm_count else 0.0
    hbm = hbm_bytes_per_bus_byte * busbw_gbytes_per_s / (hbm_tbytes_per_s * 1e3) if hbm_tbytes_per_s > 0 else 0.0
    return min(sms + hbm, 1.0)


def overlap_contention_s(hidden_s: dict[str, float], shares: dict[str, float], compute_s: float) -> float:
    """Compute time lost per step to the collectives that run beside it [s]: for each kind, the
    time its traffic is hidden (at most the step's compute) times the share of compute speed it
    takes (:func:`overlap_contention_share`)."""
    return sum(min(max(hidden, 0.0), compute_s) * shares.get(kind, 0.0) for kind, hidden in hidden_s.items())


def userbuffers_sm_fractions(config: str, sm_count: int, catalog, sms=None) -> dict[str, float]:
    """Share of the SMs the pipelined reduce-scatter after each forward GEMM holds beside it, by
    userbuffers configuration (``JobSpec.tp_overlap_config``): ``tuned``, the attention projection's
    ``tp_overlap_pipeline_sm_fraction`` and FFN-down's ``tp_overlap_ffn_down_sm_fraction`` (NeMo's H100
    files); ``te_default``, Transformer Engine's ``te_userbuffers_default_sm_count / SMs`` for both
    (initialize_ub's defaults, which Megatron-LM uses without --tp-comm-overlap-cfg). ``sms``
    (``JobSpec.tp_overlap_sms``): the job's own file's ``num_sm``, ``count / SMs``, where given."""
    if config == "te_default":
        share = perf_parameter("te_userbuffers_default_sm_count", catalog) / sm_count
        out = {"attention_output": share, "ffn_down": share}
    else:
        out = {"attention_output": perf_parameter("tp_overlap_pipeline_sm_fraction", catalog),
               "ffn_down": perf_parameter("tp_overlap_ffn_down_sm_fraction", catalog)}
    for name in out:
        count = getattr(sms, name, None)
        if count is not None:
            out[name] = count / sm_count
    return out


def _bulk_sm_count(config: str, catalog, sms=None) -> float:
    """SMs of one bulk userbuffers collective for ``config`` or the job's own file (``sms``; see
    :func:`userbuffers_sm_fractions`)."""
    if getattr(sms, "bulk", None) is not None:
        return sms.bulk
    name = "te_userbuffers_default_sm_count" if config == "te_default" else "tp_overlap_bulk_sm_count"
    return perf_parameter(name, catalog)


def userbuffers_bulk_sm_share(bulk_sm_count: float, sm_count: int, collectives_per_layer: int) -> float:
    """Share of compute speed the bulk userbuffers collectives take, averaged over the time all of a
    layer's TP collectives are hidden: ``4 / collectives_per_layer x bulk_sm_count / SMs``.

    Of a layer's TP collectives (sequence parallelism: 4 all-gathers and 4 reduce-scatters, 12 with
    full recomputation), the 4 backward ones of QKV and FFN-up (qkv_dgrad, qkv_wgrad, fc1_dgrad,
    fc1_wgrad) run as bulk overlaps with ``set_sm_margin`` 0: their kernels hold ``bulk_sm_count``
    SMs beside a GEMM launched on all of them (TransformerEngine initialize_ub; NeMo's H100 files).
    All of them move one activation-sized tensor, so they take equal shares of the hidden time. The
    ring exchanges use copy engines and the pipelined reduce-scatters' SMs are in the GEMM's time
    (:func:`userbuffers_sm_fractions`), so only their HBM traffic adds to this."""
    if sm_count <= 0 or collectives_per_layer <= 0:
        return 0.0
    return min(4.0 / collectives_per_layer, 1.0) * bulk_sm_count / sm_count


def userbuffers_tp_exposed_s(total_s: float, gemm_s: float, *, chunks: int, unhidden_share: float) -> float:
    """Exposed tensor-parallel communication with Transformer Engine's userbuffers overlap [s]:
    ``total x u / n + max(0, total x (1 - u / n) - gemm)``.

    ``total`` is the micro-batch's TP all-gathers and reduce-scatters (sequence parallelism), ``n``
    the chunks each overlapped collective is split into (ring exchange: ``tp``; NeMo's pipelined
    reduce-scatter uses 4 splits, = tp at tp 4), ``u`` the share of those collectives whose last
    chunk cannot overlap (``tp_overlap_unhidden_collective_share``: the two forward
    reduce-scatters, whose final chunk follows the last GEMM chunk; the ring all-gathers start on
    the local chunk and the backward bulk overlaps run beside an independent GEMM). The rest hides
    behind the stage's GEMMs ``gemm`` and shows only where it is longer than them. Sources: Wang et
    al., ASPLOS 2023 (decomposition); NVIDIA/TransformerEngine PR #146 (bulk, pipelined, ring
    exchange); NeMo-Framework-Launcher ``conf/training/tp_overlap/ub_cfg_h100_*`` (methods per GEMM)."""
    chunks = max(int(chunks), 1)
    unhidden = total_s * unhidden_share / chunks
    return unhidden + max(0.0, total_s - unhidden - gemm_s)


def _per_operation_compute(job, dims, gpu_compute, *, peak, tp, dp, cp, ep, catalog, stage_layers,
                           gpu_peaks=None, tp_overlap_sm_fractions=None):
    """(compute per micro-batch, its backward without recomputation, attention fwd+bwd of one
    layer, optimizer step) [s] of the slowest pipeline stage, from ``perf/compute.py``.

    ``stage_layers``: transformer layers per stage (``spec.job.pipeline_stage_layers``). The slowest
    stage is the fuller of the fullest stage's layers and the last stage's layers plus the output
    layer (logits); with ``pp = 1`` all layers plus the output layer. The embedding lookup has no
    FLOPs and is not timed.
    """
    from fabricplan.perf.compute import layer_compute, logits_compute, optimizer_step_time_s, output_layer_precision

    common = dict(peak_tflops=peak, precision=job.precision, micro_batch=job.micro_batch_sequences,
                  seq_tokens=job.seq_len_tokens, tp=tp, cp=cp, catalog=catalog)
    layer = layer_compute(dims, gpu_compute, ep=ep, recompute=job.recompute,
                          sequence_parallel=job.sequence_parallel, attention_kernel=job.attention_kernel,
                          tp_overlap=job.tp_overlap and job.sequence_parallel,
                          tp_overlap_sm_fractions=tp_overlap_sm_fractions, **common)
    output_peak = (gpu_peaks or {}).get(output_layer_precision(job.precision)) or peak
    logits = logits_compute(dims, gpu_compute, output_peak_tflops=output_peak, **common)
    per_layer, out = layer.total, logits.total
    fullest, last = max(stage_layers), stage_layers[-1]
    candidates = [(fullest * per_layer.total_s, fullest * per_layer.backward_s),
                  (last * per_layer.total_s + out.total_s, last * per_layer.backward_s + out.backward_s)]
    compute_mb, backward_mb = max(candidates)
    attention = layer.parts["attention"]
    # Optimizer: the GPU's parameters of the fullest stage, sharded over data parallelism by ZeRO
    # stage >= 1 (Megatron's distributed optimizer) as perf/memory.py counts them.
    expert_params = (dims.experts * dims.layers * dims.ffn_matrices * dims.hidden * dims.ffn_hidden
                     if dims.experts > 1 else 0.0)
    share = fullest / dims.layers
    dense_local = (dims.parameters() - expert_params) * share / tp
    expert_local = expert_params * share / (tp * ep)
    shard = (lambda n: max(n, 1)) if job.zero_stage >= 1 else (lambda n: 1)
    local = dense_local / shard(dp * cp) + expert_local / shard(dp * cp // max(ep, 1))
    optimizer = optimizer_step_time_s(local, perf_parameter("optimizer_step_bytes_per_parameter", catalog),
                                      gpu_compute.hbm.tbytes_per_s)
    gemm_layers_mb = fullest * layer.parts["gemm"].total_s
    return compute_mb, backward_mb, attention.forward_s + attention.backward_s, optimizer, gemm_layers_mb


def _check_memory(job, dims, gpu, *, tp, pp, dp, cp, ep, micro_batches, virtual, catalog):
    """The memory estimate of the layout (fabricplan.perf.memory) and notes about it.

    InputError "does not fit" when even full activation recomputation (the least activation memory
    any recompute setting reaches) leaves the model over the GPU's memory: no setting of this
    layout can run. When only the estimate at the job's own recompute setting is over, the
    layout is kept with a note: the activation formulas (Korthikanti et al. 2022) count tensors
    that fused kernels (FlashAttention, fused SwiGLU) and schedulers that free tensors early
    do not keep, so they bound activations from above."""
    layout = dict(tp=tp, pp=pp, dp=dp, cp=cp, ep=ep, micro_batches=micro_batches, virtual_stages=virtual,
                  catalog=catalog)
    memory = memory_per_gpu(job, dims, gpu, **layout)
    if memory.fits:
        return memory, []
    floor = memory_per_gpu(job.model_copy(update={"recompute": "full"}) if job.recompute != "full" else job,
                           dims, gpu, **layout)
    if not floor.fits:
        extra = (f"; with full activation recomputation it still needs {floor.total_bytes / GIB:,.1f} GiB"
                 if job.recompute != "full" else "")
        origin = catalog.origins.get("gpus", {}).get(gpu.id, "bundled")
        if origin != "bundled":  # the capacity came from the user's overlay: say so beside the job
            by = origin if origin.startswith("set by") else f"set by {origin}"
            extra += f" (the GPU's {gpu.hbm_gbytes:g} GB of memory is {by}: gpus[id={gpu.id}].hbm_gbytes)"
        raise InputError(memory.shortfall_message() + extra, location=f"jobs[{job.name}]")
    return memory, [f"memory: the estimate of {memory.total_bytes / GIB:,.1f} GiB per GPU (recompute "
                    f"{job.recompute}) exceeds the GPU's {memory.capacity_bytes / GIB:,.1f} GiB; full "
                    f"activation recomputation needs {floor.total_bytes / GIB:,.1f} GiB"]


def _check_finite(result: StepResult, job) -> None:
    """A step time, throughput or MFU that overflowed (inf) or came out undefined (NaN) is never
    reported: InputError naming the job, so absurd magnitudes are reported instead of ranked."""
    import math

    for name in ("step_time_s", "compute_s", "tokens_per_s", "mfu", "hfu", "model_flops_per_step"):
        value = getattr(result, name)
        if not math.isfinite(value) or (name == "step_time_s" and value <= 0):
            raise InputError(f"the step model's {name.replace('_', ' ')} came out {value!r}: the job's numbers "
                             "(sequence length, batch, model dimensions) or the GPU's peak are out of range",
                             location=f"jobs[{job.name}]")


def cluster_shape(spec, catalog) -> ClusterShape:
    """A spec's cluster as a :class:`ClusterShape` (no fabric): its cluster section, topology and
    scheduling. Prefer ``fabricplan.design.resolve(spec, catalog, fabric).network``, which also
    applies the fabric's hardware overrides and port speed."""
    cluster, layout = spec.cluster, layout_of(spec)
    return ClusterShape(gpu=cluster_gpu(spec, catalog), gpus=cluster.gpus, gpus_per_node=cluster.domain_gpus,
                        scale_up_domain=cluster.scale_up_gpus, nics_per_node=cluster.domain_nics,
                        gpus_per_host=cluster.gpus_per_node if cluster.domain_gpus > cluster.gpus_per_node else None,
                        topology_style=layout.style, oversubscription=layout.oversubscription,
                        reserved_leaf_ports=layout.reserved_leaf_ports, topology_tiers=layout.tiers,
                        topology_aware_scheduling=layout.topology_aware_scheduling)
