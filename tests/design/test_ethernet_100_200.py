"""Ethernet at 100G and 200G (issue 29): breakouts, the parts a spec's speed picks, every command."""

from __future__ import annotations

import json

import pytest

import fabricplan as fp
from fabricplan.catalog import Switch, default_catalog
from fabricplan.cost.bom import count_parts
from fabricplan.spec import parse_spec

CATALOG = default_catalog()


def _spec(speed: int, style: str | None = None, nics: int = 8, gpus: int = 128):
    document = {"cluster": {"gpu": "a100-sxm-80gb", "gpus": gpus, "gpus_per_node": 8, "nics_per_node": nics,
                            "nic_speed_gbps": speed},
                "fabrics": ["roce-v2"],
                "jobs": [{"name": "j", "model": "llama3-8b", "tp": 8, "global_batch_sequences": 128,
                          "seq_len_tokens": 4096}]}
    if style:
        document["topology"] = {"style": style}
    return parse_spec(document)


@pytest.mark.parametrize("switch", [s for s in CATALOG.section("switches").values() if isinstance(s, Switch)],
                         ids=lambda s: s.id)
def test_breakouts_keep_the_cage_count(switch):
    """A port speed's logical ports are the front-panel cages times the ports one cage breaks out to
    (TH3: 32 QSFP-DD cages = 32 x 400G = 64 x 200G = 128 x 100G)."""
    cages = {speed: ports / switch.logical_ports_per_cage[speed] for speed, ports in switch.ports_by_speed_gbps.items()}
    assert len(set(cages.values())) == 1, cages
    assert switch.capacity_tbps * 1000 >= max(s * n for s, n in switch.ports_by_speed_gbps.items()) * 0.99


@pytest.mark.parametrize("speed", [100, 200])
def test_a_speed_the_default_switch_lacks_picks_parts_that_have_it(speed):
    design = fp.design(_spec(speed, "rail_optimized"), "roce-v2", CATALOG)
    hw = design.hardware
    assert hw.switch.radix_at(speed) == hw.radix and hw.port_speed_gbps == speed
    assert hw.nic.speed_gbps == speed and hw.nic.sold_separately  # a 100G NIC, never a cloud-only one
    cage = hw.switch.logical_ports_per_cage[speed]
    assert hw.switch_optic.logical_ports == cage and hw.switch_optic.speed_gbps == cage * speed
    parts = {p.role: p.quantity for p in count_parts(design.size, hw)}
    assert parts["switch-side host optics"] == -(-design.size.host_links // cage)
    assert design.network.profile.link_rate_gbps == speed


def test_a_tor_at_100g_uses_a_breakout_dac_of_its_cage():
    design = fp.design(_spec(100, "leaf_spine"), "roce-v2", CATALOG)
    dac, cage = design.hardware.host_dac, design.hardware.switch.logical_ports_per_cage[100]
    assert dac is not None and dac.kind == "cable" and dac.logical_ports == cage and dac.speed_gbps == 100 * cage


def test_the_16_x_100g_a100_system_runs_as_built_through_every_command(cli, tmp_path):
    path = tmp_path / "a100-16x100g.yaml"
    document = {"cluster": {"gpu": "a100-sxm-80gb", "gpus": 16, "gpus_per_node": 8, "nics_per_node": 16,
                            "nic_speed_gbps": 100},
                "fabrics": ["roce-v2"],
                "jobs": [{"name": "j", "model": "llama3-8b", "tp": 8, "global_batch_sequences": 64,
                          "seq_len_tokens": 4096}]}
    path.write_text(json.dumps(document))
    for command in (["compare", str(path), "--json"], ["step", str(path), "--json"], ["cost", str(path), "--json"]):
        out = cli(*command)
        assert out.code == 0, (command, out.err)
    compare = json.loads(cli("compare", str(path), "--json").out)
    design = compare["fabrics"][0]["design"]
    assert CATALOG.switch(design["switch"]).radix_at(100)
    out = cli("collective", "--gpus", "16", "--nics-per-gpu", "2", "--nic-speed", "100G", "--fabric", "roce-v2",
              "--size", "8GiB", "--json")
    assert out.code == 0, out.err
    bus = json.loads(out.out)["busbw_gbytes_per_s"]
    per_nic = CATALOG.fabric("roce-v2").effective_bandwidth_gbytes_per_s / 4  # the 400G efficiency at 100G
    assert bus >= 16 * per_nic * 0.98  # NCCL's choice: at least the ring over the node's 16 NICs
