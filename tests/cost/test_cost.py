"""Bill of materials, power and TCO, checked against the counting rules and a public cost sheet."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

import fabricplan
from fabricplan.catalog import load_catalog
from fabricplan.cost import cost
from fabricplan.cost.opex import energy_cost_usd_per_year, network_fte
from fabricplan.spec import parse_spec

CATALOG = load_catalog()


def spec_for(gpus, fabrics=("ethernet-tcp", "roce-v2", "infiniband-ndr"), **sections):
    document = {"cluster": {"gpu": "h100-sxm", "gpus": gpus, **sections.pop("cluster", {})},
                "fabrics": list(fabrics), **sections}
    return parse_spec(document)


def by_fabric(report):
    return {f.fabric: f for f in report.fabrics}


def test_bom_counting_rules_2048_gpus_infiniband():
    # 2,048 GPUs, 8 rails, QM9700 radix 64: 64 leaf + 32 spine (NVIDIA B200 RA, 8 SU).
    fabric = by_fabric(cost(spec_for(2048, ["infiniband-ndr"]), CATALOG))["infiniband-ndr"]
    quantities = {(line.item_id, line.role): line.quantity for line in fabric.bom}
    assert quantities[("sw_ib_qm9700", "switches, all tiers")] == 96
    assert quantities[("nic_cx7_400", "backend NICs")] == 2048
    # Third-party optics (the default basis); 64 racks in 4 rows: every run is under the 50 m of multimode.
    assert quantities[("opt_400_osfp_sr4", "NIC-side host optics")] == 2048            # one per NIC
    assert quantities[("opt_800_twin_sr8", "switch-side host optics")] == 1024         # twin-port: 2 ports each
    assert quantities[("opt_800_twin_sr8", "leaf-spine optics (both ends)")] == 2048  # 2,048 links, both ends
    assert quantities[("cab_fiber_mpo", "host fibre")] == 2048
    assert quantities[("cab_fiber_mpo", "leaf-spine fibre")] == 2048
    # Every used switch port has exactly one optic lane behind it.
    switch_ports = sum(fabric.topology.switch_ports_used.values())
    assert switch_ports == 2048 + 2 * 2048
    assert 2 * (1024 + 2048) == switch_ports


def test_tech_talk_cto_sheet_1024_gpus():
    # The public "H100 Freakonomics" sheet (Aug 2024) prices a 1,024-GPU 2-tier IB fabric at
    # 48 switches x $36k = $1.73M and 2 link levels x 1,024 x $1,280 = $2.62M of links.
    catalog = CATALOG
    fabric = by_fabric(cost(spec_for(1024, ["infiniband-ndr"], economics={"price_point": "low"}), catalog))[
        "infiniband-ndr"]
    assert fabric.topology.total_switches == 48
    assert fabric.capex_usd["switches"] == pytest.approx(1.728e6)
    links = fabric.topology.host_links + fabric.topology.leaf_spine_links
    assert links == 2048
    # The sheet's $1,280 all-in link is the FS.com (third-party) variant: our third-party optics+fibre
    # per link (the Ethernet fabrics' parts, same counting) is within 15 % of it ...
    third_party = by_fabric(cost(spec_for(1024, ["roce-v2"]), catalog))["roce-v2"]
    per_link = (third_party.capex_usd["optics"] + third_party.capex_usd["cables"]) / links
    assert per_link == pytest.approx(1280, rel=0.15)
    # ... and InfiniBand's NVIDIA LinkX optics (the vendor basis) cost ~1.9x as much per link.
    default = by_fabric(cost(spec_for(1024, ["infiniband-ndr"], economics={"optics_basis": "vendor"}), catalog))[
        "infiniband-ndr"]
    linkx = (default.capex_usd["optics"] + default.capex_usd["cables"]) / links
    assert 1.6 < linkx / per_link < 2.2


def test_hand_computed_tco_128_gpus_roce():
    # One TH5 switch (128 x 400G) holds all 128 NICs: a single tier, no switch-to-switch links.
    spec = spec_for(128, ["roce-v2"], economics={"horizon_years": 3, "energy_usd_per_kwh": 0.1, "pue": 1.5,
                                                   "include_colocation": False})
    fabric = by_fabric(cost(spec, CATALOG))["roce-v2"]
    assert fabric.topology.tiers == 1 and fabric.topology.total_switches == 1
    capex = 100_000 + 128 * 1400 + 128 * 650 + 64 * 1000 + 128 * 80
    assert fabric.network_capex_usd == pytest.approx(capex)
    power_w = 913 + 128 * 22 + 128 * 8 + 64 * 15
    assert fabric.network_power_w == pytest.approx(power_w)
    energy = power_w / 1000 * 8760 * 1.5 * 0.1
    assert fabric.opex_usd_per_year.energy_usd == pytest.approx(energy)
    fte = max(0.5, 6 * (128 / 1024) ** 0.7) * 1.2 * 1.0  # maturity "basic" 1.2, roce-v2 staffing 1.0
    assert fabric.ops_fte == pytest.approx(fte)
    assert fabric.support_fraction_per_year == pytest.approx(0.10)  # roce-v2's costs block (Tomahawk switches)
    assert fabric.opex_usd_per_year.licences_usd == 0.0
    # Support covers the switch and the NICs, not the optics and fibre (support_covers_*_share 0).
    assert fabric.support_covers == ["switches", "nics"]
    yearly = energy + 0.10 * (100_000 + 128 * 1400) + fte * 325_000
    assert fabric.network_tco_usd == pytest.approx(capex + 3 * yearly)
    assert fabric.network_capex_per_gpu_usd == pytest.approx(capex / 128)


def test_network_share_uses_servers_without_double_counting_nics():
    fabric = by_fabric(cost(spec_for(128, ["infiniband-ndr"]), CATALOG))["infiniband-ndr"]
    servers = fabric.servers
    assert servers is not None and servers.servers == 16
    # The $310k quote includes 8 ConnectX-7 NICs ($1,400 each); the fabric counts its NICs itself.
    assert servers.capex_usd == pytest.approx(16 * (310_000 - 8 * 1_400))
    assert fabric.network_share_of_cluster_capex == pytest.approx(
        fabric.network_capex_usd / (servers.capex_usd + fabric.network_capex_usd))


def test_no_servers_no_share():
    fabric = cost(spec_for(128, ["roce-v2"], cluster={"include_servers": False}), CATALOG).fabrics[0]
    assert fabric.servers is None and fabric.network_share_of_cluster_capex is None


def test_price_points_order():
    totals = [cost(spec_for(1024, economics={"price_point": p}), CATALOG).fabrics[2].network_capex_usd
              for p in ("low", "default", "high")]
    assert totals[0] < totals[1] < totals[2]


def test_price_multiplier_scales_only_its_category():
    base = cost(spec_for(1024, ["roce-v2"]), CATALOG).fabrics[0]
    scaled = cost(spec_for(1024, ["roce-v2"]), CATALOG, price_multipliers={"switches": 1.3}).fabrics[0]
    assert scaled.capex_usd["switches"] == pytest.approx(1.3 * base.capex_usd["switches"])
    assert scaled.capex_usd["optics"] == pytest.approx(base.capex_usd["optics"])


def test_leaf_spine_tor_uses_dac_in_rack():
    fabric = cost(spec_for(1024, ["roce-v2"], topology={"style": "leaf_spine"}), CATALOG).fabrics[0]
    roles = {line.role: line for line in fabric.bom}
    assert "host cable" in roles and "NIC-side host optics" not in roles
    assert roles["host cable"].item_id == "cab_dac_800_2x400"  # in-rack run (2 m) within the DAC's 3 m
    assert roles["host cable"].quantity == 512  # 2x400G splitters for 1,024 host links


def test_single_node_has_no_fabric_to_staff_or_license():
    report = cost(spec_for(8, ["ethernet-tcp", "roce-v2", "infiniband-ndr"]), CATALOG)
    assert {f.topology.total_switches for f in report.fabrics} == {0}
    # No switches: no network staff, and no backend NICs (nothing connects them).
    assert [f.ops_fte for f in report.fabrics] == [0.0, 0.0, 0.0]
    assert all(f.capex_usd["nics"] == 0 and f.network_capex_usd == 0 for f in report.fabrics)
    assert all(f.opex_usd_per_year.licences_usd == 0 for f in report.fabrics)
    # With a fabric, InfiniBand's UFM licences are per server-year and its staffing multiplier applies.
    ib = cost(spec_for(1024, ["infiniband-ndr", "roce-v2"]), CATALOG).fabrics
    assert ib[0].opex_usd_per_year.licences_usd == pytest.approx(128 * 200)
    assert ib[0].ops_fte == pytest.approx(0.85 * ib[1].ops_fte)


def test_energy_formula():
    assert energy_cost_usd_per_year(1000, 1.3, 0.08) == pytest.approx(8760 * 1.3 * 0.08)


def test_fte_floor_and_growth():
    assert network_fte(8, 6, 0.7, 0.5) == 0.5
    assert network_fte(1024, 6, 0.7, 0.5) == pytest.approx(6)
    assert network_fte(2048, 6, 1.0, 0.5) == pytest.approx(12)


def test_api_matches_cli(cli, tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text("cluster: {gpu: h100-sxm, gpus: 256}\nfabrics: [infiniband-ndr]\n")
    result = cli("cost", spec, "--json")
    assert result.code == 0
    api = fabricplan.cost(fabricplan.load_spec(spec))
    assert result.json()["fabrics"][0]["network_tco_usd"] == pytest.approx(api.fabrics[0].network_tco_usd)
    # `topology` shows the design `cost` priced (the one compare chooses); `size_topology` sizes
    # the spec's own design, which the same spec with that style and switch written in reproduces.
    topology = cli("topology", spec, "--json").json()["fabrics"]["infiniband-ndr"]
    chosen = api.fabrics[0]
    assert topology["total_switches"] == chosen.topology.total_switches
    fixed = tmp_path / "fixed.yaml"
    fixed.write_text(f"cluster: {{gpu: h100-sxm, gpus: 256}}\ntopology: {{style: {chosen.topology.style}}}\n"
                     f"fabrics: [{{profile: infiniband-ndr, switch: {chosen.switch_id}}}]\n")
    assert fabricplan.size_topology(fixed, "infiniband-ndr").total_switches == chosen.topology.total_switches


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes=st.integers(min_value=1, max_value=4000), extra=st.integers(min_value=1, max_value=400),
       fabric=st.sampled_from(["ethernet-tcp", "roce-v2", "infiniband-ndr"]),
       style=st.sampled_from(["rail_optimized", "leaf_spine", "fat_tree"]))
def test_cost_grows_monotonically_with_gpus(nodes, extra, fabric, style):
    small = cost(spec_for(8 * nodes, [fabric], topology={"style": style}), CATALOG).fabrics[0]
    large = cost(spec_for(8 * (nodes + extra), [fabric], topology={"style": style}), CATALOG).fabrics[0]
    assert large.network_capex_usd >= small.network_capex_usd
    assert large.network_tco_usd >= small.network_tco_usd
    assert large.network_power_w >= small.network_power_w


@pytest.mark.parametrize("gpus", [8, 1024, 16384, 131072])
def test_sizes_from_one_node_to_131k(gpus):
    report = cost(spec_for(gpus), CATALOG)
    for fabric in report.fabrics:
        # one 8-GPU node (gpus == 8) needs no scale-out fabric: NVLink only, so 0 host links
        assert fabric.topology.host_links == (0 if gpus == 8 else gpus)
        assert math.isfinite(fabric.network_tco_usd)
        assert fabric.network_tco_usd == 0 if gpus == 8 else fabric.network_tco_usd > 0  # no fabric, nothing to buy


def test_ops_fte_multiplier_sets_the_fabric_staff():
    # costs.ops_fte_multiplier scales the fabric's staff: roce-v2 1.0 -> 1.3 gives 1.3x the FTE and TCO staff line.
    base = by_fabric(cost(spec_for(1024, ["roce-v2"]), CATALOG))["roce-v2"]
    more = CATALOG.with_values({"fabrics.roce-v2.costs.ops_fte_multiplier.default": 1.3})
    raised = by_fabric(cost(spec_for(1024, ["roce-v2"]), more))["roce-v2"]
    assert raised.ops_fte == pytest.approx(1.3 * base.ops_fte)
    assert raised.opex_usd_per_year.operations_usd == pytest.approx(1.3 * base.opex_usd_per_year.operations_usd)
    # The maturity multiplier acts the same way (basic 1.2 -> expert 0.7).
    expert = by_fabric(cost(spec_for(1024, ["roce-v2"], operations={"maturity": "expert"}), CATALOG))["roce-v2"]
    assert expert.ops_fte == pytest.approx(base.ops_fte * 0.7 / 1.2)
    # One switch is a fabric to run: the staffing curve at 64 GPUs x maturity x the fabric multiplier.
    one = by_fabric(cost(spec_for(64, ["roce-v2"]), more))["roce-v2"]
    assert one.topology.total_switches == 1 and one.ops_fte == pytest.approx(6 * (64 / 1024) ** 0.7 * 1.2 * 1.3)


def test_support_covers_switches_and_nics_unless_stated():
    ib = by_fabric(cost(spec_for(1024, ["infiniband-ndr"]), CATALOG))["infiniband-ndr"]
    capex = ib.capex_usd
    assert ib.support_covers == ["switches", "nics"]
    assert ib.support_covered_capex_usd == pytest.approx(capex["switches"] + capex["nics"])
    assert ib.opex_usd_per_year.support_usd == pytest.approx(0.15 * (capex["switches"] + capex["nics"]))
    # A contract that lists optics and cables too (economics.support_covers) charges them.
    wide = by_fabric(cost(spec_for(1024, ["infiniband-ndr"], economics={
        "support_covers": ["switches", "nics", "optics", "cables"]}), CATALOG))["infiniband-ndr"]
    assert wide.opex_usd_per_year.support_usd == pytest.approx(0.15 * ib.network_capex_usd)
    # ... and so does the catalog's share (an overlay: support_covers_optics_share 1).
    covered = CATALOG.with_values({"parameters.support_covers_optics_share.value.default": 1.0})
    half = by_fabric(cost(spec_for(1024, ["infiniband-ndr"]), covered))["infiniband-ndr"]
    assert half.support_covers == ["switches", "nics", "optics"]
    assert half.opex_usd_per_year.support_usd == pytest.approx(
        0.15 * (capex["switches"] + capex["nics"] + capex["optics"]))
