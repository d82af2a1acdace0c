"""Floor-plan runs per tier and the cable/optic class chosen by reach (cost/floorplan.py, cost/media.py)."""

from __future__ import annotations

import pytest

from fabricplan.catalog import LinkMedium, load_catalog
from fabricplan.cost import cost
from fabricplan.cost.floorplan import FloorPlan, block_run_m, racks_for, tier_runs
from fabricplan.cost.media import Medium, choose, resolve
from fabricplan.errors import InputError
from fabricplan.spec import parse_spec

CATALOG = load_catalog()
PLAN = FloorPlan(rack_width_m=0.6, row_pitch_m=2.4, racks_per_row=16, servers_per_rack=4, in_rack_run_m=2.0,
                 run_overhead_m=5.0, slack_fraction=0.1)


def spec_for(gpus, fabrics=("infiniband-ndr",), **sections):
    return parse_spec({"cluster": {"gpu": "h100-sxm", "gpus": gpus}, "fabrics": list(fabrics), **sections})


def media_of(fabric):
    return {m.tier: m for m in fabric.link_media}


def test_block_run_by_hand():
    # 32 racks in rows of 16: 2 rows, 9.6 m long, 4.8 m deep; switch in the middle.
    assert block_run_m(32, PLAN) == pytest.approx((9.6 / 2 + 4.8 / 2 + 5.0) * 1.1)
    # 512 racks: 32 rows -> 76.8 m deep; the longest run passes the 50 m of multimode.
    assert block_run_m(512, PLAN) == pytest.approx((9.6 / 2 + 76.8 / 2 + 5.0) * 1.1)
    assert block_run_m(512, PLAN) > 50
    assert racks_for(2048, PLAN) == 512 and racks_for(1, PLAN) == 1


def test_catalog_floor_plan_is_the_default_point():
    assert FloorPlan.from_catalog(CATALOG) == PLAN


def test_runs_grow_with_the_hall_and_tor_is_in_rack():
    small = cost(spec_for(1024), CATALOG).fabrics[0]
    large = cost(spec_for(16384), CATALOG).fabrics[0]
    assert large.hall_racks == 512 and small.hall_racks == 32
    assert media_of(large)["spine_core"].run_m > media_of(small)["leaf_spine"].run_m
    tor = cost(spec_for(1024, ["roce-v2"], topology={"style": "leaf_spine"}), CATALOG).fabrics[0]
    assert media_of(tor)["host"].run_m == pytest.approx(2.0)


def _media(fabric: str, slot: str) -> list[Medium]:
    hardware = CATALOG.fabric(fabric).hardware
    return resolve(CATALOG, getattr(hardware, slot), CATALOG.optic("cab_fiber_mpo"), slot == "interswitch_media")


@pytest.mark.parametrize(("run_m", "expected"), [(2.0, "cab_dac_800_2x400_nv"), (4.0, "cab_acc_800_2x400_nv"),
                                                 (30.0, "opt_800_twin_sr8_nv"), (50.0, "opt_800_twin_sr8_nv"),
                                                 (51.0, "opt_800_twin_dr8_nv"), (99.0, "opt_800_twin_dr8_nv")])
def test_host_medium_by_reach(run_m, expected):
    medium, reaches = choose(_media("infiniband-ndr", "host_media"), run_m, "default")
    assert reaches and medium.switch_end.id == expected


@pytest.mark.parametrize(("run_m", "expected"), [(10.0, "opt_800_twin_sr8"), (50.0, "opt_800_twin_sr8"),
                                                 (50.5, "opt_800_twin_dr8"), (500.0, "opt_800_twin_dr8"),
                                                 (501.0, "opt_800_twin_fr8"), (2000.0, "opt_800_twin_fr8")])
def test_interswitch_switches_to_single_mode_above_the_multimode_reach(run_m, expected):
    medium, reaches = choose(_media("roce-v2", "interswitch_media"), run_m, "default")
    assert reaches and medium.switch_end.id == expected
    assert (medium.switch_end.reach_m > 50) == (run_m > 50)  # single-mode exactly when multimode falls short


def test_nothing_reaches_takes_the_longest_and_says_so():
    medium, reaches = choose(_media("roce-v2", "interswitch_media"), 5000.0, "default")
    assert not reaches and medium.switch_end.id == "opt_800_twin_fr8"


def test_medium_price_per_link_by_hand():
    pair = resolve(CATALOG, [LinkMedium(switch_end="opt_800_twin_sr8", far_end="opt_400_osfp_sr4")],
                   CATALOG.optic("cab_fiber_mpo"), interswitch=False)[0]
    assert pair.price_per_link_usd("default") == pytest.approx(1000 / 2 + 650 + 80)
    dac = resolve(CATALOG, [LinkMedium(switch_end="cab_dac_800_2x400")], None, interswitch=False)[0]
    assert dac.is_cable and dac.price_per_link_usd("default") == pytest.approx(300 / 2)


def test_16k_spine_core_goes_single_mode_and_a_smaller_hall_keeps_multimode():
    fabric = cost(spec_for(16384), CATALOG).fabrics[0]
    chosen = media_of(fabric)
    assert chosen["spine_core"].run_m > 50 and chosen["spine_core"].medium.startswith("opt_800_twin_dr8")
    assert chosen["host"].medium.startswith("opt_800_twin_sr8")
    quantities = {(line.item_id, line.role): line.quantity for line in fabric.bom}
    assert quantities[("opt_800_twin_dr8", "spine-core optics (both ends)")] == 16384  # 16,384 links, twin-port
    # Denser racks (8 servers) halve the hall: the same tier fits multimode again.
    dense = CATALOG.with_values({"parameters.floor_servers_per_rack.value.default": 8})
    chosen = media_of(cost(spec_for(16384), dense).fabrics[0])
    assert chosen["spine_core"].run_m < 50 and chosen["spine_core"].medium.startswith("opt_800_twin_sr8")


def test_spec_optic_override_keeps_the_fixed_parts():
    spec = spec_for(1024, [{"profile": "roce-v2", "interswitch_optic": "opt_800_twin_dr8"}])
    fabric = cost(spec, CATALOG).fabrics[0]
    roles = {line.role: line.item_id for line in fabric.bom}
    assert roles["switch-to-switch optics (both ends)"] == "opt_800_twin_dr8"
    assert "leaf_spine" not in media_of(fabric) and "host" in media_of(fabric)


def test_optics_basis_moves_infiniband_capex_by_the_linkx_premium():
    """The vendor basis prices NVIDIA LinkX parts (about twice third-party: AscentOptics 2026, 55 % below
    list; docs/reference/costs.md section 2.3); the default third-party basis prices the same classes from
    third-party makers. Only the optics and cables move; the counts and reach classes stay."""
    third = cost(spec_for(1024, ["infiniband-ndr", "roce-v2"]), CATALOG)
    vendor = cost(spec_for(1024, ["infiniband-ndr", "roce-v2"], economics={"optics_basis": "vendor"}), CATALOG)
    (ib_t, roce_t), (ib_v, roce_v) = third.fabrics, vendor.fabrics
    assert (ib_t.optics_basis, ib_v.optics_basis) == ("third_party", "vendor")
    assert not any(line.item_id.endswith("_nv") for line in ib_t.bom)
    assert all(line.item_id.endswith("_nv") for line in ib_v.bom if line.category == "optics")
    # Third-party: InfiniBand's optics cost what RoCE's do (same parts and counts at 1,024 GPUs): $2.20M.
    assert ib_t.capex_usd["optics"] == pytest.approx(roce_t.capex_usd["optics"]) == pytest.approx(2_201_600)
    # Vendor: LinkX at 2.0x (the catalog default of the sourced 1.4-2.5x): +$2.20M of network capex, all optics.
    assert ib_v.capex_usd["optics"] / ib_t.capex_usd["optics"] == pytest.approx(2.0, rel=0.02)
    assert ib_v.network_capex_usd - ib_t.network_capex_usd == pytest.approx(
        ib_v.capex_usd["optics"] - ib_t.capex_usd["optics"] + ib_v.capex_usd["cables"] - ib_t.capex_usd["cables"])
    assert ib_v.network_capex_usd - ib_t.network_capex_usd == pytest.approx(2_201_600, rel=0.01)
    assert ib_v.capex_usd["switches"] == ib_t.capex_usd["switches"]
    # White-box Tomahawk switches qualify MSA parts: RoCE prices the same parts at either basis.
    assert roce_v.network_capex_usd == pytest.approx(roce_t.network_capex_usd)


def test_optics_basis_per_fabric_and_a_bad_value():
    spec = spec_for(1024, ["infiniband-ndr", "roce-spectrum-x"],
                    economics={"optics_basis": "third_party", "optics_basis_by_fabric": {"infiniband-ndr": "vendor"}})
    ib, sx = cost(spec, CATALOG).fabrics
    assert (ib.optics_basis, sx.optics_basis) == ("vendor", "third_party")
    with pytest.raises(InputError, match="optics_basis"):
        cost(spec_for(1024, ["roce-v2"], economics={"optics_basis_by_fabric": {"infiniband-ndr": "vendor"}}),
             CATALOG)
    with pytest.raises(InputError, match="vendor"):
        spec_for(1024, economics={"optics_basis": "oem"})


def test_rail_only_runs_by_tier():
    """Rail-only host links run from a rail leaf's servers to that leaf (a 1-tier rail switch serves
    the whole hall); a 2-tier rail's leaf-spine links span the hall, a 3-tier rail's a pod."""
    from fabricplan.topology import size_fabric

    one = size_fabric(nodes=64, nics_per_node=8, radix=64, style="rail_only")       # 16 racks, 1 switch per rail
    assert tier_runs(one, PLAN).host_m == pytest.approx(block_run_m(16, PLAN))
    two = size_fabric(nodes=2048, nics_per_node=8, radix=64, style="rail_only")     # 32 servers per rail leaf
    runs = tier_runs(two, PLAN)
    assert (runs.host_m, runs.leaf_spine_m) == (pytest.approx(block_run_m(8, PLAN)), pytest.approx(block_run_m(512, PLAN)))
    three = size_fabric(nodes=4096, nics_per_node=8, radix=64, style="rail_only")   # pods of 32 x 32 servers
    runs = tier_runs(three, PLAN)
    assert runs.leaf_spine_m == pytest.approx(block_run_m(256, PLAN))
    assert runs.spine_core_m == pytest.approx(block_run_m(1024, PLAN))
