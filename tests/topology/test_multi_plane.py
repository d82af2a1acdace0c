"""Multi-plane designs: P rail-optimised planes, each NIC with a port on each at 1/P of its speed."""

from __future__ import annotations

import math

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

import fabricplan as fp
from fabricplan.catalog import default_catalog
from fabricplan.cost.bom import count_parts
from fabricplan.errors import InputError
from fabricplan.fleet.failures import failure_effects
from fabricplan.fleet.interference import job_traffic, paces
from fabricplan.fleet.run import traffic_settings
from fabricplan.plan.goodput import degraded_lost_fraction
from fabricplan.sim.fabric import clos_network, design_network
from fabricplan.spec import parse_spec
from fabricplan.topology import plane_of, size_fabric, tiers_needed


def _spec(style: str, gpus: int = 16384, **topology):
    document = {"cluster": {"gpu": "h100-sxm", "gpus": gpus, "gpus_per_node": 8, "nics_per_node": 8},
                "fabrics": ["roce-v2"], "topology": {"style": style, **topology},
                "jobs": [{"name": "j", "model": "llama3-70b", "tp": 8, "pp": 4,
                          "global_batch_sequences": 512, "seq_len_tokens": 8192}]}
    return parse_spec(yaml.safe_load(yaml.safe_dump(document)))


@given(nodes=st.integers(2, 3000), planes=st.integers(2, 8))
def test_counts_are_planes_times_one_plane(nodes, planes):
    plane = size_fabric(nodes=nodes, nics_per_node=8, radix=256, style="rail_optimized")
    multi = size_fabric(nodes=nodes, nics_per_node=8, radix=256, style="multi_plane", planes=planes)
    assert multi.planes == planes and multi.tiers == plane.tiers
    assert multi.total_switches == planes * plane.total_switches
    assert multi.total_links == planes * plane.total_links
    assert multi.host_links == planes * multi.endpoints == planes * nodes * 8  # a port per NIC per plane
    assert plane_of(multi) == plane


def test_a_plane_at_half_the_speed_holds_16k_nics_in_two_tiers():
    """51.2T switch: 128 x 400G (2 tiers: 8,192 NIC ports) or 256 x 200G (32,768)."""
    one = size_fabric(nodes=2048, nics_per_node=8, radix=128, style="rail_optimized")
    two = size_fabric(nodes=2048, nics_per_node=8, radix=256, style="multi_plane", planes=2)
    assert (one.tiers, two.tiers) == (3, 2)
    assert two.total_switches < one.total_switches
    assert tiers_needed(nodes=2048, nics_per_node=8, radix=256, style="multi_plane") == 2


def test_too_few_or_many_planes_is_refused():
    with pytest.raises(InputError) as err:
        size_fabric(nodes=4, nics_per_node=8, radix=64, style="multi_plane", planes=1)
    assert err.value.location == "planes"


def test_the_design_runs_switches_and_optics_at_the_plane_speed():
    design = fp.design(_spec("multi_plane"), "roce-v2")
    hw = design.hardware
    assert (hw.planes, hw.port_speed_gbps, hw.nic_speed_gbps) == (2, 200, 400)
    assert hw.radix == hw.switch.radix_at(200)
    assert design.network.profile.link_rate_gbps == 400  # perf sees the whole NIC
    assert hw.switch_optic.logical_ports * 200 == hw.switch_optic.speed_gbps
    assert hw.nic_optic.speed_gbps == 200 and hw.nic_optic.logical_ports == 1
    parts = {p.role: p.quantity for p in count_parts(design.size, hw)}
    assert parts["backend NICs"] == 16384
    assert parts["NIC-side host optics"] == 2 * 16384  # one module per NIC port


def test_a_nic_that_does_not_split_evenly_names_the_planes():
    with pytest.raises(InputError) as err:
        fp.design(_spec("multi_plane", planes=3), "roce-v2")
    assert err.value.location == "topology.planes"


def test_one_plane_network_at_planes_times_the_port_speed():
    design = fp.design(_spec("multi_plane", gpus=256), "roce-v2")
    network = design_network(design.size, link_gbps=design.hardware.port_speed_gbps, catalog=default_catalog())
    assert network.n_hosts == 256  # one plane: a host per NIC
    assert set(network.capacity_gbps.tolist()) == {400.0}


def _leaf(planes):
    catalog = default_catalog()
    network = clos_network(32 * 8, 32, 32, link_gbps=400.0, catalog=catalog)
    traffic = [job_traffic("ring", __import__("numpy").arange(16), 8, **traffic_settings(catalog))]
    effects = failure_effects(network, [(0, 0, __import__("numpy").arange(16))], 8, 8, catalog,
                              catalog.fabric("roce-v2"), lambda net, jobs: paces(net, traffic, routing="ecmp", qps=1, seed=1), planes=planes)
    return {e.component: e for e in effects}


def test_a_leaf_or_host_link_slows_a_multi_plane_job_and_stops_a_single_plane_one():
    one, two = _leaf(1), _leaf(2)
    for part in ("leaf", "host_link"):
        assert one[part].jobs_stopped > 0 and one[part].jobs_slowed == 0
        assert two[part].jobs_stopped == 0 and two[part].jobs_slowed > 0
        assert two[part].pace_degraded < 1.0
    assert two["nic"].jobs_stopped == one["nic"].jobs_stopped > 0  # a NIC still stops its job
    assert two["nic"].count == one["nic"].count and two["leaf"].count == 2 * one["leaf"].count


@given(repair=st.floats(0, 100), interval=st.floats(0.01, 100), restart=st.floats(0, 5),
       slowdown=st.floats(0, 10), rate=st.floats(0, 0.01))
def test_running_degraded_never_costs_more_than_a_stop(repair, interval, restart, slowdown, rate):
    stop = rate * (interval / 2 + restart)
    assert degraded_lost_fraction(rate, repair, interval, restart, slowdown) <= min(stop, 1.0) + 1e-12


def test_multi_plane_goodput_is_not_below_one_plane_with_the_same_parts():
    """The compare chain: a multi-plane design counts its leaves and host links as slowing, not stopping."""
    results = {style: fp.compare(_spec(style, gpus=1024), quick=True) for style in ("multi_plane", "rail_optimized")}
    for result in results.values():
        assert math.isfinite(result.fabrics[0].weighted_goodput)
    mp, ro = (results[s].fabrics[0] for s in ("multi_plane", "rail_optimized"))
    assert mp.design.style == "multi_plane" and ro.design.style == "rail_optimized"
    assert mp.weighted_goodput >= ro.weighted_goodput - 0.002
