"""Memory per GPU against published measurements (validation/perf.py memory_rows, checked only) and
FlashAttention's activation memory without recomputation (perf/memory.py)."""

from __future__ import annotations

import importlib.util

import pytest

from fabricplan.catalog import load_catalog
from fabricplan.perf.flops import model_dims
from fabricplan.perf.memory import activation_bytes_per_layer, memory_per_gpu
from fabricplan.spec import JobSpec
from validation.perf import MemoryValidationRow, memory_failures, memory_row_estimate, memory_rows

CATALOG = load_catalog()
ROWS = memory_rows()


def _script():
    from project_paths import ROOT

    spec = importlib.util.spec_from_file_location("validate_perf", ROOT / "scripts" / "validate_perf.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script


@pytest.mark.parametrize("row", [r for r in ROWS if r.tolerance is not None], ids=lambda r: r.quantity.split(":")[0])
def test_gated_memory_rows_are_within_their_tolerance(row):
    assert abs(row.error) <= row.tolerance, f"{row.quantity}: {row.model:.1f} vs {row.published} GiB"


def test_memory_rows_are_checked_only_with_a_reason_and_a_source():
    assert len(ROWS) == 9 and {r.group for r in ROWS} == {"checked"}
    assert sum(r.tolerance is not None for r in ROWS) == 6
    assert all(r.reason and r.source for r in ROWS)
    assert not memory_failures(ROWS)
    published = {r.quantity.split(":")[0]: r.published for r in ROWS}
    assert published["megatron_pr482_7b_dp8"] == 69.1 and published["torchtitan_8b_fsdp8"] == 82.4


def test_megatron_row_counts_fp32_gradients_and_distributed_optimizer():
    """Megatron bf16 with the distributed optimizer: 6 + 12/d bytes per parameter (distrib_optimizer.md)."""
    from fabricplan.catalog.files import load_data_file
    from fabricplan.perf.memory import GIB

    entry = next(e for e in load_data_file("published_perf.yaml")["memory_per_gpu"]["rows"]
                 if e["id"] == "megatron_pr482_7b_dp8")
    estimate, model_gib = memory_row_estimate(entry)
    parts = estimate.breakdown_bytes
    psi = model_dims(entry["model"], catalog=CATALOG).parameters()
    assert parts["weights"] + parts["gradients"] + parts["optimizer_states"] == pytest.approx(psi * (6 + 12 / 8))
    assert model_gib == pytest.approx((estimate.total_bytes - parts["reserved"]) / GIB)
    # 2-byte gradients take 2 psi (12.3 GiB) off the row
    _, fp16_grads = memory_row_estimate(dict(entry, gradient_dtype="bf16"))
    assert model_gib - fp16_grads == pytest.approx(2 * psi / GIB)


def test_flash_attention_without_recompute_stores_no_s_squared_tensor():
    dims = model_dims("llama3-8b", CATALOG)
    s, b, t = 4096, 1, 2
    selective = activation_bytes_per_layer(dims, s, b, t, "selective", False)
    assert activation_bytes_per_layer(dims, s, b, t, "none", False, "flash") == selective
    unfused = activation_bytes_per_layer(dims, s, b, t, "none", False, "unfused")
    assert unfused - selective == pytest.approx(5 * dims.heads * s * s * b / t)  # Korthikanti's 5as/h x sbh / t
    gpu = CATALOG.gpu("h100-sxm")
    job = dict(name="j", model="llama3-8b", global_batch_sequences=8, seq_len_tokens=s, recompute="none",
               sequence_parallel=False, tp=t)
    layout = dict(tp=t, pp=1, dp=4, cp=1, ep=1, micro_batches=2, catalog=CATALOG)
    flash = memory_per_gpu(JobSpec(**job, attention_kernel="flash"), dims, gpu, **layout)
    plain = memory_per_gpu(JobSpec(**job, attention_kernel="unfused"), dims, gpu, **layout)
    assert plain.breakdown_bytes["activations"] - flash.breakdown_bytes["activations"] == pytest.approx(
        dims.layers * (unfused - selective))


def test_validate_perf_renders_the_memory_section_and_fails_past_tolerance(monkeypatch, tmp_path):
    script = _script()
    lines, failures = script._memory_section()
    text = "\n".join(lines)
    assert failures == 0
    assert "## Memory per GPU: checked only" in text and "| megatron_pr482_7b_dp8: max_allocated GiB | 69.1 |" in text
    assert "Tolerances and reasons:" in text and "not gated" in text
    off = [MemoryValidationRow(r.case, r.quantity, r.published, r.published * (1 + 1.5 * r.tolerance) if r.tolerance else r.model, r.detail,
                               group=r.group, tolerance=r.tolerance, reason=r.reason, assumed=r.assumed, source=r.source)
           for r in ROWS]
    monkeypatch.setattr(script, "memory_rows", lambda catalog=None: off)
    _lines, failures = script._memory_section()
    assert failures == 6  # every gated row half its tolerance past it
    assert len(memory_failures(off)) == 6
    output = tmp_path / "validation.md"
    assert script.main(["--output", str(output)]) == 1
    assert "Memory per GPU: checked only" in output.read_text(encoding="utf-8")


def test_recipes_that_ran_fit_their_gpus():
    # Issue 27: every NeMo / Megatron-Bridge recipe that ran fits its GPU in the model (one-sided, at
    # most 5 % over), H100 to GB200, BF16 and FP8.
    from validation.perf import recipe_fit_failures, recipe_fit_rows

    rows = recipe_fit_rows()
    assert len(rows) == 16
    assert {row.detail.split(",")[0] for row in rows} == {"h100-sxm", "b200", "gb200"}
    assert recipe_fit_failures(rows) == []
    by_id = {row.quantity: row for row in rows}
    # The GB200 70B recipe offloads 40 of its 80 layers' activations (cpu_offloading_num_layers).
    assert by_id["mb2511_llama3_70b_gb200_64"].model == pytest.approx(156.0, abs=0.5)
    assert by_id["nemo2407_gpt3_175b_512"].model == pytest.approx(71.3, abs=0.3)
    assert by_id["nemo2409_llama31_405b_576"].error == pytest.approx(0.023, abs=0.003)
