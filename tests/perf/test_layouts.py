"""Issue 27: layouts as real runs use them (groups laid out across nodes partly, Megatron-Core's rank
order) are modelled, not refused; `collective` takes the NIC speed and NICs per GPU `step` understands."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from fabricplan import api
from fabricplan.catalog import load_catalog
from fabricplan.design.groups import GROUP_KINDS, group_ranks, group_shapes
from fabricplan.errors import InputError
from fabricplan.perf.collectives import collective_time
from fabricplan.perf.flops import model_dims
from fabricplan.perf.memory import memory_per_gpu
from fabricplan.spec import load_spec

CATALOG = load_catalog()
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "layouts"
GPT3_96 = FIXTURES / "gpt3-175b-96-h100.yaml"
A100_16X100G = FIXTURES / "a100-2x8-roce-16x100g.yaml"
GIB = 2 ** 30


def test_megatron_rank_order_of_the_published_gpt3_layout():
    """TP 4, PP 8, DP 3 on 12 nodes of 8 (Megatron-Core order tp-cp-ep-dp-pp): two TP groups per
    node, each DP group 2 + 1 over two nodes, pipeline neighbours 12 ranks apart."""
    degrees = dict(tp=4, cp=1, dp=3, pp=8)
    assert group_ranks("tp", **degrees)[0].tolist() == [0, 1, 2, 3]
    assert group_ranks("dp", **degrees)[0].tolist() == [0, 4, 8]
    assert group_ranks("pp", **degrees)[0].tolist() == [0, 12, 24, 36, 48, 60, 72, 84]
    (tp,) = group_shapes("tp", **degrees, gpus_per_node=8)
    assert (tp.ranks, tp.max_per_node, tp.nodes, tp.count) == (4, 4, 1, 24)
    (dp,) = group_shapes("dp", **degrees, gpus_per_node=8)
    assert (dp.ranks, dp.max_per_node, dp.min_per_node, dp.nodes, dp.count) == (3, 2, 1, 2, 32)
    assert not dp.even
    pipelines = group_shapes("pp", **degrees, gpus_per_node=8)
    assert all(g.crosses_nodes and g.max_per_node == 1 for g in pipelines)
    assert {g.span_nodes for g in pipelines} == {11, 12}  # 0..84 -> nodes 0..10; 8..92 -> nodes 1..11


def test_gpt3_on_96_h100_runs_through_step_and_compare():
    results = api.step_time(GPT3_96, catalog=CATALOG)
    assert {r.fabric for r in results} == {"roce-v2", "infiniband-ndr"}
    for result in results:
        assert (result.tp, result.pp, result.dp) == (4, 8, 3)
        assert 0 < result.step_time_s < 1e3 and 0 < result.mfu < 1
        assert result.exposed_comm_s["dp"] >= 0 and result.total_comm_s["dp"] > 0
        reductions = [c for c in result.collectives if c.n_gpus == 3]
        assert reductions and all((c.gpus_per_node, c.n_nodes) == (1, 2) for c in reductions)
    # The memory model reads the degrees only: the same estimate as for the layout's degrees.
    spec = load_spec(GPT3_96, CATALOG)
    job = spec.jobs[0]
    layout = dict(tp=4, pp=8, dp=3, cp=1, ep=1, micro_batches=1536 // 3, virtual_stages=1, catalog=CATALOG)
    expected = memory_per_gpu(job, model_dims(job.model, CATALOG), CATALOG.gpu("h100-sxm"), **layout)
    assert results[0].memory_per_gpu_bytes == pytest.approx(expected.total_bytes, rel=1e-12)
    report = api.compare(GPT3_96, catalog=CATALOG)
    assert {o.fabric for o in report.fabrics} == {"roce-v2", "infiniband-ndr"}


def test_a_step_collective_over_an_uneven_group_is_the_collective_command():
    result = api.step_time(GPT3_96, "infiniband-ndr", catalog=CATALOG)[0]
    spec = load_spec(GPT3_96, CATALOG)
    for c in result.collectives:
        alone = api.collective_time(c.operation, c.size_bytes, gpus=c.n_gpus, gpus_per_node=c.gpus_per_node,
                                    fabric="infiniband-ndr", spec=spec, catalog=CATALOG,
                                    nodes=None if c.even else c.n_nodes,
                                    span_nodes=c.span_nodes if c.span_nodes > c.n_nodes else None)
        assert alone.time_us == c.time_us and alone.busbw_gbytes_per_s == c.busbw_gbytes_per_s


def test_uneven_group_runs_at_the_pace_of_its_least_populated_node():
    """NCCL aligns every rank's graphs to the minimum channels and bandwidths (init.cc), so 3 ranks as
    2 + 1 drive the single rank's NICs, not the busier node's: slower than 2 + 2."""
    common = dict(catalog=CATALOG, algorithm="ring", nics_per_node=8)
    uneven = collective_time("all_gather", GIB, 3, 1, "infiniband-ndr", CATALOG.gpu("h100-sxm"), n_nodes=2, **common)
    even = collective_time("all_gather", GIB, 4, 2, "infiniband-ndr", CATALOG.gpu("h100-sxm"), **common)
    one_per_node = collective_time("all_gather", GIB, 2, 1, "infiniband-ndr", CATALOG.gpu("h100-sxm"), **common)
    assert uneven.n_nodes == 2 and uneven.n_gpus == 3
    assert uneven.busbw_gbytes_per_s < 0.75 * even.busbw_gbytes_per_s
    assert uneven.busbw_gbytes_per_s == pytest.approx(one_per_node.busbw_gbytes_per_s, rel=0.1)
    with pytest.raises(InputError, match="cannot sit on 4 nodes") as error:
        collective_time("all_gather", GIB, 3, 1, "infiniband-ndr", CATALOG.gpu("h100-sxm"), n_nodes=4, **common)
    assert error.value.location == "nodes"


def test_an_impossible_layout_is_one_line_naming_the_field(cli, tmp_path):
    text = GPT3_96.read_text().replace("tp: 4", "tp: 5")
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    with pytest.raises(InputError, match=r"tp \(5\) does not divide the job's 96 GPUs") as error:
        api.step_time(bad, catalog=CATALOG)
    assert error.value.location.endswith("bad.yaml: jobs[0].tp")  # the spec loader names the field
    run = cli("step", str(bad))
    assert run.code == 2
    lines = [line for line in run.err.splitlines() if line.strip()]
    assert len(lines) == 1 and "jobs[0].tp" in lines[0] and "does not divide" in lines[0]


@settings(max_examples=examples(200), deadline=None, derandomize=True)
@given(tp=st.sampled_from([1, 2, 4, 8]), cp=st.sampled_from([1, 2, 3]), dp=st.integers(1, 12),
       pp=st.integers(1, 6), ep=st.sampled_from([1, 2, 3, 4]), gpus_per_node=st.sampled_from([4, 8, 72]))
def test_every_kind_of_group_partitions_the_gpus(tp, cp, dp, pp, ep, gpus_per_node):
    if (dp * cp) % ep:
        ep = 1
    gpus = tp * cp * dp * pp
    for kind in GROUP_KINDS:
        rows = group_ranks(kind, tp=tp, cp=cp, dp=dp, pp=pp, ep=ep)
        assert sorted(rows.ravel().tolist()) == list(range(gpus)), kind
        shapes = group_shapes(kind, tp=tp, cp=cp, dp=dp, pp=pp, ep=ep, gpus_per_node=gpus_per_node)
        assert sum(g.count for g in shapes) == rows.shape[0]
        for g in shapes:
            assert g.ranks == rows.shape[1]
            assert g.min_per_node <= g.max_per_node <= min(g.ranks, gpus_per_node)
            assert g.nodes * g.min_per_node <= g.ranks <= g.nodes * g.max_per_node
            assert g.nodes <= g.span_nodes
    # a group of the dense generator is orthogonal to the others: tp x cp x dp x pp ranks, each once
    tp_rows = group_ranks("tp", tp=tp, cp=cp, dp=dp, pp=pp, ep=ep)
    assert all(row.tolist() == list(range(row[0], row[0] + tp)) for row in tp_rows)  # tp fastest


# --- collective: NIC speed and NICs per GPU ------------------------------------------------------

def _bare(**kw):
    return api.collective_time("all_reduce", "8GiB", gpus=16, gpus_per_node=8, fabric="roce-v2",
                               gpu="a100-sxm-80gb", catalog=CATALOG, **kw)


def test_sixteen_100g_nics_per_node_give_sixteen_nics_of_bandwidth():
    """2 x 8 A100, 16 x 100G RoCE per node: the ring's bus bandwidth is the node's 16 NICs at the
    profile's 100G effective rate (its 400G efficiency, as a spec's nic_speed_gbps scales it)."""
    profile = CATALOG.fabric("roce-v2")
    per_nic = profile.effective_bandwidth_gbytes_per_s / profile.link_rate_gbps * 100
    two = _bare(nic_speed="100G", nics_per_gpu=2, switch="sw_eth_th4", algorithm="ring")
    one = _bare(nic_speed="100G", nics_per_gpu=1, switch="sw_eth_th4", algorithm="ring")
    assert two.per_nic_bandwidth_gbytes_per_s == pytest.approx(per_nic)
    assert two.busbw_gbytes_per_s == pytest.approx(16 * per_nic, rel=0.02)
    assert one.busbw_gbytes_per_s == pytest.approx(8 * per_nic, rel=0.02)
    assert per_nic * 8 <= 100 * 16 / 8  # below the 16 x 100G line rate of the node
    default = _bare(nic_speed="100G", nics_per_gpu=2, switch="sw_eth_th4")
    assert default.busbw_gbytes_per_s >= two.busbw_gbytes_per_s  # NCCL's choice is at least the ring


def test_the_same_system_by_spec_and_by_flags_agrees():
    spec = load_spec(A100_16X100G, CATALOG)
    for algorithm in (None, "ring", "tree"):
        by_spec = api.collective_time("all_reduce", "8GiB", gpus=16, gpus_per_node=8, fabric="roce-v2", spec=spec,
                                      catalog=CATALOG, efficiency_model="analytic", algorithm=algorithm)
        by_flags = _bare(nic_speed="100G", nics_per_gpu=2, switch="sw_eth_th4", efficiency_model="analytic",
                         algorithm=algorithm)
        also = _bare(nic_speed=100, nics_per_node=16, switch="sw_eth_th4", efficiency_model="analytic",
                     algorithm=algorithm)
        assert by_flags.time_us == by_spec.time_us == also.time_us
        assert by_flags.busbw_gbytes_per_s == by_spec.busbw_gbytes_per_s


def test_collective_flags_agree_with_the_spec_on_the_command_line(cli):
    flags = cli("collective", "--gpus", "16", "--gpu", "a100-sxm-80gb", "--fabric", "roce-v2", "--nic-speed", "100G",
                "--nics-per-gpu", "2", "--switch", "sw_eth_th4", "--size", "8GiB", "--json")
    spec = cli("collective", "--gpus", "16", "--fabric", "roce-v2", "--spec", str(A100_16X100G),
               "--efficiency-model", "analytic", "--size", "8GiB", "--json")
    assert flags.code == 0 and spec.code == 0, (flags.err, spec.err)
    assert flags.json()["time_us"] == spec.json()["time_us"]


@pytest.mark.parametrize(("args", "expected"), [
    (("--nic-speed", "100G", "--switch", "sw_eth_th5"), "--nic-speed: fabric 'roce-v2' cannot run 100G NICs: switch "
                              "'sw_eth_th5' has no 100G ports (it offers 200G, 400G, 800G); give --switch sw_eth_sn3700 "
                              "or sw_eth_sn4700 or sw_eth_th3 or sw_eth_th4"),
    (("--nic-speed", "1600G"), "--nic-speed: fabric 'roce-v2' cannot run 1600G NICs"),
    (("--nic-speed", "100GB/s"), "--nic-speed: NIC speed '100GB/s' is in bytes per second"),
    (("--nic-speed", "100G", "--switch", "sw_ib_qm8700"), "--switch: switch 'sw_ib_qm8700' is infiniband"),
    (("--nics-per-gpu", "2", "--nics-per-node", "8"), "--nics-per-gpu: 8 NICs per node are not 2 per GPU"),
    (("--nic-speed", "200G", "--spec", str(A100_16X100G)), "--nic-speed: with a spec the NIC speed is the spec's"),
])
def test_speeds_and_nics_the_fabric_cannot_run_are_one_line_errors(cli, args, expected):
    run = cli("collective", "--gpus", "16", "--fabric", "roce-v2", "--size", "1GiB", *args)
    assert run.code == 2
    lines = [line for line in run.err.splitlines() if line.strip()]
    assert len(lines) == 1 and expected in lines[0], run.err


def test_infiniband_at_200g_is_hdr_speed_on_the_ndr_profile():
    ndr = api.collective_time("all_reduce", "8GiB", gpus=16, fabric="infiniband-ndr", catalog=CATALOG,
                              algorithm="ring")
    half = api.collective_time("all_reduce", "8GiB", gpus=16, fabric="infiniband-ndr", catalog=CATALOG,
                               algorithm="ring", nic_speed="200G")
    assert half.per_nic_bandwidth_gbytes_per_s == pytest.approx(ndr.per_nic_bandwidth_gbytes_per_s / 2)
    assert half.busbw_gbytes_per_s < 0.6 * ndr.busbw_gbytes_per_s
