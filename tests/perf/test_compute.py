"""perf/compute.py: each per-operation function on small shapes (exact arithmetic), and the GEMM
curves reproducing their microbenchmark points."""

from __future__ import annotations

import math

import pytest

from fabricplan.catalog.catalog import default_catalog
from fabricplan.perf.compute import (
    attention_flops,
    attention_kernel_tokens,
    attention_time_s,
    cross_entropy_time_s,
    fp8_backward_gemm_time_s,
    fp8_cast_time_s,
    gemm_efficiency,
    gemm_flops,
    gemm_time_s,
    host_launch_floor_s,
    interpolate_log,
    layer_compute,
    layer_gemm_shapes,
    logits_compute,
    logits_gemm_shape,
    memory_bound_time_s,
    optimizer_step_time_s,
    output_layer_precision,
    overlapped_gemm_time_s,
    unfused_attention_rate_scale,
)
from fabricplan.perf.flops import TransformerDims

CATALOG = default_catalog()
POINTS = [(1e9, 0.2), (1e11, 0.8)]


def test_gemm_flops_and_log_interpolation():
    assert gemm_flops(2, 3, 4) == 48
    assert interpolate_log(POINTS, 1e10) == pytest.approx(0.5)  # halfway in log(FLOPs)
    assert interpolate_log(POINTS, 1e8) == 0.2 and interpolate_log(POINTS, 1e13) == 0.8  # flat outside
    assert gemm_efficiency(POINTS, 1e9) == 0.2


def test_gemm_time_is_compute_or_roofline_bound():
    # 1000 x 1000 x 50000 = 1e11 FLOPs at 0.8 x 100 TFLOP/s = 1.25 ms; bytes 2 x (5e7 + 5e7 + 1e6) at 1 TB/s = 0.202 ms.
    t = gemm_time_s(1000, 1000, 50000, peak_tflops=100, points=POINTS, hbm_tbytes_per_s=1.0, element_bytes=2)
    assert t == pytest.approx(1e11 / (100e12 * 0.8))
    # Skinny: 1e6 x 10 x 10 = 2e8 FLOPs (eff 0.2: 10 us); bytes 2 x (1e7 + 100 + 1e7) = 40.0002 MB at 1 TB/s = 40 us.
    skinny = gemm_time_s(1e6, 10, 10, peak_tflops=100, points=POINTS, hbm_tbytes_per_s=1.0, element_bytes=2)
    assert skinny == pytest.approx(2 * (1e7 + 100 + 1e7) / 1e12)
    assert gemm_time_s(0, 10, 10, peak_tflops=100, points=POINTS, hbm_tbytes_per_s=1.0, element_bytes=2) == 0


def test_attention_flops_and_time():
    # 4 b a s_q s_k d: b 2, 4 heads, s 8, d 16 -> 4 * 2 * 4 * 8 * 8 * 16 = 32768; causal half.
    assert attention_flops(2, 4, 8, 8, 16, causal=False) == 32768
    assert attention_flops(2, 4, 8, 8, 16, causal=True) == 16384
    forward, backward = attention_time_s(3.5e12, 1024, [(512, 100.0), (2048, 300.0)])
    # s = 1024: rate 200 TFLOP/s (log-halfway); fwd+bwd 3.5 x 3.5e12 FLOPs -> fwd 17.5 ms, bwd 43.75 ms.
    assert forward == pytest.approx(3.5e12 / 200e12)
    assert backward == pytest.approx(2.5 * 3.5e12 / 200e12)


def test_memory_bound_and_optimizer():
    assert memory_bound_time_s(1e9, 4, 2.0) == pytest.approx(2e-3)
    assert optimizer_step_time_s(1e9, 30, 1.5) == pytest.approx(0.02)


DIMS = TransformerDims(name="t", layers=2, hidden=64, heads=4, kv_heads=2, ffn_hidden=128, vocab=1000, gated_ffn=True)


def test_layer_gemm_shapes_tp_sharded():
    shapes = {name: (m, n, k, c) for name, m, n, k, c in layer_gemm_shapes(DIMS, 32, tp=2)}
    assert shapes["qkv"] == (32, (64 + 2 * 32) / 2, 64, 1)        # GQA: kv = 64 x 2/4 = 32
    assert shapes["attention_output"] == (32, 64, 32, 1)
    assert shapes["ffn_up"] == (32, 2 * 128 / 2, 64, 1)           # gated: up + gate
    assert shapes["ffn_down"] == (32, 64, 64, 1)
    assert logits_gemm_shape(DIMS, 32, 2) == ("logits", 32, 500, 64, 1)
    moe = TransformerDims(name="m", layers=2, hidden=64, heads=4, kv_heads=4, ffn_hidden=128, vocab=1000,
                          experts=8, experts_per_token=2)
    experts = {name: (m, n, k, c) for name, m, n, k, c in layer_gemm_shapes(moe, 32, tp=1, ep=4)}
    # 32 tokens x ep 4 x k 2 / 8 experts = 32 rows per expert, 8 / 4 = 2 experts per rank.
    assert experts["expert_up"] == (32, 128, 64, 2) and experts["expert_down"] == (32, 64, 128, 2)
    # Same FLOPs per rank as a dense FFN of k experts' width.
    flops = sum(c * gemm_flops(m, n, k) for name, m, n, k, c in layer_gemm_shapes(moe, 32, 1, 4) if "expert" in name)
    assert flops == 2 * 32 * 2 * 128 * 64 * 2


def test_layer_compute_backward_is_twice_forward_gemms_and_recompute_adds_a_forward():
    compute = CATALOG.gpu("h100-sxm").compute
    args = dict(peak_tflops=989, precision="bf16", micro_batch=1, seq_tokens=4096, tp=8, cp=1, ep=1,
                sequence_parallel=True, catalog=CATALOG)
    selective = layer_compute(DIMS, compute, recompute="selective", **args).parts
    full = layer_compute(DIMS, compute, recompute="full", **args).parts
    none = layer_compute(DIMS, compute, recompute="none", **args).parts
    assert selective["gemm"].backward_s == pytest.approx(2 * selective["gemm"].forward_s)
    assert selective["gemm"].recompute_s == 0 and full["gemm"].recompute_s == full["gemm"].forward_s
    assert selective["attention"].recompute_s == selective["attention"].forward_s
    assert none["attention"].recompute_s == 0
    assert full["memory_bound"].recompute_s == full["memory_bound"].forward_s > 0
    # Memory-bound forward: 2 norms (4 B) + 2 residual adds (7 B) over T h / t, SwiGLU (6 B) over T F / t.
    hbm = compute.hbm.tbytes_per_s * 1e12
    expected = (4096 * 64 / 8 * (2 * 4 + 2 * 7) + 4096 * 128 / 8 * 6) / hbm
    assert selective["memory_bound"].forward_s == pytest.approx(expected)


@pytest.mark.parametrize("gpu", ["a100-sxm-80gb", "h100-sxm", "h200-sxm", "b200"])
def test_gemm_curves_reproduce_their_microbenchmark_points(gpu):
    for curve in CATALOG.gpu(gpu).compute.gemm_efficiency.values():
        for flops, fraction in curve.points:
            assert gemm_efficiency(curve.points, flops) == fraction
        assert all(0 < y <= 1 for _, y in curve.points)


def test_a100_curve_is_the_azure_cublaslt_sweep():
    # docs/reference/compute_microbench.md §2.2: A100 FP16 1024^3 119.4, 2048^3 221.8, 4096^3 228.0,
    # 8192^3 253.7 TFLOP/s of 312.
    points = CATALOG.gpu("a100-sxm-80gb").compute.gemm_efficiency["bf16"].points
    for n, tflops in ((1024, 119.4), (2048, 221.8), (4096, 228.0), (8192, 253.7)):
        assert gemm_efficiency(points, gemm_flops(n, n, n)) * 312 == pytest.approx(tflops, abs=0.05)
    # H100 BF16, XLA sm_90: 4096^3 783.3 TFLOP/s of 989.
    h100 = CATALOG.gpu("h100-sxm").compute.gemm_efficiency["bf16"].points
    assert gemm_efficiency(h100, gemm_flops(4096, 4096, 4096)) * 989 == pytest.approx(783.3, abs=0.1)
    assert math.isclose(CATALOG.gpu("h100-sxm").compute.hbm.tbytes_per_s, 2.97)


# --- Mechanisms added for the step-time validation (issue 12) ---------------------------------------

def test_burst_measured_curves_run_at_sustained_clocks():
    from fabricplan.perf.compute import gemm_points, sustained_points

    assert sustained_points(POINTS, 0.5) == [(1e9, 0.1), (1e11, 0.4)]
    h100 = CATALOG.gpu("h100-sxm").compute
    curve = h100.gemm_efficiency["bf16"]
    # The H100 BF16 curve (XLA's table, burst) at gpu-fryer's sustained 730 over the burst 786.5 TFLOP/s.
    assert curve.sustained.factor == pytest.approx(730 / 786.5, abs=0.001)
    assert curve.sustained.spread.ranges["factor"] == (0.919, 0.932)
    used = gemm_points(h100, "bf16")
    assert [y for _, y in used] == pytest.approx([y * curve.sustained.factor for _, y in curve.points])
    assert gemm_points(h100, "fp16") == used  # fp16 runs on bf16's curve
    flops = gemm_flops(8192, 8192, 8192)
    assert gemm_efficiency(used, flops) * 989 == pytest.approx(783.3 * 0.928, abs=0.1)
    # Sustained measurements (Azure, 10,000 warm-ups) are used as measured: H100 FP8 and the A100.
    assert gemm_points(h100, "fp8") == h100.gemm_efficiency["fp8"].points
    a100 = CATALOG.gpu("a100-sxm-80gb").compute
    assert a100.gemm_efficiency["bf16"].sustained is None and gemm_points(a100, "bf16") == a100.gemm_efficiency["bf16"].points
    # A large GEMM takes 1 / 0.928 as long as the burst curve says.
    kw = dict(peak_tflops=989, hbm_tbytes_per_s=2.97, element_bytes=2)
    assert gemm_time_s(8192, 8192, 8192, points=used, **kw) == pytest.approx(
        gemm_time_s(8192, 8192, 8192, points=curve.points, **kw) / 0.928, rel=1e-9)


def test_unfused_attention_rate_scales_with_head_dim_up_to_the_ridge():
    # HBM-bound on the s x s tensors: time flat in d, so the rate goes as d / d_measured ...
    assert unfused_attention_rate_scale(96, 128, 183.5) == pytest.approx(0.75)
    assert unfused_attention_rate_scale(160, 128, 183.5) == pytest.approx(1.25)
    # ... until Q K^T (intensity ~d FLOP/B) is compute-bound at the ridge point.
    assert unfused_attention_rate_scale(256, 128, 183.5) == pytest.approx(183.5 / 128)
    assert unfused_attention_rate_scale(128, 128, 183.5) == 1.0


def test_cross_entropy_fp8_cast_and_launch_floor_arithmetic():
    # 1e8 logits x 38 B at 1.7 TB/s = 2.235 ms forward, x 14 B = 0.824 ms backward.
    forward, backward = cross_entropy_time_s(1e8, 38, 14, 1.7)
    assert forward == pytest.approx(3.8e9 / 1.7e12) and backward == pytest.approx(1.4e9 / 1.7e12)
    # Forward casts M x K inputs, backward M x N output gradients, 4 B each, x count.
    shapes = [("a", 10, 20, 30, 1), ("b", 10, 5, 7, 2)]
    forward, backward = fp8_cast_time_s(shapes, 4, 1.0)
    assert forward == pytest.approx(4 * (10 * 30 + 2 * 10 * 7) / 1e12)
    assert backward == pytest.approx(4 * (10 * 20 + 2 * 10 * 5) / 1e12)
    # The host launch floor binds only when kernels are shorter than their launches.
    assert host_launch_floor_s(1e-3, 100, 3.25) == 1e-3
    assert host_launch_floor_s(1e-4, 100, 3.25) == pytest.approx(3.25e-4)


GPT_DIMS = TransformerDims(name="g", layers=24, hidden=2304, heads=24, kv_heads=24, ffn_hidden=4 * 2304, vocab=51200)


def _a100_layer(dims, **overrides):
    args = dict(peak_tflops=312, precision="fp16", micro_batch=1, seq_tokens=2048, tp=1, cp=1, ep=1,
                recompute="full", sequence_parallel=False, attention_kernel="unfused", catalog=CATALOG)
    args.update(overrides)
    return layer_compute(dims, CATALOG.gpu("a100-sxm-80gb").compute, **args).parts


def test_unfused_attention_adds_head_dim_scaling_and_dropout_traffic():
    parts = _a100_layer(GPT_DIMS)
    compute = CATALOG.gpu("a100-sxm-80gb").compute
    hbm = compute.hbm.tbytes_per_s
    # Unfused A100 rate at s = 2048: 76 TFLOP/s measured at d = 128; here d = 96 -> 57 TFLOP/s.
    flops = attention_flops(1, 24, 2048, 2048, 96, causal=False)
    core_fwd = flops / (76e12 * 0.75) / (1 - 0.05)
    dropout_fwd = 24 * 2048 * 2048 * 5 / (hbm * 1e12)
    assert parts["attention"].forward_s == pytest.approx(core_fwd + dropout_fwd)
    assert parts["attention"].backward_s == pytest.approx(2.5 * core_fwd + dropout_fwd)
    # FlashAttention: no dropout term, no head-dim scaling (the kernel is not HBM-bound on s^2).
    flash = _a100_layer(GPT_DIMS, attention_kernel="flash")["attention"]
    assert flash.forward_s == pytest.approx(attention_flops(1, 24, 2048, 2048, 96, True) / 155e12 / 0.95)
    # Not FP8: no casts; long kernels: no launch excess.
    assert parts["fp8_cast"].total_s == 0 and parts["launch"].total_s == 0


def test_fp8_layers_pay_cast_transpose_traffic_and_tiny_layers_the_launch_floor():
    h100 = CATALOG.gpu("h100-sxm").compute
    args = dict(peak_tflops=1979, precision="fp8", micro_batch=1, seq_tokens=2048, tp=4, cp=1, ep=1,
                recompute="none", sequence_parallel=True, catalog=CATALOG)
    parts = layer_compute(GPT_DIMS, h100, **args).parts
    shapes = layer_gemm_shapes(GPT_DIMS, 2048, 4)
    forward = sum(c * m * k for _, m, _, k, c in shapes) * 4 / (h100.hbm.tbytes_per_s * 1e12)
    assert parts["fp8_cast"].forward_s == pytest.approx(forward) and parts["fp8_cast"].recompute_s == 0
    assert layer_compute(GPT_DIMS, h100, **{**args, "precision": "bf16", "peak_tflops": 989}).parts[
        "fp8_cast"].total_s == 0
    # A tiny layer (h 64, 32 tokens): GPU time far below 15 kernel launches x 3.25 us -> the host sets it.
    tiny = layer_compute(DIMS, h100, **{**args, "seq_tokens": 32, "tp": 1, "precision": "bf16", "peak_tflops": 989})
    total = tiny.total
    gemms = 4
    assert total.forward_s == pytest.approx((gemms + 5 + 1) * 3.25e-6)
    assert total.backward_s == pytest.approx((2 * gemms + 5 + 3) * 3.25e-6)


def test_logits_compute_includes_the_fp32_cross_entropy():
    a100 = CATALOG.gpu("a100-sxm-80gb").compute
    out = logits_compute(GPT_DIMS, a100, peak_tflops=312, precision="fp16", micro_batch=1, seq_tokens=2048, tp=8,
                         cp=1, catalog=CATALOG).parts
    logits = 2048 * 51200 / 8
    assert out["loss"].forward_s == pytest.approx(logits * 38 / 1.7e12)
    assert out["loss"].backward_s == pytest.approx(logits * 14 / 1.7e12)


def test_fp8_backward_gemms_pay_the_split_accumulator():
    assert fp8_backward_gemm_time_s(2.0, 1.15) == pytest.approx(2.3)
    assert CATALOG.perf_defaults.parameters["fp8_split_accumulator_gemm_slowdown"].value == 1.15
    h100 = CATALOG.gpu("h100-sxm").compute
    args = dict(micro_batch=1, seq_tokens=2048, tp=4, cp=1, ep=1, recompute="none", sequence_parallel=True,
                catalog=CATALOG)
    fp8 = layer_compute(GPT_DIMS, h100, peak_tflops=1979, precision="fp8", **args).parts["gemm"]
    bf16 = layer_compute(GPT_DIMS, h100, peak_tflops=989, precision="bf16", **args).parts["gemm"]
    # FP8: data + weight gradients at 1.15 x the fast-accumulation curve; BF16 keeps backward = 2 x forward.
    assert fp8.backward_s == pytest.approx(2 * 1.15 * fp8.forward_s)
    assert bf16.backward_s == pytest.approx(2 * bf16.forward_s)


def test_fp8_output_layer_runs_in_bf16():
    assert output_layer_precision("fp8") == "bf16" and output_layer_precision("fp16") == "fp16"
    h100 = CATALOG.gpu("h100-sxm")
    args = dict(micro_batch=1, seq_tokens=2048, tp=4, cp=1, catalog=CATALOG)
    fp8 = logits_compute(GPT_DIMS, h100.compute, peak_tflops=1979, precision="fp8", output_peak_tflops=989, **args)
    bf16 = logits_compute(GPT_DIMS, h100.compute, peak_tflops=989, precision="bf16", **args)
    assert fp8.parts["gemm"].forward_s == pytest.approx(bf16.parts["gemm"].forward_s)
    # At the FP8 curve and peak it would be faster: the BF16 output layer is the slower one.
    fast = logits_compute(GPT_DIMS, h100.compute, peak_tflops=1979, precision="bf16", **args)
    assert fast.parts["gemm"].forward_s < fp8.parts["gemm"].forward_s


def test_context_parallel_attention_runs_at_the_chunk_length_rate():
    assert attention_kernel_tokens(8192, 2) == 4096 and attention_kernel_tokens(8192, 1) == 8192
    h100 = CATALOG.gpu("h100-sxm").compute
    dims = TransformerDims(name="llama-like", layers=1, hidden=4096, heads=32, ffn_hidden=14336, vocab=128256,
                           kv_heads=8, gated_ffn=True)
    args = dict(peak_tflops=989, precision="bf16", micro_batch=1, seq_tokens=8192, tp=1, ep=1,
                recompute="none", sequence_parallel=False, catalog=CATALOG)
    cp2 = layer_compute(dims, h100, cp=2, **args).parts["attention"]
    # cp 2: half the causal FLOPs per rank (4 b a (s/2) s d / 2), at the 4k rate (294) not the 8k one (308).
    flops = 4 * 32 * 4096 * 8192 * 128 * 0.5
    derate = 1 / (1 - 0.05)
    assert cp2.forward_s == pytest.approx(flops / 294e12 * derate)
    assert cp2.backward_s == pytest.approx(2.5 * flops / 294e12 * derate)


def test_userbuffers_overlap_chunks_its_gemms():
    kw = dict(peak_tflops=100, points=POINTS, hbm_tbytes_per_s=1e6, element_bytes=2)
    # 1e11 FLOPs (eff 0.8) in 4 chunks of 2.5e10 FLOPs: eff 0.2 + 0.6 x log10(25)/2 = 0.6194.
    whole = gemm_time_s(1000, 1000, 50000, **kw)
    chunked = overlapped_gemm_time_s(1000, 1000, 50000, chunks=4, **kw)
    eff = 0.2 + 0.6 * math.log10(25) / 2
    assert chunked == pytest.approx(1e11 / (100e12 * eff)) and chunked > whole
    assert overlapped_gemm_time_s(1000, 1000, 50000, chunks=4, sm_fraction=0.2, **kw) == pytest.approx(chunked / 0.8)
    assert overlapped_gemm_time_s(1000, 1000, 50000, chunks=1, **kw) == pytest.approx(whole)
    h100 = CATALOG.gpu("h100-sxm").compute
    args = dict(peak_tflops=1979, precision="fp8", micro_batch=1, seq_tokens=2048, tp=4, cp=1, ep=1,
                recompute="none", sequence_parallel=True, catalog=CATALOG)
    plain = layer_compute(GPT_DIMS, h100, **args).parts["gemm"]
    overlapped = layer_compute(GPT_DIMS, h100, tp_overlap=True, **args).parts["gemm"]
    # Every forward GEMM is chunked (slower); of the backward only two data-gradient GEMMs are.
    assert overlapped.forward_s > plain.forward_s
    assert plain.backward_s < overlapped.backward_s < plain.backward_s * overlapped.forward_s / plain.forward_s
