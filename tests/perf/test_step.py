"""Training step-time model."""

import pytest

from fabricplan.catalog import default_catalog
from fabricplan.errors import InputError
from fabricplan.perf.compute import layer_compute, logits_compute
from fabricplan.perf.flops import model_dims, training_flops_per_token
from fabricplan.perf.step import ClusterShape, _per_operation_compute, data_parallel_exposed_s, step_time
from fabricplan.spec import JobSpec

CATALOG = default_catalog()
H100 = ClusterShape(gpu=CATALOG.gpu("h100-sxm"), gpus=1024, gpus_per_node=8, scale_up_domain=8, nics_per_node=8)


def slowest(gpus: int = 1024) -> float:
    """The bundled slowest-GPU factor on the compute of a ``gpus``-GPU job of 8-GPU nodes."""
    from fabricplan.perf.step import slowest_gpu_slowdown

    sigma = CATALOG.perf_defaults.parameters["per_gpu_persistent_throughput_sigma"].value
    return 1 + slowest_gpu_slowdown(gpus, sigma, node_gpus=8)


def job(**kw):
    base = dict(name="j", model="llama3-70b", tp=8, pp=4, global_batch_sequences=512, seq_len_tokens=8192)
    base.update(kw)
    return JobSpec(**base)


def test_narayanan_flops_formula():
    # 96 B s l h^2 (1 + s/6h + V/16lh) = 4.511e18 for GPT-3 at B=1536 (docs/reference/training.md).
    _, hardware = training_flops_per_token(model_dims("gpt3-175b", catalog=CATALOG), 2048, "full")
    assert hardware * 1536 * 2048 == pytest.approx(4.511e18, rel=1e-3)
    model, _ = training_flops_per_token(model_dims("gpt3-175b", catalog=CATALOG), 2048, "none")
    assert model / hardware == pytest.approx(0.75, rel=0.01)  # 72 vs 96 leading factor


@pytest.mark.parametrize("preset", ["gpt3-175b", "llama3-8b", "llama3-70b", "llama3-405b", "mixtral-8x7b"])
def test_presets_run_on_every_fabric(preset):
    kwargs = dict(model=preset, pp=16 if preset == "llama3-405b" else 4)
    if preset == "mixtral-8x7b":
        kwargs.update(ep=8, pp=4)
    for fabric in ("infiniband-ndr", "roce-v2", "ethernet-tcp"):
        result = step_time(job(**kwargs), H100, fabric, catalog=CATALOG)
        assert result.step_time_s >= result.compute_s > 0
        assert 0 < result.mfu < 1


def test_fabric_ordering_and_recompute_cost():
    ib = step_time(job(), H100, "infiniband-ndr", catalog=CATALOG)
    tcp = step_time(job(), H100, "ethernet-tcp", catalog=CATALOG)
    assert tcp.step_time_s >= ib.step_time_s
    full = step_time(job(recompute="full"), H100, "infiniband-ndr", catalog=CATALOG)
    assert full.compute_s > ib.compute_s and full.mfu < ib.mfu


def test_dp_overlap_hides_gradient_traffic():
    exposed = step_time(job(pp=1, tp=8, dp_overlap=False, global_batch_sequences=128), H100, "roce-v2",
                        catalog=CATALOG)
    hidden = step_time(job(pp=1, tp=8, dp_overlap=True, global_batch_sequences=128), H100, "roce-v2",
                       catalog=CATALOG)
    assert exposed.exposed_comm_s["dp"] == pytest.approx(exposed.total_comm_s["dp"])
    # Overlap window: dp_overlap_efficiency 0.9 x the last micro-batch's backward (per-operation
    # compute of the stage without recomputation: 2 x forward GEMMs, attention and memory-bound bwd).
    _, backward, _, _, _ = _per_operation_compute(job(pp=1, tp=8, dp_overlap=True, global_batch_sequences=128),
                                              model_dims("llama3-70b", catalog=CATALOG), CATALOG.gpu("h100-sxm").compute,
                                              peak=989, tp=8, dp=hidden.dp, cp=1, ep=1, catalog=CATALOG,
                                                  stage_layers=[80])
    backward *= slowest()
    assert hidden.exposed_comm_s["dp"] == pytest.approx(hidden.total_comm_s["dp"] - 0.9 * backward, rel=1e-9)
    # The per-operation backward hides about 38 % of it (fp32 gradients: the reduce-scatter moves 4 bytes
    # per parameter).
    assert 0 < hidden.exposed_comm_s["dp"] < 0.7 * exposed.exposed_comm_s["dp"]


def test_data_parallel_queue():
    # One micro-batch: the reduction behind the last backward, as before per-micro-batch traffic existed.
    assert data_parallel_exposed_s(0.3, 0.0, micro_batches=1, period_s=1.0, backward_s=0.2,
                                   overlap_efficiency=0.9) == pytest.approx(0.3 - 0.18)
    # No overlap: every reduction is on the critical path.
    assert data_parallel_exposed_s(0.1, 0.2, micro_batches=8, period_s=1.0, backward_s=0.5,
                                   overlap_efficiency=0.0) == pytest.approx(8 * 0.2 + 0.1)
    # Keeping up (c = 0.2 < 0.9 x 1.0): only the last micro-batch's reduction and the per-step part remain,
    # behind the last backward.
    assert data_parallel_exposed_s(0.1, 0.2, micro_batches=8, period_s=1.0, backward_s=0.1,
                                   overlap_efficiency=0.9) == pytest.approx(0.2 + 0.1 - 0.09)
    # Falling behind (c = 1.0 > 0.9 x 1.0): the backlog grows by 0.1 s per micro-batch.
    assert data_parallel_exposed_s(0.0, 1.0, micro_batches=8, period_s=1.0, backward_s=0.5,
                                   overlap_efficiency=0.9) == pytest.approx(8 * 1.0 - 7 * 0.9 - 0.45)


def test_each_zero_stage_is_one_registered_sharding_scheme():
    # The registry covers exactly the stages a job may name, and each scheme is a plain function of the
    # group's bytes and its collectives (here a fake that prices an operation by name and size).
    from typing import get_args

    from fabricplan.perf.step import DATA_PARALLEL_SHARDING, _reduce_gradients

    assert sorted(DATA_PARALLEL_SHARDING) == sorted(get_args(JobSpec.model_fields["zero_stage"].annotation))
    price = {"all_reduce": 3.0, "reduce_scatter": 1.0, "all_gather": 2.0}
    calls = []

    def collective(op, size):
        calls.append(op)
        return price[op] * size

    grads, weights = 10.0, 100.0
    assert _reduce_gradients(0, grads, weights, collective) == (30.0, 0.0)
    assert _reduce_gradients(1, grads, weights, collective) == (10.0 + 200.0, 0.0)
    assert _reduce_gradients(2, grads, weights, collective) == (200.0, 10.0)
    assert _reduce_gradients(3, grads, weights, collective) == (0.0, 10.0 + 2 * 200.0)
    assert calls == ["all_reduce"] + 3 * ["reduce_scatter", "all_gather"]
    with pytest.raises(InputError, match="unknown ZeRO stage 4"):
        _reduce_gradients(4, grads, weights, collective)


def test_zero_stage_sets_how_often_gradients_move():
    # llama3-70b, tp 8, pp 4, dp 32 on 1,024 GPUs: 512 / 32 = 16 micro-batches per step; 20 layers and
    # 1 / 4 of the model per stage. ZeRO 1 moves the gradients once per step; ZeRO 2 keeps only its
    # gradient shard, so it reduce-scatters after every micro-batch (DeepSpeed#2252) and gathers the
    # weights once; ZeRO 3 (FSDP) also gathers the weights before every forward and backward.
    params = model_dims("llama3-70b", catalog=CATALOG).parameters() / (8 * 4)
    rs = _collective_s("reduce_scatter", 4 * params, 32, 1)
    ag = _collective_s("all_gather", 2 * params, 32, 1)
    results = {stage: step_time(job(zero_stage=stage), H100, "roce-v2", catalog=CATALOG) for stage in (1, 2, 3)}
    m = results[1].micro_batches
    assert m == 16
    assert results[1].total_comm_s["dp"] == pytest.approx(rs + ag, rel=1e-9)
    assert results[2].total_comm_s["dp"] == pytest.approx(m * rs + ag, rel=1e-9)
    assert results[3].total_comm_s["dp"] == pytest.approx(m * (rs + 2 * ag), rel=1e-9)
    assert results[1].step_time_s <= results[2].step_time_s <= results[3].step_time_s
    # On kernel TCP the per-micro-batch reduce-scatter outlasts a micro-batch: the step waits on it.
    tcp = step_time(job(zero_stage=2), H100, "ethernet-tcp", catalog=CATALOG)
    assert any("waits on the network" in note for note in tcp.notes)
    assert tcp.exposed_comm_s["dp"] > 0.5 * (m - 1) * (tcp.total_comm_s["dp"] / m)
    # A single micro-batch (m = 1): every stage moves the same bytes as before, once.
    one = {stage: step_time(job(zero_stage=stage, global_batch_sequences=32), H100, "roce-v2", catalog=CATALOG)
           for stage in (1, 2)}
    assert one[1].micro_batches == 1
    assert one[2].total_comm_s["dp"] == pytest.approx(one[1].total_comm_s["dp"], rel=1e-9)


def test_gpu_hours_for_budget():
    result = step_time(job(token_budget=1e12), H100, "infiniband-ndr", catalog=CATALOG)
    assert result.gpu_hours_for_budget == pytest.approx(1e12 / result.tokens_per_s * 1024 / 3600)


@pytest.mark.parametrize("kwargs, message", [
    (dict(tp=8, pp=3), "does not divide"),
    (dict(tp=16), "scale-up domain"),
    (dict(dp=4), "tp x pp x cp x dp"),
    (dict(global_batch_sequences=100), "multiple of dp"),
    (dict(model="gpt-5"), "unknown model preset"),
    (dict(precision="fp8", model="llama3-8b", tp=1, pp=1), None),
])
def test_clear_errors(kwargs, message):
    if message is None:
        a100 = ClusterShape(gpu=CATALOG.gpu("a100-sxm-80gb"), gpus=8, gpus_per_node=8, scale_up_domain=8,
                            nics_per_node=8)
        with pytest.raises(InputError, match="no fp8 peak"):
            step_time(job(**kwargs, global_batch_sequences=8), a100, "infiniband-ndr", catalog=CATALOG)
        return
    with pytest.raises(InputError, match=message):
        step_time(job(**kwargs), H100, "infiniband-ndr", catalog=CATALOG)


def test_interleaved_schedule_divides_bubble_by_v():
    """Narayanan et al. SC'21 §2.2.2: bubble (p-1)/(v*m) of the ideal time, PP traffic x v."""
    base = dict(model="llama3-405b", tp=8, pp=16, global_batch_sequences=128, seq_len_tokens=8192)
    cluster = ClusterShape(gpu=CATALOG.gpu("h100-sxm"), gpus=1024, gpus_per_node=8, scale_up_domain=8,
                           nics_per_node=8)
    one = step_time(job(**base), cluster, "infiniband-ndr", catalog=CATALOG)
    assert one.virtual_pipeline_stages == 1 and one.micro_batches == 16
    for v in (2, 4):
        inter = step_time(job(**base, virtual_pipeline_stages=v), cluster, "infiniband-ndr", catalog=CATALOG)
        t_mb_one = one.bubble_s / 15
        t_mb = inter.bubble_s * v / 15
        assert inter.bubble_s / (inter.micro_batches * t_mb) == pytest.approx(15 / (v * 16))
        assert inter.total_comm_s["pp"] == pytest.approx(v * one.total_comm_s["pp"], rel=1e-9)
        assert inter.compute_s == pytest.approx(one.compute_s)
        # 126 layers: the fullest stage has ceil(126/16) = 8 layers for every v -> same TP volume.
        assert t_mb == pytest.approx(t_mb_one + (v - 1) * one.total_comm_s["pp"] / 16, rel=1e-6)
        assert inter.step_time_s < one.step_time_s and inter.mfu > one.mfu


def test_interleaved_default_leaves_gpt3_unchanged():
    from validation.perf import gpt3_rows

    step, _ = gpt3_rows()
    assert step.model == pytest.approx(GPT3_SELENE_STEP_S, abs=0.01)  # docs/validation.md
    explicit = job(model="gpt3-175b", pp=16, virtual_pipeline_stages=1, global_batch_sequences=512,
                   seq_len_tokens=2048)
    default = job(model="gpt3-175b", pp=16, global_batch_sequences=512, seq_len_tokens=2048)
    assert step_time(explicit, H100, "roce-v2", catalog=CATALOG).step_time_s == pytest.approx(
        step_time(default, H100, "roce-v2", catalog=CATALOG).step_time_s)


def test_interleaved_needs_enough_layers_and_pipeline():
    with pytest.raises(InputError, match=r"pp x virtual_pipeline_stages = 4 x 21 = 84 exceeds the model's 80"):
        step_time(job(virtual_pipeline_stages=21), H100, "infiniband-ndr", catalog=CATALOG)
    with pytest.raises(InputError, match="needs pipeline parallelism"):
        step_time(job(pp=1, virtual_pipeline_stages=2, global_batch_sequences=128), H100, "infiniband-ndr",
                  catalog=CATALOG)
    step_time(job(virtual_pipeline_stages=20), H100, "infiniband-ndr", catalog=CATALOG)  # 4 x 20 = 80 layers
    with pytest.raises(ValueError):
        JobSpec(name="j", model="llama3-8b", global_batch_sequences=8, seq_len_tokens=8, virtual_pipeline_stages=0)


def test_inline_gpu_perf_fields_are_used():
    from fabricplan.perf.collectives import collective_time
    from fabricplan.spec.models import GpuInline

    base = dict(peak_dense_tflops={"bf16": 989}, hbm_gbytes=80, nvlink_bandwidth_gbytes_per_s=900, power_w=700)
    plain = GpuInline(**base)
    tuned = GpuInline(**base, architecture="future", compute_capability=90, nvlink_links=9,
                      achievable_fraction_of_peak=0.6)
    shape = dict(gpus=1024, gpus_per_node=8, scale_up_domain=8, nics_per_node=8)
    a = step_time(job(), ClusterShape(gpu=plain, **shape), "infiniband-ndr", catalog=CATALOG)
    b = step_time(job(), ClusterShape(gpu=tuned, **shape), "infiniband-ndr", catalog=CATALOG)
    assert a.compute_s / b.compute_s == pytest.approx(0.6 / 0.4)  # perf default 0.4 vs the inline 0.6
    ring = dict(algorithm="ring", catalog=CATALOG)
    # 9 links x 20.6 GB/s (sm90) = 185.4 GB/s busbw on one node vs 18 links from 900 GB/s / 50.
    slow = collective_time("all_gather", 1 << 32, 8, 8, "infiniband-ndr", tuned, **ring)
    fast = collective_time("all_gather", 1 << 32, 8, 8, "infiniband-ndr", plain, **ring)
    assert fast.busbw_gbytes_per_s == pytest.approx(2 * slow.busbw_gbytes_per_s, rel=0.01)
    assert slow.busbw_gbytes_per_s == pytest.approx(9 * 20.6, rel=0.01)
    with pytest.raises(ValueError):
        GpuInline(**base, achievable_fraction_of_peak=1.5)


def _collective_s(op, size, ranks, per_node, fabric="roce-v2"):
    from fabricplan.perf.collectives import collective_time

    return collective_time(op, int(size), ranks, per_node, fabric, CATALOG.gpu("h100-sxm"), nics_per_node=8,
                           catalog=CATALOG).time_us * 1e-6


def _zero1_s(params, ranks, per_node):
    """Distributed-optimizer (ZeRO >= 1) traffic of ``params`` parameters: reduce-scatter of the fp32
    gradients (bf16 training's default) and all-gather of the updated bf16 weights."""
    return (_collective_s("reduce_scatter", 4 * params, ranks, per_node)
            + _collective_s("all_gather", 2 * params, ranks, per_node))


def test_sequence_parallel_tp_traffic_is_all_gather_plus_reduce_scatter():
    # Korthikanti et al. 2022: SP replaces each TP all-reduce by an all-gather and a reduce-scatter of
    # the same b x s x h activation (4 AG + 4 RS per layer with selective recomputation).
    result = step_time(job(), H100, "roce-v2", catalog=CATALOG)  # llama3-70b, tp 8, pp 4: 20 layers/stage
    activation = 1 * 8192 * 8192 * 2
    one = _collective_s("all_gather", activation, 8, 8) + _collective_s("reduce_scatter", activation, 8, 8)
    assert result.total_comm_s["tp"] == pytest.approx(result.micro_batches * 20 * 4 * one, rel=1e-9)
    plain = step_time(job(sequence_parallel=False), H100, "roce-v2", catalog=CATALOG)
    assert plain.total_comm_s["tp"] == pytest.approx(
        plain.micro_batches * 20 * 4 * _collective_s("all_reduce", activation, 8, 8), rel=1e-9)


@pytest.mark.parametrize("seq, hidden", [(2048, False), (4096, True)])
def test_context_parallel_hides_behind_one_layers_attention(seq, hidden):
    # Per layer and micro-batch: K/V AG fwd + AG and RS bwd, hidden behind 3 x 4 s h FLOPs per token of
    # the layer's attention core, fwd + bwd at the measured FlashAttention rate (perf/compute.py).
    result = step_time(job(cp=2, seq_len_tokens=seq), H100, "roce-v2", catalog=CATALOG)
    kv_bytes = 2 * 1 * seq / 2 * 8192 * 8 / 64 * 2 / 8  # K and V, GQA 8 of 64 heads, bf16, / tp
    per_layer = (2 * _collective_s("all_gather", 2 * kv_bytes, 2, 1)
                 + _collective_s("reduce_scatter", 2 * kv_bytes, 2, 1))
    parts = layer_compute(model_dims("llama3-70b", catalog=CATALOG), CATALOG.gpu("h100-sxm").compute, peak_tflops=989,
                          precision="bf16", micro_batch=1, seq_tokens=seq, tp=8, cp=2, ep=1,
                          recompute="selective", sequence_parallel=True, catalog=CATALOG).parts["attention"]
    attention = (parts.forward_s + parts.backward_s) * slowest()
    assert (per_layer < attention) == hidden
    expected = result.micro_batches * 20 * max(per_layer - attention, 0.0)
    assert result.exposed_comm_s["cp"] == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert result.total_comm_s["cp"] == pytest.approx(result.micro_batches * 20 * per_layer, rel=1e-9)


def test_moe_gradients_shard_every_expert_over_ep():
    # Mixtral 8x7B: 8 experts x 32 layers x 3 x 4096 x 14336 FFN weights are sharded over ep; the rest
    # (attention, embeddings) is replicated. DP traffic (ZeRO 1: reduce-scatter of the fp32 gradients and
    # all-gather of the bf16 weights): the dense part over the dp = 32 ranks, the expert part only over the
    # dp / ep = 4 expert-data-parallel ranks (the old model reduced both over all 32 ranks).
    dims = model_dims("mixtral-8x7b", catalog=CATALOG)
    experts = 8 * 32 * 3 * 4096 * 14336
    tp, pp, ep = 8, 4, 8
    result = step_time(job(model="mixtral-8x7b", tp=tp, pp=pp, ep=ep), H100, "roce-v2", catalog=CATALOG)
    dense = (dims.parameters() - experts) / (tp * pp)
    expert = experts / (tp * pp * ep)
    expected = _zero1_s(dense, 32, 1) + _zero1_s(expert, 4, 1)
    assert result.total_comm_s["dp"] == pytest.approx(expected, rel=1e-9)
    assert result.total_comm_s["dp"] < _zero1_s(dense + expert, 32, 1)
    # ZeRO 0: one all-reduce of the fp32 gradients, split the same way.
    zero0 = step_time(job(model="mixtral-8x7b", tp=tp, pp=pp, ep=ep, zero_stage=0), H100, "roce-v2",
                      catalog=CATALOG)
    expected0 = _collective_s("all_reduce", 4 * dense, 32, 1) + _collective_s("all_reduce", 4 * expert, 4, 1)
    assert zero0.total_comm_s["dp"] == pytest.approx(expected0, rel=1e-9)
    # fp16 training keeps its gradients in fp16 (Megatron-LM's default without
    # --accumulate-allreduce-grads-in-fp32): half the all-reduce.
    fp16 = step_time(job(model="mixtral-8x7b", tp=tp, pp=pp, ep=ep, zero_stage=0, precision="fp16"), H100,
                     "roce-v2", catalog=CATALOG)
    expected_fp16 = _collective_s("all_reduce", 2 * dense, 32, 1) + _collective_s("all_reduce", 2 * expert, 4, 1)
    assert fp16.total_comm_s["dp"] == pytest.approx(expected_fp16, rel=1e-9)
    # gradient_dtype bf16 (NeMo grad_sync_dtype, --grad-reduce-in-bf16) halves the reduce-scatter only.
    half = step_time(job(model="mixtral-8x7b", tp=tp, pp=pp, ep=ep, gradient_dtype="bf16"), H100, "roce-v2",
                     catalog=CATALOG)
    expected_half = sum(_collective_s(op, 2 * size, ranks, 1) for op in ("reduce_scatter", "all_gather")
                        for size, ranks in ((dense, 32), (expert, 4)))
    assert half.total_comm_s["dp"] == pytest.approx(expected_half, rel=1e-9)
    assert half.total_comm_s["dp"] < result.total_comm_s["dp"]


def test_expert_data_parallel_group_inside_a_node():
    # tp 1, ep 8 on 8-GPU nodes: the 8 EP peers fill a node, so each expert-data-parallel group
    # (dp / ep = 16 ranks, 8 apart) has one rank per node; the dense group (128 ranks) has 8 per node.
    dims = model_dims("mixtral-8x7b", catalog=CATALOG)
    experts = 8 * 32 * 3 * 4096 * 14336
    cluster = ClusterShape(gpu=CATALOG.gpu("h100-sxm"), gpus=128, gpus_per_node=8, scale_up_domain=8,
                           nics_per_node=8)
    result = step_time(job(model="mixtral-8x7b", tp=1, pp=1, ep=8, global_batch_sequences=128), cluster,
                       "roce-v2", catalog=CATALOG)
    dense = dims.parameters() - experts
    expected = _zero1_s(dense, 128, 8) + _zero1_s(experts / 8, 16, 1)
    assert result.total_comm_s["dp"] == pytest.approx(expected, rel=1e-9)


#: GPT-3 175B on 1,024 A100 (Selene) with the per-operation compute model (docs/validation.md);
#: the old pin, 31.56 s, was the double-counted model (achievable fraction from end-to-end MFU).
#: 30.22: the README run's code (@152aab3) sends the whole activation from every TP rank between
#: stages (pipeline_scatter_gather false, issue 27's second round: +0.84 s on 192 micro-batches);
#: 29.37 with scatter/gather, 28.91 before the slowest GPU of N (issue 27: +1.6 % at 1,024 GPUs).
GPT3_SELENE_STEP_S = 30.22


def _stage_compute_s(model: str, fullest: int, last: int, seq: int = 8192) -> float:
    """Per-micro-batch compute of the slowest stage (tp 8, selective recompute, SP, H100 bf16):
    the fuller of ``fullest`` layers and ``last`` layers plus the output layer."""
    dims, compute = model_dims(model, catalog=CATALOG), CATALOG.gpu("h100-sxm").compute
    common = dict(peak_tflops=989, precision="bf16", micro_batch=1, seq_tokens=seq, tp=8, cp=1, catalog=CATALOG)
    layer = layer_compute(dims, compute, ep=1, recompute="selective", sequence_parallel=True, **common).total
    logits = logits_compute(dims, compute, **common).total
    return max(fullest * layer.total_s, last * layer.total_s + logits.total_s)


def test_uneven_stages_size_compute_and_communication_alike():
    # llama3-70b has 80 layers: pp 6 -> stages of ceil(80/6) = 14 layers. The fullest stage sets the
    # pace for compute as well as for TP traffic (the old model took 80/6 = 13.3 layers of compute).
    cluster = ClusterShape(gpu=CATALOG.gpu("h100-sxm"), gpus=48 * 8, gpus_per_node=8, scale_up_domain=8,
                           nics_per_node=8)
    uneven = step_time(job(pp=6, global_batch_sequences=64), cluster, "roce-v2", catalog=CATALOG)
    per_mb = _stage_compute_s("llama3-70b", 14, 13) * slowest(48 * 8)
    assert uneven.compute_s == pytest.approx(uneven.micro_batches * per_mb, rel=1e-9)
    activation = 1 * 8192 * 8192 * 2
    one = _collective_s("all_gather", activation, 8, 8) + _collective_s("reduce_scatter", activation, 8, 8)
    assert uneven.total_comm_s["tp"] == pytest.approx(uneven.micro_batches * 14 * 4 * one, rel=1e-9)
    # DP gradients: the fullest stage's 14/80 of the parameters, / tp.
    dp = uneven.dp
    params = model_dims("llama3-70b", catalog=CATALOG).parameters() * 14 / 80 / 8
    assert uneven.total_comm_s["dp"] == pytest.approx(_zero1_s(params, dp, 1), rel=1e-9)
    # Interleaving does not change the fullest stage: 126 layers on 16 stages -> 8 for v = 1 and v = 7
    # (7 chunks of 1-2 layers; not 7 x ceil(126/112) = 14).
    base = dict(model="llama3-405b", tp=8, pp=16, global_batch_sequences=128, seq_len_tokens=8192)
    one = step_time(job(**base), H100, "infiniband-ndr", catalog=CATALOG)
    seven = step_time(job(**base, virtual_pipeline_stages=7), H100, "infiniband-ndr", catalog=CATALOG)
    assert seven.compute_s == pytest.approx(one.compute_s, rel=1e-12)
    assert seven.total_comm_s["tp"] == pytest.approx(one.total_comm_s["tp"], rel=1e-12)
    assert one.compute_s == pytest.approx(one.micro_batches * _stage_compute_s("llama3-405b", 8, 7) * slowest(),
                                          rel=1e-12)


def test_embedding_and_loss_slots_in_the_pipeline_split():
    # Megatron-Core's account_for_embedding/loss_in_pipeline_split: 126 layers + 2 slots = 128 = 16 x 8,
    # so one-layer chunks (v = 8) become a valid layout (Llama 3 405B, Dubey et al. 2024 section 3.3.2).
    from fabricplan.spec.job import pipeline_stage_layers

    flags = dict(account_for_embedding_in_pipeline_split=True, account_for_loss_in_pipeline_split=True)
    base = dict(model="llama3-405b", tp=8, pp=16, global_batch_sequences=128, seq_len_tokens=8192)
    assert pipeline_stage_layers(job(**base, **flags), 126, 16) == [7] + [8] * 14 + [7]
    assert pipeline_stage_layers(job(**base), 126, 16) == [8] * 14 + [7, 7]
    assert pipeline_stage_layers(job(**base, account_for_loss_in_pipeline_split=True), 127, 16) == [8] * 15 + [7]
    assert pipeline_stage_layers(job(**base, **flags), 126, 1) == [126]
    with pytest.raises(InputError, match=r"16 x 8 = 128 exceeds the model's 126 layers") as error:
        step_time(job(**base, virtual_pipeline_stages=8), H100, "infiniband-ndr", catalog=CATALOG)
    assert error.value.location == "jobs[j].virtual_pipeline_stages"
    eight = step_time(job(**base, virtual_pipeline_stages=8, **flags), H100, "infiniband-ndr", catalog=CATALOG)
    four = step_time(job(**base, virtual_pipeline_stages=4, **flags), H100, "infiniband-ndr", catalog=CATALOG)
    # The slowest stage is the same 8 layers (the first and last hold 7 + embedding / output layer), so
    # compute is unchanged and the bubble halves from v = 4 to v = 8: (p - 1)/v of the micro-batch time.
    assert eight.compute_s == pytest.approx(four.compute_s, rel=1e-12)
    assert eight.compute_s == pytest.approx(eight.micro_batches * _stage_compute_s("llama3-405b", 8, 7) * slowest(),
                                            rel=1e-12)
    t_mb = (eight.step_time_s - eight.bubble_s - eight.exposed_comm_s["dp"] - eight.optimizer_s
            - eight.contention_s) / eight.micro_batches
    assert eight.bubble_s == pytest.approx(15 / 8 * t_mb, rel=1e-9)
    assert eight.bubble_s < four.bubble_s
    # With the slots the layers must split evenly, as Megatron-LM's arguments check requires.
    with pytest.raises(InputError, match=r"126 layers \+ 1 embedding/loss slot = 127 slots do not divide") as error:
        step_time(job(**base, account_for_loss_in_pipeline_split=True), H100, "infiniband-ndr", catalog=CATALOG)
    assert error.value.location == "jobs[j].pp"


def test_parallel_groups_that_do_not_fill_nodes_evenly_are_modelled():
    # 24 GPUs, tp 2 x pp 2 -> dp 6 ranks 2 apart (Megatron-Core's order): 4 on one 8-GPU node, 2 on
    # the next. Laid out as Megatron does, not refused; NCCL's pace is set by the node with 2.
    cluster = ClusterShape(gpu=CATALOG.gpu("h100-sxm"), gpus=24, gpus_per_node=8, scale_up_domain=8, nics_per_node=8)
    result = step_time(job(model="llama3-8b", tp=2, pp=2, global_batch_sequences=48), cluster, "roce-v2",
                       catalog=CATALOG)
    data_parallel = [c for c in result.collectives if c.n_gpus == 6]
    assert data_parallel and all((c.gpus_per_node, c.n_nodes) == (2, 2) and not c.even for c in data_parallel)
    assert result.step_time_s > 0 and result.dp == 6


def test_expert_parallelism_needs_an_moe_model():
    with pytest.raises(InputError, match="needs a mixture-of-experts model") as error:
        step_time(job(model="llama3-8b", ep=4), H100, "roce-v2", catalog=CATALOG)
    assert error.value.location == "jobs[j].ep"


def test_achievable_fraction_is_one_helper_for_step_and_decision():
    from fabricplan.catalog.files import load_data_file
    from fabricplan.design import resolve
    from fabricplan.perf import achievable_fraction
    from fabricplan.perf.efficiency import efficiency_model
    from fabricplan.plan import Levers, job_step_times
    from fabricplan.spec import parse_spec
    from fabricplan.spec.models import GpuInline

    default = load_data_file("perf_defaults.yaml")["parameters"]["default_achievable_fraction_of_peak"]["value"]
    # Catalog GPUs carry per-operation compute data and no override: the flat value is the default.
    assert CATALOG.gpu("h100-sxm").compute is not None
    assert achievable_fraction(CATALOG.gpu("h100-sxm"), catalog=CATALOG) == default
    inline = GpuInline(peak_dense_tflops={"bf16": 989}, hbm_gbytes=80, nvlink_bandwidth_gbytes_per_s=900,
                       power_w=700)
    assert achievable_fraction(inline, catalog=CATALOG) == default == 0.4
    # The decision's efficiency lever scales the same value (inline GPU: the 0.4 default x 1.5).
    spec = parse_spec({"name": "t", "cluster": {"gpu": inline.model_dump(exclude_none=True), "gpus": 16,
                                                "gpus_per_node": 8, "nics_per_node": 8},
                       "fabrics": ["roce-v2"]})
    spec = spec.model_copy(update={"jobs": [job(model="llama3-8b", tp=8, pp=1, global_batch_sequences=16)]})
    # (Slow GPUs screened out, so the slowest-GPU note and factor stay out of the fraction.)
    screened = CATALOG.with_values({"perf_defaults.parameters.per_gpu_persistent_throughput_sigma.value": 0.0})
    design = resolve(spec, screened, "roce-v2")
    [result] = job_step_times(spec, screened, design, Levers(efficiency_multiplier=1.5), efficiency_model())
    assert result.notes[0] == "achievable fraction of peak 0.600 (flat)"
    [plain] = job_step_times(spec, screened, design, Levers(), efficiency_model())
    assert plain.notes[0] == "achievable fraction of peak 0.400 (flat)"


def test_userbuffers_tp_overlap_exposes_the_last_chunk_of_the_forward_reduce_scatters():
    from fabricplan.perf.step import userbuffers_tp_exposed_s

    # 1 s of TP traffic, a quarter of it in collectives whose last of 4 chunks cannot hide: 1/16 exposed.
    assert userbuffers_tp_exposed_s(1.0, 10.0, chunks=4, unhidden_share=0.25) == pytest.approx(0.0625)
    # GEMMs shorter than the rest of the traffic: what does not fit behind them shows too.
    assert userbuffers_tp_exposed_s(1.0, 0.5, chunks=4, unhidden_share=0.25) == pytest.approx(0.0625 + 0.4375)
    base = job(model="gpt3-175b", tp=4, pp=8, seq_len_tokens=2048, precision="fp8", recompute="none")
    off = step_time(base, H100, "infiniband-ndr", catalog=CATALOG)
    on = step_time(base.model_copy(update={"tp_overlap": True}), H100, "infiniband-ndr", catalog=CATALOG)
    assert on.total_comm_s["tp"] == pytest.approx(off.total_comm_s["tp"])
    assert on.exposed_comm_s["tp"] == pytest.approx(off.total_comm_s["tp"] / 16)
    assert on.compute_s > off.compute_s  # the overlapped GEMMs run in chunks
    # Without sequence parallelism userbuffers has no all-gather/reduce-scatter to overlap.
    no_sp = step_time(base.model_copy(update={"tp_overlap": True, "sequence_parallel": False}), H100,
                      "infiniband-ndr", catalog=CATALOG)
    assert no_sp.exposed_comm_s["tp"] == pytest.approx(no_sp.total_comm_s["tp"])


def test_slowest_gpu_slowdown_is_sigma_times_the_expected_maximum_of_n_normals():
    from fabricplan.perf.step import slowest_gpu_slowdown

    # Exact E[max of N standard normals] (Harter 1961 tables): 1.5388 (10), 2.5076 (100), 3.2414 (1000);
    # Blom's approximation is within 1 %.
    for n, exact in ((10, 1.5388), (100, 2.5076), (1000, 3.2414)):
        assert slowest_gpu_slowdown(n, 0.01) == pytest.approx(0.01 * exact, rel=0.01)
    assert slowest_gpu_slowdown(1, 0.05) == 0.0 and slowest_gpu_slowdown(16384, 0.0) == 0.0
    # Grows with the GPU count (the order statistic), slowly: ~sqrt(2 ln N).
    values = [slowest_gpu_slowdown(n, 0.0148) for n in (8, 64, 1024, 16384)]
    assert values == sorted(values) and values[0] == pytest.approx(0.021, abs=0.001)
    assert values[-1] == pytest.approx(0.059, abs=0.001)


def test_step_compute_is_paced_by_the_slowest_gpu_beyond_the_node():
    from fabricplan.perf.step import slowest_gpu_slowdown

    # Bundled: the A100 job-level spread (1 %), counted beyond the node's slowest GPU.
    assert CATALOG.perf_defaults.parameters["per_gpu_persistent_throughput_sigma"].value == 0.01
    assert slowest_gpu_slowdown(8, 0.01, node_gpus=8) == 0.0
    assert slowest_gpu_slowdown(1024, 0.01, node_gpus=8) == pytest.approx(0.01 * (3.2 - 1.42), abs=0.001)
    assert slowest_gpu_slowdown(16384, 0.01, node_gpus=8) == pytest.approx(0.025, abs=0.001)
    screened = CATALOG.with_values({"perf_defaults.parameters.per_gpu_persistent_throughput_sigma.value": 0.0})
    base = step_time(job(), H100, "roce-v2", catalog=screened)
    assert not any("slowest" in note for note in base.notes)
    spread = CATALOG.with_values({"perf_defaults.parameters.per_gpu_persistent_throughput_sigma.value": 0.0148})
    slowed = step_time(job(), H100, "roce-v2", catalog=spread)
    factor = 1 + slowest_gpu_slowdown(1024, 0.0148, node_gpus=8)
    assert slowed.compute_s == pytest.approx(base.compute_s * factor, rel=1e-9)
    assert slowed.optimizer_s == pytest.approx(base.optimizer_s * factor, rel=1e-9)
    assert slowed.step_time_s > base.step_time_s
    assert any("slowest of 1,024 GPUs" in note for note in slowed.notes)


def test_data_parallel_queue_bounds():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    times = st.floats(min_value=0.0, max_value=10.0, allow_nan=False)

    @settings(max_examples=200, deadline=None)
    @given(o=times, c=times, m=st.integers(1, 64), period=times, backward=times,
           e1=st.floats(0.0, 1.0), e2=st.floats(0.0, 1.0))
    def check(o, c, m, period, backward, e1, e2):
        low, high = sorted((e1, e2))
        def at(e):
            return data_parallel_exposed_s(o, c, micro_batches=m, period_s=period, backward_s=backward,
                                           overlap_efficiency=e)
        # Never negative, never more than all of it, and more overlap never exposes more.
        assert 0.0 <= at(high) <= at(low) + 1e-9 <= m * c + o + 1e-9

    check()


# --- issue 27: communication beside compute, the last bucket ----------------------------------------

def test_overlap_contention_share_is_channels_over_sms_plus_hbm_traffic():
    from fabricplan.perf.step import gpu_sm_count, overlap_contention_share

    assert [gpu_sm_count(CATALOG.gpu(g), CATALOG) for g in ("a100-sxm-80gb", "h100-sxm", "b200")] == [108, 132, 148]
    # 2 channels on an H100 (132 SMs) moving 45 GB/s (one NDR NIC) with 2.5 B of HBM traffic per bus
    # byte on 3.35 TB/s: 1.5 % of the SMs + 3.4 % of the HBM.
    share = overlap_contention_share(2, 45.0, sm_count=132, hbm_tbytes_per_s=3.35, hbm_bytes_per_bus_byte=2.5)
    assert share == pytest.approx(2 / 132 + 2.5 * 45 / 3350, rel=1e-12)
    assert share == pytest.approx(0.0487, abs=0.0005)
    # Copy-engine transfers hold no SMs; an NVLink-rate collective takes a quarter of the HBM.
    assert overlap_contention_share(32, 360.0, sm_count=None, hbm_tbytes_per_s=3.35,
                                    hbm_bytes_per_bus_byte=2.5) == pytest.approx(0.269, abs=0.001)
    assert overlap_contention_share(132, 5000.0, sm_count=132, hbm_tbytes_per_s=3.35, hbm_bytes_per_bus_byte=3) == 1.0


def test_contention_slows_the_steps_that_overlap_and_only_those():
    no_contention = CATALOG.with_values({
        "perf_defaults.parameters.nccl_hbm_bytes_per_bus_byte.value": 0.0,
        "perf_defaults.parameters.tp_overlap_bulk_sm_count.value": 0.0,
        "perf_defaults.parameters.gpu_sm_count.value": {80: 10 ** 9, 90: 10 ** 9, 100: 10 ** 9}})
    overlapped = job(pp=1, tp=8, dp_overlap=True, tp_overlap=True, global_batch_sequences=128)
    with_it = step_time(overlapped, H100, "roce-v2", catalog=CATALOG)
    without = step_time(overlapped, H100, "roce-v2", catalog=no_contention)
    assert without.contention_s == pytest.approx(0.0, abs=1e-9)
    assert with_it.contention_s > 0
    assert with_it.step_time_s == pytest.approx(without.step_time_s + with_it.contention_s, rel=1e-9)
    assert any("communication beside compute" in note for note in with_it.notes)
    # Nothing overlapped (no DP, TP or CP overlap; PP sends on the critical path): no contention.
    serial = job(pp=4, tp=8, dp_overlap=False, sequence_parallel=False, global_batch_sequences=128)
    assert step_time(serial, H100, "roce-v2", catalog=CATALOG).contention_s == 0.0


def test_last_gradient_bucket_is_exposed_under_overlap():
    from fabricplan.perf.step import _last_bucket_share, _lay_out, _network_of

    # llama3-8b at tp 8: 1.0e9 local parameters; Megatron-Core's bucket max(40M, 1M x dp) = 128M at dp 128.
    small = job(model="llama3-8b", pp=1, tp=8, global_batch_sequences=128)
    setup = _lay_out(small, _network_of(H100, "roce-v2", CATALOG), CATALOG,
                     nccl_version=None, efficiency_model=None)
    local = model_dims("llama3-8b", catalog=CATALOG).parameters() / 8
    assert _last_bucket_share(setup) == pytest.approx(128e6 / local, rel=1e-9)
    result = step_time(small, H100, "roce-v2", catalog=CATALOG)
    assert result.exposed_comm_s["dp"] >= _last_bucket_share(setup) * result.total_comm_s["dp"] * (1 - 1e-9)
    assert result.exposed_comm_s["dp"] > 0


# --- Pipeline sends without Megatron's scatter/gather (issue 27, second round) ---------------------

def test_pipeline_send_split():
    from fabricplan.perf.step import pipeline_send_split

    assert pipeline_send_split(8, True, False) == 8   # scatter/gather: 1/t per rank
    assert pipeline_send_split(8, False, False) == 1  # Megatron-LM before 2021-02: the whole tensor
    assert pipeline_send_split(8, False, True) == 8   # sequence parallel: the stage output is split already
    assert pipeline_send_split(1, False, False) == 1


def _gpt3_a100(gpus: int, **kw):
    cluster = ClusterShape(gpu=CATALOG.gpu("a100-sxm-80gb"), gpus=gpus, gpus_per_node=8, scale_up_domain=8,
                           nics_per_node=8)
    spec = JobSpec(name="g", model="gpt3-175b", gpus=gpus, tp=8, micro_batch_sequences=1, seq_len_tokens=2048,
                   precision="fp16", recompute="full", sequence_parallel=False, zero_stage=0, dp_overlap=False,
                   attention_kernel="unfused", **kw)
    return step_time(spec, cluster, "infiniband-hdr", catalog=CATALOG)


def test_whole_tensor_sends_cost_only_pipeline_time():
    # t = 8 ranks each send b s h instead of b s h / 8 over their own NIC: the PP traffic grows several
    # fold (latency stays), compute, TP and DP do not move.
    split = _gpt3_a100(1024, pp=16, global_batch_sequences=1536)
    whole = _gpt3_a100(1024, pp=16, global_batch_sequences=1536, pipeline_scatter_gather=False)
    assert whole.compute_s == pytest.approx(split.compute_s)
    assert whole.total_comm_s["tp"] == pytest.approx(split.total_comm_s["tp"])
    assert whole.total_comm_s["dp"] == pytest.approx(split.total_comm_s["dp"])
    assert 4 < whole.total_comm_s["pp"] / split.total_comm_s["pp"] <= 8
    assert whole.step_time_s > split.step_time_s
    # Sequence parallelism sends s/t of the sequence per rank either way: the flag changes nothing.
    sp = [step_time(job(sequence_parallel=True, pipeline_scatter_gather=flag), H100, "infiniband-ndr",
                    catalog=CATALOG).step_time_s for flag in (True, False)]
    assert sp[0] == pytest.approx(sp[1])


def test_scatter_gather_gain_within_the_papers_measurement():
    # Narayanan et al. SC'21 §5.7 (Figure 18): GPT-3 175B on 96 A100 with the interleaved schedule, the
    # scatter/gather optimization gives up to 11 % throughput; the model's gain there is positive and no
    # larger (it has the extra bytes, not the synchronisation the blocking sends add).
    for batch in (12, 36, 60):
        with_sg = _gpt3_a100(96, pp=12, virtual_pipeline_stages=2, global_batch_sequences=batch)
        without = _gpt3_a100(96, pp=12, virtual_pipeline_stages=2, global_batch_sequences=batch,
                             pipeline_scatter_gather=False)
        gain = without.step_time_s / with_sg.step_time_s - 1
        assert 0.01 < gain <= 0.11, (batch, gain)


def test_userbuffers_sms_by_configuration():
    from fabricplan.perf.step import userbuffers_bulk_sm_share, userbuffers_sm_fractions

    # Transformer Engine's initialize_ub defaults (v1.6-1.8): 16 SMs for each pipelined and bulk
    # communicator; NeMo's H100 files: the projection's 24 SMs, FFN-down's median 16 of 132.
    assert userbuffers_sm_fractions("te_default", 132, CATALOG) == pytest.approx(
        {"attention_output": 16 / 132, "ffn_down": 16 / 132})
    assert userbuffers_sm_fractions("te_default", 148, CATALOG)["ffn_down"] == pytest.approx(16 / 148)
    assert userbuffers_sm_fractions("tuned", 132, CATALOG) == pytest.approx(
        {"attention_output": 0.182, "ffn_down": 0.121})
    # The 4 bulk collectives of a layer's 8 (12 with full recomputation) hold their SMs.
    assert userbuffers_bulk_sm_share(16, 132, 8) == pytest.approx(0.5 * 16 / 132)
    assert userbuffers_bulk_sm_share(7.5, 132, 12) == pytest.approx(7.5 / 132 / 3)
    assert userbuffers_bulk_sm_share(16, 0, 8) == 0.0
    # A job's own file (NeMo's GPT-3 175B TP 4: FC2 by ring exchange, bulk 4 / 4 / 2 / 4) overrides
    # field by field; a field left out keeps the configuration's value.
    from fabricplan.perf.step import _bulk_sm_count
    from fabricplan.spec.job import UserbuffersSms

    own = UserbuffersSms(ffn_down=0, bulk=3.5)
    assert userbuffers_sm_fractions("tuned", 132, CATALOG, own) == pytest.approx(
        {"attention_output": 0.182, "ffn_down": 0.0})
    assert _bulk_sm_count("tuned", CATALOG, own) == 3.5
    assert _bulk_sm_count("te_default", CATALOG) == 16
    assert _bulk_sm_count("tuned", CATALOG, UserbuffersSms(ffn_down=8)) == 7.5
    with pytest.raises(ValueError):
        UserbuffersSms(bulk=-1)


def test_te_default_userbuffers_slow_a_tp8_step_and_only_with_userbuffers():
    tuned = job(pp=1, tp=8, tp_overlap=True, global_batch_sequences=128)
    default = job(pp=1, tp=8, tp_overlap=True, global_batch_sequences=128, tp_overlap_config="te_default")
    a = step_time(tuned, H100, "roce-v2", catalog=CATALOG)
    b = step_time(default, H100, "roce-v2", catalog=CATALOG)
    assert b.step_time_s > a.step_time_s
    # The bulk collectives' SMs: 16 instead of the files' median 7.5, over half the hidden TP time.
    hidden_tp = b.total_comm_s["tp"] - b.exposed_comm_s["tp"]
    assert hidden_tp > 0
    assert b.contention_s - a.contention_s == pytest.approx(hidden_tp * 0.5 * (16 - 7.5) / 132, rel=0.02)
    # The projection GEMM gives up 16 SMs instead of 24 and FFN-down 16 as the median: less compute.
    assert b.compute_s < a.compute_s
    # No userbuffers (no TP overlap, or no sequence parallelism): the configuration changes nothing.
    for kw in ({"tp_overlap": False}, {"tp_overlap": True, "sequence_parallel": False}):
        plain = step_time(job(pp=1, tp=8, global_batch_sequences=128, **kw), H100, "roce-v2", catalog=CATALOG)
        same = step_time(job(pp=1, tp=8, global_batch_sequences=128, tp_overlap_config="te_default", **kw),
                         H100, "roce-v2", catalog=CATALOG)
        assert same.step_time_s == plain.step_time_s
