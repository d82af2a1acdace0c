"""IB SHARP across nodes: multi-node NVLS (NVLink SHARP + IB SHARP through CollNet) and CollNetChain on
8-GPU H100 nodes, and the GB300 NVL72 in-domain NVLS efficiency."""

from __future__ import annotations

import pytest

from fabricplan.catalog import load_catalog
from fabricplan.perf.collectives import collective_time, mnnvl_nvls_data_path_efficiency
from fabricplan.perf.nccl_tuner import nvls_warp_share
from validation.perf import sharp_collnet_chain_rows

CATALOG = load_catalog()
H100 = CATALOG.gpu("h100-sxm")
GIB = 2 ** 30
NVLINK_H100 = 18 * 20.6  # NCCL's H100 NVLink figure (topo.h SM90_NVLINK_BW x 18 links)


def _ndr(sharp: bool = True):
    return CATALOG.fabric("infiniband-ndr").model_copy(update={"in_network_reduction": sharp})


def _h100_64(size: int = 16 * GIB, sharp: bool = True, nics: int = 8, algorithm=None):
    return collective_time("all_reduce", size, 64, 8, _ndr(sharp), H100, nics_per_node=nics, algorithm=algorithm,
                           catalog=CATALOG)


def test_warp_share_of_the_multinode_nvls_stages():
    # NCCL's NVLS AllReduce (all_reduce.h): 5 reduce warps in one node (ld_reduce + st each), 3 reduce and
    # 2 broadcast warps across nodes: the broadcast stage carries 2 x 2 / 5 of the one-node path.
    assert nvls_warp_share(3, 2, 5) == pytest.approx(0.8)
    assert nvls_warp_share(8, 6, 5) == 1.0  # enough warps (user-buffer registration's split): NVLink-bound
    assert nvls_warp_share(3, 2, 0) == 1.0


def test_nvls_with_sharp_runs_at_the_nvlink_path_times_the_warp_share():
    result = _h100_64()
    assert result.algorithm == "nvls"
    expected = NVLINK_H100 * 0.85 * 8 / 9 * 0.8
    assert result.algbw_gbytes_per_s == pytest.approx(expected, rel=0.01)
    assert result.busbw_gbytes_per_s == pytest.approx(expected * 2 * 63 / 64, rel=0.01)  # ~441 GB/s
    # NCCL's own estimate (its choice) is unchanged: nCh x min(intra, bwInter) x nRanks/nsteps, ~190 GB/s.
    assert 16 * GIB / (1000.0 * result.nccl_estimate_us) < 0.9 * result.algbw_gbytes_per_s


def test_nvls_across_nodes_needs_sharp():
    assert _h100_64(sharp=False).algorithm != "nvls"


def test_sharp_nic_bound_still_caps_nvls():
    # Two NDR NICs per node: with SHARP each node sends and receives S, so algbw <= 2 x 47 GB/s.
    result = _h100_64(nics=2, algorithm="nvls")
    assert result.algbw_gbytes_per_s <= 2 * CATALOG.fabric("infiniband-ndr").effective_bandwidth_gbytes_per_s + 1e-6


def test_one_node_nvls_unchanged():
    one = collective_time("all_reduce", 8 * GIB, 8, 8, _ndr(), H100, catalog=CATALOG)
    assert one.algbw_gbytes_per_s == pytest.approx(NVLINK_H100 * 0.85 * 8 / 9, rel=0.01)


@pytest.mark.parametrize("row", sharp_collnet_chain_rows(CATALOG), ids=lambda r: r.quantity)
def test_coreweave_collnet_chain_rows_within_tolerance(row):
    assert abs(row.error) <= row.tolerance, f"{row.quantity}: {row.model:.1f} vs {row.published:.1f}"


def test_gb300_takes_its_own_in_domain_nvls_efficiency():
    assert mnnvl_nvls_data_path_efficiency(100, CATALOG) == pytest.approx(0.806)
    assert mnnvl_nvls_data_path_efficiency(103, CATALOG) == pytest.approx(0.852)
    fabric = _ndr(sharp=False)
    busbw = {gpu: collective_time("all_reduce", 8 * GIB, 72, 72, fabric, CATALOG.gpu(gpu), nics_per_node=72,
                                  gpus_per_host=4, catalog=CATALOG).busbw_gbytes_per_s for gpu in ("gb200", "gb300")}
    assert busbw["gb300"] / busbw["gb200"] == pytest.approx(0.852 / 0.806, rel=0.005)
    assert busbw["gb300"] == pytest.approx(884.0, rel=0.03)  # Verda GB300 NVL72, 8 GiB (calibration row)
