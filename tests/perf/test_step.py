"""Training step-time model."""

import pytest

from fabricplan.errors import InputError
from fabricplan.perf.collectives import default_catalog
from fabricplan.perf.flops import model_dims, training_flops_per_token
from fabricplan.perf.step import ClusterShape, step_time
from fabricplan.spec import JobSpec

CATALOG = default_catalog()
H100 = ClusterShape(gpu=CATALOG.gpu("h100-sxm"), gpus=1024, gpus_per_node=8, scale_up_domain=8, nics_per_node=8)


def job(**kw):
    base = dict(name="j", model="llama3-70b", tp=8, pp=4, global_batch_sequences=512, seq_len_tokens=8192)
    base.update(kw)
    return JobSpec(**base)


def test_narayanan_flops_formula():
    # 96 B s l h^2 (1 + s/6h + V/16lh) = 4.511e18 for GPT-3 at B=1536 (training.md).
    _, hardware = training_flops_per_token(model_dims("gpt3-175b"), 2048, "full")
    assert hardware * 1536 * 2048 == pytest.approx(4.511e18, rel=1e-3)
    model, _ = training_flops_per_token(model_dims("gpt3-175b"), 2048, "none")
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
    assert hidden.exposed_comm_s["dp"] <= exposed.exposed_comm_s["dp"]


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
