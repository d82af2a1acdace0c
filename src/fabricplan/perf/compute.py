"""Per-operation compute time of a transformer micro-batch on one GPU.

The compute of one micro-batch is the sum of its operations, each timed from kernel
microbenchmarks only (docs/reference/compute_microbench.md; never from end-to-end training runs,
which validate the result, docs/validation.md). Bubble, exposed communication and overlap are
added once, by the step model (``perf/step.py``).

* GEMM (M x N x K): ``t = max(2 M N K / (peak x eta(2 M N K)), bytes(A + B + C) / HBM)``, where
  ``eta`` is the GPU's measured GEMM efficiency curve (fraction of dense peak by GEMM FLOPs,
  interpolated in log FLOPs, flat outside the measured range; catalog ``gpus.yaml``
  ``compute.gemm_efficiency``, microbenchmark §2) and the second term is the roofline floor of
  skinny GEMMs (§6). Backward = 2 GEMMs of the forward's FLOPs (data and weight gradients). A
  curve measured in short bursts is scaled to sustained clocks (``sustained_points``, §2.3).
* Attention core: FLOPs in the FlashAttention benchmark convention, forward
  ``4 b (a/t) s_q s_k d`` (x 1/2 causal), backward 2.5 x forward (§3), at the measured kernel
  rate for the sequence length (catalog ``compute.attention``: ``flash`` = FlashAttention-2
  fwd+bwd causal, ``unfused`` = PyTorch's unfused attention, non-causal, full s^2).
* Memory-bound operations (LayerNorm, bias-dropout-residual add, GeLU/SwiGLU, the optimizer step):
  bytes moved / sustained HBM bandwidth (BabelStream Triad, §4), with bytes per element from the
  catalog (``perf_defaults.yaml``, derived in §4).
* Recomputation: full = the layer's forward once more; selective = the attention core's forward.
* Unfused attention (matmul + softmax, Megatron before FlashAttention) is HBM-bound on its
  ``s x s`` score and probability tensors: their bytes do not depend on the head dimension ``d``
  while the FLOPs grow with it, so the measured rate (at the benchmark's ``d_m``) scales by
  ``min(d, ridge) / d_m`` (``unfused_attention_rate_scale``; ``ridge`` = peak / HBM, where the
  Q K^T GEMM, of intensity ~d FLOP/B, turns compute-bound). Its dropout on the probabilities
  (Megatron's default 0.1; the benchmark ran dropout 0) moves ``b (a/t) s^2`` elements x
  ``attention_dropout_*_bytes_per_element`` through HBM forward and backward.
* FP8 GEMMs (Transformer Engine) quantise each GEMM's activation input (forward) and output
  gradient (backward) with a cast-transpose: ``elements x fp8_cast_transpose_bytes_per_element / HBM``.
* The loss: fp32 vocab-parallel cross entropy over ``T x V/t`` logits on the last stage,
  ``cross_entropy_*_bytes_per_logit / HBM`` (``cross_entropy_time_s``).
* Host launch floor: a layer cannot run faster than the host launches its kernels,
  ``max(GPU time, kernels x kernel_launch_cpu_us)`` (``host_launch_floor_s``); the GPU-side gap
  between back-to-back kernels is inside the microbenchmarks, which time kernels back to back.
* FP8 backward GEMMs (Transformer Engine): data- and weight-gradient GEMMs run with cuBLASLt's split
  accumulator (``CUBLASLT_MATMUL_DESC_FAST_ACCUM`` = 0: partial sums promoted to FP32), the forward
  GEMM with fast accumulation, as the FP8 curve was measured (``fp8_backward_gemm_time_s``).
* FP8 output layer: Megatron-Core's output layer is its own ``ColumnParallelLinear``, not a
  Transformer Engine module, so FP8 autocast leaves it in BF16 (``output_layer_precision``).
* Context parallelism (ring attention): each of the ``cp`` ring steps runs the attention kernel on
  a ``s/cp``-token chunk, so the kernel rate is the one measured at ``s/cp`` tokens
  (``attention_kernel_tokens``).
* Compute-bound kernels (GEMM, attention) run ``1 / (1 - derate)`` slower: the slowest GPU of a
  node is >= 5 % below the microbenchmarked one and synchronous training waits for it (catalog
  ``compute_slowest_gpu_derate``, §2.3).

Transformer GEMMs per layer and micro-batch on one tensor-parallel rank (``T`` tokens of the
micro-batch on this context-parallel rank, ``t`` = tp, ``kv`` = h x kv_heads / heads, ``F`` FFN
width, ``m`` = 3 gated else 2 matrices, ``E``/``k`` experts / experts per token, ``ep``)::

    QKV                 T x (h + 2 kv)/t x h
    attention output    T x h x h/t
    FFN up (+gate)      T x (m - 1) F/t x h
    FFN down            T x h x F/t
    MoE: E/ep experts, each the FFN GEMMs above with T_e = T ep k / E rows (balanced routing)
    logits (last stage) T x V/t x h
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from fabricplan.perf.latency import perf_parameter


def gemm_flops(m: float, n: float, k: float) -> float:
    """FLOPs of one GEMM: ``2 M N K`` (a multiply-add is 2 FLOPs)."""
    return 2.0 * m * n * k


def interpolate_log(points, x: float) -> float:
    """y at ``x`` on ``points`` ((x, y), x ascending): linear in log(x) between points, flat outside."""
    if x <= points[0][0]:
        return float(points[0][1])
    if x >= points[-1][0]:
        return float(points[-1][1])
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        if x0 <= x <= x1:
            w = (math.log(x) - math.log(x0)) / (math.log(x1) - math.log(x0))
            return float(y0 + w * (y1 - y0))
    return float(points[-1][1])  # pragma: no cover - points are ascending


def gemm_efficiency(points, flops: float) -> float:
    """Measured fraction of dense peak of a GEMM of ``flops`` FLOPs (``points``: (FLOPs, fraction))."""
    return interpolate_log(points, flops)


def gemm_time_s(m: float, n: float, k: float, *, peak_tflops: float, points, hbm_tbytes_per_s: float,
                element_bytes: float) -> float:
    """Time of one M x N x K GEMM [s]: ``max(2MNK / (peak x eta), element_bytes (MK + KN + MN) / HBM)``."""
    if m <= 0 or n <= 0 or k <= 0:
        return 0.0
    flops = gemm_flops(m, n, k)
    compute = flops / (peak_tflops * 1e12 * gemm_efficiency(points, flops))
    memory = element_bytes * (m * k + k * n + m * n) / (hbm_tbytes_per_s * 1e12)
    return max(compute, memory)


def attention_flops(batch: float, heads: float, seq_q: float, seq_k: float, head_dim: float,
                    causal: bool) -> float:
    """Forward FLOPs of the attention core, FlashAttention benchmark convention:
    ``4 b a s_q s_k d``, halved when causal (mean visible key length)."""
    return 4.0 * batch * heads * seq_q * seq_k * head_dim * (0.5 if causal else 1.0)


def attention_time_s(forward_flops: float, seq_tokens: float, points,
                     backward_factor: float = 2.5) -> tuple[float, float]:
    """(forward, backward) time of the attention core [s]: fwd+bwd FLOPs (3.5 x forward) at the
    kernel's measured fwd+bwd rate for ``seq_tokens`` (``points``: (sequence, TFLOP/s)), split
    1 : ``backward_factor`` as the FLOPs are (``attention_backward_to_forward_flops`` in
    perf_defaults: 2.5, the FlashAttention benchmark convention)."""
    rate = interpolate_log(points, seq_tokens) * 1e12
    return forward_flops / rate, backward_factor * forward_flops / rate


def memory_bound_time_s(elements: float, bytes_per_element: float, hbm_tbytes_per_s: float) -> float:
    """Time of a memory-bound operation [s]: ``elements x bytes_per_element / HBM``."""
    return elements * bytes_per_element / (hbm_tbytes_per_s * 1e12)


def optimizer_step_time_s(parameters: float, bytes_per_parameter: float, hbm_tbytes_per_s: float) -> float:
    """Adam(W) step over ``parameters`` local parameters [s]: ``parameters x bytes / HBM`` (§4:
    ~30 B per parameter with fp32 master weights, moments and gradients)."""
    return memory_bound_time_s(parameters, bytes_per_parameter, hbm_tbytes_per_s)


def unfused_attention_rate_scale(head_dim: float, measured_head_dim: float, ridge_flops_per_byte: float) -> float:
    """Factor on the measured unfused-attention rate for head dimension ``head_dim``:
    ``min(head_dim, ridge) / min(measured_head_dim, ridge)``.

    Unfused attention moves the ``s x s`` scores and probabilities through HBM several times
    (Q K^T writes them, softmax reads and writes them, P V reads them, and the backward again):
    those bytes are independent of ``d`` and dominate while the Q K^T GEMM's arithmetic intensity
    (``2 s^2 d / (2 s^2 + 4 s d) ~ d`` FLOP/B for ``s >> d``) is below the GPU's ridge point
    ``peak / HBM`` (A100 fp16: 312 / 1.7 = 184 FLOP/B), so time stays flat and the FLOP rate scales
    with ``d`` up to the ridge (roofline: Williams et al., CACM 2009)."""
    return min(head_dim, ridge_flops_per_byte) / min(measured_head_dim, ridge_flops_per_byte)


def cross_entropy_time_s(logits: float, forward_bytes_per_logit: float, backward_bytes_per_logit: float,
                         hbm_tbytes_per_s: float) -> tuple[float, float]:
    """(forward, backward) time of the fp32 cross-entropy loss over ``logits`` = tokens x vocab/tp [s]:
    ``logits x bytes / HBM`` (bytes per logit derived from the loss's passes, perf_defaults)."""
    return (memory_bound_time_s(logits, forward_bytes_per_logit, hbm_tbytes_per_s),
            memory_bound_time_s(logits, backward_bytes_per_logit, hbm_tbytes_per_s))


def fp8_cast_time_s(shapes, bytes_per_element: float, hbm_tbytes_per_s: float) -> tuple[float, float]:
    """(forward, backward) time of FP8 quantisation around ``shapes`` ((name, M, N, K, count)) [s]:
    forward casts each GEMM's M x K activation input, backward its M x N output gradient, each
    ``bytes_per_element`` (cast + transpose) through HBM."""
    forward = sum(count * m * k for _, m, _, k, count in shapes)
    backward = sum(count * m * n for _, m, n, _, count in shapes)
    return (memory_bound_time_s(forward, bytes_per_element, hbm_tbytes_per_s),
            memory_bound_time_s(backward, bytes_per_element, hbm_tbytes_per_s))


def host_launch_floor_s(gpu_s: float, kernels: float, launch_us: float) -> float:
    """Time of a run of ``kernels`` kernels whose GPU time is ``gpu_s`` [s] when the host launches
    them one by one: ``max(gpu_s, kernels x launch_us)``. The host queues launches ahead of the GPU,
    so launch cost is exposed only where it exceeds the kernels' own time (CUDA.jl 'Graphs': 80
    short kernels take 260 us eagerly, 70 us as a graph)."""
    return max(gpu_s, kernels * launch_us * 1e-6)


def fp8_backward_gemm_time_s(backward_gemm_s: float, split_accumulator_slowdown: float) -> float:
    """Backward time of FP8 GEMMs that take ``backward_gemm_s`` on the fast-accumulation curve [s]:
    ``backward_gemm_s x split_accumulator_slowdown``.

    Transformer Engine runs the forward (fprop) GEMM with cuBLASLt fast accumulation and the
    data- and weight-gradient GEMMs with the split accumulator (``_2X_ACC_FPROP = False``,
    ``_2X_ACC_DGRAD = _2X_ACC_WGRAD = True`` in transformer_engine/pytorch/module/base.py, passed
    as ``CUBLASLT_MATMUL_DESC_FAST_ACCUM = !use_split_accumulator``); the FP8 efficiency curve is
    microbenchmarked with fast accumulation (superbench ``cublaslt_gemm`` sets it to 1), so the
    two backward GEMMs run ``split_accumulator_slowdown`` (catalog
    ``fp8_split_accumulator_gemm_slowdown``, a kernel measurement) times slower than the curve."""
    return backward_gemm_s * split_accumulator_slowdown


def overlapped_gemm_time_s(m: float, n: float, k: float, *, chunks: int, sm_fraction: float = 0.0,
                           **gemm) -> float:
    """Time of an M x N x K GEMM run as ``chunks`` GEMMs of ``M / chunks`` rows on ``1 - sm_fraction``
    of the SMs [s]: ``chunks x gemm_time_s(M / chunks, N, K) / (1 - sm_fraction)``.

    Transformer Engine's userbuffers overlap of a tensor-parallel collective with its GEMM splits
    the GEMM along the token dimension so each chunk runs while the next chunk's data moves
    (ring exchange: ``tp`` chunks; pipelined reduce-scatter: ``num_splits`` chunks, 4 in NeMo's
    H100 configs). Smaller GEMMs sit lower on the measured efficiency curve, and a pipelined
    reduce-scatter with ``set_sm_margin`` runs the GEMM without the SMs its communication kernels
    hold (Wang et al., ASPLOS 2023, "Overlap communication with dependent computation via
    decomposition"; NVIDIA/TransformerEngine PR #146)."""
    chunks = max(int(chunks), 1)
    return chunks * gemm_time_s(m / chunks, n, k, **gemm) / (1.0 - sm_fraction)


def output_layer_precision(precision: str) -> str:
    """The precision the output (logits) GEMM runs in when the layers run in ``precision``.

    FP8 training applies only to Transformer Engine modules inside ``fp8_autocast``; Megatron-Core's
    GPT output layer is ``tensor_parallel.ColumnParallelLinear`` (megatron/core/models/gpt/
    gpt_model.py), not a TE module, so under an FP8 recipe it runs in BF16. Other precisions are
    unchanged."""
    return "bf16" if precision == "fp8" else precision


def attention_kernel_tokens(seq_tokens: float, cp: int) -> float:
    """Sequence length the attention kernel sees per call [tokens]: ``s / cp``.

    With context parallelism the ring attention of Megatron-Core / Transformer Engine
    (``AttnFuncWithCPAndKVP2P``) runs ``cp`` steps per layer; in each, the rank's ``s/cp`` query
    tokens attend to one ``s/cp``-token K/V chunk received from its ring neighbour (causal on the
    rank's own chunk, unmasked on the others), so each kernel call is an ``s/cp``-long attention and
    runs at the microbenchmarked rate for that length (the FLOPs are unchanged)."""
    return seq_tokens / max(cp, 1)


#: GEMMs whose tensor-parallel collective Transformer Engine overlaps by chunking (userbuffers): the
#: forward GEMMs (ring-exchange all-gather before QKV and FFN up, reduce-scatter after the attention
#: projection and FFN down) ...
_TP_OVERLAPPED_GEMMS = frozenset({"qkv", "attention_output", "ffn_up", "ffn_down"})
#: ... and the data-gradient GEMMs behind a ring-exchange all-gather of the output gradient.
_TP_RING_DGRAD_GEMMS = frozenset({"attention_output", "ffn_down"})


def layer_gemm_shapes(dims, tokens: float, tp: int, ep: int = 1) -> list[tuple[str, float, float, float, int]]:
    """The forward GEMMs of one layer on one TP rank: (name, M, N, K, count) (module docstring)."""
    h = dims.hidden
    kv = h * dims.kv_heads / dims.heads
    f = dims.ffn_hidden
    up = (dims.ffn_matrices - 1) * f / tp
    shapes = [("qkv", tokens, (h + 2 * kv) / tp, h, 1), ("attention_output", tokens, h, h / tp, 1)]
    if dims.experts > 1:
        rows = tokens * ep * dims.experts_per_token / dims.experts
        count = max(dims.experts // max(ep, 1), 1)
        shapes += [("expert_up", rows, up, h, count), ("expert_down", rows, h, f / tp, count)]
    else:
        shapes += [("ffn_up", tokens, up, h, 1), ("ffn_down", tokens, h, f / tp, 1)]
    return shapes


def logits_gemm_shape(dims, tokens: float, tp: int) -> tuple[str, float, float, float, int]:
    """The output-layer GEMM on one TP rank: (``logits``, T, V/t, h, 1)."""
    return ("logits", tokens, dims.vocab / tp, dims.hidden, 1)


@dataclass(frozen=True)
class OpTimes:
    """Forward, backward and recompute time of a group of operations [s]."""

    forward_s: float = 0.0
    backward_s: float = 0.0
    recompute_s: float = 0.0

    @property
    def total_s(self) -> float:
        return self.forward_s + self.backward_s + self.recompute_s

    def __add__(self, other: OpTimes) -> OpTimes:
        return OpTimes(self.forward_s + other.forward_s, self.backward_s + other.backward_s,
                       self.recompute_s + other.recompute_s)

    def scaled(self, factor: float) -> OpTimes:
        return OpTimes(self.forward_s * factor, self.backward_s * factor, self.recompute_s * factor)


@dataclass(frozen=True)
class LayerCompute:
    """One layer's (or the output layer's) compute by kind: gemm, attention, memory-bound."""

    parts: dict[str, OpTimes] = field(default_factory=dict)

    @property
    def total(self) -> OpTimes:
        out = OpTimes()
        for value in self.parts.values():
            out = out + value
        return out


def sustained_points(points, factor: float):
    """A burst-measured efficiency curve as sustained back-to-back GEMMs run it: every efficiency
    ``x factor`` (catalog ``gemm_efficiency.<dtype>.sustained``).

    Under back-to-back GEMMs a power-limited GPU's clocks settle within seconds below the burst
    clocks (NVIDIA/cutlass GEMM measurement guidelines: clocks oscillate for ~3 s before settling),
    so a curve timed over a few iterations overstates training's sustained rate; the factor is the
    sustained/burst throughput of the same GEMM measured on the same GPU."""
    return [(x, y * factor) for x, y in points]


def gemm_points(gpu_compute, precision: str):
    """The GEMM efficiency curve for ``precision`` (fp16 uses bf16's; same tensor-core peak), at
    sustained clocks (``sustained_points`` when the curve was measured in bursts)."""
    curves = gpu_compute.gemm_efficiency
    curve = curves.get(precision) or (curves.get("bf16") if precision in ("fp16", "bf16") else None)
    if curve is None:
        from fabricplan.errors import InputError

        raise InputError(f"the GPU's compute data has no {precision} GEMM efficiency curve; known: "
                         f"{', '.join(curves)}", location="precision")
    return sustained_points(curve.points, curve.sustained.factor) if curve.sustained else curve.points


def _parameter_reader(catalog):
    """``name -> float`` over the catalog's ``perf_defaults`` parameters, resolved once per call
    (the same values as ``perf_parameter``; one catalog look-up instead of one per name)."""
    from fabricplan.catalog.catalog import require_catalog

    parameters = require_catalog(catalog, "perf.compute").perf_defaults.parameters
    return lambda name: float(parameters[name].value) if name in parameters else perf_parameter(name, catalog)


def layer_compute(dims, gpu_compute, *, peak_tflops: float, precision: str, micro_batch: int,
                  seq_tokens: int, tp: int, cp: int, ep: int, recompute: str, sequence_parallel: bool,
                  attention_kernel: str = "flash", catalog, tp_overlap: bool = False,
                  tp_overlap_sm_fractions: dict[str, float] | None = None) -> LayerCompute:
    """One transformer layer's compute for one micro-batch on one GPU (module docstring).

    ``tp_overlap`` (Transformer Engine userbuffers, tp > 1): the GEMMs overlapped with a ring
    exchange or pipelined collective run chunked (``overlapped_gemm_time_s``): the four forward
    GEMMs and the data-gradient GEMMs of the attention projection and FFN down (ring all-gather);
    the forward GEMMs followed by a pipelined reduce-scatter also without the share of the SMs its
    communication kernels hold, ``tp_overlap_sm_fractions`` (forward GEMM name -> share; default:
    the attention projection's ``tp_overlap_pipeline_sm_fraction``). The other backward GEMMs
    overlap their collectives in bulk, unchunked (the SMs of those go to the step model's
    contention, ``step.userbuffers_bulk_sm_share``).

    Parts: ``gemm``, ``attention`` (the core; unfused: scaled to the head dimension and with its
    dropout), ``memory_bound`` (norms, residual adds, activation), ``fp8_cast`` (FP8 only), and
    ``launch`` (the host launch floor's excess over the GPU time, usually 0)."""
    points = gemm_points(gpu_compute, precision)
    hbm = gpu_compute.hbm.tbytes_per_s
    p = _parameter_reader(catalog)
    element = p("activation_bytes_per_element")
    tokens = micro_batch * seq_tokens / cp
    shapes = layer_gemm_shapes(dims, tokens, tp, ep)
    kw = dict(peak_tflops=peak_tflops, points=points, hbm_tbytes_per_s=hbm, element_bytes=element)
    chunks = tp if tp_overlap and tp > 1 else 1
    if tp_overlap_sm_fractions is None:
        tp_overlap_sm_fractions = {"attention_output": p("tp_overlap_pipeline_sm_fraction")}
    sm_fractions = tp_overlap_sm_fractions if chunks > 1 else {}
    gemm = gemm_bwd = 0.0
    for name, m, n, k, count in shapes:
        plain = gemm_time_s(m, n, k, **kw)
        if chunks > 1 and name in _TP_OVERLAPPED_GEMMS:
            forward = overlapped_gemm_time_s(m, n, k, chunks=chunks,
                                             sm_fraction=sm_fractions.get(name, 0.0), **kw)
            dgrad = overlapped_gemm_time_s(m, n, k, chunks=chunks, **kw) if name in _TP_RING_DGRAD_GEMMS else plain
        else:
            forward = dgrad = plain
        gemm += count * forward
        gemm_bwd += count * (dgrad + plain)  # data gradient + weight gradient, each the forward's FLOPs
    curve = gpu_compute.attention.get(attention_kernel)
    if curve is None:
        from fabricplan.errors import InputError

        raise InputError(f"the GPU's compute data has no '{attention_kernel}' attention rate; known: "
                         f"{', '.join(gpu_compute.attention)}", location="attention_kernel")
    head_dim = dims.hidden / dims.heads
    heads = dims.heads / tp
    flops = attention_flops(micro_batch, heads, seq_tokens / cp, seq_tokens, head_dim, causal=curve.causal)
    attn_fwd, attn_bwd = attention_time_s(flops, attention_kernel_tokens(seq_tokens, cp), curve.points,
                                          p("attention_backward_to_forward_flops"))
    unfused = attention_kernel == "unfused"
    if unfused:
        scale = unfused_attention_rate_scale(head_dim, curve.head_dim, peak_tflops / hbm)
        attn_fwd, attn_bwd = attn_fwd / scale, attn_bwd / scale
    slowest = 1.0 / (1.0 - p("compute_slowest_gpu_derate"))
    gemm, gemm_bwd, attn_fwd, attn_bwd = gemm * slowest, gemm_bwd * slowest, attn_fwd * slowest, attn_bwd * slowest
    if unfused:  # dropout on the b x (a/t) x s_q x s_k probabilities (memory-bound, not derated)
        probabilities = micro_batch * heads * (seq_tokens / cp) * seq_tokens
        attn_fwd += memory_bound_time_s(probabilities, p("attention_dropout_forward_bytes_per_element"), hbm)
        attn_bwd += memory_bound_time_s(probabilities, p("attention_dropout_backward_bytes_per_element"), hbm)
    hidden = tokens * dims.hidden / (tp if sequence_parallel else 1)
    ffn = tokens * dims.ffn_hidden * dims.experts_per_token / tp
    act = "swiglu" if dims.gated_ffn else "gelu"
    mem_fwd = (memory_bound_time_s(hidden, 2 * p("layernorm_forward_bytes_per_element")
                                   + 2 * p("residual_dropout_add_forward_bytes_per_element"), hbm)
               + memory_bound_time_s(ffn, p(f"{act}_forward_bytes_per_element"), hbm))
    mem_bwd = (memory_bound_time_s(hidden, 2 * p("layernorm_backward_bytes_per_element")
                                   + 2 * p("residual_dropout_add_backward_bytes_per_element"), hbm)
               + memory_bound_time_s(ffn, p(f"{act}_backward_bytes_per_element"), hbm))
    cast_fwd = cast_bwd = 0.0
    if precision == "fp8":
        cast_fwd, cast_bwd = fp8_cast_time_s(shapes, p("fp8_cast_transpose_bytes_per_element"), hbm)
    full = recompute == "full"
    if precision == "fp8":
        gemm_bwd = fp8_backward_gemm_time_s(gemm_bwd, p("fp8_split_accumulator_gemm_slowdown"))
    parts = {
        "gemm": OpTimes(gemm, gemm_bwd, gemm if full else 0.0),
        "attention": OpTimes(attn_fwd, attn_bwd, attn_fwd if recompute in ("full", "selective") else 0.0),
        "memory_bound": OpTimes(mem_fwd, mem_bwd, mem_fwd if full else 0.0),
        "fp8_cast": OpTimes(cast_fwd, cast_bwd, cast_fwd if full else 0.0)}
    # Host launch floor: kernels per layer = GEMMs (x2 backward) + 5 memory-bound ops (2 norms, 2
    # residual adds, the activation) + the attention core's kernels (+ one cast per GEMM in FP8).
    gemms = sum(count for *_, count in shapes)
    casts = gemms if precision == "fp8" else 0
    kind = "unfused" if unfused else "flash"
    kernels_fwd = gemms + 5 + p(f"attention_kernels_forward_{kind}") + casts
    kernels_bwd = 2 * gemms + 5 + p(f"attention_kernels_backward_{kind}") + casts
    launch_us = p("kernel_launch_cpu_us")
    gpu = LayerCompute(parts=parts).total
    launch_fwd = host_launch_floor_s(gpu.forward_s, kernels_fwd, launch_us) - gpu.forward_s
    launch_bwd = host_launch_floor_s(gpu.backward_s, kernels_bwd, launch_us) - gpu.backward_s
    parts["launch"] = OpTimes(launch_fwd, launch_bwd, launch_fwd if gpu.recompute_s else 0.0)
    return LayerCompute(parts=parts)


def logits_compute(dims, gpu_compute, *, peak_tflops: float, precision: str, micro_batch: int,
                   seq_tokens: int, tp: int, cp: int, catalog,
                   output_peak_tflops: float | None = None) -> LayerCompute:
    """The output layer for one micro-batch on one GPU: its GEMM (forward + 2 x backward) in
    ``output_layer_precision(precision)`` at ``output_peak_tflops`` (that precision's peak; default
    ``peak_tflops``) and the fp32 cross-entropy loss over its ``T x V/t`` logits
    (``cross_entropy_time_s``)."""
    points = gemm_points(gpu_compute, output_layer_precision(precision))
    peak_tflops = output_peak_tflops or peak_tflops
    hbm = gpu_compute.hbm.tbytes_per_s
    _, m, n, k, _ = logits_gemm_shape(dims, micro_batch * seq_tokens / cp, tp)
    t = gemm_time_s(m, n, k, peak_tflops=peak_tflops, points=points, hbm_tbytes_per_s=hbm,
                    element_bytes=perf_parameter("activation_bytes_per_element", catalog))
    t /= 1.0 - perf_parameter("compute_slowest_gpu_derate", catalog)
    loss_fwd, loss_bwd = cross_entropy_time_s(m * n, perf_parameter("cross_entropy_forward_bytes_per_logit", catalog),
                                              perf_parameter("cross_entropy_backward_bytes_per_logit", catalog), hbm)
    return LayerCompute(parts={"gemm": OpTimes(t, 2 * t, 0.0), "loss": OpTimes(loss_fwd, loss_bwd, 0.0)})
