"""Hardware the collective model must express (issue 12 item 6): several NICs per GPU, NCCL's
channel limit, multi-node NVLink domains (NVL72 racks), and the physical bounds that hold whatever
a release's tuner constants say (NVLS+SHARP on NCCL 2.19)."""

from __future__ import annotations

import pytest

from fabricplan.catalog import load_catalog
from fabricplan.design import fabric_as_built
from fabricplan.perf import nccl_tuner
from fabricplan.perf.collectives import build_communicator, collective_time, communicator_nics

CATALOG = load_catalog()
# SHARP is off as installed (NCCL_COLLNET_ENABLE=0): tests of CollNet/NVLS-SHARP turn it on.
IB_SHARP = fabric_as_built(CATALOG, "infiniband-ndr", sharp=True)
H100 = CATALOG.gpu("h100-sxm")
B200 = CATALOG.gpu("b200")
GiB = 2**30
NDR = CATALOG.fabric("infiniband-ndr")
NDR_100G = CATALOG.fabric("infiniband-edr")  # 100G, 11.75 GB/s per NIC, no SHARP


def test_communicator_nics_rule():
    # One NIC per GPU or fewer: min(nics, ranks), the rule before several NICs per GPU.
    assert communicator_nics(8, 8) == 8
    assert communicator_nics(8, 1) == 1
    assert communicator_nics(4, 8) == 4
    # Several per GPU: each rank drives its own NICs.
    assert communicator_nics(16, 8, 2) == 16
    assert communicator_nics(16, 1, 2) == 2
    assert communicator_nics(32, 8, 4) == 32
    assert communicator_nics(32, 2, 4) == 8


def test_sixteen_100g_nics_on_eight_gpus_double_the_ring():
    # 16 x 100G for 8 GPUs: 16 channels, one NIC each, 11.75 GB/s per channel (was 8 channels, 8 NICs).
    two = build_communicator(16, 8, H100, NDR_100G, nics_per_node=16, nics_per_gpu=2, max_channels=64,
                             catalog=CATALOG)
    one = build_communicator(16, 8, H100, NDR_100G, nics_per_node=16, nics_per_gpu=1, max_channels=64,
                             catalog=CATALOG)
    assert two.graphs["ring"].n_channels == 16 and one.graphs["ring"].n_channels == 8
    assert two.graphs["ring"].bw_inter_gbytes_per_s == pytest.approx(11.75, rel=1e-12)
    assert one.graphs["ring"].bw_inter_gbytes_per_s == pytest.approx(11.75, rel=1e-12)
    ring = dict(algorithm="ring", protocol="simple", catalog=CATALOG)
    fast = collective_time("all_reduce", 8 * GiB, 16, 8, NDR_100G, H100, nics_per_node=16, nics_per_gpu=2, **ring)
    slow = collective_time("all_reduce", 8 * GiB, 16, 8, NDR_100G, H100, nics_per_node=16, **ring)
    # bandwidth term exactly halves (same latency; NCCL's proxy terms, issue 27, set aside)
    assert (fast.time_us - fast.latency_us - fast.proxy_overhead_us) * 2 == pytest.approx(
        slow.time_us - slow.latency_us - slow.proxy_overhead_us, rel=1e-12)
    assert fast.busbw_gbytes_per_s == pytest.approx(16 * 11.75 * 0.996, rel=0.01)


def test_one_nic_per_gpu_is_unchanged_bit_for_bit():
    for size in (8, 2**20, 8 * GiB):
        default = collective_time("all_reduce", size, 128, 8, "infiniband-ndr", H100, catalog=CATALOG)
        explicit = collective_time("all_reduce", size, 128, 8, "infiniband-ndr", H100, nics_per_gpu=1,
                                   catalog=CATALOG)
        assert default == explicit


def test_nics_per_gpu_counted_by_bandwidth_as_nccl_does():
    from fabricplan.perf.collectives import nics_per_gpu_by_bandwidth

    # NCCL adds local NICs until their speed reaches the GPU's PCIe link (H100 Gen5: 48 GB/s, A100 Gen4: 24).
    assert nics_per_gpu_by_bandwidth(4, 100, 90, CATALOG) == 4   # 12.5, 25, 37.5, 50: AWS p5
    assert nics_per_gpu_by_bandwidth(8, 100, 90, CATALOG) == 4
    assert nics_per_gpu_by_bandwidth(2, 400, 90, CATALOG) == 1   # 50 >= 48 after the first NDR NIC
    assert nics_per_gpu_by_bandwidth(2, 200, 80, CATALOG) == 1   # 25 >= 24 on A100
    assert nics_per_gpu_by_bandwidth(2, 100, 80, CATALOG) == 2
    assert nics_per_gpu_by_bandwidth(1, 400, 90, CATALOG) == 1
    # so a second 400G NIC per H100 adds nothing, bit for bit
    kw = dict(nics_per_node=16, algorithm="ring", catalog=CATALOG)
    assert collective_time("all_reduce", GiB, 16, 8, "infiniband-ndr", H100, nics_per_gpu=2, **kw) == \
        collective_time("all_reduce", GiB, 16, 8, "infiniband-ndr", H100, nics_per_gpu=1, **kw)


def test_channels_are_capped_at_maxchannels_per_release():
    for version, cap in (("2.30.7", 64), ("2.19.3", 32), ("2.17.1", 32), ("2.7.5", 32)):
        assert nccl_tuner.tuner_constants(version, catalog=CATALOG)["max_channels"] == cap
        result = collective_time("all_reduce", GiB, 144, 72, "infiniband-ndr", B200, nccl_version=version,
                                 algorithm="ring", catalog=CATALOG)
        assert result.channels == cap


def _algbw(gpus, **kw):
    return collective_time("all_reduce", 4 * GiB, gpus, 72, "infiniband-ndr", B200, catalog=CATALOG, **kw)


def test_nvl72_racks_are_never_faster_than_one_rack():
    # GB200/GB300 NVL72-style: 72 GPUs per NVLink domain, racks joined by 72 NDR NICs each.
    rack = _algbw(72)
    for racks in (2, 4, 20):
        result = _algbw(72 * racks)
        assert result.algbw_gbytes_per_s <= rack.algbw_gbytes_per_s * 1.0001, (racks, result.algorithm)
        for algorithm in ("ring", "tree"):
            forced = _algbw(72 * racks, algorithm=algorithm)
            # NVLink per GPU (18 x 40.1 GB/s) bounds every rack-to-rack ring and tree
            assert forced.busbw_gbytes_per_s <= 18 * 40.1 * 1.0001, (racks, algorithm)


def test_tree_reads_its_nvlink_share_per_channel_across_racks():
    # 64 channels (MAXCHANNELS) through 72-GPU racks: bwIntra = 721.8 / 64 = 11.28 GB/s, below the NIC's 47.
    comm = build_communicator(1440, 72, B200, NDR, nics_per_node=72, max_channels=64, catalog=CATALOG)
    tree = comm.graphs["tree"]
    assert tree.bw_intra_gbytes_per_s == pytest.approx(18 * 40.1 / 64, rel=1e-12)
    constants = nccl_tuner.tuner_constants("2.30.7", catalog=CATALOG)
    bw = nccl_tuner.algorithm_bandwidth_gbytes_per_s(constants, comm, "all_reduce", "tree", "simple")
    # min(busBw x 0.92, nCh x perChMaxTreeBw) on min(bwInter, bwIntra), x 0.5 to algbw
    assert bw == pytest.approx(min(18 * 40.1 * 0.92, 64 * 36.0) * 0.5, rel=1e-12)


def test_nccl_219_nvls_sharp_is_held_to_the_nvlink_data_path():
    # NCCL 2.19's NVLS estimate on 16 x 8 H100 gives 606 GB/s busbw at 1 GiB; the NVLS data path moves
    # S (n+1)/n per GPU over NVLink: algbw <= 370.8 x 0.85 x 8/9 = 280.2 GB/s, as on one node, and the
    # 2 broadcast warps of a multi-node NVLS channel carry 2 x 2 / 5 of it (all_reduce.h; test_sharp.py).
    result = collective_time("all_reduce", GiB, 128, 8, IB_SHARP, H100, nccl_version="2.19.3",
                             catalog=CATALOG)
    assert result.algorithm == "nvls"
    bound = 18 * 20.6 * 0.85 * 8 / 9
    assert result.time_us == pytest.approx(result.latency_us + GiB / (1000 * bound * 0.8), rel=1e-12)
    assert result.busbw_gbytes_per_s < 556
    assert result.nccl_estimate_us < result.time_us  # NCCL's own (unbounded) estimate still drives the choice
    one_node = collective_time("all_reduce", GiB, 8, 8, "infiniband-ndr", H100, catalog=CATALOG)
    assert result.algbw_gbytes_per_s <= one_node.algbw_gbytes_per_s * 1.01


def test_nic_bound_without_in_network_reduction():
    # Patarasuk & Yuan: every node moves >= 2 S (N-1)/N through its NICs: algbw <= B_node N / (2 (N-1)).
    comm = build_communicator(32, 8, H100, NDR_100G, nics_per_node=8, catalog=CATALOG)
    bound = nccl_tuner.physical_algbw_bound_gbytes_per_s(comm, "all_reduce", "tree")
    assert bound == pytest.approx(8 * 11.75 * 4 / 6, rel=1e-12)
    sharp = build_communicator(32, 8, H100, NDR, nics_per_node=8, catalog=CATALOG)
    assert nccl_tuner.physical_algbw_bound_gbytes_per_s(sharp, "all_reduce", "collnet_chain") == pytest.approx(
        8 * 47.0, rel=1e-12)
    assert nccl_tuner.physical_algbw_bound_gbytes_per_s(sharp, "all_gather", "ring") is None


def test_cli_collective_reads_nics_beyond_one_per_gpu(cli):
    import json

    def run(nics):
        out = cli("collective", "--gpus", "16", "--gpus-per-node", "8", "--nics-per-node", str(nics), "--size",
                  "8GiB", "--algo", "ring", "--fabric", "infiniband-edr", "--json")
        assert out.code == 0, out.err
        return json.loads(out.out)

    doubled, single = run(16), run(8)
    assert doubled["channels"] == 16 and single["channels"] == 8
    # EDR: 16 x 11.75 GB/s per node instead of 8 x 11.75 (NVLink 370.8 is far above either)
    assert doubled["busbw_gbytes_per_s"] == pytest.approx(2 * single["busbw_gbytes_per_s"], rel=0.01)


SPEC = """name: nic-speed
cluster:
  gpu: h100-sxm
  gpus: 128
  gpus_per_node: 8
  nics_per_node: 8
  nic_speed_gbps: {speed}
fabrics: [{fabric}]
jobs:
  - name: llama3-8b
    model: llama3-8b
    tp: 1
    pp: 1
    zero_stage: 3
    global_batch_sequences: 256
    micro_batch_sequences: 2
    seq_len_tokens: 8192
"""


def test_cluster_nic_speed_reaches_step(cli, tmp_path):
    # cluster.nic_speed_gbps -> design.effective_profile (per-NIC bandwidth x speed / link rate) -> step.
    import json

    def dp_seconds(speed, fabric="roce-v2"):
        path = tmp_path / f"s{speed}.yaml"
        path.write_text(SPEC.format(speed=speed, fabric=fabric))
        out = cli("step", str(path), "--json")
        assert out.code == 0, out.err
        return json.loads(out.out)["results"][0]["total_comm_s"]["dp"]

    at_200, at_400 = dp_seconds(200), dp_seconds(400)
    assert at_400 == pytest.approx(at_200 / 2, rel=0.02)  # 23 -> 46 GB/s per NIC: the ZeRO-3 ring halves
    # 800G (ConnectX-8): 8 x 92 GB/s per node exceeds NVLink (370.8 GB/s), so the ring is NVLink-bound
    at_800 = dp_seconds(800, "{profile: roce-v2, nic: nic_cx8_800}")
    assert at_800 < at_400 and at_800 == pytest.approx(at_400 * 46.0 / 46.35, rel=2e-3)


def test_nccl_217_nvls_is_single_node_only():
    # 2.17.1's NVLS bandwidth is bwIntra, one node only (multi-node NVLS came with NVLSTree/CollNet in
    # later releases); before, 20 NVL72-style racks on 2.17.1 chose NVLS at 4,634 GB/s busbw.
    one = collective_time("all_reduce", GiB, 72, 72, "infiniband-ndr", B200, nccl_version="2.17.1", catalog=CATALOG)
    assert one.algorithm == "nvls"
    racks = collective_time("all_reduce", GiB, 1440, 72, "infiniband-ndr", B200, nccl_version="2.17.1",
                            catalog=CATALOG)
    assert racks.algorithm != "nvls"
    assert racks.algbw_gbytes_per_s <= one.algbw_gbytes_per_s
    with pytest.raises(Exception, match="not available"):
        collective_time("all_reduce", GiB, 128, 8, "infiniband-ndr", H100, nccl_version="2.17.1", algorithm="nvls",
                        catalog=CATALOG)
