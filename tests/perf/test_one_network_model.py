"""Issue 26: the step runs its collectives on the same network model as `collective --spec`, and
adaptive routing acts on the step wherever the collective says it is faster and the step exposes it."""

from __future__ import annotations

import pytest

from fabricplan import api
from fabricplan.catalog import load_catalog
from fabricplan.design import resolve
from fabricplan.perf.step import step_time
from fabricplan.spec import FabricChoice, load_spec
from project_paths import EXAMPLES

CATALOG = load_catalog()
SPEC_1024 = load_spec(EXAMPLES / "llama70b-1024-h100.yaml", CATALOG)


def _step(fabric: str):
    return step_time(SPEC_1024.jobs[0], resolve(SPEC_1024, CATALOG, fabric).network, catalog=CATALOG)


@pytest.mark.parametrize("fabric", ["roce-v2", "roce-spectrum-x", "infiniband-ndr"])
def test_every_step_collective_is_the_collective_command_on_the_same_design(fabric):
    """`step` and `collective --spec` at their defaults (the model chain's efficiency model, as
    compare): each collective a step ran has the same time and bus bandwidth alone."""
    result = api.step_time(SPEC_1024, fabric, catalog=CATALOG)[0]
    assert {c.operation for c in result.collectives} == {"all_gather", "reduce_scatter", "send_recv"}
    for c in result.collectives:
        alone = api.collective_time(c.operation, c.size_bytes, gpus=c.n_gpus, gpus_per_node=c.gpus_per_node,
                                    fabric=fabric, spec=SPEC_1024, catalog=CATALOG,
                                    span_nodes=c.span_nodes if c.span_nodes > c.n_gpus // c.gpus_per_node else None)
        assert alone.time_us == c.time_us  # one code path: bit for bit
        assert alone.busbw_gbytes_per_s == c.busbw_gbytes_per_s


def test_spectrum_x_is_faster_where_its_collective_is_faster_and_exposed():
    roce, spx = _step("roce-v2"), _step("roce-spectrum-x")
    by_op = {fabric: {c.operation: c for c in r.collectives} for fabric, r in (("roce", roce), ("spx", spx))}
    pipeline_roce, pipeline_spx = by_op["roce"]["send_recv"], by_op["spx"]["send_recv"]
    # 4 stages of 32 nodes span 97 nodes over 64-node leaves: the sends leave the leaf, where static
    # ECMP keeps ~1/3 of the bandwidth (64 flows on 64 uplinks) and adaptive routing ~92 %.
    assert pipeline_roce.span_nodes == 97
    assert pipeline_roce.routing_efficiency == pytest.approx(0.335, abs=0.005)
    assert pipeline_spx.routing_efficiency == pytest.approx(0.917, abs=0.005)
    assert pipeline_spx.busbw_gbytes_per_s > 2.5 * pipeline_roce.busbw_gbytes_per_s
    assert roce.exposed_comm_s["pp"] > 0
    assert spx.exposed_comm_s["pp"] < roce.exposed_comm_s["pp"] / 2
    assert spx.step_time_s < roce.step_time_s
    assert roce.step_time_s - spx.step_time_s == pytest.approx(0.0484, abs=0.002)
    # the data-parallel rings stay under one leaf group: no difference there
    assert spx.exposed_comm_s["dp"] == pytest.approx(roce.exposed_comm_s["dp"], rel=1e-3)


def test_adaptive_routing_off_makes_spectrum_x_hash_like_roce():
    choice = FabricChoice(profile="roce-spectrum-x", adaptive_routing=False)
    network = resolve(SPEC_1024, CATALOG, choice).network
    assert network.profile.routing == "ecmp"
    off = step_time(SPEC_1024.jobs[0], network, catalog=CATALOG)
    pipeline = {c.operation: c for c in off.collectives}["send_recv"]
    assert pipeline.routing_efficiency == pytest.approx(0.335, abs=0.005)
    assert off.step_time_s > _step("roce-spectrum-x").step_time_s


def test_sharp_is_off_as_installed_and_an_option_of_the_design():
    off = resolve(SPEC_1024, CATALOG, "infiniband-ndr").network.profile
    on = resolve(SPEC_1024, CATALOG, FabricChoice(profile="infiniband-ndr", sharp=True)).network.profile
    assert not off.in_network_reduction and on.in_network_reduction
    with pytest.raises(Exception, match="no in-network reduction"):
        resolve(SPEC_1024, CATALOG, FabricChoice(profile="roce-v2", sharp=True))
    with pytest.raises(Exception, match="no adaptive routing"):
        resolve(SPEC_1024, CATALOG, FabricChoice(profile="roce-v2", adaptive_routing=True))
    big = api.collective_time("all_reduce", 2**30, gpus=1024, gpus_per_node=8, fabric="infiniband-ndr",
                              spec=SPEC_1024, catalog=CATALOG)
    assert big.algorithm == "nvls_tree"  # NCCL without CollNet
