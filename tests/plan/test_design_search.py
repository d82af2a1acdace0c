"""The model chain tries every design the spec leaves open and keeps the cheapest per useful GPU-hour."""

from __future__ import annotations

from fabricplan.catalog import load_catalog
from fabricplan.decide import fabric_outcomes
from fabricplan.spec import load_spec, parse_spec
from project_paths import pinned

CATALOG = load_catalog()


def spec_of(**cluster):
    return parse_spec({"cluster": {"gpu": "h100-sxm", "gpus": 1024, **cluster},
                       "fabrics": ["roce-v2", "infiniband-ndr"],
                       "jobs": [{"name": "dp", "model": "llama3-8b", "global_batch_sequences": 1024,
                                 "seq_len_tokens": 8192}]})


def test_128_gpu_infiniband_is_four_leaves_and_two_spines_and_lists_what_was_not_buildable():
    spec = load_spec(pinned("mid-128-h100-existing-ethernet"), CATALOG)  # rail-optimised
    ib = fabric_outcomes(spec, CATALOG, fabrics=["infiniband-ndr"])["infiniband-ndr"]
    assert ib.cost.topology.switches_by_tier == {"leaf": 4, "spine": 2, "core": 0, "super_core": 0}
    assert ib.design.switch == "sw_ib_qm9700" and ib.design.chosen
    rejected = {d.switch: d.note for d in ib.designs_considered if d.cost_per_useful_gpu_hour_usd is None}
    assert set(rejected) == {"sw_ib_qm8700", "sw_ib_sb7800", "sw_ib_q3400"}
    assert all("no 400G ports" in note for note in rejected.values())


def test_the_cheapest_design_per_useful_gpu_hour_is_chosen_and_every_loser_says_why():
    outcome = fabric_outcomes(spec_of(), CATALOG, fabrics=["roce-v2"])["roce-v2"]
    built = [d for d in outcome.designs_considered if d.cost_per_useful_gpu_hour_usd is not None]
    assert {d.style for d in built} == {"rail_optimized", "leaf_spine", "fat_tree", "rail_only", "multi_plane"}
    assert {d.switch for d in built} == {s.id for s in CATALOG.section("switches").values()
                                         if s.family == "ethernet" and s.radix_at(400)}  # every 400G Ethernet switch
    best = min(built, key=lambda d: d.cost_per_useful_gpu_hour_usd)
    assert outcome.design == best and outcome.cost_per_useful_gpu_hour_usd == best.cost_per_useful_gpu_hour_usd
    assert sum(d.chosen for d in outcome.designs_considered) == 1
    assert all("% cost per useful GPU-hour" in d.note for d in built if not d.chosen)


def test_explicit_switch_and_style_are_honoured():
    spec = parse_spec({"cluster": {"gpu": "h100-sxm", "gpus": 1024}, "topology": {"style": "fat_tree"},
                       "fabrics": [{"profile": "roce-v2", "switch": "sw_eth_sn5600"}]})
    outcome = fabric_outcomes(spec, CATALOG)["roce-v2"]
    assert outcome.cost.switch_id == "sw_eth_sn5600" and outcome.cost.topology.style == "fat_tree"
    assert outcome.designs_considered == []  # nothing left open: the spec's design only


def test_a_switch_price_overlay_changes_the_chosen_switch():
    spec = parse_spec({"cluster": {"gpu": "h100-sxm", "gpus": 1024}, "topology": {"style": "rail_optimized"},
                       "fabrics": ["roce-v2"]})
    # Tomahawk-4 (48 x 64 ports) and Tomahawk-5 (24 x 128) are within 0.1 % at 1,024 GPUs; the cheaper is chosen.
    chosen = fabric_outcomes(spec, CATALOG)["roce-v2"].design.switch
    assert chosen in {"sw_eth_th4", "sw_eth_th5"}
    dear = CATALOG.with_values({f"switches.{chosen}.price_usd": 400000})
    outcome = fabric_outcomes(spec, dear)["roce-v2"]
    assert outcome.design.switch != chosen and outcome.cost.switch_id == outcome.design.switch


def test_rail_only_is_one_switch_per_rail_where_it_fits_and_a_leaf_spine_per_rail_beyond():
    """128 nodes fit one 128-port Tomahawk-5 per rail: rail-only needs 8 switches and no spine. On
    64-port switches the 128 servers of a rail need a leaf-spine per rail: 8 x (4 leaves + 2 spines),
    still no link between rails; it is costed and listed with why it lost."""
    outcome = fabric_outcomes(spec_of(), CATALOG, fabrics=["roce-v2"])["roce-v2"]
    by = {(d.switch, d.style): d for d in outcome.designs_considered}
    rail_only = by[("sw_eth_th5", "rail_only")]
    assert (rail_only.tiers, rail_only.switches, rail_only.switches_by_tier) == (1, 8, {"leaf": 8})
    assert by[("sw_eth_th5", "rail_optimized")].switches > 8
    two_tier = by[("sw_eth_th4", "rail_only")]
    assert (two_tier.tiers, two_tier.switches_by_tier) == (2, {"leaf": 32, "spine": 16})
    assert two_tier.cost_per_useful_gpu_hour_usd is not None and not two_tier.chosen
    assert "cost per useful GPU-hour" in two_tier.note and "48 vs" in two_tier.note


def test_cost_and_topology_show_the_design_compare_chooses():
    import pytest

    # `cost`/`topology` cost the same design `compare` keeps, not the spec's first option: on the
    # 128-GPU example (style left open) InfiniBand is rail-only, 2 switches of 4 rails each, in both.
    import fabricplan as fp

    spec = fp.load_spec("examples/mid-128-h100-existing-ethernet.yaml")
    report = fp.compare(spec, quick=True, draws=0)
    costed = {f.fabric: f for f in fp.cost(spec).fabrics}
    for outcome in report.fabrics:
        assert costed[outcome.fabric].switch_id == outcome.design.switch
        assert costed[outcome.fabric].topology.total_switches == outcome.design.switches
        assert costed[outcome.fabric].network_capex_usd == pytest.approx(outcome.cost.network_capex_usd, rel=1e-12)
    assert costed["infiniband-ndr"].topology.total_switches == 2
    assert costed["infiniband-ndr"].topology.style == "rail_only"
