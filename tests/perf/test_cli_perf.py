"""`fabricplan collective` and `fabricplan step` commands."""

import json

from fabricplan.cli.app import run

SPEC = """
name: perf-test
cluster: {gpu: h100-sxm, gpus: 128, gpus_per_node: 8}
fabrics: [infiniband-ndr, roce-v2]
jobs:
  - {name: llama, model: llama3-70b, tp: 8, pp: 4, global_batch_sequences: 64, seq_len_tokens: 4096,
     token_budget: 1.0e+11}
"""


def test_collective_json_is_one_document(capsys):
    assert run(["collective", "--op", "all_reduce", "--size", "8GiB", "--gpus", "16", "--gpus-per-node", "8",
                "--fabric", "infiniband-ndr", "--algo", "ring", "--protocol", "simple", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["algorithm"] == "ring" and document["protocol"] == "simple"
    # 2 x 8 H100, 8 NDR NICs: NVLink-bound ring ~ 370 GB/s busbw (46 GB/s per NIC, nccl-tests#290).
    assert 360 < document["busbw_gbytes_per_s"] < 380


def test_collective_sweep_table_and_json(capsys):
    assert run(["collective", "--sweep-sizes", "8B:8GiB", "--gpus", "64", "--fabric", "roce-v2", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["results"]
    assert len(rows) == 31 and rows[0]["size_bytes"] == 8
    assert run(["collective", "--sweep-sizes", "8B:1KiB", "--gpus", "16"]) == 0
    assert "busbw" in capsys.readouterr().out


def test_collective_errors_exit_2(capsys):
    assert run(["collective", "--size", "0"]) == 2
    assert run(["collective", "--size", "1MiB", "--gpus", "12"]) == 2
    assert run(["collective", "--size", "1MiB", "--fabric", "roce-v2", "--algo", "collnet_direct"]) == 2
    err = capsys.readouterr().err
    assert "error:" in err and "not available" in err


def test_step_command(tmp_path, capsys):
    spec = tmp_path / "cluster.yaml"
    spec.write_text(SPEC)
    assert run(["step", str(spec), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert {r["fabric"] for r in document["results"]} == {"infiniband-ndr", "roce-v2"}
    assert all(r["gpu_hours_for_budget"] > 0 for r in document["results"])
    assert run(["step", str(spec)]) == 0
    assert "MFU" in capsys.readouterr().out
    bad = tmp_path / "bad.yaml"
    bad.write_text(SPEC.replace("pp: 4", "pp: 3"))
    assert run(["step", str(bad)]) == 2
