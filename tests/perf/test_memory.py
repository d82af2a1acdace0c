"""The memory model per GPU (fabricplan.perf.memory): ZeRO model states (Rajbhandari et al. 2020),
activations (Korthikanti et al. 2022, §4 Table 2), 1F1B in-flight micro-batches, and the step
model's 'does not fit' for layouts no recompute setting can fit."""

from __future__ import annotations

import pytest

from fabricplan.catalog import load_catalog
from fabricplan.perf.flops import TransformerDims, model_dims
from fabricplan.perf.memory import GIB, activation_bytes_per_layer, least_memory, memory_per_gpu
from fabricplan.spec import JobSpec

CATALOG = load_catalog()
GPU = CATALOG.gpu("h100-sxm")
# GPT-3-shaped: F = 4h, not gated, so Korthikanti's Table 2 applies as printed.
DIMS = TransformerDims(name="gpt", layers=96, hidden=12288, heads=96, kv_heads=96, ffn_hidden=4 * 12288,
                       vocab=51200)


def _job(**kw) -> JobSpec:
    base = dict(name="j", model="gpt3-175b", global_batch_sequences=1024, seq_len_tokens=2048)
    return JobSpec(**{**base, **kw})


@pytest.mark.parametrize("stage,per_parameter", [(0, 16.0), (1, 4 + 12 / 64), (2, 2 + 14 / 64), (3, 16 / 64)])
def test_model_states_follow_zero(stage, per_parameter):
    """ZeRO §5.1 with N_d = 64: 16 psi, 4 psi + 12 psi/N_d, 2 psi + 14 psi/N_d, 16 psi/N_d
    (7.5B parameters: 120, 31.4, 16.6, 1.9 GB)."""
    estimate = memory_per_gpu(_job(zero_stage=stage, precision="fp16"), DIMS, GPU, tp=1, pp=1, dp=64, cp=1,
                              ep=1, micro_batches=16, catalog=CATALOG)
    parts = estimate.breakdown_bytes
    states = parts["weights"] + parts["gradients"] + parts["optimizer_states"]
    assert states / DIMS.parameters() == pytest.approx(per_parameter, rel=1e-12)
    assert 7.5e9 * per_parameter / 1e9 == pytest.approx({0: 120, 1: 31.4, 2: 16.6, 3: 1.9}[stage], abs=0.05)


@pytest.mark.parametrize("stage,per_parameter", [(0, 18.0), (1, 6 + 12 / 64), (2, 2 + 16 / 64), (3, 18 / 64)])
def test_bf16_jobs_keep_fp32_gradients(stage, per_parameter):
    """bf16 training keeps fp32 main gradients (Megatron-LM forces it; its distributed optimizer costs
    6 + 12/d bytes per parameter, docs/source/distrib_optimizer.md): 2 bytes more than ZeRO's fp16
    count, sharded from ZeRO-2 on; gradient_dtype bf16 gives ZeRO's 16 psi back."""
    estimate = memory_per_gpu(_job(zero_stage=stage), DIMS, GPU, tp=1, pp=1, dp=64, cp=1, ep=1,
                              micro_batches=16, catalog=CATALOG)
    parts = estimate.breakdown_bytes
    states = parts["weights"] + parts["gradients"] + parts["optimizer_states"]
    assert states / DIMS.parameters() == pytest.approx(per_parameter, rel=1e-12)
    half = memory_per_gpu(_job(zero_stage=stage, gradient_dtype="bf16"), DIMS, GPU, tp=1, pp=1, dp=64, cp=1, ep=1,
                          micro_batches=16, catalog=CATALOG).breakdown_bytes
    assert half["gradients"] == pytest.approx(parts["gradients"] / 2, rel=1e-12)


@pytest.mark.parametrize("recompute,sp,coefficient", [
    ("selective", True, 34 / 8),                        # sbh 34/t
    ("selective", False, 10 + 24 / 8),                  # sbh (10 + 24/t)
    ("none", True, 34 / 8 + 5 * 96 * 2048 / (12288 * 8)),   # + 5as/(ht)
    ("none", False, 10 + 24 / 8 + 5 * 96 * 2048 / (12288 * 8)),
    ("full", True, 2 / 8),                              # layer input only, sharded by SP
    ("full", False, 2.0),
])
def test_activations_per_layer_follow_korthikanti_table_2(recompute, sp, coefficient):
    s, b, h = 2048, 1, 12288
    assert activation_bytes_per_layer(DIMS, s, b, 8, recompute, sp) == pytest.approx(s * b * h * coefficient)


def test_pipeline_holds_pp_micro_batches_of_its_layers_and_interleaving_adds():
    """1F1B: the first stage holds min(pp, m) micro-batches of L/pp layers; interleaving with v
    chunks multiplies by 1 + (pp - 1)/(pp v)."""
    per_layer = activation_bytes_per_layer(DIMS, 2048, 1, 8, "selective", True)
    layout = dict(tp=8, pp=8, dp=16, cp=1, ep=1, catalog=CATALOG)
    many = memory_per_gpu(_job(pp=8, tp=8), DIMS, GPU, micro_batches=8, **layout).breakdown_bytes["activations"]
    few = memory_per_gpu(_job(pp=8, tp=8), DIMS, GPU, micro_batches=2, **layout).breakdown_bytes["activations"]
    assert many == pytest.approx(per_layer * 12 * 8)  # 96 layers / 8 stages, 8 in flight = 96 layers' worth
    assert few == pytest.approx(per_layer * 12 * 2)
    interleaved = memory_per_gpu(_job(pp=8, tp=8, virtual_pipeline_stages=3), DIMS, GPU, micro_batches=8,
                                 virtual_stages=3, **layout).breakdown_bytes["activations"]
    assert interleaved == pytest.approx(many * (1 + 7 / 24))


def test_reserved_memory_comes_from_the_catalog():
    estimate = memory_per_gpu(_job(), DIMS, GPU, tp=8, pp=8, dp=16, cp=1, ep=1, micro_batches=8, catalog=CATALOG)
    assert estimate.capacity_bytes == 80e9
    assert estimate.breakdown_bytes["reserved"] == pytest.approx(2 * GIB + 0.1 * 80e9)
    changed = CATALOG.with_values({"perf_defaults.parameters.memory_fragmentation_fraction.value": 0.0})
    again = memory_per_gpu(_job(), DIMS, GPU, tp=8, pp=8, dp=16, cp=1, ep=1, micro_batches=8, catalog=changed)
    assert again.breakdown_bytes["reserved"] == pytest.approx(2 * GIB)


def test_405b_on_8_gpus_cannot_fit_with_any_recompute():
    dims = model_dims("llama3-405b", CATALOG)
    job = _job(model="llama3-405b", global_batch_sequences=8, seq_len_tokens=8192)
    floor = least_memory(job, dims, GPU, gpus=8, catalog=CATALOG)
    assert not floor.fits
    # ZeRO-1 over the 8 data-parallel ranks, bf16 weights and fp32 gradients: 6 + 12/8 bytes per
    # parameter, ~405e9 parameters
    states = sum(floor.breakdown_bytes[k] for k in ("weights", "gradients", "optimizer_states"))
    assert states == pytest.approx((6 + 12 / 8) * dims.parameters())
    assert states / GIB > 2000 > 74.5


# --- issue 27: FP8 saved inputs, activation offloading ---------------------------------------------

def test_fp8_keeps_the_four_gemm_inputs_in_one_byte():
    from fabricplan.perf.memory import fp8_saved_input_savings

    s, b, h = 2048, 1, DIMS.hidden
    width = DIMS.ffn_hidden / h
    assert fp8_saved_input_savings(width) == (2.0, 1.0 + width)
    # Sequence parallel, selective: (10 + 8 + 4F/h) / t in 16 bits, (8 + 7 + 3F/h) / t with FP8 inputs.
    bf16 = activation_bytes_per_layer(DIMS, s, b, 8, "selective", True)
    fp8 = activation_bytes_per_layer(DIMS, s, b, 8, "selective", True, precision="fp8")
    assert bf16 == pytest.approx(s * b * h * (18 + 4 * width) / 8)
    assert fp8 == pytest.approx(s * b * h * (15 + 3 * width) / 8)
    # At F = 4h (GPT): 34 -> 27 s b h, Korthikanti et al.'s table less 7.
    gpt = model_dims("gpt3-175b", catalog=CATALOG)
    ratio = (activation_bytes_per_layer(gpt, s, b, 8, "selective", True, precision="fp8")
             / activation_bytes_per_layer(gpt, s, b, 8, "selective", True))
    assert ratio == pytest.approx(27 / 34, rel=1e-9)


def test_offloaded_layers_hold_no_activations_on_the_gpu():
    gpu = CATALOG.gpu("h100-sxm")
    base = JobSpec(name="j", model="llama3-70b", tp=8, pp=1, global_batch_sequences=8, seq_len_tokens=8192,
                   recompute="none", attention_kernel="flash")
    kept = memory_per_gpu(base, model_dims("llama3-70b", catalog=CATALOG), gpu, tp=8, pp=1, dp=1, cp=1, ep=1,
                          micro_batches=8, catalog=CATALOG)
    half = memory_per_gpu(base.model_copy(update={"activation_offload_layers": 40}),
                          model_dims("llama3-70b", catalog=CATALOG), gpu, tp=8, pp=1, dp=1, cp=1, ep=1,
                          micro_batches=8, catalog=CATALOG)
    assert half.breakdown_bytes["activations"] == pytest.approx(kept.breakdown_bytes["activations"] / 2, rel=1e-12)
    assert half.breakdown_bytes["weights"] == kept.breakdown_bytes["weights"]
