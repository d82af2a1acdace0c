"""Specs asking for a rail-only fabric: 2 and 3 tiers per rail work; 4 tiers or more servers per rail
than 3 tiers hold are one-line errors naming the spec field, exit 2."""

from __future__ import annotations

import json

import yaml

SPEC = {"name": "rails", "cluster": {"gpu": "h100-sxm", "gpus": 1024},
        "topology": {"style": "rail_only", "tiers": 2},
        "fabrics": [{"profile": "infiniband-ndr", "switch": "sw_ib_qm9700"}],
        "jobs": [{"name": "dp", "model": "llama3-8b", "global_batch_sequences": 1024, "seq_len_tokens": 8192}]}


def _write(tmp_path, document) -> str:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return str(path)


def test_a_two_tier_rail_only_spec_is_sized_and_compared(cli, tmp_path):
    spec = _write(tmp_path, SPEC)
    result = cli("topology", spec, "--json")
    assert result.code == 0, result.err
    size = json.loads(result.out)
    text = json.dumps(size)
    assert '"rail_only"' in text and '"leaf_switches": 32' in text and '"spine_switches": 16' in text
    compared = cli("compare", spec, "--quick", "--quiet", "--json")
    assert compared.code == 0, compared.err


def test_four_tiers_is_refused_naming_topology_tiers(cli, tmp_path):
    spec = _write(tmp_path, {**SPEC, "topology": {"style": "rail_only", "tiers": 4}})
    for command in ("topology", "compare"):
        result = cli(command, spec)
        assert result.code == 2 and result.err.count("\n") == 1, result.err
        assert "topology.tiers" in result.err and "1 to 3 tiers" in result.err and "Traceback" not in result.err


def test_more_servers_per_rail_than_three_tiers_hold_is_refused(cli, tmp_path):
    # 31 of 64 ports reserved: 1 host port per leaf, so a rail holds 64 x 32 x 1 = 2,048 servers in 3 tiers
    spec = _write(tmp_path, {**SPEC, "cluster": {"gpu": "h100-sxm", "gpus": 8 * 2056},
                             "topology": {"style": "rail_only", "reserved_leaf_ports": 31},
                             "jobs": [{**SPEC["jobs"][0], "global_batch_sequences": 16448}]})
    result = cli("topology", spec)
    assert result.code == 2 and result.err.count("\n") == 1, result.err
    assert "cluster.gpus" in result.err and "2,048" in result.err and "rail-only" in result.err

