"""Serving jobs (issue 29): KV-cache size and traffic as their formulas say, the fabric in the KV
transfer and the expert-parallel decode, Little's law for the batch, overload, weight updates, the
outcome's cost per million tokens, the spec checks and the validation section."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricplan.catalog import default_catalog
from fabricplan.design import resolve
from fabricplan.errors import InputError
from fabricplan.perf.flops import model_dims
from fabricplan.perf.serving import (
    kv_bytes_per_token,
    little_batch,
    mm1_wait_exceeds,
    request_kv_bytes,
    serving_time,
)
from fabricplan.spec import parse_spec
from project_paths import ROOT, load_script

CATALOG = default_catalog()


def _spec(job: dict, fabric: str = "roce-v2", gpus: int = 16, **cluster):
    return parse_spec({"cluster": {"gpu": "h100-sxm", "gpus": gpus, **cluster}, "fabrics": [fabric],
                       "jobs": [{"kind": "serving", "name": "s", **job}]})


def _serve(job: dict, fabric: str = "roce-v2", gpus: int = 16, **cluster):
    spec = _spec(job, fabric, gpus, **cluster)
    design = resolve(spec, CATALOG, spec.fabric_choices()[0])
    return serving_time(spec.jobs[0], design.network, catalog=CATALOG)


DISAGG = {"model": "qwen3-8b", "tp": 8, "disaggregated": True, "prefill_gpus": 8, "output_tokens": 128,
          "request_rate_per_s": 0.5}


def test_kv_cache_of_qwen3_8b_is_the_published_size():
    # 32,768 tokens x 2 (K, V) x 36 layers x 8 KV heads x 128 x 2 bytes = 4.50 GiB (Mooncake's table)
    dims = model_dims("qwen3-8b", CATALOG)
    assert request_kv_bytes(dims, 32768, 8, 2.0) == 32768 * 2 * 36 * 8 * 128 * 2
    assert request_kv_bytes(dims, 32768, 8, 2.0) / 2**30 == pytest.approx(4.5)
    # fewer KV heads than ranks: each rank holds one head, replicated (tp 16 holds twice the cache)
    assert kv_bytes_per_token(dims, 16, 2.0) == kv_bytes_per_token(dims, 8, 2.0)


def test_kv_transfer_scales_with_prompt_length_and_request_rate_as_its_formula_says():
    base = _serve({**DISAGG, "prompt_tokens": 4096}).serving
    longer = _serve({**DISAGG, "prompt_tokens": 8192}).serving
    busier = _serve({**DISAGG, "prompt_tokens": 4096, "request_rate_per_s": 1.0}).serving
    # bytes per request proportional to the prompt; fabric traffic = rate x bytes
    assert longer.kv_bytes_per_request == pytest.approx(2 * base.kv_bytes_per_request)
    assert base.kv_fabric_gbytes_per_s == pytest.approx(0.5 * base.kv_bytes_per_request / 1e9)
    assert busier.kv_fabric_gbytes_per_s == pytest.approx(2 * base.kv_fabric_gbytes_per_s)
    assert longer.kv_fabric_gbytes_per_s == pytest.approx(2 * base.kv_fabric_gbytes_per_s)
    # time = handshake + bytes / rate: the wire part doubles with the bytes (the rate is flat here)
    setup = CATALOG.perf_defaults.parameters["serving_kv_transfer_setup_us"].value * 1e-6
    assert (longer.kv_transfer_s - setup) == pytest.approx(2 * (base.kv_transfer_s - setup), rel=0.05)


def test_the_fabric_decides_the_kv_transfer_and_a_colocated_job_sends_none():
    roce = _serve({**DISAGG, "prompt_tokens": 32768}, "roce-v2").serving
    tcp = _serve({**DISAGG, "prompt_tokens": 32768}, "ethernet-tcp").serving
    assert tcp.kv_transfer_s > 2 * roce.kv_transfer_s
    assert tcp.ttft_s - roce.ttft_s == pytest.approx(tcp.kv_transfer_s - roce.kv_transfer_s, rel=1e-6)
    colocated = _serve({"model": "qwen3-8b", "tp": 8, "prompt_tokens": 32768, "output_tokens": 128,
                        "request_rate_per_s": 0.5}).serving
    assert colocated.kv_transfer_s == 0.0 and colocated.kv_fabric_gbytes_per_s == 0.0
    # colocated prefill stretches every decode iteration by 1 / (1 - rho)
    assert colocated.tpot_s == pytest.approx(colocated.decode_iteration_s / (1 - colocated.prefill_utilisation))


def test_decode_batch_follows_littles_law_and_overload_is_reported():
    job = {"model": "llama3-8b", "tp": 1, "prompt_tokens": 1024, "output_tokens": 256, "request_rate_per_s": 20}
    result = _serve(job, gpus=8)
    m = result.serving
    per_replica = 20 * 256 / 8  # offered output tokens per second per replica
    assert m.decode_batch == pytest.approx(per_replica * m.tpot_s, rel=1e-3)
    assert m.served_tokens_per_s == pytest.approx(m.offered_tokens_per_s) and not m.overloaded
    assert m.tokens_per_s_per_gpu == pytest.approx(20 * 256 / 8)
    swamped = _serve({**job, "request_rate_per_s": 20000, "max_batch_sequences": 32}, gpus=8).serving
    assert swamped.overloaded and swamped.served_tokens_per_s < swamped.offered_tokens_per_s
    assert swamped.slo_attainment < 0.5


def test_expert_parallel_decode_crosses_nodes_and_tcp_pays_for_it():
    job = {"model": "mixtral-8x22b", "tp": 2, "ep": 8, "prompt_tokens": 2048, "output_tokens": 256,
           "request_rate_per_s": 10}
    roce, tcp = _serve(job, "roce-v2"), _serve(job, "ethernet-tcp")
    assert roce.exposed_comm_s["ep"] > 0
    assert any(c.operation == "all_to_all" and c.n_nodes == 2 for c in roce.collectives)
    assert tcp.exposed_comm_s["ep"] > 2 * roce.exposed_comm_s["ep"]
    assert tcp.serving.tpot_s > roce.serving.tpot_s
    assert tcp.compute_s / tcp.step_time_s < roce.compute_s / roce.step_time_s  # useful share falls


def test_weight_updates_pause_the_replicas_for_their_share_of_the_interval():
    job = {"model": "llama3-8b", "tp": 1, "prompt_tokens": 1024, "output_tokens": 256, "request_rate_per_s": 20}
    base = _serve(job).serving
    every_minute = _serve({**job, "weight_update_interval_s": 60}).serving
    every_second = _serve({**job, "weight_update_interval_s": 1}).serving
    assert base.weight_sync_s == 0.0 and base.weight_pause_share == 0.0
    assert every_minute.weight_sync_s > 0
    assert every_minute.weight_pause_share == pytest.approx(every_minute.weight_sync_s / 60)
    assert every_second.weight_pause_share == pytest.approx(min(every_second.weight_sync_s, 1.0))
    assert every_second.useful_share < every_minute.useful_share < base.useful_share


@settings(max_examples=50, deadline=None)
@given(rho=st.floats(0.0, 0.99), service=st.floats(1e-3, 10.0), slack=st.floats(0.0, 100.0),
       more=st.floats(0.0, 10.0))
def test_mm1_wait_tail_falls_with_slack_and_rises_with_load(rho, service, slack, more):
    p = mm1_wait_exceeds(rho, service, slack)
    assert 0.0 <= p <= 1.0
    if slack > 0:
        assert mm1_wait_exceeds(rho, service, slack + more) <= p + 1e-12
        assert mm1_wait_exceeds(min(rho + 0.005, 0.999), service, slack) >= p - 1e-12
    assert mm1_wait_exceeds(1.0, service, slack) == 1.0


def test_little_batch_is_capped_and_a_fixed_point():
    def iteration(batch: float) -> float:
        return 0.01 + 0.001 * batch

    batch = little_batch(100.0, iteration, 1000.0)
    assert batch == pytest.approx(100.0 * iteration(batch), rel=1e-5)
    assert little_batch(1e9, iteration, 64.0) == 64.0


def test_serving_specs_are_checked_with_their_field():
    with pytest.raises(Exception, match="prefill_gpus"):
        _spec({"model": "qwen3-8b", "tp": 8, "disaggregated": True, "prompt_tokens": 10, "output_tokens": 10,
               "request_rate_per_s": 1})
    from fabricplan.spec.load import check_references

    with pytest.raises(InputError) as error:
        check_references(_spec({"model": "qwen3-8b", "tp": 8, "disaggregated": True, "prefill_gpus": 12,
                                "prompt_tokens": 10, "output_tokens": 10, "request_rate_per_s": 1}), CATALOG)
    assert error.value.location == "jobs[0].prefill_gpus"
    with pytest.raises(InputError) as error:
        check_references(_spec({"model": "llama3-8b", "ep": 2, "prompt_tokens": 10, "output_tokens": 10,
                                "request_rate_per_s": 1}), CATALOG)
    assert error.value.location == "jobs[0].ep"


def test_compare_prices_tokens_within_slo():
    import fabricplan as fp

    spec = parse_spec({
        "cluster": {"gpu": "h100-sxm", "gpus": 32}, "fabrics": ["roce-v2", "ethernet-tcp"],
        "jobs": [{"kind": "serving", "name": "moe", "model": "mixtral-8x22b", "tp": 2, "ep": 8,
                  "prompt_tokens": 2048, "output_tokens": 256, "request_rate_per_s": 20, "share": 0.5},
                 {"name": "train", "model": "llama3-8b", "tp": 8, "global_batch_sequences": 64,
                  "seq_len_tokens": 4096, "share": 0.5}]})
    report = fp.compare(spec, quick=True)
    for fabric in report.fabrics:
        serving = next(j for j in fabric.jobs if j.kind == "serving")
        training = next(j for j in fabric.jobs if j.kind == "training")
        assert training.serving is None and serving.serving is not None
        s = serving.serving
        hourly = fabric.tco_usd / fabric.gpu_hours_total
        good = s.served_tokens_per_s * (s.slo_attainment * s.offered_tokens_per_s / s.served_tokens_per_s)
        expected = hourly * serving.gpus * 1e6 / (good * 3600 * serving.goodput)
        assert s.cost_per_million_tokens_usd == pytest.approx(expected, rel=1e-6)
        assert math.isfinite(fabric.cost_per_useful_gpu_hour_usd)


def test_serving_validation_section_is_current_and_within_tolerance():
    module = load_script("validate_serving")
    text = (ROOT / "docs" / "validation.md").read_text(encoding="utf-8")
    written = text[text.index(module.BEGIN):text.index(module.END) + len(module.END)] + "\n"
    section, failures = module.render()
    assert failures == []
    assert written == section, "run python scripts/validate_serving.py"
    from validation.serving import deepep_rows, serving_rows

    rows = serving_rows()
    assert sum(r.calibrated for r in rows) == 1  # one row sets the handshake, the rest check it
    assert all(r.ok for r in rows if not r.calibrated)
    expert = deepep_rows()
    assert not any(r.calibrated for r in expert) and sum(r.ok is not None for r in expert) == 10
    assert all(r.ok for r in expert if r.ok is not None)
