"""examples/gb200-nvl72.yaml: 4 GB200 NVL72 racks (72 NICs each, 18 hosts of 4) on InfiniBand NDR (QM9700,
radix 64) are a 2-tier design of 9 leaves and 8 spines in every style that has leaves, and ``tiers: 2``
works (issue 26: it was 3 tiers and 30 switches, "the 2-tier maximum of 0")."""

from __future__ import annotations

import pytest

from fabricplan.catalog import load_catalog
from fabricplan.design import resolve
from fabricplan.spec import load_spec
from project_paths import EXAMPLES

CATALOG = load_catalog()
SPEC = load_spec(EXAMPLES / "gb200-nvl72.yaml", CATALOG)


def styled(**topology):
    return SPEC.model_copy(update={"topology": SPEC.topology.model_copy(update=topology)})


def test_the_examples_infiniband_design_is_two_tiers_of_17_switches():
    design = resolve(SPEC, CATALOG, "infiniband-ndr")
    size = design.size
    assert (design.hardware.switch.id, design.hardware.radix) == ("sw_ib_qm9700", 64)
    assert (size.style, size.nodes, size.nics_per_node, size.nics_per_host) == ("rail_optimized", 4, 72, 4)
    assert (size.tiers, size.leaf_switches, size.spine_switches, size.core_switches) == (2, 9, 8, 0)
    assert (size.total_switches, size.host_links, size.leaf_spine_links) == (17, 288, 288)
    assert size.rails_per_leaf == 8  # 8 of a rack's 72 rails on each 32-port leaf
    assert design.switches_across == 3
    assert design.job_placements["llama3-70b-pretrain"].tiers == 2


@pytest.mark.parametrize("topology, switches", [
    ({"tiers": 2}, (9, 8, 0)),
    ({"style": "leaf_spine"}, (9, 8, 0)),           # 8 four-NIC trays per ToR: 72 trays on 9 ToRs
    ({"style": "leaf_spine", "tiers": 2}, (9, 8, 0)),
    ({"style": "fat_tree"}, (9, 8, 0)),
    ({"style": "rail_only"}, (5, 0, 0)),            # 16 rails of 4 racks per 64-port switch
    ({"tiers": 3}, (9, 16, 5)),                     # growth room: one pod, 16 spines, 5 cores
])
def test_tiers_2_and_every_style_are_built(topology, switches):
    size = resolve(styled(**topology), CATALOG, "infiniband-ndr").size
    assert (size.leaf_switches, size.spine_switches, size.core_switches) == switches
    assert size.tiers == topology.get("tiers", 1 if topology.get("style") == "rail_only" else 2)
    assert size.host_links_in_rack is (topology.get("style") == "leaf_spine")


def test_the_roce_design_on_a_128_port_switch_folds_16_rails_a_leaf():
    """Tomahawk 5 (radix 128 at 400G): 64 host ports, floor(64 / 4) = 16 rails per leaf -> 5 leaves, 4 spines."""
    size = resolve(SPEC, CATALOG, "roce-v2").size
    assert (size.radix, size.tiers, size.leaf_switches, size.spine_switches, size.rails_per_leaf) == (128, 2, 5, 4, 16)
