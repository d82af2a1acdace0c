"""cluster.grow_to_gpus: the fabric is designed for the target, the first phase is costed."""

from __future__ import annotations

import pytest

from fabricplan.catalog import load_catalog
from fabricplan.decide import fabric_outcomes
from fabricplan.design import resolve
from fabricplan.errors import InputError
from fabricplan.spec import parse_spec

CATALOG = load_catalog()


def spec(**cluster):
    return parse_spec({"cluster": {"gpu": "h100-sxm", "gpus": 1024, **cluster},
                       "topology": {"style": "rail_optimized"}, "fabrics": ["infiniband-ndr"]})


def test_growth_builds_the_first_phase_with_the_targets_tiers_and_costs_only_it():
    now = resolve(spec(), CATALOG, "infiniband-ndr").size
    grown = resolve(spec(grow_to_gpus=8192), CATALOG, "infiniband-ndr").size
    target = resolve(spec(gpus=8192), CATALOG, "infiniband-ndr").size
    assert (now.tiers, grown.tiers, target.tiers) == (2, 3, 3)  # radix 64: 2 tiers end at 2,048 GPUs
    assert grown.endpoints == now.endpoints == 1024  # the first phase's NICs only
    assert now.total_switches < grown.total_switches < target.total_switches
    assert any("planned growth to 8,192 GPUs" in note for note in grown.notes)
    costs = {name: fabric_outcomes(s, CATALOG)["infiniband-ndr"].cost.network_capex_usd
             for name, s in (("now", spec()), ("grown", spec(grow_to_gpus=8192)), ("target", spec(gpus=8192)))}
    assert costs["now"] < costs["grown"] < costs["target"]


def test_growth_within_the_same_tiers_changes_nothing():
    assert resolve(spec(grow_to_gpus=2048), CATALOG, "infiniband-ndr").size.total_switches == \
        resolve(spec(), CATALOG, "infiniband-ndr").size.total_switches


@pytest.mark.parametrize("grow", [512, 1028])
def test_growth_below_the_cluster_or_off_the_node_size_is_an_input_error(grow):
    with pytest.raises((InputError, ValueError), match="grow_to_gpus"):
        spec(grow_to_gpus=grow)
