"""The cost orchestrator: topology -> BOM -> capex, power, opex and TCO for each fabric."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace

from pydantic import BaseModel, Field

from fabricplan.catalog import Catalog, PricePoint, Server
from fabricplan.catalog.inputs import Inputs, Num, divide, maximum
from fabricplan.catalog.models import OpticsBasis
from fabricplan.cost import opex
from fabricplan.cost.bom import CATEGORIES, BomLine, bill_of_materials
from fabricplan.cost.floorplan import FloorPlan, tier_runs
from fabricplan.cost.media import TierMedium, hardware_at_basis, link_media
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
    optics_basis: dict[str, OpticsBasis] = Field(
        default_factory=dict, description="Per fabric profile: the optics basis its optics and cables are priced "
                                          "at (the spec's economics.optics_basis, else the profile's costs block); "
                                          "a fabric left out prices the parts its profile lists")
    support_covers: list[str] | None = Field(
        default=None, description="Capex categories the spec says support covers (None: switches and NICs, optics "
                                  "and cables by the catalog's support_covers_*_share)")
    support_covers_optics_share: float = 0.0
    support_covers_cables_share: float = 0.0


def fabric_optics_basis(spec: ClusterSpec, catalog: Catalog) -> dict[str, OpticsBasis]:
    """Each compared fabric's optics basis: the spec's per-fabric choice, else its choice for every
    fabric, else the profile's catalog default (``costs.optics_basis``); fabrics with none are left out."""
    economics = spec.economics
    chosen: dict[str, OpticsBasis] = {}
    for choice in spec.fabric_choices():
        profile = catalog.fabric(choice.profile)
        basis = (economics.optics_basis_by_fabric.get(profile.id) or economics.optics_basis
                 or (profile.costs.optics_basis if profile.costs is not None else None))
        if basis is not None:
            chosen[profile.id] = basis
    return chosen


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
        optics_basis=fabric_optics_basis(spec, catalog),
        support_covers=None if economics.support_covers is None else list(economics.support_covers),
        support_covers_optics_share=param("support_covers_optics_share"),
        support_covers_cables_share=param("support_covers_cables_share"),
    )


class OpexPerYear(BaseModel):
    energy_usd: Num
    colocation_usd: Num
    support_usd: Num
    operations_usd: Num
    licences_usd: Num = Field(default=0.0, description="Fabric-manager licences (e.g. UFM Enterprise)")

    @property
    def total_usd(self) -> Num:
        return self.energy_usd + self.colocation_usd + self.support_usd + self.operations_usd + self.licences_usd


class ServerCost(BaseModel):
    server_id: str
    servers: int
    capex_usd: Num = Field(description="Server capex excluding NICs the fabric already counts")
    power_w: Num
    opex_usd_per_year: Num


class FabricCost(BaseModel):
    fabric: str
    fabric_name: str
    topology: FabricSize
    switch_id: str
    nic_id: str
    port_speed_gbps: int
    bom: list[BomLine]
    capex_usd: dict[str, Num] = Field(description="Network capex by category")
    network_capex_usd: Num
    power_w: dict[str, Num] = Field(description="Network IT power by category")
    network_power_w: Num
    ops_fte: Num
    support_fraction_per_year: Num = Field(
        default=0.0, description="Network support per year as a share of the capex the contract covers")
    support_covered_capex_usd: Num = Field(
        default=0.0, description="The network capex the support contract covers (its scope: support_covers)")
    support_covers: list[str] = Field(
        default_factory=list, description="Capex categories under support; a share where only part is covered")
    optics_basis: str = Field(
        default="third_party", description="Whose optics and cables are priced: vendor (the switch vendor's "
                                           "qualified parts, e.g. NVIDIA LinkX) or third_party")
    link_media: list[TierMedium] = Field(default_factory=list,
                                         description="Cable/optic class per link tier, chosen by reach")
    hall_racks: int = Field(default=0, description="Server racks of the floor plan")
    opex_usd_per_year: OpexPerYear
    network_opex_usd_per_year: Num
    horizon_years: float
    network_tco_usd: Num
    network_capex_per_gpu_usd: Num
    network_tco_per_gpu_usd: Num
    network_power_per_gpu_w: Num
    servers: ServerCost | None
    cluster_capex_usd: Num | None
    network_share_of_cluster_capex: Num | None
    cluster_tco_usd: Num | None


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


#: Economic parameters the spec may fix (``economics.<name>``) instead of the catalog: a fixed one is not drawn.
SPEC_FIXED_ECONOMICS = ("energy_usd_per_kwh", "pue", "colo_usd_per_kw_month", "support_fraction_per_year",
                        "fte_cost_usd_per_year")


def economic(spec: ClusterSpec, catalog: Catalog, inputs: Inputs, name: str, used: float) -> Num:
    """The economic parameter ``name`` at the value ``used`` (the assumptions'), drawn from its catalog
    range (``param:<name>``) unless the spec fixes it."""
    fixed = name in SPEC_FIXED_ECONOMICS and getattr(spec.economics, name) is not None
    return inputs.of_range(f"param:{name}", None if fixed else catalog.parameter(name).value, used)


def _server_cost(spec: ClusterSpec, catalog: Catalog, server: Server, assumptions: Assumptions,
                 inputs: Inputs) -> ServerCost:
    """Servers priced without the NICs their quote includes: the fabric counts its own NICs.

    The included NICs are valued at the catalog price point without the sensitivity multipliers, so
    that a NIC price swing moves the cluster's cost instead of cancelling out.
    """
    point = assumptions.price_point
    count = math.ceil(spec.cluster.gpus / server.gpus_per_server)
    unit = inputs.of_range(f"price:{server.id}", server.price_usd, server.price_usd.at(point))
    if server.included_nic is not None and server.included_nics:
        nic = catalog.nic(server.included_nic)
        unit = unit - server.included_nics * inputs.of_range(f"price:{nic.id}", nic.price_usd, nic.price_usd.at(point))
    capex = count * maximum(unit, 0.0)
    power_w = count * inputs.of_field(f"power:{server.id}", server, "power_w")
    pue = economic(spec, catalog, inputs, "pue", assumptions.pue)
    kwh = economic(spec, catalog, inputs, "energy_usd_per_kwh", assumptions.energy_usd_per_kwh)
    support = economic(spec, catalog, inputs, "support_fraction_per_year", assumptions.support_fraction_per_year)
    yearly = opex.energy_cost_usd_per_year(power_w, pue, kwh) + opex.support_cost_usd_per_year(capex, support)
    if assumptions.include_colocation:
        colo = economic(spec, catalog, inputs, "colo_usd_per_kw_month", assumptions.colo_usd_per_kw_month)
        yearly = yearly + opex.colocation_cost_usd_per_year(power_w, colo)
    return ServerCost(server_id=server.id, servers=count, capex_usd=capex, power_w=power_w,
                      opex_usd_per_year=yearly)


def cost_fabric(spec: ClusterSpec, catalog: Catalog, choice: FabricChoice,
                assumptions: Assumptions) -> FabricCost:
    """Design, price and cost one fabric for the spec."""
    return cost_design(spec, catalog, resolve(spec, catalog, choice), assumptions)


def _network_staff(spec: ClusterSpec, catalog: Catalog, design: FabricDesign, assumptions: Assumptions,
                   inputs: Inputs) -> Num:
    """Network FTE (:func:`fabricplan.cost.opex.network_fte`) at the staffing parameters of ``inputs``:
    the baseline curve x the team's maturity x the fabric's ``ops_fte_multiplier``; none without switches."""
    point = assumptions.price_point
    profile = design.hardware.profile

    def param(name: str, used: float) -> Num:
        return inputs.of_range(f"param:{name}", catalog.parameter(name).value, used)

    maturity = f"maturity_fte_multiplier_{spec.operations.maturity}"
    fabric_multiplier: Num = 1.0
    if design.size.tiers > 0:
        fabric_multiplier = profile.fte_multiplier(point)
        if profile.costs is not None:
            fabric_multiplier = inputs.of_range(f"costs:ops_fte_multiplier:{profile.id}",
                                                profile.costs.ops_fte_multiplier, fabric_multiplier)
    return opex.network_fte(spec.cluster.gpus, param("network_fte_per_1024_gpus", assumptions.network_fte_per_1024_gpus),
                            param("ops_fte_scaling_exponent", assumptions.ops_fte_scaling_exponent),
                            param("min_network_fte", assumptions.min_network_fte),
                            param(maturity, assumptions.maturity_fte_multiplier), fabric_multiplier,
                            switches=design.size.total_switches)


def support_scope(spec: ClusterSpec, catalog: Catalog, assumptions: Assumptions, inputs: Inputs,
                  capex: Mapping[str, Num]) -> tuple[Num, list[str]]:
    """The network capex a support contract covers, and its categories: switches and NICs (hardware
    and the software they run), plus the catalog's share of optics and of cables (0 by default:
    ``support_covers_*_share``); ``economics.support_covers`` lists the categories instead (not drawn)."""
    if assumptions.support_covers is not None:
        return sum((capex[c] for c in assumptions.support_covers), 0.0), list(assumptions.support_covers)
    optics = inputs.of_range("param:support_covers_optics_share",
                             catalog.parameter("support_covers_optics_share").value,
                             assumptions.support_covers_optics_share)
    cables = inputs.of_range("param:support_covers_cables_share",
                             catalog.parameter("support_covers_cables_share").value,
                             assumptions.support_covers_cables_share)
    covers = ["switches", "nics"] + [name for name, share in (("optics", assumptions.support_covers_optics_share),
                                                               ("cables", assumptions.support_covers_cables_share))
                                     if share > 0]
    return capex["switches"] + capex["nics"] + optics * capex["optics"] + cables * capex["cables"], covers


def option_licences(design: FabricDesign, inputs: Inputs, point) -> Num:
    """Yearly licences of the fabric options (SHARP, adaptive routing) the built fabric runs: each
    option's ``licence_usd_per_node_year`` per server while it is on (catalog ``options``)."""
    profile, built = design.hardware.profile, design.network.profile
    total: Num = 0.0
    for name, option in profile.options.items():
        on = built.in_network_reduction if name == "sharp" else built.routing == "adaptive"
        if on:
            total = total + design.size.nodes * inputs.of_range(
                f"options:{name}:licence_usd_per_node_year:{profile.id}", option.licence_usd_per_node_year,
                option.licence_usd_per_node_year.at(point))
    return total


def _network_opex(spec: ClusterSpec, catalog: Catalog, design: FabricDesign, assumptions: Assumptions,
                  inputs: Inputs, supported_capex: Num, network_power: Num) -> tuple[OpexPerYear, Num, Num]:
    """The network's yearly opex, its staff and its support share of the covered capex."""
    point = assumptions.price_point
    profile, size = design.hardware.profile, design.size
    costs = profile.costs
    if costs is None or assumptions.support_fraction_set_by_spec:
        support_fraction = economic(spec, catalog, inputs, "support_fraction_per_year",
                                    assumptions.support_fraction_per_year)
    else:
        support_fraction = inputs.of_range(f"costs:support_fraction_per_year:{profile.id}",
                                           costs.support_fraction_per_year, costs.support_fraction_per_year.at(point))
    licences: Num = 0.0
    if costs is not None and size.tiers > 0:
        licences = size.nodes * inputs.of_range(f"costs:licence_usd_per_node_year:{profile.id}",
                                                costs.licence_usd_per_node_year,
                                                costs.licence_usd_per_node_year.at(point))
    if size.tiers > 0:
        licences = licences + option_licences(design, inputs, point)
    fte = _network_staff(spec, catalog, design, assumptions, inputs)
    pue = economic(spec, catalog, inputs, "pue", assumptions.pue)
    kwh = economic(spec, catalog, inputs, "energy_usd_per_kwh", assumptions.energy_usd_per_kwh)
    colo = (opex.colocation_cost_usd_per_year(
                network_power, economic(spec, catalog, inputs, "colo_usd_per_kw_month", assumptions.colo_usd_per_kw_month))
            if assumptions.include_colocation else 0.0)
    yearly = OpexPerYear(
        energy_usd=opex.energy_cost_usd_per_year(network_power, pue, kwh),
        colocation_usd=colo,
        support_usd=opex.support_cost_usd_per_year(supported_capex, support_fraction),
        operations_usd=fte * economic(spec, catalog, inputs, "fte_cost_usd_per_year", assumptions.fte_cost_usd_per_year),
        licences_usd=licences,
    )
    return yearly, fte, support_fraction


def _listed_basis(catalog: Catalog, bom: list[BomLine]) -> str:
    """The basis of the optics and cables a BOM prices: vendor if any is a vendor part."""
    parts = [catalog.optic(line.item_id) for line in bom if line.category in ("optics", "cables")]
    return "vendor" if any(part.basis == "vendor" for part in parts) else "third_party"


def cost_design(spec: ClusterSpec, catalog: Catalog, design: FabricDesign, assumptions: Assumptions,
                inputs: Inputs | None = None) -> FabricCost:
    """Price one fabric design: BOM, power, opex and TCO (servers from the spec when asked).

    ``TCO = Σ q·p + H·(energy + colocation + support share·Σ covered q·p + FTE·cost + licences) [+ servers]``
    (docs/reference/costs.md §5) with q the BOM quantities and every price, power, rate and staffing
    number from ``inputs`` (:class:`fabricplan.catalog.inputs.Inputs`): at the price point (floats,
    the default) or as draws (arrays; the same formula serves the Monte Carlo). The design's
    structure (its parts, the cable or optic class chosen by reach) is fixed by the price point.
    The optics and cables are priced at the fabric's optics basis (``assumptions.optics_basis``);
    support is charged on what the contract covers (:func:`support_scope`). Network staff and
    fabric-manager licences apply only when there is a scale-out fabric to run (a single node has no
    switch: no network staff, no backend NICs).
    """
    hardware, size = design.hardware, design.size
    point = assumptions.price_point
    inputs = inputs or Inputs.point(point)
    plan = FloorPlan.from_catalog(catalog)
    if design.network.gpus_per_host:  # a sized node is a whole multi-host NVLink domain: one rack (NVL72)
        plan = replace(plan, servers_per_rack=1.0)
    runs = tier_runs(size, plan)
    basis = assumptions.optics_basis.get(hardware.profile.id)
    hardware = hardware_at_basis(hardware, catalog, basis, design.choice)
    media = link_media(size, hardware, catalog, runs, point, design.choice, basis)
    bom = bill_of_materials(size, hardware, point, assumptions.price_multipliers, media, inputs)
    capex = {c: sum((line.price_usd for line in bom if line.category == c), 0) for c in CATEGORIES}
    power = {c: sum((line.power_w for line in bom if line.category == c), 0) for c in CATEGORIES}
    network_capex = sum(capex.values())
    network_power = sum(power.values())
    supported, covers = support_scope(spec, catalog, assumptions, inputs, capex)
    yearly, fte, support_fraction = _network_opex(spec, catalog, design, assumptions, inputs, supported,
                                                  network_power)
    network_tco = network_capex + yearly.total_usd * assumptions.horizon_years
    gpus = spec.cluster.gpus
    server = _server_entry(spec, catalog)
    servers = _server_cost(spec, catalog, server, assumptions, inputs) if server else None
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
        support_covered_capex_usd=supported,
        support_covers=covers,
        optics_basis=basis or _listed_basis(catalog, bom),
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
        network_share_of_cluster_capex=None if cluster_capex is None else divide(network_capex, cluster_capex, None),
        cluster_tco_usd=(network_tco + servers.capex_usd
                         + servers.opex_usd_per_year * assumptions.horizon_years) if servers else None,
    )


def cost(spec: ClusterSpec, catalog: Catalog, *,
         price_multipliers: dict[str, float] | None = None,
         energy_multiplier: float = 1.0,
         designs: Mapping[str, tuple[ClusterSpec, FabricChoice]] | None = None) -> CostReport:
    """Cost every fabric the spec lists. The main entry point of the cost package.

    ``designs``: per fabric profile, the (spec, choice) of the design to cost instead of the spec's
    own (the design ``compare`` chose, :func:`fabricplan.plan.chosen_designs`)."""
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
