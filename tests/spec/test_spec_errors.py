"""Bad input: every case is one clear line on stderr, exit 2, no traceback."""

from __future__ import annotations

import pytest
import yaml

GOOD = {"cluster": {"gpu": "h100-sxm", "gpus": 128}}


def write(tmp_path, document, name="spec.yaml"):
    path = tmp_path / name
    path.write_text(document if isinstance(document, str) else yaml.safe_dump(document))
    return path


def assert_clean_error(result, *fragments):
    assert result.code == 2, result.err
    assert result.out == ""
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    assert lines[0].startswith("error: ")
    assert "Traceback" not in result.err
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


def test_good_spec_loads(cli, tmp_path):
    result = cli("cost", write(tmp_path, GOOD), "--json")
    assert result.code == 0, result.err


@pytest.mark.parametrize(
    ("document", "fragments"),
    [
        ({"cluster": {"gpu": "h100-sxm"}}, ["cluster.gpus", "required field is missing"]),
        ({}, ["cluster", "required field is missing"]),
        ({"cluster": {"gpu": "h100-sxm", "gpus": "lots"}}, ["cluster.gpus", "valid integer", "'lots'"]),
        ({"cluster": {"gpu": "h100-sxm", "gpus": 128, "nic_speed_gbps": "400G"}},
         ["cluster.nic_speed_gbps", "'400G'"]),
        ({"cluster": {"gpu": "h100-sxm", "gpus": -8}}, ["cluster.gpus", "greater than 0", "-8"]),
        ({"cluster": {"gpu": "h100-sxm", "gpus": 0}}, ["cluster.gpus", "greater than 0"]),
        ({"cluster": {"gpu": "h100-sxm", "gpus": 128, "gpus_per_node": 0}}, ["cluster.gpus_per_node"]),
        ({"cluster": {"gpu": "h100-sxm", "gpus": 100}}, ["gpus (100) must be a multiple of gpus_per_node (8)"]),
        ({"cluster": {"gpu": "h100-sxm", "gpus": 128, "gpus_per_nodes": 8}},
         ["cluster.gpus_per_nodes", "unknown field"]),
        ({"cluster": {"gpu": "h100-sxm", "gpus": 128}, "economics": {"pue": 0.5}}, ["economics.pue"]),
        ({"cluster": {"gpu": "h100-sxm", "gpus": 128}, "topology": {"oversubscription": [0.5]}},
         ["oversubscription[0] must be >= 1.0"]),
        ({"cluster": {"gpu": "h100-sxm", "gpus": 128}, "topology": {"style": "torus"}}, ["topology.style", "'torus'"]),
        ({"cluster": {"gpu": "h900", "gpus": 128}}, ["cluster.gpu", "unknown GPU 'h900'", "h100-sxm"]),
        ({"cluster": {"gpu": "h100-sxm", "gpus": 128}, "fabrics": ["infiniband-qdr"]},
         ["fabrics[0]", "unknown fabric profile 'infiniband-qdr'", "infiniband-ndr"]),
        ({"cluster": {"gpu": "h100-sxm", "gpus": 128}, "fabrics": [{"profile": "roce-v2", "switch": "sw_x"}]},
         ["fabrics[0].switch", "unknown switch 'sw_x'", "sw_eth_th5"]),
        ({"cluster": {"gpu": "h100-sxm", "gpus": 128, "nic_speed_gbps": 800}, "fabrics": ["infiniband-ndr"]},
         ["fabrics[infiniband-ndr].switch_optic", "800G", "sw_ib_q3400"]),  # the family's 800G switch, no optic
        ([1, 2, 3], ["expected a mapping"]),
        ({"cluster": {"gpu": "h100-sxm", "gpus": 128},
          "jobs": [{"name": "j", "model": "llama3-8b", "global_batch_sequences": 64, "seq_len_tokens": 8192,
                    "gradient_dtype": "fp64"}]},
         ["jobs[0].gradient_dtype", "'fp32', 'bf16' or 'fp16'", "'fp64'"]),
        ({"cluster": {"gpu": "h100-sxm", "gpus": 128}, "economics": {"energy_usd_per_kwh": float("inf")}},
         ["economics.energy_usd_per_kwh", "finite number"]),
        ({"cluster": {"gpu": "h100-sxm", "gpus": 128}, "economics": {"horizon_years": float("nan")}},
         ["economics.horizon_years", "finite number"]),
        ({"cluster": {"gpu": "h100-sxm", "gpus": 10**23}}, ["cluster.gpus", "less than or equal to 10000000"]),
        ({"cluster": {"gpu": {"peak_dense_tflops": {"bf16": -5}, "hbm_gbytes": 80,
                              "nvlink_bandwidth_gbytes_per_s": 900, "power_w": 700}, "gpus": 16}},
         ["cluster.gpu.peak_dense_tflops.bf16", "greater than or equal to 0.1", "-5"]),
    ],
)
def test_bad_spec(cli, tmp_path, document, fragments):
    assert_clean_error(cli("cost", write(tmp_path, document)), *fragments)


def test_yaml_syntax_error_names_line(cli, tmp_path):
    path = write(tmp_path, "cluster:\n  gpu: h100-sxm\n  gpus: [128\n")
    assert_clean_error(cli("cost", path), "invalid YAML", "spec.yaml:")


def test_json_syntax_error_names_line(cli, tmp_path):
    path = write(tmp_path, '{"cluster": {"gpu": "h100-sxm",}}', name="spec.json")
    assert_clean_error(cli("cost", path), "invalid JSON", "spec.json:1:")


def test_empty_file(cli, tmp_path):
    assert_clean_error(cli("cost", write(tmp_path, "   \n")), "file is empty")


def test_missing_file(cli, tmp_path):
    assert_clean_error(cli("cost", tmp_path / "nope.yaml"), "file not found")


def test_binary_file(cli, tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_bytes(b"\xff\xfe\x00garbage")
    assert_clean_error(cli("cost", path), "not UTF-8")


def test_fifty_megabyte_file(cli, tmp_path):
    path = tmp_path / "huge.yaml"
    with path.open("w") as handle:
        line = "# " + "x" * 1021 + "\n"  # 1,024 bytes
        for _ in range(50 * 1024):
            handle.write(line)
    assert path.stat().st_size >= 50 * 1024 * 1024
    assert_clean_error(cli("cost", path), "52.4 MB", "limit 10 MiB")


def test_shares_over_one(cli, tmp_path):
    job = {"name": "a", "model": "llama3-8b", "global_batch_sequences": 8, "seq_len_tokens": 4096, "share": 0.7}
    document = {**GOOD, "jobs": [job, {**job, "name": "b"}]}
    assert_clean_error(cli("cost", write(tmp_path, document)), "job shares add up to 1.4")


def test_bad_cli_option_is_usage_error(cli, tmp_path):
    result = cli("cost", write(tmp_path, GOOD), "--price-point", "cheap")
    assert result.code == 2
    assert "low, default or high" in result.err
