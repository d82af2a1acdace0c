"""GPU memory per rank of a training job: does the layout fit?

Per GPU of the fullest pipeline stage, in bytes (Psi = parameters that GPU holds):

* Psi: the stage's share of the model (``L_stage / L``, as the step model counts it), dense weights
  split over ``tp``, expert weights over ``tp x ep``.
* Model states, mixed-precision Adam ([1]_ §3.1, §5.1): ``w`` bytes of 16-bit weights, ``g`` bytes
  of gradients and ``K`` bytes of fp32 master weights, momentum and variance per parameter
  (w = g = 2, K = 12: 16 Psi; bf16 and fp8 jobs keep fp32 gradients by default, g = 4: 18 Psi, and
  a job's ``gradient_dtype`` overrides, ``perf.params.gradient_bytes_per_parameter``). ZeRO shards
  them over the ``N_d`` data-parallel ranks holding the same weights (``dp x cp``; experts
  ``dp x cp / ep``): stage 1 (and Megatron's distributed optimizer) ``(w + g) Psi + K Psi / N_d``; stage 2 ``w Psi + (g + K) Psi / N_d``; stage 3
  ``(w + g + K) Psi / N_d``.
* Activations of one micro-batch and one layer, with ``s`` the sequence per context-parallel rank
  (``seq / cp``), ``b`` the micro-batch, ``h`` hidden, ``a`` heads, ``t`` = tp, ``F`` the FFN width a
  token passes through (``ffn_hidden x experts_per_token``), 16-bit activations and 1-byte
  dropout masks ([2]_ §4, Table 2, with Megatron-LM's generalisation of the MLP width: ``34`` =
  ``18 + 4F/h`` at ``F = 4h``)::

      selective recompute, sequence parallel      s b h (18 + 4F/h) / t
      selective recompute, no sequence parallel   s b h (10 + (8 + 4F/h) / t)
      no recompute, unfused attention             the above + s b h x 5 a s / (h t)   (attention s^2 terms)
      no recompute, FlashAttention                as selective: the kernel keeps no s x s tensor and
                                                  recomputes it in its backward ([3]_ §3.1, O(s) memory)
      full recompute                              2 s b h (/ t with sequence parallel) per layer stored,
                                                  plus one layer's selective-recompute working set

* In flight, 1F1B ([2]_ §4.2.3): the first stage holds ``min(pp, m)`` micro-batches of its
  ``L_stage`` layers; the interleaved schedule with ``v`` chunks multiplies that by
  ``1 + (pp - 1) / (pp v)``. Without pipelining, one micro-batch of all layers.
* Output layer ([2]_ §4.3): ``4 s b h / t x (1 + V / h)`` (final LayerNorm, projection input, fp32
  logits), counted on the fullest GPU.
* Not for the model: ``memory_reserved_bytes_per_gpu`` (CUDA context, NCCL, workspace) and
  ``memory_fragmentation_fraction`` of the GPU's memory (catalog ``perf_defaults``).

The GPU's memory is ``hbm_gbytes x 10^9`` bytes (vendors quote decimal gigabytes; the H100's
"80 GB" reads as 79.6 GiB in nvidia-smi, so this errs on the safe side by under 7 %).

References
----------
.. [1] S. Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion Parameter
   Models", SC'20, arXiv:1910.02054.
.. [2] V. Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models",
   MLSys 2023, arXiv:2205.05198 (see docs/reference/compute_microbench.md §5).
.. [3] T. Dao et al., "FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness",
   NeurIPS 2022, arXiv:2205.14135.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fabricplan.perf.flops import TransformerDims
from fabricplan.perf.latency import perf_parameter
from fabricplan.perf.params import gradient_bytes_per_parameter
from fabricplan.spec.job import pipeline_stage_layers

GIB = 2 ** 30


@dataclass(frozen=True)
class MemoryEstimate:
    """Bytes per GPU of the fullest pipeline stage, by part, and the memory available."""

    breakdown_bytes: dict[str, float] = field(default_factory=dict)
    capacity_bytes: float = 0.0

    @property
    def total_bytes(self) -> float:
        return sum(self.breakdown_bytes.values())

    @property
    def fits(self) -> bool:
        return self.total_bytes <= self.capacity_bytes

    def shortfall_message(self) -> str:
        """"does not fit: needs X GiB per GPU, has Y GiB" with the largest parts."""
        parts = ", ".join(f"{name.replace('_', ' ')} {value / GIB:,.1f}"
                          for name, value in sorted(self.breakdown_bytes.items(), key=lambda kv: -kv[1]))
        return (f"does not fit: needs {self.total_bytes / GIB:,.1f} GiB per GPU, has "
                f"{self.capacity_bytes / GIB:,.1f} GiB ({parts} GiB); raise tp or pp, use ZeRO stage 2/3, "
                "recompute activations or shorten the micro-batch")


def activation_bytes_per_layer(dims: TransformerDims, seq_tokens: float, micro_batch: int, tp: int,
                               recompute: str, sequence_parallel: bool, attention_kernel: str = "unfused",
                               precision: str = "bf16") -> float:
    """Activation bytes one layer stores for one micro-batch on one GPU (module docstring, [2]_ Table 2;
    with ``attention_kernel="flash"`` no recompute stores no s x s tensor, [3]_; FP8: the four GEMM
    inputs are kept in FP8, :func:`fp8_saved_input_savings`)."""
    s, b, h, a = seq_tokens, micro_batch, dims.hidden, dims.heads
    width = dims.ffn_hidden * dims.experts_per_token
    sbh = s * b * h
    unsharded = 10.0  # two LayerNorm inputs, the QKV and FC1 inputs, two dropout masks
    sharded = 8 + 4 * width / h  # MLP and attention terms split by tensor parallelism (24 at F = 4h)
    if precision == "fp8":
        saved_unsharded, saved_sharded = fp8_saved_input_savings(width / h)
        unsharded, sharded = unsharded - saved_unsharded, sharded - saved_sharded
    selective = sbh * (unsharded + sharded) / tp if sequence_parallel else sbh * (unsharded + sharded / tp)
    if recompute == "selective" or (recompute == "none" and attention_kernel == "flash"):
        return selective
    if recompute == "none":
        return selective + sbh * 5 * a * s / (h * tp)
    return 2 * sbh / (tp if sequence_parallel else 1)  # full: the layer input only


def fp8_saved_input_savings(width_over_hidden: float) -> tuple[float, float]:
    """(unsharded, tensor-parallel-sharded) activation bytes per ``s b h`` a layer saves in FP8 training.

    Transformer Engine keeps the input a Linear module saves for its weight-gradient GEMM as the FP8
    tensor it cast for the forward GEMM (transformer_engine/pytorch/module/linear.py ``_Linear.forward``:
    ``saved_inputmat`` is the quantized ``inputmat``, kept with its column-wise data only, when FP8 is
    on), one byte per element instead of two. The four GEMM inputs of a layer ([2]_ Table 2's terms):
    QKV and FC1 inputs (2 s b h each, not split by tensor parallelism without sequence parallelism),
    the attention projection input (2 s b h) and the FC2 input (2 F/h s b h), split by it; half of
    each is saved: (1 + 1, 1 + F/h)."""
    return 2.0, 1.0 + width_over_hidden


def memory_per_gpu(job, dims: TransformerDims, gpu, *, tp: int, pp: int, dp: int, cp: int, ep: int,
                   micro_batches: int, virtual_stages: int = 1, catalog) -> MemoryEstimate:
    """Memory per GPU of ``job`` (a JobSpec) laid out as given (formulas in the module docstring)."""
    layers_per_stage = max(pipeline_stage_layers(job, dims.layers, pp))
    stage_share = layers_per_stage / dims.layers
    expert_params = dims.expert_parameters()
    dense_local = (dims.parameters() - expert_params) * stage_share / tp
    expert_local = expert_params * stage_share / (tp * ep)
    weight = perf_parameter("weight_bytes_per_parameter", catalog)
    grad = gradient_bytes_per_parameter(job.precision, job.gradient_dtype, catalog=catalog)
    optim = perf_parameter("optimizer_state_bytes_per_parameter", catalog)
    stage = job.zero_stage

    def states(psi: float, shards: int) -> tuple[float, float, float]:
        shards = max(shards, 1)
        return (psi * weight / (shards if stage >= 3 else 1), psi * grad / (shards if stage >= 2 else 1),
                psi * optim / (shards if stage >= 1 else 1))

    dense = states(dense_local, dp * cp)
    expert = states(expert_local, dp * cp // max(ep, 1))
    seq = job.seq_len_tokens / cp
    b = job.micro_batch_sequences
    per_layer = activation_bytes_per_layer(dims, seq, b, tp, job.recompute, job.sequence_parallel,
                                           job.attention_kernel, job.precision)
    in_flight = min(pp, micro_batches) if pp > 1 else 1
    interleave = 1 + (pp - 1) / (pp * virtual_stages) if virtual_stages > 1 else 1.0
    # Offloaded layers (activation_offload_layers) keep their saved tensors in host memory; at least
    # one layer's stay on the GPU (the one computing).
    resident_layers = max(layers_per_stage - getattr(job, "activation_offload_layers", 0), 1)
    activations = per_layer * resident_layers * in_flight * interleave
    if job.recompute == "full":  # one layer is rematerialised at a time during the backward pass
        activations += activation_bytes_per_layer(dims, seq, b, tp, "selective", job.sequence_parallel,
                                                  precision=job.precision)
    output = 4 * seq * b * dims.hidden / tp * (1 + dims.vocab / dims.hidden)
    capacity = gpu.hbm_gbytes * 1e9
    reserved = (perf_parameter("memory_reserved_bytes_per_gpu", catalog)
                + perf_parameter("memory_fragmentation_fraction", catalog) * capacity)
    breakdown = {"weights": dense[0] + expert[0], "gradients": dense[1] + expert[1],
                 "optimizer_states": dense[2] + expert[2], "activations": activations,
                 "output_layer": output, "reserved": reserved}
    return MemoryEstimate(breakdown_bytes=breakdown, capacity_bytes=capacity)


def least_memory(job, dims: TransformerDims, gpu, *, gpus: int, catalog) -> MemoryEstimate:
    """The least memory per GPU ``job`` can run in on ``gpus`` GPUs with its parallel layout: its
    own ZeRO stage and layout with full activation recomputation (no recompute setting stores
    fewer activations). Over the GPU's memory, no setting of this layout can run."""
    tp, pp, cp, ep = job.tp, job.pp, job.cp, job.ep
    dp = job.dp or max(gpus // (tp * pp * cp), 1)
    micro_batches = max(job.global_batch_sequences // (dp * job.micro_batch_sequences), 1)
    full = job.model_copy(update={"recompute": "full"}) if job.recompute != "full" else job
    return memory_per_gpu(full, dims, gpu, tp=tp, pp=pp, dp=dp, cp=cp, ep=ep, micro_batches=micro_batches,
                          virtual_stages=job.virtual_pipeline_stages, catalog=catalog)
