"""NCCL tuner re-implementation: exact latency vectors and per-release constants."""

import pytest

from fabricplan.catalog import load_catalog
from fabricplan.errors import InputError
from fabricplan.perf.nccl_tuner import (
    Communicator,
    Graph,
    algorithm_bandwidth_gbytes_per_s,
    algorithm_latency_us,
    launch_shape,
    network_step_delay_us,
    nvls_single_node_algbw_gbytes_per_s,
    predicted_time_us,
    select_algorithm,
    tree_ll128_chunk_bytes,
    tuner_constants,
    tuner_versions,
)

CATALOG = load_catalog()

GRAPH = Graph(8, 24.0, 24.0)


def comm(n_nodes, ppn=8, cc=80, vendor="intel", **kw):
    return Communicator(n_ranks=n_nodes * ppn, n_nodes=n_nodes, compute_capability=cc,
                        graphs={"ring": GRAPH, "tree": GRAPH}, cpu_vendor=vendor, **kw)


# docs/reference/nccl_model.md §3.3 (2.30.7, AllReduce, 8 GPUs/node, NVLink, IB, Intel): must match exactly.
VECTORS_2_30 = {
    2: (40.0, 75.2, 131.6, 184.2, 25.2, 48.5, 92.4),
    4: (78.8, 144.4, 282.8, 395.9, 35.2, 65.5, 120.4),
    8: (156.4, 282.8, 585.2, 819.3, 45.2, 82.5, 148.4),
    16: (311.6, 559.6, 1190.0, 1666.0, 55.2, 99.5, 176.4),
    64: (1242.8, 2220.4, 4818.8, 6746.3, 75.2, 133.5, 232.4),
}


@pytest.mark.parametrize("n_nodes", sorted(VECTORS_2_30))
def test_latency_vectors_2_30_7_exact(n_nodes):
    constants = tuner_constants("2.30.7", catalog=CATALOG)
    c = comm(n_nodes)
    ring = [algorithm_latency_us(constants, c, "all_reduce", "ring", p) for p in ("ll", "ll128", "simple")]
    tree = [algorithm_latency_us(constants, c, "all_reduce", "tree", p) for p in ("ll", "ll128", "simple")]
    got = (*ring, ring[2] * 1.4, *tree)
    # The reference rounds to 0.1 us; the plateau column is the Simple value x1.4.
    assert got == pytest.approx(VECTORS_2_30[n_nodes], abs=0.051)


def test_worked_examples():
    c = comm(2)
    constants = tuner_constants("2.30.7", catalog=CATALOG)
    assert algorithm_latency_us(constants, c, "all_reduce", "ring", "ll") == pytest.approx(6.6 + 28 * 1.0 + 2 * 2.7)
    assert algorithm_latency_us(constants, c, "all_reduce", "tree", "ll") == pytest.approx(6.8 + 2 * (7 * 0.6 + 5.0))


def test_version_2_19_3_differences():
    # 2.19.3 counts 2*nNodes ring inter steps and has 28 us NVLink Tree/Simple hops:
    # Ring LL = 6.6 + (30-4)*1.0 + 4*2.7 = 43.4; Tree Simple = 0 + 2*(7*28 + 28) = 448.
    constants = tuner_constants("2.19.3", catalog=CATALOG)
    c = comm(2)
    assert algorithm_latency_us(constants, c, "all_reduce", "ring", "ll") == pytest.approx(43.4)
    assert algorithm_latency_us(constants, c, "all_reduce", "tree", "simple") == pytest.approx(448.0)
    assert algorithm_latency_us(constants, c, "all_reduce", "tree", "ll") == pytest.approx(25.2)


def test_version_table_constants():
    # docs/reference/nccl_model.md §3.2 rows, per release.
    expected = {
        "2.7.5": dict(tree_base=[4.4, 4.4, 0], ring_base=[3.6, 10.0, 8.4], net_tree=[5.0, 8.5, 50],
                      net_ring=[2.7, 4.0, 9.6], nvlink_tree=[0.52, 1.2, 28]),
        "2.19.3": dict(tree_base=[6.8, 14.0, 0], ring_base=[6.6, 14.0, 8.4], net_tree=[5.0, 8.5, 28],
                       net_ring=[2.7, 4.0, 14.0], nvlink_tree=[0.6, 1.25, 28]),
        "2.30.7": dict(tree_base=[6.8, 14.0, 8.4], ring_base=[6.6, 14.0, 8.4], net_tree=[5.0, 8.5, 14],
                       net_ring=[2.7, 4.0, 14.0], nvlink_tree=[0.6, 1.25, 4.0]),
    }
    for version, rows in expected.items():
        c = tuner_constants(version, catalog=CATALOG)
        assert c["base_latency_us"]["tree"] == rows["tree_base"]
        assert c["base_latency_us"]["ring"] == rows["ring_base"]
        assert c["hw_latency_us"]["net"]["tree"] == rows["net_tree"]
        assert c["hw_latency_us"]["net"]["ring"] == rows["net_ring"]
        assert c["hw_latency_us"]["nvlink"]["tree"] == rows["nvlink_tree"]
    assert tuner_constants("2.19.3", catalog=CATALOG)["hw_latency_us"]["net"]["nvls_tree"][2] == 14
    assert tuner_constants("2.30.7", catalog=CATALOG)["hw_latency_us"]["net"]["nvls_tree"][2] == 20.9
    assert set(tuner_versions(catalog=CATALOG)) >= {"2.7.5", "2.19.3", "2.30.7"}


def test_2_7_5_ll_intra_latency_x1_8():
    # 2.7.5: Tree LL at 2 nodes = 4.4 + 2*(7*0.52*1.8 + 5.0) = 27.504
    c = comm(2)
    assert algorithm_latency_us(tuner_constants("2.7.5", catalog=CATALOG), c, "all_reduce", "tree", "ll") == pytest.approx(27.504)


def test_amd_net_overhead_doubles_ring_intra_latency():
    c = comm(2, vendor="amd")
    assert algorithm_latency_us(tuner_constants("2.30.7", catalog=CATALOG), c, "all_reduce", "ring", "ll") == pytest.approx(
        6.6 + 28 * 2.0 + 2 * 2.7)


def test_bandwidth_refinements_ring_ll_and_tree():
    constants = tuner_constants("2.30.7", catalog=CATALOG)
    c = comm(4)
    # Ring LL: min(llMaxBw Intel N4 = 20.4, 8*24*0.5) * nRanks/nsteps
    assert algorithm_bandwidth_gbytes_per_s(constants, c, "all_reduce", "ring", "ll") == pytest.approx(
        20.4 * 32 / 62)
    # Tree Simple: min(8*24*0.92, 8*17.8) * 0.5
    assert algorithm_bandwidth_gbytes_per_s(constants, c, "all_reduce", "tree", "simple") == pytest.approx(
        min(8 * 24 * 0.92, 8 * 17.8) * 0.5)


def test_tree_correction_and_plateau():
    constants = tuner_constants("2.30.7", catalog=CATALOG)
    c = comm(2)
    size = 64 << 11  # log2(size/64) = 11 -> Simple factor 0.5
    tree = predicted_time_us(constants, c, "all_reduce", "tree", "simple", size)
    raw = algorithm_bandwidth_gbytes_per_s(constants, c, "all_reduce", "tree", "simple")
    assert tree.bandwidth_gbytes_per_s == pytest.approx(raw * 0.5)
    assert tree.time_us == pytest.approx(tree.latency_us + size / (1000 * raw * 0.5))
    ring = predicted_time_us(constants, c, "all_reduce", "ring", "simple", 1 << 30)
    assert ring.latency_us == pytest.approx(131.6 * 1.4)
    small = predicted_time_us(constants, c, "all_reduce", "ring", "simple", 1024)
    assert small.latency_us == pytest.approx(131.6)


def test_selection_picks_minimum_and_respects_forcing():
    constants = tuner_constants("2.30.7", catalog=CATALOG)
    c = comm(16)
    assert select_algorithm(constants, c, "all_reduce", 8).algorithm == "tree"
    forced = select_algorithm(constants, c, "all_reduce", 8, algorithm="ring", protocol="simple")
    assert (forced.algorithm, forced.protocol) == ("ring", "simple")
    with pytest.raises(InputError, match="not available"):
        select_algorithm(constants, c, "all_reduce", 8, algorithm="collnet_direct")
    with pytest.raises(InputError, match="unknown NCCL version"):
        tuner_constants("9.9.9", catalog=CATALOG)


@pytest.mark.parametrize("version", ["2.7.5", "2.17.1", "2.19.3", "2.30.7"])
def test_launch_shape_channel_and_thread_reduction(version):
    """enqueue.cc getAlgoInfo: drop channels while nBytes < nc * nt * threadThreshold, then halve nt."""
    constants = tuner_constants(version, catalog=CATALOG)
    c = comm(2)  # 16 ranks, 8 channels
    # Tree/LL: threshold 8 B/thread, 512 threads -> 4 KiB per channel.
    assert launch_shape(constants, c, "tree", "ll", 8192) == (2, 512, 8, 512)
    assert launch_shape(constants, c, "tree", "ll", 32768) == (8, 512, 8, 512)
    # Ring/LL: threshold 8 x nRanks = 128 -> 64 KiB per channel; below one channel's worth, threads halve.
    assert launch_shape(constants, c, "ring", "ll", 65536) == (1, 512, 8, 512)
    assert launch_shape(constants, c, "ring", "ll", 32768) == (1, 256, 8, 512)
    assert launch_shape(constants, c, "ring", "ll", 8) == (1, 64, 8, 512)  # 64 % 128 != 0: stops
    # Ring/Simple: 64 B/thread x 512 -> 32 KiB per channel; LL128: 8 x 640 = 5 KiB per channel.
    assert launch_shape(constants, c, "ring", "simple", 3 * 32768) == (3, 512, 8, 512)
    assert launch_shape(constants, c, "ring", "ll128", 40960) == (8, 640, 8, 640)
    assert launch_shape(constants, c, "ring", "ll128", 40959) == (7, 640, 8, 640)
    # 16 MiB is far above every threshold: the mechanism cannot reach the mid-size ramp.
    for algo, proto in (("ring", "ll128"), ("tree", "ll128"), ("ring", "simple"), ("ring", "ll")):
        assert launch_shape(constants, c, algo, proto, 1 << 24)[:2] == (8, 640 if proto == "ll128" else 512)


def test_launch_time_only_differs_for_small_messages():
    constants = tuner_constants("2.17.1", catalog=CATALOG)
    c = comm(2)
    small = predicted_time_us(constants, c, "all_reduce", "ring", "ll", 8192)
    assert small.channels == 1 and small.threads == 64  # 8192 < nt x 128 until nt = 64
    full = algorithm_bandwidth_gbytes_per_s(constants, c, "all_reduce", "ring", "ll")
    one = algorithm_bandwidth_gbytes_per_s(constants, Communicator(
        n_ranks=16, n_nodes=2, compute_capability=80, graphs={"ring": Graph(1, 24.0, 24.0), "tree": GRAPH}),
        "all_reduce", "ring", "ll")
    # + store-and-forward of one 512 B LL chunk (64 threads x 8 B) over 4 network steps, 2 wire bytes per data byte
    assert small.network_step_delay_us == pytest.approx(4 * 512 * 2 / (1000 * 24.0))
    assert small.launch_time_us == pytest.approx(small.latency_us + 8192 / (1000 * one * 64 / 512)
                                                 + small.network_step_delay_us)
    assert small.time_us == pytest.approx(small.latency_us + 8192 / (1000 * full))
    large = predicted_time_us(constants, c, "all_reduce", "ring", "simple", 1 << 26)
    assert large.launch_time_us == pytest.approx(large.time_us) and large.channels == 8
    # 2.30.7: Tree always launches with all threads ("Tree now uses all threads always").
    assert launch_shape(tuner_constants("2.30.7", catalog=CATALOG), c, "tree", "ll", 8) == (1, 512, 8, 512)
    assert launch_shape(tuner_constants("2.19.3", catalog=CATALOG), c, "tree", "ll", 8) == (1, 64, 8, 512)


def test_nvls_single_node_data_path_bandwidth():
    constants = tuner_constants("2.30.7", catalog=CATALOG)
    links = Graph(18, 20.6, 20.6)
    one_node = Communicator(n_ranks=8, n_nodes=1, compute_capability=90,
                            graphs={"ring": links, "tree": links, "nvls": links})
    assert nvls_single_node_algbw_gbytes_per_s(constants, one_node) == pytest.approx(370.8 * 0.85 * 8 / 9)
    assert nvls_single_node_algbw_gbytes_per_s(constants, comm(2, cc=90)) is None
    assert nvls_single_node_algbw_gbytes_per_s(tuner_constants("2.19.3", catalog=CATALOG), one_node) is None
    choice = predicted_time_us(constants, one_node, "all_reduce", "nvls", "simple", 1 << 30)
    assert choice.launch_time_us == pytest.approx(choice.latency_us + (1 << 30) / (1000 * 370.8 * 0.85 * 8 / 9))


def test_algbw_ratio_and_2_7_5_ll128_cap_come_from_the_data_file():
    # Tree/CollNet/PAT busBw -> algbw ratio (.5 in every release) and 2.7.5's 7/9 LL128 Tree cap are
    # per-version entries of nccl_tuner.yaml (tuning.cc lines cited there), not code constants.
    for version in tuner_versions(catalog=CATALOG):
        assert tuner_constants(version, catalog=CATALOG)["tree_algbw_ratio"] == 0.5
    assert tuner_constants("2.7.5", catalog=CATALOG)["tree_ll128_cap_multiplier"] == pytest.approx(7 / 9)
    constants = tuner_constants("2.30.7", catalog=CATALOG)
    c = comm(4)
    base = algorithm_bandwidth_gbytes_per_s(constants, c, "all_reduce", "tree", "simple")
    changed = algorithm_bandwidth_gbytes_per_s({**constants, "tree_algbw_ratio": 0.25}, c, "all_reduce", "tree",
                                               "simple")
    assert changed == pytest.approx(base / 2)
    old = tuner_constants("2.7.5", catalog=CATALOG)
    # 2 nodes, 8 channels: Tree LL128 capped at 8 x 16.7 (all_reduce ll128MaxBwPerCh) x multiplier.
    tighter = algorithm_bandwidth_gbytes_per_s({**old, "tree_ll128_cap_multiplier": 0.1}, comm(2), "all_reduce",
                                               "tree", "ll128")
    assert tighter == pytest.approx(8 * 16.7 * 0.1 * 0.5)


def test_architecture_compute_capabilities_from_the_data_file():
    from fabricplan.catalog.files import load_data_file
    from fabricplan.perf.nccl_tuner import architecture, architecture_compute_capabilities

    data = load_data_file("nccl_tuner.yaml")
    table = architecture_compute_capabilities(catalog=CATALOG)
    assert table == {"volta": 70, "ampere": 80, "hopper": 90, "blackwell": 100}
    assert table == data["architecture_compute_capability"] and data["architecture_compute_capability_source"]
    assert all(architecture(cc) == name for name, cc in table.items())


def test_network_step_delay_tree_ll128_chunk_follows_nccl_pipeline_depth_rule():
    """2 nodes x 8 GPUs, Tree LL128, 8 channels. NCCL halves the 614,400 B step while
    bytes // (8 x chunk) < (1 + log2(2) + 0.8) x 64 / 8 = 22.4 and chunk > 131072: at 16 MiB
    614400 -> 307200 -> 153600 -> 76800 (15/16 of it data); at 1 GiB the whole step stays. The
    chunk crosses the network up and down (2 x log2(2)) at 24 GB/s a channel, 16/15 wire bytes."""
    constants = tuner_constants("2.17.1", catalog=CATALOG)
    assert tree_ll128_chunk_bytes(comm(2), 1 << 24, 8, constants["network_steps"]) == 72_000
    assert tree_ll128_chunk_bytes(comm(2), 1 << 30, 8, constants["network_steps"]) == 576_000
    delay = network_step_delay_us(comm(2), "all_reduce", "tree", "ll128", 1 << 24, 8, 640, constants)
    assert delay == pytest.approx(2 * 76_800 / (1000 * 24.0))
    large = network_step_delay_us(comm(2), "all_reduce", "tree", "ll128", 1 << 30, 8, 640, constants)
    assert large == pytest.approx(2 * 614_400 / (1000 * 24.0))
    # 256 KiB: the second rule (< 5.6 steps, chunk > 32768) goes on to 19,200 B.
    assert tree_ll128_chunk_bytes(comm(2), 1 << 18, 8, constants["network_steps"]) == 18_000
    # 96 KiB: one loop (8 x 18,000 B) holds it, so the kernel's chunk is ceil(96 KiB / (8 x 4800)) x 4800
    # = 3 x 4800 (minChunk 640 x 60 / 8), of which a step carries 96 KiB / 8 = 12,288 B.
    small = network_step_delay_us(comm(2), "all_reduce", "tree", "ll128", 3 << 15, 8, 640, constants)
    assert small == pytest.approx(2 * 12_288 * 16 / 15 / (1000 * 24.0))
    # 300 KiB: 8 x 18,000 B < 300 KiB, so whole 18,000 B chunks (less than 300 KiB / 8 = 38,400 B).
    mid = network_step_delay_us(comm(2), "all_reduce", "tree", "ll128", 300 << 10, 8, 640, constants)
    assert mid == pytest.approx(2 * 18_000 * 16 / 15 / (1000 * 24.0))
    # 8 nodes: 2 x log2(8) crossings of the same 72,000 B chunk (22.4 -> 38.4 steps wanted, same floor).
    assert network_step_delay_us(comm(8), "all_reduce", "tree", "ll128", 1 << 24, 8, 640, constants) == \
        pytest.approx(3 * delay)


def test_network_step_delay_ring_chunk_and_crossings():
    """Ring LL128 AllReduce 32 MiB, 2 x 8 GPUs, 8 channels: the kernel's chunk is
    ceil(S / (8 x 16 x 19200)) x 19200 = 268,800 B (minChunk 640 x 60 / 2), of which a step carries
    S / (8 x 16) = 262,144 B; 2.17 charges 2 x nNodes network steps, 2.30 2 x (nNodes - 1)."""
    size = 1 << 25
    chunk = size // (8 * 16)
    d217 = network_step_delay_us(comm(2), "all_reduce", "ring", "ll128", size, 8, 640, tuner_constants("2.17.1", catalog=CATALOG))
    assert d217 == pytest.approx(4 * chunk * 16 / 15 / (1000 * 24.0))
    d230 = network_step_delay_us(comm(2), "all_reduce", "ring", "ll128", size, 8, 640, tuner_constants("2.30.7", catalog=CATALOG))
    assert d230 == pytest.approx(d217 / 2)
    # Large messages: the chunk is capped at one step.
    big = network_step_delay_us(comm(2), "all_reduce", "ring", "ll128", 1 << 30, 8, 640, tuner_constants("2.17.1", catalog=CATALOG))
    assert big == pytest.approx(4 * 576_000 * 16 / 15 / (1000 * 24.0))


def test_network_step_delay_only_for_multi_node_ll_protocols():
    constants = tuner_constants("2.17.1", catalog=CATALOG)
    one_node = Communicator(n_ranks=8, n_nodes=1, compute_capability=80, graphs={"ring": GRAPH, "tree": GRAPH})
    assert network_step_delay_us(one_node, "all_reduce", "ring", "ll128", 1 << 24, 8, 640, constants) == 0.0
    assert network_step_delay_us(comm(2), "all_reduce", "ring", "simple", 1 << 24, 8, 512, constants) == 0.0
    assert network_step_delay_us(comm(2), "all_reduce", "nvls", "simple", 1 << 24, 8, 512, constants) == 0.0


def test_network_step_delay_changes_the_achieved_time_not_the_choice():
    constants = tuner_constants("2.17.1", catalog=CATALOG)
    choice = select_algorithm(constants, comm(2), "all_reduce", 1 << 24)
    assert (choice.algorithm, choice.protocol) == ("tree", "ll128")
    assert choice.network_step_delay_us > 0
    assert choice.achieved_time_us == pytest.approx(choice.time_us + choice.network_step_delay_us)
