"""The estate as input (issue 29): owned switches the design search may reuse, at no capex."""

from __future__ import annotations

import pytest

import fabricplan as fp
from fabricplan.catalog import default_catalog
from fabricplan.cost.bom import bill_of_materials, count_parts
from fabricplan.errors import InputError
from fabricplan.plan import fabric_outcomes
from fabricplan.spec import parse_spec

CATALOG = default_catalog()


def _spec(count=24, fabrics=("roce-v2",), ports_free=None, cabling=False, gpus=256, **extra):
    owned = {"model": "sw_eth_th3", "count": count, "speed_gbps": 100}
    if ports_free is not None:
        owned["ports_free"] = ports_free
    document = {"cluster": {"gpu": "a100-sxm-80gb", "gpus": gpus, "gpus_per_node": 8, "nics_per_node": 8},
                "fabrics": list(fabrics), "estate": {"switches": [owned], "cabling": cabling},
                "jobs": [{"name": "j", "model": "llama3-8b", "tp": 8, "global_batch_sequences": 256,
                          "seq_len_tokens": 8192}], **extra}
    return parse_spec(document)


def test_reuse_costs_no_capex_for_the_owned_switches_and_runs_at_their_speed():
    spec = _spec(fabrics=[{"profile": "roce-v2", "reuse_estate": 0}], topology={"style": "rail_optimized"})
    design = fp.design(spec, "roce-v2", CATALOG)
    assert design.hardware.switch.id == "sw_eth_th3" and design.hardware.owned_switches == 24
    assert design.network.profile.link_rate_gbps == 100 and design.hardware.nic.speed_gbps == 100
    lines = bill_of_materials(design.size, design.hardware)
    switches = [line for line in lines if line.category == "switches"]
    assert switches and all(line.price_usd == 0 and line.power_w > 0 for line in switches)  # power still counts
    bought = fp.design(parse_spec({**spec.model_dump(exclude={"estate"}, exclude_none=True),
                                   "fabrics": [{"profile": "roce-v2", "switch": "sw_eth_th3"}],
                                   "cluster": {**spec.cluster.model_dump(exclude_none=True), "nic_speed_gbps": 100}}),
                       "roce-v2", CATALOG)
    assert bought.size.total_switches == design.size.total_switches
    capex = {name: sum(line.price_usd for line in bill_of_materials(d.size, d.hardware) if line.category == "switches")
             for name, d in (("owned", design), ("bought", bought))}
    assert capex["owned"] == 0 < capex["bought"]


def test_owned_cabling_costs_nothing_between_the_switches():
    spec = _spec(fabrics=[{"profile": "roce-v2", "reuse_estate": 0}], cabling=True, gpus=1024,
                 topology={"style": "rail_optimized"})
    design = fp.design(spec, "roce-v2", CATALOG)
    parts = count_parts(design.size, design.hardware)
    between = [p for p in parts if "switch-to-switch" in p.role]
    assert between and all(p.owned for p in between)
    assert not any(p.owned for p in parts if p.role.startswith(("NIC-side", "switch-side host", "host")))


def test_an_estate_too_small_for_the_design_is_refused_naming_it():
    spec = _spec(count=3, gpus=1024, fabrics=[{"profile": "roce-v2", "reuse_estate": 0}],
                 topology={"style": "rail_optimized"})
    with pytest.raises(InputError) as err:
        fp.design(spec, "roce-v2", CATALOG)
    assert err.value.location == "estate.switches[0]"
    assert "3 owned sw_eth_th3" in err.value.message and "cannot carry" in err.value.message


def test_the_search_prices_reuse_beside_a_new_backend():
    outcome = fabric_outcomes(_spec(), CATALOG, fabrics=["roce-v2"])["roce-v2"]
    reused = [d for d in outcome.designs_considered if d.reused]
    new = [d for d in outcome.designs_considered if not d.reused and d.network_capex_usd is not None]
    assert reused and new
    built = [d for d in reused if d.network_capex_usd is not None]
    assert built and all("owned switches at 100G" in d.note for d in reused)
    assert min(d.network_capex_usd for d in built) < min(d.network_capex_usd for d in new)
    small = fabric_outcomes(_spec(count=1, gpus=1024), CATALOG, fabrics=["roce-v2"])["roce-v2"]
    refused = [d for d in small.designs_considered if d.reused]
    assert refused and all(d.network_capex_usd is None and "cannot carry" in d.note for d in refused)


@pytest.mark.parametrize(("estate", "fabrics", "where"), [
    ({"switches": [{"model": "sw_x", "count": 2, "speed_gbps": 100}]}, ["roce-v2"], "estate.switches[0].model"),
    ({"switches": [{"model": "sw_eth_th3", "count": 2, "speed_gbps": 800}]}, ["roce-v2"],
     "estate.switches[0].speed_gbps"),
    ({"switches": [{"model": "sw_eth_th3", "count": 2, "speed_gbps": 100, "ports_free": 200}]}, ["roce-v2"],
     "estate.switches[0].ports_free"),
    ({"switches": [{"model": "sw_eth_th3", "count": 2, "speed_gbps": 100}]},
     [{"profile": "roce-v2", "reuse_estate": 3}], "fabrics[0].reuse_estate"),
    ({"switches": [{"model": "sw_eth_th3", "count": 2, "speed_gbps": 100}]},
     [{"profile": "infiniband-ndr", "reuse_estate": 0}], "fabrics[0].reuse_estate"),
])
def test_a_bad_estate_is_one_error_naming_the_field(estate, fabrics, where):
    from fabricplan.spec.load import check_references

    spec = parse_spec({"cluster": {"gpu": "h100-sxm", "gpus": 128}, "fabrics": fabrics, "estate": estate})
    with pytest.raises(InputError) as err:
        check_references(spec, CATALOG)
    assert err.value.location == where
