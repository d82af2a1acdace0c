"""NCCL's proxy per network step (issue 27): the chunk NCCL moves per step at a size, the handshake
per step on the critical path, the proxy thread's message rate, and the decade validation built on them."""

from __future__ import annotations

import pytest

from fabricplan.catalog import load_catalog
from fabricplan.design import bare_network
from fabricplan.perf import nccl_tuner
from fabricplan.perf.collectives import build_communicator, collective_time
from validation.perf import (
    calibrated_proxy_message_cpu_us,
    calibrated_proxy_op_us,
    calibrated_proxy_step_us,
    collective_decade_failures,
    collective_decade_rows,
    size_decade,
    small_message_rows,
    sweep_points,
)


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _comm(catalog, gpu="a100-sxm-80gb", fabric="infiniband-hdr", nics=8):
    return build_communicator(16, 8, catalog.gpu(gpu), catalog.fabric(fabric), nics_per_node=nics, catalog=catalog)


def _steps(catalog, version="2.19.3"):
    return nccl_tuner.tuner_constants(version, catalog=catalog)["network_steps"]


def test_chunk_rules_follow_nccl_compute_coll(catalog):
    comm, steps = _comm(catalog), _steps(catalog)
    # Ring/Simple: min(512 KiB x 4, bytes / (nc x nRanks)), one 512 KiB step per message.
    assert nccl_tuner.network_chunk_bytes(comm, "all_reduce", "ring", "simple", 2**30, 8, 512, steps) == (524288, 8)
    assert nccl_tuner.network_chunk_bytes(comm, "all_reduce", "ring", "simple", 2**20, 8, 512, steps) == (8192, 8)
    # Tree/Simple: depth = 7 + 1 = 8; halve 512 KiB while bytes / (nc x chunk) < 64 (floor 128 KiB),
    # < 32 (floor 64 KiB), < 8 (floor 32 KiB).
    assert nccl_tuner.network_chunk_bytes(comm, "all_reduce", "tree", "simple", 2**30, 8, 512, steps) == (524288, 8)
    assert nccl_tuner.network_chunk_bytes(comm, "all_reduce", "tree", "simple", 2**26, 8, 512, steps) == (131072, 8)
    assert nccl_tuner.network_chunk_bytes(comm, "all_reduce", "tree", "simple", 2**24, 8, 512, steps) == (65536, 8)
    assert nccl_tuner.network_chunk_bytes(comm, "all_reduce", "tree", "simple", 2**21, 8, 512, steps) == (32768, 8)
    # Tree/LL128 at 16 MiB on 8 channels: 614,400 B halved to 76,800 (> 131,072 floor stops), 15/16 data.
    assert nccl_tuner.network_chunk_bytes(comm, "all_reduce", "tree", "ll128", 2**24, 8, 640, steps) == (72000, 8)


def test_nvls_tree_chunk_halves_with_concurrent_operations(catalog):
    comm, steps = _comm(catalog, "h100-sxm", "aws-efa", 32), _steps(catalog)
    assert nccl_tuner.nvls_heads(comm) == 8  # one head GPU per NVLS graph channel, at most ppn
    ops = 16 * 8  # nvlsChannels x nHeads
    # bytes < 32 x ops x 512K -> 256K; < 16 x ops x 256K -> 128K; < 4 x ops x 128K -> 64K; < ops x 64K -> 32K
    expect = {2**33: 524288, 2**30: 262144, 2**28: 131072, 2**26: 131072, 2**25: 65536, 2**22: 32768}
    for size, chunk in expect.items():
        got = nccl_tuner.network_chunk_bytes(comm, "all_reduce", "nvls_tree", "simple", size, 16, 512, steps)
        assert got == (min(chunk, -(-size // ops)), ops), size


def test_handshake_is_steps_in_sequence_times_the_step_cost(catalog):
    comm = _comm(catalog)
    constants = nccl_tuner.tuner_constants("2.17.1", catalog=catalog)
    op, step = comm.extra["proxy_op_us"], comm.extra["proxy_step_us"]
    assert (op, step) == pytest.approx((9.77, 3.91))
    assert comm.extra["proxy_message_cpu_us"] == 0.0  # verbs: hidden behind the transfer (assumption)
    # 8 B Tree/LL on 2 nodes: the op pick-up only (one chunk: its crossings are NCCL's hwLat NET).
    assert nccl_tuner.proxy_overhead_us(comm, "all_reduce", "tree", "ll", 8, 1, 512, constants, 0.0) == \
        pytest.approx(op)
    # 16 MiB Tree/LL128, 8 channels: 2 MiB per channel in 72,000 B chunks = 30 chunks -> 29 further steps.
    assert nccl_tuner.proxy_overhead_us(comm, "all_reduce", "tree", "ll128", 2**24, 8, 640, constants, 0.0) == \
        pytest.approx(op + 29 * step)
    # Ring/Simple at 8 GiB, 2.17.1 (2 x nNodes = 4 inter steps): the first loop's 3 further messages of
    # 512 KiB per 2 MiB chunk at each; the next 31 loops' handshakes overlap the transfer.
    assert nccl_tuner.proxy_overhead_us(comm, "all_reduce", "ring", "simple", 2**33, 8, 512, constants, 1e9) == \
        pytest.approx(op + 4 * 3 * step)
    # Ring/LL: the ring's steps are NCCL's own latency; the op only.
    assert nccl_tuner.proxy_overhead_us(comm, "all_reduce", "ring", "ll", 2**12, 1, 512, constants, 0.0) == \
        pytest.approx(op)
    # One node: no proxy.
    single = build_communicator(8, 8, catalog.gpu("a100-sxm-80gb"), catalog.fabric("infiniband-hdr"),
                                nics_per_node=8, catalog=catalog)
    assert nccl_tuner.proxy_overhead_us(single, "all_reduce", "ring", "ll", 8, 1, 512, constants, 0.0) == 0.0


def test_message_rate_binds_only_when_the_proxy_is_slower_than_the_transfer(catalog):
    comm = _comm(catalog, "h100-sxm", "aws-efa", 32)
    constants = nccl_tuner.tuner_constants("2.19.3", catalog=catalog)
    cpu = comm.extra["proxy_message_cpu_us"]
    assert cpu == pytest.approx(2.79)
    size = 2**26  # 64 MiB: chunk 128 KiB, 4 chunks per op, 128 ops, 16 head GPUs
    base = nccl_tuner.proxy_overhead_us(comm, "all_reduce", "nvls_tree", "simple", size, 32, 512, constants, 1e9)
    handshake = comm.extra["proxy_op_us"] + comm.extra["proxy_step_us"] * (4 - 1)
    assert base == pytest.approx(handshake)  # a long transfer hides the proxy's work
    messages_per_gpu = 4 * 128 * 1 * 4 / 16
    bound = nccl_tuner.proxy_overhead_us(comm, "all_reduce", "nvls_tree", "simple", size, 32, 512, constants, 100.0)
    assert bound == pytest.approx(handshake + cpu * messages_per_gpu - 100.0)
    # LL/LL128 steps are flagged in the data: no message-rate term.
    ll128 = nccl_tuner.proxy_overhead_us(comm, "all_reduce", "tree", "ll128", 2**22, 32, 640, constants, 0.0)
    chunk, pipes = nccl_tuner.network_chunk_bytes(comm, "all_reduce", "tree", "ll128", 2**22, 32, 640,
                                                  constants["network_steps"])
    assert ll128 == pytest.approx(comm.extra["proxy_op_us"] + comm.extra["proxy_step_us"] * (-(-2**22 // (pipes * chunk)) - 1))


def test_nvls_tree_chunk_is_stored_and_forwarded_at_each_network_crossing(catalog):
    """2 x 8 H100 on 32 x 100G EFA: 16 NVLS channels x 8 heads = 128 operations share the node's
    32 x 11.75 = 376 GB/s, 2.9375 GB/s each; 2 crossings (up and down) hold one chunk each."""
    comm = build_communicator(16, 8, catalog.gpu("h100-sxm"), catalog.fabric("aws-efa"), nics_per_node=32,
                              nics_per_gpu=4, catalog=catalog)
    constants = nccl_tuner.tuner_constants("2.19.3", catalog=catalog)
    assert comm.extra["node_nic_gbytes_per_s"]["nvls"] == pytest.approx(376.0)
    rate = 376.0 / 128  # GB/s per operation
    # 1 GiB: chunk 256 KiB (1 GiB < 32 x 128 x 512 KiB); 2 x 262,144 B / 2.9375 GB/s = 178.5 us.
    assert nccl_tuner.nvls_tree_store_forward_us(comm, 2**30, constants) == pytest.approx(
        2 * 262144 / (1000 * rate), rel=1e-9)
    assert nccl_tuner.nvls_tree_store_forward_us(comm, 2**30, constants) == pytest.approx(178.5, abs=0.1)
    # 8 GiB: the full 512 KiB step, twice the delay.
    assert nccl_tuner.nvls_tree_store_forward_us(comm, 2**33, constants) == pytest.approx(357.0, abs=0.1)
    # It is the achieved time's store-and-forward term for NVLSTree/Simple, and nothing on one node.
    assert nccl_tuner.network_step_delay_us(comm, "all_reduce", "nvls_tree", "simple", 2**30, 32, 512,
                                            constants) == pytest.approx(178.5, abs=0.1)
    single = build_communicator(8, 8, catalog.gpu("h100-sxm"), catalog.fabric("aws-efa"), nics_per_node=32,
                                nics_per_gpu=4, catalog=catalog)
    assert nccl_tuner.nvls_tree_store_forward_us(single, 2**30, constants) == 0.0
    # NICs slower than the NVLS data path (8 x 23 = 184 < 370.8 x 0.85 x 8/9 = 280.2 GB/s): one crossing is
    # the bottleneck the transfer already counts, the NVLS stage adds its own chunk time.
    slow = build_communicator(16, 8, catalog.gpu("h100-sxm"), catalog.fabric("roce-v2"), nics_per_node=8,
                              per_nic_bandwidth_gbytes_per_s=23.0, catalog=catalog)
    assert slow.extra["node_nic_gbytes_per_s"]["nvls"] == pytest.approx(184.0)
    t_net = 262144 * 128 / (1000 * 184.0)
    t_nvls = 262144 * 128 / (1000 * 370.8 * 0.85 * 8 / 9)
    assert nccl_tuner.nvls_tree_store_forward_us(slow, 2**30, constants) == pytest.approx(t_net + t_nvls, rel=1e-6)
    assert nccl_tuner.nvls_tree_store_forward_us(slow, 2**30, constants) == pytest.approx(302.1, abs=0.1)
    # The proxy's message-rate term overlaps the whole data path, the store-and-forward included:
    # predicted_time_us hands proxy_overhead_us transfer + delay.
    choice = nccl_tuner.predicted_time_us(constants, comm, "all_reduce", "nvls_tree", "simple", 2**30)
    transfer = choice.achieved_time_us - choice.latency_us - choice.network_step_delay_us - choice.proxy_overhead_us
    assert choice.network_step_delay_us == pytest.approx(178.5, abs=0.1)
    assert choice.proxy_overhead_us == pytest.approx(nccl_tuner.proxy_overhead_us(
        comm, "all_reduce", "nvls_tree", "simple", 2**30, choice.channels, choice.threads, constants,
        transfer + choice.network_step_delay_us))


def test_socket_transport_has_no_proxy_figures(catalog):
    comm = build_communicator(16, 8, catalog.gpu("h100-sxm"), catalog.fabric("ethernet-tcp"), nics_per_node=8,
                              catalog=catalog)
    assert "proxy_step_us" not in comm.extra


def test_proxy_overhead_changes_the_time_not_nccls_choice(catalog):
    network = bare_network(catalog, "infiniband-hdr", catalog.gpu("a100-sxm-80gb"), gpus=16, gpus_per_node=8,
                           nics_per_node=8)
    result = collective_time("all_reduce", 2**23, 16, 8, catalog=catalog, network=network, nccl_version="2.17.1")
    off = catalog.with_values({"perf_defaults.parameters.nccl_proxy_step_us.value": 0.0,
                               "perf_defaults.parameters.nccl_proxy_op_us.value": 0.0})
    plain = collective_time("all_reduce", 2**23, 16, 8, catalog=off, network=bare_network(
        off, "infiniband-hdr", off.gpu("a100-sxm-80gb"), gpus=16, gpus_per_node=8, nics_per_node=8),
        nccl_version="2.17.1")
    assert (result.algorithm, result.protocol) == (plain.algorithm, plain.protocol) == ("tree", "ll128")
    assert result.nccl_estimate_us == pytest.approx(plain.nccl_estimate_us)
    # 1 MiB per channel in 72,000 B LL128 chunks: 15 chunks -> the op + 14 further steps.
    assert result.time_us - plain.time_us == pytest.approx(9.77 + 3.91 * 14, rel=0.01)


def test_calibrations_hold(catalog):
    assert calibrated_proxy_op_us(catalog) == pytest.approx(9.77, abs=0.01)
    assert calibrated_proxy_step_us(catalog) == pytest.approx(3.91, abs=0.01)
    assert calibrated_proxy_message_cpu_us(catalog) == pytest.approx(2.79, abs=0.02)


def test_small_messages_at_16_nodes_stay_near_the_published_floor(catalog):
    """The op pick-up is once per collective, not per crossing: 8 B on 16 x 8 GPUs (Tree/LL, 4 levels)
    comes out at 65 us against the published ~58 us (HDR, 2022) and 62-72 us (H100, NVIDIA/nccl#1469);
    a per-crossing handshake would give 94 us."""
    from validation.perf import rdma_fabric

    result = collective_time("all_reduce", 8, 128, 8, rdma_fabric(400, catalog=catalog), catalog.gpu("h100-sxm"),
                             catalog=catalog)
    assert (result.algorithm, result.protocol) == ("tree", "ll")
    assert result.time_us == pytest.approx(55.2 + 9.77, abs=0.1)
    assert 58 * 0.9 < result.time_us < 72


def test_size_decades():
    assert [size_decade(s) for s in (8, 16, 512, 1024, 8192, 16384, 2**20, 2**33)] == [0, 1, 2, 3, 3, 4, 6, 9]


def test_decade_medians_within_tolerance_on_gated_systems():
    rows = collective_decade_rows()
    gated = {row.case for row in rows if row.tolerance is not None}
    assert gated == {"azure_ndv4", "aws_p5"}
    failures = {(row.case, row.quantity): round(row.error, 3) for row in collective_decade_failures(rows)}
    # Known misses (docs/validation.md, docs/investigations/ll-ll128-over-the-network.md): NCCL's LL range at
    # 16-256 KiB on both systems and p5 at 1-8 MiB (+11 %). p5 at >= 1 GiB (+11.5 % before) is within 10 %
    # since the NVLSTree chunk's store-and-forward at the network crossings (nvls_tree_store_forward_us).
    assert set(failures) == {("azure_ndv4", "median busbw error, 1e4 B"), ("azure_ndv4", "median busbw error, 1e5 B"),
                             ("aws_p5", "median busbw error, 1e4 B"), ("aws_p5", "median busbw error, 1e5 B"),
                             ("aws_p5", "median busbw error, 1e6 B")}
    passing = [row for row in rows if row.tolerance is not None and (row.case, row.quantity) not in failures]
    assert len(passing) >= 12


def test_calibrated_points_are_left_out_of_the_medians():
    points = sweep_points("aws_p5")
    assert {p.size_bytes: p.calibrates for p in sweep_points("azure_ndv4") if p.calibrates} == {
        8: "nccl_proxy_op_us", 4194304: "nccl_proxy_step_us"}
    assert {p.size_bytes: p.calibrates for p in points if p.calibrates} == {
        8: "aws-efa host_stack_latency_us", 134217728: "nccl_proxy_message_cpu_us_libfabric"}
    assert abs(next(p for p in points if p.size_bytes == 8).busbw_error) < 0.01


def test_small_message_row_at_16_nodes_is_checked_within_its_tolerance():
    (row,) = small_message_rows()
    assert row.published == 67.0 and row.tolerance == 0.15 and row.reason
    assert row.model == pytest.approx(65.0, abs=0.1)  # 55.2 (NCCL's Tree/LL) + 9.77 (the proxy's op pick-up)
    assert abs(row.error) <= row.tolerance


def test_efa_plugin_sets_simple_when_it_runs_sendrecv(catalog):
    """aws-ofi-nccl runs RDMA only with fewer GPUs than EFA devices (p5: 8 < 32) and SENDRECV otherwise;
    SENDRECV endpoints lack 128-byte in-order delivery, so the plugin sets NCCL_PROTO=simple (p4de: 8 GPUs,
    4 EFA). A user's protocol wins; other fabrics are left alone."""
    from fabricplan.perf.collectives import efa_plugin_nccl_protocol

    efa, ib = catalog.fabric("aws-efa"), catalog.fabric("infiniband-hdr")
    assert efa_plugin_nccl_protocol(efa, 4, 8, catalog) == "simple"
    assert efa_plugin_nccl_protocol(efa, 8, 8, catalog) == "simple"
    assert efa_plugin_nccl_protocol(efa, 32, 8, catalog) is None
    assert efa_plugin_nccl_protocol(ib, 4, 8, catalog) is None
    gpu = catalog.gpu("a100-sxm-80gb")
    p4de = bare_network(catalog, "aws-efa", gpu, gpus=16, gpus_per_node=8, nics_per_node=4)
    for size in (8, 2**20, 2**28):
        assert collective_time("all_reduce", size, 16, 8, catalog=catalog, network=p4de,
                               nccl_version="2.19.3").protocol == "simple"
    forced = collective_time("all_reduce", 8, 16, 8, catalog=catalog, network=p4de, nccl_version="2.19.3",
                             protocol="ll")
    assert forced.protocol == "ll"
    p5 = bare_network(catalog, "aws-efa", catalog.gpu("h100-sxm"), gpus=16, gpus_per_node=8, nics_per_node=32)
    assert collective_time("all_reduce", 8, 16, 8, catalog=catalog, network=p5, nccl_version="2.19.3").protocol == "ll"
