"""The design package: one place where a fabric becomes hardware, a sized topology and placements."""

from __future__ import annotations

import collections

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from fabricplan import topology
from fabricplan.catalog import load_catalog
from fabricplan.decide import compare
from fabricplan.design import FabricTopology, bare_network, clear_cache, place, resolve
from fabricplan.errors import InputError
from fabricplan.spec import load_spec, parse_spec
from fabricplan.topology import size_fabric, tiers_needed
from project_paths import EXAMPLES

CATALOG = load_catalog()


def _spec(**cluster):
    base = {"gpu": "h100-sxm", "gpus": 1024, "gpus_per_node": 8, "nics_per_node": 8}
    return parse_spec({"name": "t", "cluster": {**base, **cluster},
                       "fabrics": ["ethernet-tcp", "roce-v2", "infiniband-ndr"],
                       "jobs": [{"name": "big", "model": "llama3-70b", "tp": 8, "pp": 4,
                                 "global_batch_sequences": 512, "seq_len_tokens": 8192, "share": 0.8},
                                {"name": "small", "model": "llama3-8b", "gpus": 64, "tp": 8,
                                 "global_batch_sequences": 64, "seq_len_tokens": 8192, "share": 0.2}]})


def test_compare_sizes_each_distinct_design_once(monkeypatch):
    # The whole compare (base case, scale curve, crossover bisection, every sensitivity case)
    # asks the topology engine once per distinct design: cost and perf read the same FabricSize,
    # and a price or maturity case does not size again.
    calls = collections.Counter()
    real = topology.size_fabric

    def counting(**kwargs):
        calls[tuple(sorted(kwargs.items()))] += 1
        return real(**kwargs)

    monkeypatch.setattr(topology, "size_fabric", counting)
    clear_cache()
    spec = load_spec(EXAMPLES / "llama70b-1024-h100.yaml", CATALOG)
    report = compare(spec, CATALOG)
    assert report.sensitivity and report.scale_curve  # the full compare ran
    assert calls, "the design must size through topology.size_fabric"
    assert max(calls.values()) == 1, [k for k, n in calls.items() if n > 1]
    # base designs: one per fabric; the scale search adds one per fabric and evaluated size
    nodes = {dict(key)["nodes"] for key in calls}
    assert spec.cluster.nodes in nodes and len(nodes) > 5


def test_same_design_is_not_sized_again_in_a_new_resolve(monkeypatch):
    clear_cache()
    calls = []
    real = topology.size_fabric
    monkeypatch.setattr(topology, "size_fabric", lambda **kw: calls.append(kw) or real(**kw))
    spec = _spec()
    first = resolve(spec, CATALOG, "infiniband-ndr")
    again = resolve(spec, CATALOG, "infiniband-ndr")
    assert len(calls) == 1 and first.size is again.size


def test_design_joins_hardware_size_network_and_placements():
    design = resolve(_spec(), CATALOG, "infiniband-ndr")
    # 128 nodes x 8 rails on 64-port QM9700s: 2 tiers, 32 nodes per rail leaf (one scalable unit)
    assert (design.size.tiers, design.hardware.radix, design.size.servers_per_leaf) == (2, 64, 32)
    assert design.network.size is design.size and design.network.profile.id == "infiniband-ndr"
    assert design.switches_across == 3
    big, small = design.job_placements["big"], design.job_placements["small"]
    assert (big.tiers, big.nodes_per_leaf, big.leaf_uplinks) == (2, 32, 32)
    assert small.tiers == 1  # 8 nodes sit under one rail leaf group
    assert big.switches_on_path == 3 and small.switches_on_path == 1


def test_hardware_overrides_reach_the_network_view():
    spec = parse_spec({"name": "t", "cluster": {"gpu": "b200", "gpus": 1024, "nic_speed_gbps": 800},
                       "fabrics": [{"profile": "roce-v2", "nic": "nic_cx8_800", "switch": "sw_eth_sn5600"}]})
    design = resolve(spec, CATALOG, spec.fabric_choices()[0])
    assert design.network.profile.link_rate_gbps == 800
    assert design.network.profile.effective_bandwidth_gbytes_per_s == pytest.approx(92.0)
    assert design.network.switch.id == "sw_eth_sn5600" == design.hardware.switch.id


@pytest.mark.parametrize("command", ["cost", "topology", "step", "compare"])
def test_every_command_rejects_a_switch_of_the_wrong_family(cli, tmp_path, command):
    # One validation path: the design rejects the same bad input for every command.
    spec = tmp_path / "bad.yaml"
    spec.write_text("cluster: {gpu: h100-sxm, gpus: 64}\n"
                    "fabrics: [{profile: roce-v2, switch: sw_ib_qm9700}]\n"
                    "jobs: [{name: j, model: llama3-8b, tp: 8, global_batch_sequences: 64, seq_len_tokens: 4096}]\n")
    result = cli(command, spec, "--json")
    assert result.code == 2
    assert "fabrics[roce-v2].switch" in result.err and "infiniband" in result.err
    assert "Traceback" not in result.err


def test_bare_network_uses_the_same_radix_rule():
    gpu = CATALOG.gpu("h100-sxm")
    network = bare_network(CATALOG, "infiniband-ndr", gpu, gpus=16, gpus_per_node=8, nics_per_node=8)
    assert network.size.radix == 64 and network.size.tiers == 1
    slow = CATALOG.fabric("infiniband-ndr").model_copy(update={"link_rate_gbps": 100})
    with pytest.raises(InputError, match="no 100G ports"):
        bare_network(CATALOG, slow, gpu, gpus=16, gpus_per_node=8, nics_per_node=8)
    # a caller may state the radix of a hypothetical switch at that rate
    stated = bare_network(CATALOG, slow, gpu, gpus=16, gpus_per_node=8, nics_per_node=8, radix=36)
    assert stated.size.radix == 36


def test_a_communicator_larger_than_the_fabric_is_an_error():
    network = bare_network(CATALOG, "roce-v2", CATALOG.gpu("h100-sxm"), gpus=64, gpus_per_node=8, nics_per_node=8,
                           layout=FabricTopology(cluster_nodes=8))
    with pytest.raises(InputError, match="does not fit"):
        network.placement(16)


@settings(max_examples=examples(150), deadline=None, derandomize=True)
@given(nodes=st.integers(1, 3000), nics=st.sampled_from([1, 2, 4, 8]), radix=st.sampled_from([32, 40, 64, 128]),
       style=st.sampled_from(["rail_optimized", "leaf_spine", "fat_tree"]),
       ratio=st.sampled_from([1.0, 1.5, 3.0]))
def test_tiers_needed_is_the_tier_count_size_fabric_chooses(nodes, nics, radix, style, ratio):
    kwargs = dict(nodes=nodes, nics_per_node=nics, radix=radix, style=style, oversubscription=(ratio, 1.0))
    try:
        expected = size_fabric(**kwargs).tiers
    except InputError:
        with pytest.raises(InputError):
            tiers_needed(**kwargs)
        return
    assert tiers_needed(**kwargs) == expected


def test_placement_of_the_whole_cluster_is_read_from_its_size():
    whole = size_fabric(nodes=2048, nics_per_node=8, radix=64, style="rail_optimized")
    placement = place(2048, whole)
    assert placement.tiers == whole.tiers == 3
    assert placement.nodes_per_pod > placement.nodes_per_leaf == whole.servers_per_leaf
    assert placement.oversubscription == tuple(whole.oversubscription_effective)
    assert place(1, whole).tiers == 1 and place(1, whole).switches_on_path == 1
