"""The cost orchestrator: topology -> BOM -> capex, power, opex and TCO for each fabric."""

from __future__ import annotations

from collections.abc import Mapping

import math
from dataclasses import replace

from pydantic import BaseModel, Field

from fabricplan.catalog import Catalog, PricePoint, Server, load_catalog
from fabricplan.cost import opex
from fabricplan.cost.bom import CATEGORIES, BomLine, bill_of_materials
from fabricplan.cost.floorplan import FloorPlan, tier_runs
from fabricplan.cost.media import TierMedium, link_media
from fabricplan.design import FabricDesign, resolve
from fabricplan.spec import ClusterSpec, FabricChoice, check_references
from fabricplan.spec.load import located
from fabricplan.topology import FabricSize


class Assumptions(BaseModel):
    """Every economic number one costing run used, after spec overrides of catalog defaults."""

    price_point: PricePoint = "default"
    price_multipliers: dict[str, float] = Field(
        default_factory=dict, description="Per-category price scale: switches, nics, optics, cables")
    energy_usd_per_kwh: float
    pue: float
    colo_usd_per_kw_month: float
    include_colocation: bool
    support_fraction_per_year: float = Field(
        description="Support share of capex per year: servers, and fabrics without a costs block")
    support_fraction_set_by_spec: bool = Field(
        default=False, description="The spec set support_fraction_per_year: it then applies to every fabric too")
    fte_cost_usd_per_year: float
    network_fte_per_1024_gpus: float
    ops_fte_scaling_exponent: float
    min_network_fte: float
    maturity_fte_multiplier: float
    horizon_years: float


def resolve_assumptions(spec: ClusterSpec, catalog: Catalog,
                        price_multipliers: dict[str, float] | None = None,
                        energy_multiplier: float = 1.0) -> Assumptions:
    """Take each number from the spec if it sets one, else from the catalog at the price point."""
    economics = spec.economics
    point = economics.price_point

    def param(name: str) -> float:
        return catalog.parameter(name).value.at(point)

    def choose(value: float | None, name: str) -> float:
        return param(name) if value is None else value

    return Assumptions(
        price_point=point,
        price_multipliers=dict(price_multipliers or {}),
        energy_usd_per_kwh=choose(economics.energy_usd_per_kwh, "energy_usd_per_kwh") * energy_multiplier,
        pue=choose(economics.pue, "pue"),
        colo_usd_per_kw_month=choose(economics.colo_usd_per_kw_month, "colo_usd_per_kw_month"),
        include_colocation=economics.include_colocation,
        support_fraction_per_year=choose(economics.support_fraction_per_year, "support_fraction_per_year"),
        support_fraction_set_by_spec=economics.support_fraction_per_year is not None,
        fte_cost_usd_per_year=choose(economics.fte_cost_usd_per_year, "fte_cost_usd_per_year"),
        network_fte_per_1024_gpus=param("network_fte_per_1024_gpus"),
        ops_fte_scaling_exponent=param("ops_fte_scaling_exponent"),
        min_network_fte=param("min_network_fte"),
        maturity_fte_multiplier=param(f"maturity_fte_multiplier_{spec.operations.maturity}"),
        horizon_years=economics.horizon_years,
    )


class OpexPerYear(BaseModel):
    energy_usd: float
    colocation_usd: float
    support_usd: float
    operations_usd: float
    licences_usd: float = Field(default=0.0, description="Fabric-manager licences (e.g. UFM Enterprise)")

    @property
    def total_usd(self) -> float:
        return self.energy_usd + self.colocation_usd + self.support_usd + self.operations_usd + self.licences_usd


class ServerCost(BaseModel):
    server_id: str
    servers: int
    capex_usd: float = Field(description="Server capex excluding NICs the fabric already counts")
    power_w: float
    opex_usd_per_year: float


class FabricCost(BaseModel):
    fabric: str
    fabric_name: str
    topology: FabricSize
    switch_id: str
    nic_id: str
    port_speed_gbps: int
    bom: list[BomLine]
    capex_usd: dict[str, float] = Field(description="Network capex by category")
    network_capex_usd: float
    power_w: dict[str, float] = Field(description="Network IT power by category")
    network_power_w: float
    ops_fte: float
    support_fraction_per_year: float = Field(default=0.0, description="Network support share of capex per year")
    link_media: list[TierMedium] = Field(default_factory=list,
                                         description="Cable/optic class per link tier, chosen by reach")
    hall_racks: int = Field(default=0, description="Server racks of the floor plan")
    opex_usd_per_year: OpexPerYear
    network_opex_usd_per_year: float
    horizon_years: float
    network_tco_usd: float
    network_capex_per_gpu_usd: float
    network_tco_per_gpu_usd: float
    network_power_per_gpu_w: float
    servers: ServerCost | None
    cluster_capex_usd: float | None
    network_share_of_cluster_capex: float | None
    cluster_tco_usd: float | None


class CostReport(BaseModel):
    spec_name: str
    gpus: int
    nodes: int
    assumptions: Assumptions
    fabrics: list[FabricCost]


def _server_entry(spec: ClusterSpec, catalog: Catalog) -> Server | None:
    if not spec.cluster.include_servers:
        return None
    if spec.cluster.server is not None:
        return catalog.server(spec.cluster.server, field="cluster.server")
    if isinstance(spec.cluster.gpu, str):
        return catalog.server_for_gpu(spec.cluster.gpu)
    return None


def _server_cost(spec: ClusterSpec, catalog: Catalog, server: Server, assumptions: Assumptions) -> ServerCost:
    """Servers priced without the NICs their quote includes: the fabric counts its own NICs.

    The included NICs are valued at the catalog price point without the sensitivity multipliers, so
    that a NIC price swing moves the cluster's cost instead of cancelling out.
    """
    count = math.ceil(spec.cluster.gpus / server.gpus_per_server)
    unit = server.price_usd.at(assumptions.price_point)
    if server.included_nic is not None and server.included_nics:
        unit -= server.included_nics * catalog.nic(server.included_nic).price_usd.at(assumptions.price_point)
    capex = count * max(unit, 0.0)
    power_w = count * server.power_w
    yearly = (opex.energy_cost_usd_per_year(power_w, assumptions.pue, assumptions.energy_usd_per_kwh)
              + opex.support_cost_usd_per_year(capex, assumptions.support_fraction_per_year))
    if assumptions.include_colocation:
        yearly += opex.colocation_cost_usd_per_year(power_w, assumptions.colo_usd_per_kw_month)
    return ServerCost(server_id=server.id, servers=count, capex_usd=capex, power_w=power_w,
                      opex_usd_per_year=yearly)


def cost_fabric(spec: ClusterSpec, catalog: Catalog, choice: FabricChoice,
                assumptions: Assumptions) -> FabricCost:
    """Design, price and cost one fabric for the spec."""
    return cost_design(spec, catalog, resolve(spec, catalog, choice), assumptions)


def cost_design(spec: ClusterSpec, catalog: Catalog, design: FabricDesign, assumptions: Assumptions) -> FabricCost:
    """Price one fabric design: BOM, power, opex and TCO (servers from the spec when asked).

    The fabric's staffing multiplier and fabric-manager licences apply only when there is a
    scale-out fabric to run (a single node has no switch: every fabric gets the same staff).
    """
    hardware, size = design.hardware, design.size
    has_fabric = size.tiers > 0
    point = assumptions.price_point
    plan = FloorPlan.from_catalog(catalog)
    if design.network.gpus_per_host:  # a sized node is a whole multi-host NVLink domain: one rack (NVL72)
        plan = replace(plan, servers_per_rack=1.0)
    runs = tier_runs(size, plan)
    media = link_media(size, hardware, catalog, runs, point, design.choice)
    bom = bill_of_materials(size, hardware, point, assumptions.price_multipliers, media)
    capex = {c: sum(line.price_usd for line in bom if line.category == c) for c in CATEGORIES}
    power = {c: sum(line.power_w for line in bom if line.category == c) for c in CATEGORIES}
    network_capex = sum(capex.values())
    network_power = sum(power.values())
    fte = opex.network_fte(spec.cluster.gpus, assumptions.network_fte_per_1024_gpus,
                           assumptions.ops_fte_scaling_exponent, assumptions.min_network_fte,
                           assumptions.maturity_fte_multiplier,
                           hardware.profile.fte_multiplier(point) if has_fabric else 1.0)
    costs = hardware.profile.costs
    support_fraction = (assumptions.support_fraction_per_year
                        if costs is None or assumptions.support_fraction_set_by_spec
                        else costs.support_fraction_per_year.at(point))
    licences = costs.licence_usd_per_node_year.at(point) * size.nodes if costs is not None and has_fabric else 0.0
    yearly = OpexPerYear(
        energy_usd=opex.energy_cost_usd_per_year(network_power, assumptions.pue,
                                                 assumptions.energy_usd_per_kwh),
        colocation_usd=(opex.colocation_cost_usd_per_year(network_power, assumptions.colo_usd_per_kw_month)
                        if assumptions.include_colocation else 0.0),
        support_usd=opex.support_cost_usd_per_year(network_capex, support_fraction),
        operations_usd=fte * assumptions.fte_cost_usd_per_year,
        licences_usd=licences,
    )
    network_tco = network_capex + yearly.total_usd * assumptions.horizon_years
    gpus = spec.cluster.gpus
    server = _server_entry(spec, catalog)
    servers = _server_cost(spec, catalog, server, assumptions) if server else None
    cluster_capex = servers.capex_usd + network_capex if servers else None
    return FabricCost(
        fabric=hardware.profile.id,
        fabric_name=hardware.profile.name,
        topology=size,
        switch_id=hardware.switch.id,
        nic_id=hardware.nic.id,
        port_speed_gbps=hardware.port_speed_gbps,
        bom=bom,
        capex_usd=capex,
        network_capex_usd=network_capex,
        power_w=power,
        network_power_w=network_power,
        ops_fte=fte,
        support_fraction_per_year=support_fraction,
        link_media=media.chosen,
        hall_racks=runs.hall_racks,
        opex_usd_per_year=yearly,
        network_opex_usd_per_year=yearly.total_usd,
        horizon_years=assumptions.horizon_years,
        network_tco_usd=network_tco,
        network_capex_per_gpu_usd=network_capex / gpus,
        network_tco_per_gpu_usd=network_tco / gpus,
        network_power_per_gpu_w=network_power / gpus,
        servers=servers,
        cluster_capex_usd=cluster_capex,
        network_share_of_cluster_capex=network_capex / cluster_capex if cluster_capex else None,
        cluster_tco_usd=(network_tco + servers.capex_usd
                         + servers.opex_usd_per_year * assumptions.horizon_years) if servers else None,
    )


def cost(spec: ClusterSpec, catalog: Catalog | None = None, *,
         price_multipliers: dict[str, float] | None = None,
         energy_multiplier: float = 1.0,
         designs: Mapping[str, tuple[ClusterSpec, FabricChoice]] | None = None) -> CostReport:
    """Cost every fabric the spec lists. The main entry point of the cost package.

    ``designs``: per fabric profile, the (spec, choice) of the design to cost instead of the spec's
    own (the design ``compare`` chose, :func:`fabricplan.plan.chosen_designs`)."""
    catalog = catalog or load_catalog()
    designs = designs or {}
    with located(spec):  # errors found by the models name the spec's file
        check_references(spec, catalog)
        assumptions = resolve_assumptions(spec, catalog, price_multipliers, energy_multiplier)
        fabrics = []
        for choice in spec.fabric_choices():
            design_spec, design_choice = designs.get(choice.profile, (spec, choice))
            fabrics.append(cost_fabric(design_spec, catalog, design_choice, assumptions))
    return CostReport(spec_name=spec.name, gpus=spec.cluster.gpus, nodes=spec.cluster.nodes,
                      assumptions=assumptions, fabrics=fabrics)
