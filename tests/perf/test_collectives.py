"""Unit behaviour of the collective model (its stated properties) and clear input errors."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from fabricplan.catalog import default_catalog
from fabricplan.design import fabric_as_built
from fabricplan.errors import InputError
from fabricplan.perf.collectives import (
    collective_time,
    nvlink_bus_bandwidth_gbytes_per_s,
    sweep_sizes,
)
from fabricplan.units import parse_bytes

CATALOG = default_catalog()
# SHARP is off as installed (NCCL_COLLNET_ENABLE=0): tests of CollNet/NVLS-SHARP turn it on.
IB_SHARP = fabric_as_built(CATALOG, "infiniband-ndr", sharp=True)
H100 = CATALOG.gpu("h100-sxm")
A100 = CATALOG.gpu("a100-sxm-80gb")


def test_nvlink_bus_bandwidth_matches_nccl():
    # NCCL topo.h per-link bandwidth x links: A100 12 x 20 = 240, H100 18 x 20.6 = 370.8 GB/s,
    # the "~370 GB/s effective NVLink" of NVIDIA/nccl-tests#212.
    assert nvlink_bus_bandwidth_gbytes_per_s(A100, catalog=CATALOG) == pytest.approx(240.0)
    assert nvlink_bus_bandwidth_gbytes_per_s(H100, catalog=CATALOG) == pytest.approx(370.8)


@settings(max_examples=examples(25), deadline=None)
@given(nodes=st.integers(1, 256), extra=st.integers(1, 256), log_size=st.integers(3, 33),
       fabric=st.sampled_from(["infiniband-ndr", "roce-v2", "ethernet-tcp"]))
def test_more_gpus_never_faster_per_byte_for_ring(nodes, extra, log_size, fabric):
    # A ring all-reduce of a fixed size never gets faster when the same fabric has more GPUs.
    size = 2**log_size
    small = collective_time("all_reduce", size, 8 * nodes, 8, fabric, H100, algorithm="ring", catalog=CATALOG)
    large = collective_time("all_reduce", size, 8 * (nodes + extra), 8, fabric, H100, algorithm="ring",
                            catalog=CATALOG)
    assert large.time_us >= small.time_us * (1 - 1e-9)


def _best_sharp_us(size, gpus, gpu):
    times = []
    for algorithm in ("collnet_direct", "collnet_chain", "nvls"):
        try:
            times.append(collective_time("all_reduce", size, gpus, 8, IB_SHARP, gpu, algorithm=algorithm,
                                         catalog=CATALOG).time_us)
        except InputError:
            pass
    return min(times)


@pytest.mark.parametrize("gpu, nodes", [(H100, n) for n in (2, 4, 16, 128, 1024)]
                         + [(A100, n) for n in (16, 128, 1024)])
@pytest.mark.parametrize("size", [2**30, 8 * 2**30])
def test_sharp_never_slower_than_ring_at_large_sizes(gpu, nodes, size):
    # In-network reduction (the best of CollNetDirect, CollNetChain and NVLS+SHARP) is never slower
    # than Ring at >= 1 GiB. On A100 (no NVLS) NCCL's own CollNet model (algbw = busBw x 0.5) puts
    # Ring marginally ahead below ~8 nodes, so A100 is checked from 16 nodes (docs/performance.md).
    ring = collective_time("all_reduce", size, 8 * nodes, 8, "infiniband-ndr", gpu, algorithm="ring",
                           catalog=CATALOG)
    assert _best_sharp_us(size, 8 * nodes, gpu) <= ring.time_us


@settings(max_examples=examples(30), deadline=None)
@given(nodes=st.integers(2, 512), log_size=st.integers(3, 34),
       fabric=st.sampled_from(["infiniband-ndr", "roce-v2", "ethernet-tcp", "infiniband-xdr"]),
       op=st.sampled_from(["all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast"]))
def test_busbw_below_link_limit_except_two_node_tree_nvls(nodes, log_size, fabric, op):
    # busbw <= what the node's NICs can carry, except NCCL's own 2-node Tree/NVLS(Tree)/CollNet cases
    # (their traffic is not a flat ring; NCCL models them with intra-node bandwidth).
    result = collective_time(op, 2**log_size, 8 * nodes, 8, fabric, H100, catalog=CATALOG)
    profile = CATALOG.fabric(fabric)
    link_limit = 8 * profile.effective_bandwidth_gbytes_per_s
    exempt = result.algorithm in ("tree", "nvls", "nvls_tree", "collnet_direct", "collnet_chain") and (
        nodes <= 2 or result.algorithm.startswith(("collnet", "nvls")))
    if op == "all_to_all":  # nccl-tests#130: busbw = N/(N-1) x per-GPU network bandwidth
        link_limit = profile.effective_bandwidth_gbytes_per_s * nodes / (nodes - 1) * (1 + 1e-9)
    if not exempt:
        assert result.busbw_gbytes_per_s <= link_limit * (1 + 1e-9)


def test_tcp_slower_than_rdma_for_small_messages():
    tcp = collective_time("all_reduce", 8, 64, 8, "ethernet-tcp", H100, catalog=CATALOG)
    ib = collective_time("all_reduce", 8, 64, 8, "infiniband-ndr", H100, catalog=CATALOG)
    assert tcp.time_us > ib.time_us


def test_every_operation_runs():
    for op in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce", "send_recv"):
        result = collective_time(op, 2**20, 64, 8, "roce-v2", H100, catalog=CATALOG)
        assert result.time_us > 0 and result.busbw_gbytes_per_s > 0


@pytest.mark.parametrize("kwargs, message", [
    (dict(size_bytes=0), "positive"),
    (dict(size_bytes=-8), "positive"),
    (dict(n_gpus=12), "multiple of GPUs per node"),
    (dict(algorithm="collnet_direct", fabric="roce-v2"), "not available"),
    (dict(algorithm="bogus"), "unknown algorithm"),
    (dict(operation="gather"), "unknown collective"),
    (dict(fabric="nope"), "unknown fabric"),
])
def test_clear_errors(kwargs, message):
    args = dict(operation="all_reduce", size_bytes=1024, n_gpus=16, gpus_per_node=8, fabric="infiniband-ndr",
                gpu=H100, catalog=CATALOG)
    args.update(kwargs)
    with pytest.raises(InputError, match=message):
        collective_time(**args)


def test_parse_size_and_sweep():
    assert parse_bytes("8GiB", "--size") == 8 * 2**30
    assert parse_bytes("16MiB", "--size") == 16 * 2**20
    assert parse_bytes("8B", "--size") == 8
    assert parse_bytes("1KB", "--size") == 1000
    assert len(sweep_sizes(8, 8 * 2**30)) == 31
    for bad in ("0", "-1MiB", "8XB", "abc"):
        with pytest.raises(InputError):
            parse_bytes(bad, "--size")


def test_reported_routing_efficiency_is_the_one_the_graph_used():
    # 128 nodes on NDR (2 tiers, 32 nodes per rail leaf): CollNet graphs are built with the ring
    # pattern (2 flows per NIC), Tree with every node under the leaf; the result reports that value.
    from fabricplan.design import place
    from fabricplan.perf.efficiency import routing_efficiency
    from fabricplan.topology import size_fabric

    profile = CATALOG.fabric("infiniband-ndr")
    radix = CATALOG.switch(profile.hardware.switch).radix_at(400)
    placement = place(128, size_fabric(nodes=128, nics_per_node=8, radix=radix, style="rail_optimized"))
    ring = routing_efficiency(profile, placement, "ring", 128, catalog=CATALOG)
    tree = routing_efficiency(profile, placement, "tree", 128, catalog=CATALOG)
    # adaptive routing keeps 12.5 % of the ECMP collision loss (perf_defaults, NVIDIA's 95 % vs 60 %):
    # ring 2 flows, tree 32 flows on the leaf's 32 uplinks
    from fabricplan.perf.ecmp import ecmp_efficiency
    from fabricplan.perf.efficiency import ecmp_flows

    flows = {p: ecmp_flows(placement, p, 128, 2, 1) for p in ("ring", "tree")}
    assert flows == {"ring": 2, "tree": 64}
    assert ring == pytest.approx(1 - 0.125 * (1 - ecmp_efficiency(2, 32)), abs=1e-9) == pytest.approx(0.99621, abs=1e-4)
    assert tree == pytest.approx(1 - 0.125 * (1 - ecmp_efficiency(64, 32)), abs=1e-9) == pytest.approx(0.92117, abs=1e-4)
    for algorithm, expected in (("collnet_direct", ring), ("collnet_chain", ring), ("ring", ring), ("tree", tree)):
        result = collective_time("all_reduce", 2**30, 1024, 8, profile, H100, algorithm=algorithm, catalog=CATALOG)
        assert result.routing_efficiency == pytest.approx(expected, rel=1e-12), algorithm


def test_gpu_without_nvlink_is_a_clear_input_error():
    from fabricplan.spec.models import GpuInline

    pcie = GpuInline(peak_dense_tflops={"bf16": 362}, hbm_gbytes=48, nvlink_bandwidth_gbytes_per_s=0, power_w=350)
    for op, gpus in (("all_reduce", 8), ("all_reduce", 16), ("all_to_all", 16)):
        with pytest.raises(InputError, match="has no NVLink") as error:
            collective_time(op, 2**20, gpus, 8, "roce-v2", pcie, catalog=CATALOG)
        assert error.value.location == "gpu.nvlink_bandwidth_gbytes_per_s"
    # One GPU per node needs no NVLink: 2 nodes x 1 GPU, one 46 GB/s RoCE NIC each.
    alone = collective_time("all_to_all", 2**30, 2, 1, "roce-v2", pcie, catalog=CATALOG)
    assert alone.time_us > 2**30 / 2 / 46e3


@pytest.mark.parametrize("kwargs, message, location", [
    (dict(gpus_per_node=0), "GPUs per node must be >= 1, got 0", "gpus-per-node"),
    (dict(nics_per_node=0), "NICs per node must be >= 1, got 0", "nics-per-node"),
])
def test_node_shape_errors_name_the_bad_option(kwargs, message, location):
    args = dict(operation="all_reduce", size_bytes=1024, n_gpus=16, gpus_per_node=8, fabric="roce-v2", gpu=H100,
                catalog=CATALOG)
    args.update(kwargs)
    with pytest.raises(InputError, match=message) as error:
        collective_time(**args)
    assert error.value.location == location


def test_unknown_architecture_names_the_field():
    from fabricplan.spec.models import GpuInline

    future = GpuInline(architecture="rubin", peak_dense_tflops={"bf16": 5000}, hbm_gbytes=288,
                       nvlink_bandwidth_gbytes_per_s=3600, power_w=1800)
    with pytest.raises(InputError, match="unknown GPU architecture 'rubin'") as error:
        collective_time("all_reduce", 1024, 16, 8, "roce-v2", future, catalog=CATALOG)
    assert error.value.location == "gpu.architecture"


def test_nothing_available_says_so_without_a_forced_choice():
    from fabricplan.perf import nccl_tuner

    dead = nccl_tuner.Graph(2, 0.0, 0.0)
    comm = nccl_tuner.Communicator(n_ranks=16, n_nodes=2, compute_capability=90,
                                   graphs={"ring": dead, "tree": dead, "nvls": dead, "collnet": dead})
    with pytest.raises(InputError, match=r"^no algorithm/protocol is available for all_reduce .*available: none"):
        nccl_tuner.select_algorithm(nccl_tuner.tuner_constants(catalog=CATALOG), comm, "all_reduce", 1024)


def test_nvlink_link_count_and_architecture_fallback_come_from_data_files():
    # Without nvlink_links / compute_capability, an inline GPU's link count is its NVLink GB/s over
    # the per-link GB/s of perf_defaults.yaml and its capability comes from nccl_tuner.yaml.
    from fabricplan.catalog.files import load_data_file
    from fabricplan.perf.collectives import gpu_compute_capability, nvlink_gbytes_per_link_bidirectional
    from fabricplan.spec.models import GpuInline

    entry = load_data_file("perf_defaults.yaml")["parameters"]["nvlink_gbytes_per_link_bidirectional"]
    assert entry["source"] and entry["date"]
    assert {cc: nvlink_gbytes_per_link_bidirectional(cc, catalog=CATALOG) for cc in (60, 70, 80, 86, 90, 100, 103)} == {
        60: 50.0, 70: 50.0, 80: 50.0, 86: 50.0, 90: 50.0, 100: 100.0, 103: 100.0}
    base = dict(peak_dense_tflops={"bf16": 2250}, hbm_gbytes=180, power_w=1000)
    b200 = GpuInline(architecture="blackwell", nvlink_bandwidth_gbytes_per_s=1800, **base)
    assert gpu_compute_capability(b200, catalog=CATALOG) == 100
    # 1800 / 100 = 18 links x NCCL's 40.1 GB/s (SM100_NVLINK_BW).
    assert nvlink_bus_bandwidth_gbytes_per_s(b200, catalog=CATALOG) == pytest.approx(18 * 40.1)
    ampere = GpuInline(architecture="ampere", nvlink_bandwidth_gbytes_per_s=600, **base)
    assert gpu_compute_capability(ampere, catalog=CATALOG) == 80
    assert nvlink_bus_bandwidth_gbytes_per_s(ampere, catalog=CATALOG) == pytest.approx(12 * 20.0)


def test_pat_reduce_scatter_one_gpu_per_node_runs():
    # PAT is NCCL's AllGather/ReduceScatter algorithm for one GPU per node; it runs on the ring graph.
    from fabricplan.catalog import load_catalog
    from fabricplan.perf import collective_time

    catalog = load_catalog()
    for op in ("reduce_scatter", "all_gather"):
        for size in (2**10, 2**20, 2**30):
            result = collective_time(op, size, 64, 1, "roce-v2", catalog.gpu("h100-sxm"), catalog=catalog)
            assert result.time_us > 0 and result.busbw_gbytes_per_s > 0


def test_collnet_direct_reduce_scatter_and_all_gather_follow_nccl_2_20():
    """NCCL 2.20.3 added CollNet (SHARP) ReduceScatter/AllGather: CollNet Direct, Simple, one local rank
    per CollNet head, algbw = ppn x min(bwIntra, 0.9 x bwInter) (tuning.cc), so per NIC it is 0.9 of
    the NIC: above a ring only where the ring cannot fill the NICs. Releases before 2.20 have none."""
    from fabricplan.perf import nccl_tuner
    from fabricplan.perf.collectives import build_communicator

    size = parse_bytes("1GiB", "size")
    for op in ("reduce_scatter", "all_gather"):
        sharp = collective_time(op, size, 128, 8, IB_SHARP, H100, catalog=CATALOG)
        plain = collective_time(op, size, 128, 8, "infiniband-ndr", H100, catalog=CATALOG)
        assert (sharp.algorithm, sharp.protocol, plain.algorithm) == ("collnet_direct", "simple", "ring")
        assert 1.0 < plain.time_us / sharp.time_us < 1.15
        old = collective_time(op, size, 128, 8, IB_SHARP, H100, catalog=CATALOG, nccl_version="2.19.3")
        assert old.algorithm == "ring"
    comm = build_communicator(128, 8, H100, IB_SHARP, nics_per_node=8, catalog=CATALOG)
    constants = nccl_tuner.tuner_constants("2.30.7", catalog=CATALOG)
    graph = comm.graph("collnet_direct")
    expected = 8 * min(graph.bw_intra_gbytes_per_s, 0.9 * graph.bw_inter_gbytes_per_s)
    assert nccl_tuner.algorithm_bandwidth_gbytes_per_s(constants, comm, "reduce_scatter", "collnet_direct",
                                                       "simple") == pytest.approx(expected, rel=1e-12)
    # 8 GPUs sharing 4 NICs: more local ranks than CollNet heads, NCCL rules CollNet out
    shared = build_communicator(128, 8, H100, IB_SHARP, nics_per_node=4, catalog=CATALOG)
    assert nccl_tuner.algorithm_bandwidth_gbytes_per_s(constants, shared, "all_gather", "collnet_direct",
                                                       "simple") == 0.0
