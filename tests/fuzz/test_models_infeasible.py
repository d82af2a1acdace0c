"""Infeasible answers are said, not ranked (issue 10): a latency SLA no fabric meets, a layout that
does not fit in GPU memory; and what the bundled examples need per GPU."""

from __future__ import annotations

import json

import pytest
import yaml

from fabricplan.perf.memory import GIB
from project_paths import EXAMPLES

SLA_SPEC = {
    "name": "sla", "cluster": {"gpu": "h100-sxm", "gpus": 64}, "fabrics": ["roce-v2", "infiniband-ndr"],
    "jobs": [{"name": "j", "model": "llama3-8b", "tp": 8, "global_batch_sequences": 64, "seq_len_tokens": 4096}],
}


def _write(tmp_path, document, name="spec.yaml") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return str(path)


def test_no_fabric_meets_the_sla(cli, tmp_path):
    spec = _write(tmp_path, {**SLA_SPEC, "constraints": {"latency_sla_us": 0.1}})
    result = cli("compare", spec, "--quick", "--quiet", "--json")
    assert result.code == 1, result.err  # the report is printed, and the exit says nothing is feasible
    recommendation = result.json()["recommendation"]
    assert recommendation["feasible"] is False
    reason = recommendation["infeasible_reason"]
    assert reason.startswith("no fabric meets the 0.1 us latency SLA; the closest is infiniband-ndr at ")
    latency = {f["fabric"]: f["small_message_latency_us"] for f in result.json()["fabrics"]}
    assert f"{latency['infiniband-ndr']:.2f} us" in reason
    assert latency["infiniband-ndr"] == min(latency.values()) > 0.1
    assert recommendation["reasons"][0].startswith("No feasible fabric: no fabric meets")
    text = cli("compare", spec, "--quick", "--quiet")
    assert text.code == 1 and "No feasible fabric" in text.out


def test_an_sla_some_fabric_meets_is_feasible(cli, tmp_path):
    spec = _write(tmp_path, {**SLA_SPEC, "constraints": {"latency_sla_us": 1.8}})
    result = cli("compare", spec, "--quick", "--quiet", "--json")
    recommendation = result.json()["recommendation"]
    assert result.code == 0 and recommendation["feasible"] is True and recommendation["infeasible_reason"] is None
    assert recommendation["recommended"] == "infiniband-ndr"


def test_405b_on_8_gpus_does_not_fit(cli, tmp_path):
    """Before: 405B on 8 H100 with TP1/PP1 reported 36 % MFU."""
    spec = _write(tmp_path, {"name": "big", "cluster": {"gpu": "h100-sxm", "gpus": 8},
                             "fabrics": ["roce-v2", "infiniband-ndr"],
                             "jobs": [{"name": "big", "model": "llama3-405b", "global_batch_sequences": 8,
                                       "seq_len_tokens": 8192}]})
    for command in (("step",), ("compare", "--quick", "--quiet")):
        result = cli(*command[:1], spec, *command[1:])
        assert result.code == 2 and "Traceback" not in result.err
        (line,) = result.err.strip().splitlines()
        assert line.startswith(f"error: {spec}: jobs[big]: does not fit: needs ")
        assert "GiB per GPU, has 74.5 GiB" in line
        needs = float(line.split("needs ")[1].split(" GiB")[0].replace(",", ""))
        assert needs > 2000


def _step(cli, name):
    result = cli("step", EXAMPLES / name, "--json")
    assert result.code == 0, result.err
    return result.json()["results"]


@pytest.mark.parametrize("name,fits", [
    ("llama70b-1024-h100.yaml", [True]),
    ("moe-alltoall-2048-h100.yaml", [True]),
    ("single-node-8-inference.yaml", [True, True]),  # the serving job, then the fine-tune
    # Over the estimate at their own recompute setting, but they fit with full recomputation,
    # so they run, with a note (see the report of issue 10).
    ("llama405b-16k-h100.yaml", [False]),
    ("mid-128-h100-existing-ethernet.yaml", [False, True]),
])
def test_examples_report_memory_per_gpu(cli, name, fits):
    results = _step(cli, name)
    jobs = list(dict.fromkeys(r["job"] for r in results))
    for job, expected in zip(jobs, fits, strict=True):
        rows = [r for r in results if r["job"] == job]
        for row in rows:
            assert row["memory_capacity_bytes"] == 80e9
            assert row["memory_per_gpu_bytes"] == pytest.approx(sum(row["memory_breakdown_bytes"].values()))
            assert 10 * GIB < row["memory_per_gpu_bytes"]
            assert row["memory_fits"] is expected
            noted = any(n.startswith("memory: the estimate of") for n in row["notes"])
            assert noted is (not expected)
    json.dumps(results)
