"""`--catalog` on lint and headroom: an overlay of `ops_defaults` moves thresholds and constants;
the lint config file still overrides on top; bad overlay values fail with the overlay's name."""

from __future__ import annotations

from pathlib import Path

import pytest
from ops_fixtures import setup_args

import fabricplan as fp
from fabricplan.catalog import load_catalog

CATALOG = load_catalog()


def _overlay(tmp_path: Path, body: str, name: str = "overlay.yaml") -> str:
    path = tmp_path / name
    path.write_text(body)
    return str(path)


def _entry(value) -> str:
    return f'{{value: {value}, source: "test overlay", date: "2026-12-01"}}'


def _rules(cli, *args) -> list[str]:
    return sorted(f["rule"] for f in cli("lint", *args, "--json").json()["findings"])


def test_overlay_raises_a_threshold_and_the_finding_disappears(cli, tmp_path):
    args = setup_args("too_many_lossless")  # gpu02 and Ethernet4 enable PFC on 3, 4 and 5 (limit 2)
    assert _rules(cli, *args) == ["PFC002", "PFC002"]
    overlay = _overlay(tmp_path, f"ops_defaults:\n  lint:\n    max_lossless_priorities: {_entry(3)}\n")
    result = cli("lint", *args, "--catalog", overlay)
    assert result.code == 0 and "No findings" in result.out, result.out


def test_overlay_lowers_a_threshold_and_a_finding_appears(cli, tmp_path, good_args):
    assert _rules(cli, *good_args) == []
    overlay = _overlay(tmp_path, f"ops_defaults:\n  lint:\n    max_lossless_priorities: {_entry(0)}\n")
    # every NIC and switch port has one lossless priority (3): 3 NICs + 3 ports over the limit 0
    assert _rules(cli, *good_args, "--catalog", overlay) == ["PFC002"] * 6


def test_overlay_of_the_roce_dscp_moves_the_classification_and_config_overrides_it(cli, tmp_path, good_args):
    overlay = _overlay(tmp_path, f"ops_defaults:\n  lint:\n    roce_dscp: {_entry(48)}\n")
    # DSCP 48 -> priority 6 (dscp >> 3), which no side has PFC on: CLS001 fires on every link
    doc = cli("lint", *good_args, "--catalog", overlay, "--json").json()
    assert {f["rule"] for f in doc["findings"]} >= {"CLS001"}
    chains = [f["evidence"]["chain"] for f in doc["findings"] if f["rule"] == "CLS001"]
    assert chains and all(c["dscp"] == 48 and c["priority"] == 6 for c in chains)
    config = _overlay(tmp_path, "settings:\n  roce_dscp: 26\n", "lint.yaml")
    result = cli("lint", *good_args, "--catalog", overlay, "--config", config)
    assert result.code == 0 and "No findings" in result.out, result.out


def test_later_overlay_wins(cli, tmp_path):
    args = setup_args("too_many_lossless")
    low = _overlay(tmp_path, f"ops_defaults:\n  lint:\n    max_lossless_priorities: {_entry(3)}\n", "a.yaml")
    high = _overlay(tmp_path, f"ops_defaults:\n  lint:\n    max_lossless_priorities: {_entry(2)}\n", "b.yaml")
    assert _rules(cli, *args, "--catalog", low, "--catalog", high) == ["PFC002", "PFC002"]
    assert _rules(cli, *args, "--catalog", high, "--catalog", low) == []


@pytest.mark.parametrize(("key", "value", "expected"), [
    ("roce_dscp", 64, "must be in 0..63, got 64"),
    ("roce_dscp", -1, "must be in 0..63, got -1"),
    ("roce_pcp", 9, "must be in 0..7, got 9"),
    ("roce_dscp", '"26"', "must be like 26, got '26'"),
    ("max_lossless_priorities", 10**40, "must be in 0..8, got a 41-digit number"),
])
def test_bad_overlay_value_names_the_overlay_and_path(cli, tmp_path, good_args, key, value, expected):
    overlay = _overlay(tmp_path, f"ops_defaults:\n  lint:\n    {key}: {_entry(value)}\n")
    result = cli("lint", *good_args, "--catalog", overlay)
    assert result.code == 2
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.err
    assert f"{overlay}: ops_defaults.lint.{key}.value" in lines[0] and expected in lines[0], lines[0]


def _xoff(cli, *args) -> int:
    result = cli("headroom", *args, "--json")
    assert result.code == 0, result.err
    return result.json()["xoff_bytes"]


def test_overlay_of_a_headroom_constant_moves_xoff_by_the_expected_bytes(cli, tmp_path):
    base = ("--speed", "100G", "--cable", "100m", "--mtu", "9100")
    overlay = _overlay(tmp_path, "ops_defaults:\n  headroom:\n    generic:\n"
                                 f"      ns_per_m: {_entry(10.0)}\n")
    # generic cable term = 2 x 100 m x ns/m x 100000 Mb/s / 8000: 12500 B at 5 ns/m, 25000 B at 10 ns/m
    assert _xoff(cli, *base, "--catalog", overlay) - _xoff(cli, *base) == 12500


def test_overlay_of_an_mlx5_constant_moves_xoff(cli, tmp_path):
    base = ("--speed", "100G", "--cable", "7m", "--mtu", "9000", "--model", "mlx5")
    overlay = _overlay(tmp_path, f"ops_defaults:\n  headroom:\n    mlx5:\n      base_term: {_entry(401)}\n")
    # xoff = (base + 216 * 7 // 100) * 100000 // 1000 + 272 * 9000 // 100: +100 on base = +10000 B
    assert _xoff(cli, *base, "--catalog", overlay) - _xoff(cli, *base) == 10000


def test_overlay_of_an_asic_constant_moves_the_sonic_model(cli, tmp_path):
    base = ("--speed", "400G", "--cable", "5m", "--mtu", "9100", "--model", "sonic", "--asic", "spectrum-4")
    plain = cli("headroom", *base, "--json").json()
    overlay = _overlay(tmp_path, "ops_defaults:\n  headroom:\n    sonic:\n      asic:\n        spectrum-4:\n"
                                 "          value: {cell_size_bytes: 192, pipeline_latency_kb: 29, mac_phy_delay_kb: 1,"
                                 " peer_response_time_kb: 50, tile_bytes_per_gbps: 120}\n"
                                 '          source: "test overlay"\n          date: "2026-12-01"\n')
    moved = cli("headroom", *base, "--catalog", overlay, "--json").json()
    # xon = ceil_1024(pipeline latency): 29 KB exactly
    assert moved["xon_bytes"] == 29 * 1024 and moved["xon_bytes"] != plain["xon_bytes"]


@pytest.mark.parametrize("value", ["1.0e+300", "-5", '"fast"'])
def test_bad_headroom_constant_is_one_line_naming_the_overlay(cli, tmp_path, value):
    overlay = _overlay(tmp_path, "ops_defaults:\n  headroom:\n    generic:\n"
                                 f"      ns_per_m: {_entry(value)}\n")
    result = cli("headroom", "--speed", "100G", "--cable", "5m", "--mtu", "9100", "--catalog", overlay)
    assert result.code == 2 and "Traceback" not in result.err
    (line,) = result.err.strip().splitlines()
    assert f"{overlay}: ops_defaults.headroom.generic.ns_per_m.value" in line


def test_api_takes_a_catalog(tmp_path):
    overlay = _overlay(tmp_path, "ops_defaults:\n  headroom:\n    generic:\n"
                                 f"      ns_per_m: {_entry(10.0)}\n")
    assert fp.headroom("100G", "100m", 9100, catalog=[overlay]).xoff_bytes - fp.headroom("100G", "100m", 9100).xoff_bytes == 12500
    args = setup_args("too_many_lossless")
    nics = [a for i, a in enumerate(args) if i and args[i - 1] == "--nic"]
    switch = args[args.index("--switch") + 1]
    cabling = args[args.index("--cabling") + 1]
    raised = _overlay(tmp_path, f"ops_defaults:\n  lint:\n    max_lossless_priorities: {_entry(3)}\n", "l.yaml")
    assert [f.rule_id for f in fp.lint(nics, [switch], cabling=cabling).findings] == ["PFC002", "PFC002"]
    assert fp.lint(nics, [switch], cabling=cabling, catalog=[raised]).findings == []
