"""Catalog: every entry sourced and dated; user overlays override and add."""

from __future__ import annotations

import pytest
import yaml

from fabricplan.catalog import SECTIONS, load_catalog
from fabricplan.errors import CatalogError


def test_every_entry_has_source_and_date():
    catalog = load_catalog()
    for section in SECTIONS:
        entries = catalog.section(section)
        assert entries, section
        for entry_id, entry in entries.items():
            assert len(entry.source) > 10, entry_id
            assert entry.date[:4].isdigit(), entry_id


def test_fabric_profiles_reference_existing_hardware():
    catalog = load_catalog()
    for profile in catalog.section("fabrics").values():
        hardware = profile.hardware
        assert catalog.switch(hardware.switch).family == profile.family
        assert profile.family in catalog.nic(hardware.nic).families
        for optic in (hardware.switch_optic, hardware.nic_optic, hardware.interswitch_optic):
            catalog.optic(optic)


def test_breakout_radix_matches_capacity():
    # A 51.2 Tb/s switch is radix 64 at 800G and 128 at 400G (docs/reference/topology.md §1.1).
    catalog = load_catalog()
    for switch in catalog.section("switches").values():
        for speed, ports in switch.ports_by_speed_gbps.items():
            assert speed * ports <= switch.capacity_tbps * 1000 * 1.0001, switch.id
    assert catalog.switch("sw_eth_th5").ports_by_speed_gbps == {800: 64, 400: 128, 200: 256}
    assert catalog.switch("sw_ib_qm9700").radix_at(400) == 64


def test_overlay_overrides_one_field_and_adds_an_entry(tmp_path):
    overlay = tmp_path / "mine.yaml"
    overlay.write_text(yaml.safe_dump({
        "switches": [
            {"id": "sw_eth_th5", "price_usd": {"default": 80000}, "source": "our quote", "date": "2026-10"},
            {"id": "sw_custom", "name": "Our switch", "family": "ethernet", "asic": "X", "capacity_tbps": 25.6,
             "ports_by_speed_gbps": {400: 64}, "port_to_port_latency_ns": 500, "power_w": 500,
             "price_usd": {"default": 30000}, "source": "vendor quote 123", "date": "2026-10"},
        ]}))
    catalog = load_catalog([overlay])
    th5 = catalog.switch("sw_eth_th5")
    assert th5.price_usd.default == 80000
    assert th5.price_usd.low == 40000  # untouched fields keep the bundled values
    assert th5.ports_by_speed_gbps[400] == 128
    assert catalog.switch("sw_custom").radix_at(400) == 64
    assert catalog.origins["switches"]["sw_custom"] == str(overlay)
    assert catalog.origins["switches"]["sw_ib_qm9700"] == "bundled"


@pytest.mark.parametrize(
    ("document", "fragment"),
    [
        ({"routers": []}, "unknown section 'routers'"),
        ({"switches": {"id": "x"}}, "expected a list"),
        ({"switches": [{"name": "no id"}]}, "string 'id'"),
        ({"switches": [{"id": "sw_eth_th5", "price_usd": {"default": -5}}]}, "price_usd.default"),
        ({"switches": [{"id": "sw_eth_th5", "colour": "red"}]}, "colour: unknown field"),
        ({"nics": [{"id": "nic_new", "name": "x"}]}, "nics[id=nic_new]"),
        ({"parameters": [{"id": "pue", "value": {"low": 1.5, "default": 1.2}}]}, "must not exceed default"),
        ({"gpus": [{"id": "h100-sxm", "peak_dense_tflops": {"bf16": 0}}]}, "peak_dense_tflops.bf16"),
        ({"fabrics": [{"id": "ethernet-tcp", "socket": {"nthreads": -1}}]}, "socket.nthreads"),
        ({"fabrics": [{"id": "ethernet-tcp", "socket": {"variant": "rdma"}}]}, "socket.variant"),
        ({"fabrics": [{"id": "ethernet-tcp", "socket": {"mtu_bytes": 100000}}]}, "socket.mtu_bytes"),
    ],
)
def test_bad_overlay(tmp_path, document, fragment):
    overlay = tmp_path / "bad.yaml"
    overlay.write_text(yaml.safe_dump(document))
    with pytest.raises(CatalogError) as info:
        load_catalog([overlay])
    assert fragment in str(info.value)
    assert str(overlay) in str(info.value)


def test_unknown_id_names_the_closest_known(cli):
    # issue 30: the closest ids, not every one of them (tests/cli/test_did_you_mean.py)
    result = cli("catalog", "show", "sw_ib_qm97OO")
    assert result.code == 2
    assert "did you mean 'sw_ib_qm9700'" in result.err
    far = cli("catalog", "show", "sw_nope")
    assert far.code == 2 and "fabricplan catalog list" in far.err


def test_catalog_cli_list_and_show(cli):
    listing = cli("catalog", "list", "switches", "--json")
    assert listing.code == 0
    assert set(listing.json()["switches"]) >= {"sw_ib_qm9700", "sw_eth_th5", "sw_eth_sn5600"}
    shown = cli("catalog", "show", "sw_ib_qm9700", "--json").json()
    assert shown["section"] == "switches"
    assert shown["entry"]["price_usd"] == {"low": 36000.0, "default": 45000.0, "high": 50000.0}
    assert "tech-talk-cto" in shown["entry"]["source"]
    text = cli("catalog", "show", "opt_800_twin_sr8")
    assert text.code == 0 and "MMA4Z00" in text.out
    assert cli("catalog", "list", "widgets").code == 2
