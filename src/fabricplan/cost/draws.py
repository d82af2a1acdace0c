"""Monte Carlo draws of the catalog's ranged numbers and a fabric's TCO under them, vectorised.

Every ranged catalog number (a :class:`fabricplan.catalog.Range` with ``low``/``default``/``high``,
or a number with a ``spread``: :mod:`fabricplan.catalog.spread`) is drawn from the triangular distribution ``T(low, mode, high)`` whose mode is the value the
deterministic run used (the spec's price point): the catalog's default is the most likely value and
its low/high are the bounds its sources give (Law & Kelton, *Simulation Modeling and Analysis*,
§6.11: the triangular distribution for a quantity known by a minimum, most likely value and
maximum). A zero-width range draws its value every time, so a Monte Carlo over zero-width ranges
is the deterministic result.

Draws are keyed by what they stand for (``price:<catalog id>``, ``param:<parameter id>``, ...) and
seeded per key from ``(seed, crc32(key))``: the same part in two fabrics, or at two cluster sizes,
gets the same draws (common random numbers, so differences between fabrics are not noise), and the
draws do not depend on the order in which they are asked for.

TCO is linear in each price, so it is evaluated as counts x price draws
(:func:`tco_draws`): the BOM's quantities from the deterministic costing, each unit price scaled by
its draw / its deterministic value, and each opex term scaled by the ratios of the parameters it is
a product of (docs/reference/costs.md §5: energy = power x 8,760 h x PUE x $/kWh; colocation =
kW x rate x 12; support = fraction x capex; operations = FTE x cost). What the decomposition does
not cover (a term a later cost model adds) is kept at its deterministic value, so the draws stay
exactly on the deterministic TCO at zero width.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from fabricplan.catalog import Catalog, Range
from fabricplan.catalog.spread import field_bounds
from fabricplan.cost import opex

if TYPE_CHECKING:  # numpy loads inside the functions that draw (start-up stays fast)
    import numpy as np

    from fabricplan.cost.tco import Assumptions, FabricCost
    from fabricplan.spec import ClusterSpec

#: Economic parameters of the TCO that the spec may fix (economics.<field>) instead of the catalog.
_SPEC_FIXED = {"energy_usd_per_kwh": "energy_usd_per_kwh", "pue": "pue",
               "colo_usd_per_kw_month": "colo_usd_per_kw_month",
               "support_fraction_per_year": "support_fraction_per_year",
               "fte_cost_usd_per_year": "fte_cost_usd_per_year"}


@dataclass
class Draws:
    """``n`` seeded draws per named ranged quantity (module docstring); ``n = 0`` is not allowed."""

    n: int
    seed: int = 0
    _cache: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    ranged: dict[str, tuple[float, float, float]] = field(default_factory=dict, repr=False)

    def of(self, key: str, low: float, mode: float, high: float) -> np.ndarray:
        """Draws of ``key`` from ``T(low, mode, high)`` (the constant ``mode`` when low == high)."""
        import numpy as np

        cached = self._cache.get(key)
        if cached is not None:
            return cached
        low, high = min(low, mode), max(high, mode)
        if high <= low:
            values = np.full(self.n, float(mode))
        else:
            rng = np.random.default_rng([self.seed, zlib.crc32(key.encode())])
            values = rng.triangular(low, mode, high, self.n)
            self.ranged[key] = (low, mode, high)
        self._cache[key] = values
        return values

    def of_range(self, key: str, value: Range, point: str = "default") -> np.ndarray:
        """Draws of a catalog range around its value at ``point`` (low/default/high)."""
        return self.of(key, value.at("low"), value.at(point), value.at("high"))

    def of_field(self, key: str, block, name: str) -> np.ndarray:
        """Draws of the number ``name`` of a catalog block from its ``spread`` (:func:`field_bounds`)."""
        low, value, high = field_bounds(block, name)
        return self.of(key, low, value, high)

    def ratio(self, key: str, value: Range, point: str = "default") -> np.ndarray:
        """Draws / the deterministic value (1 where that value is 0)."""
        import numpy as np

        base = value.at(point)
        if base == 0:
            return np.ones(self.n)
        return self.of_range(key, value, point) / base


def _part(catalog: Catalog, category: str, item_id: str):
    """The catalog entry of a BOM line's item, or None."""
    lookup = {"switches": catalog.switch, "nics": catalog.nic, "optics": catalog.optic, "cables": catalog.optic}
    finder = lookup.get(category)
    if finder is not None:
        try:
            return finder(item_id)
        except Exception:  # noqa: BLE001 - not a part of that section: look everywhere below
            pass
    for section in catalog.entries:  # a line another cost model adds (licences, support): any entry with the id
        item = catalog.section(section).get(item_id)
        if isinstance(getattr(item, "price_usd", None), Range):
            return item
    return None


def _part_range(catalog: Catalog, category: str, item_id: str) -> Range | None:
    """The catalog price range of a BOM line's item, or None (its price is then held fixed)."""
    price = getattr(_part(catalog, category, item_id), "price_usd", None)
    return price if isinstance(price, Range) else None


def _power_ratio(catalog: Catalog, bom, draws: Draws) -> np.ndarray | float:
    """Network power at the drawn part powers / the deterministic network power: each BOM line's
    power scaled by its part's ``power_w`` draw / catalog value (``power:<id>``, from the part's
    ``spread``), ``Σ q·P·r / Σ q·P``; 1 without power."""
    total = sum(line.quantity * line.unit_power_w for line in bom)
    if total <= 0:
        return 1.0
    drawn = 0.0
    for line in bom:
        part = _part(catalog, line.category, line.item_id)
        watts = float(getattr(part, "power_w", 0.0) or 0.0)
        ratio = draws.of_field(f"power:{line.item_id}", part, "power_w") / watts if watts > 0 else 1.0
        drawn = drawn + line.quantity * line.unit_power_w * ratio
    return drawn / total


def _param_ratio(spec: ClusterSpec, catalog: Catalog, draws: Draws, name: str, point: str) -> np.ndarray | float:
    """Draws / deterministic value of a TCO parameter; 1 when the spec fixes it."""
    spec_field = _SPEC_FIXED.get(name)
    if spec_field and getattr(spec.economics, spec_field) is not None:
        return 1.0
    return draws.ratio(f"param:{name}", catalog.parameter(name).value, point)


def tco_draws(spec: ClusterSpec, catalog: Catalog, fabric_cost: FabricCost, assumptions: Assumptions,
              draws: Draws) -> np.ndarray:
    """TCO draws of one costed design (cluster TCO when servers are priced, else network TCO).

    ``TCO = Σ q·p + H·(E·r_pue·r_kwh·r_P + C·r_colo·r_P + s·Σ q·p + O·r_fte_cost·FTE/FTE₀·r_staff + L·r_lic) [+ servers]``
    where q are the BOM quantities, p the drawn unit prices, r_P the drawn network power over the
    deterministic one (:func:`_power_ratio`: each part's ``power_w`` from its ``spread``; servers
    likewise with the server's), E, C, O the deterministic energy,
    colocation and operations cost per year, s the drawn support fraction (the fabric's own, from its
    ``costs`` block), r_staff and r_lic the fabric's drawn staffing multiplier and licence price ratios, L its licences, FTE the network staff
    (:func:`fabricplan.cost.opex.network_fte`) at the drawn staffing parameters, H the horizon.
    """
    import numpy as np

    point = assumptions.price_point
    n = draws.n
    capex = np.zeros(n)
    for line in fabric_cost.bom:
        price_range = _part_range(catalog, line.category, line.item_id)
        unit = np.full(n, line.unit_price_usd)
        if price_range is not None and price_range.at(point) > 0:
            unit = line.unit_price_usd * draws.ratio(f"price:{line.item_id}", price_range, point)
        capex = capex + line.quantity * unit
    r_kwh = _param_ratio(spec, catalog, draws, "energy_usd_per_kwh", point)
    r_pue = _param_ratio(spec, catalog, draws, "pue", point)
    r_colo = _param_ratio(spec, catalog, draws, "colo_usd_per_kw_month", point)
    r_support = _param_ratio(spec, catalog, draws, "support_fraction_per_year", point)
    r_fte_cost = _param_ratio(spec, catalog, draws, "fte_cost_usd_per_year", point)
    r_fte = _fte_ratio(spec, catalog, draws, assumptions)
    r_net_support, r_staff, r_licence = _fabric_cost_ratios(catalog, fabric_cost, assumptions, draws, r_support)
    r_power = _power_ratio(catalog, fabric_cost.bom, draws)
    yearly = fabric_cost.opex_usd_per_year
    support = fabric_cost.support_fraction_per_year * r_net_support * capex
    network_yearly = (yearly.energy_usd * r_pue * r_kwh * r_power + yearly.colocation_usd * r_colo * r_power + support
                      + yearly.operations_usd * r_fte_cost * r_fte * r_staff + yearly.licences_usd * r_licence)
    horizon = assumptions.horizon_years
    network = capex + network_yearly * horizon
    modelled = fabric_cost.network_capex_usd + horizon * (
        yearly.energy_usd + yearly.colocation_usd
        + fabric_cost.support_fraction_per_year * fabric_cost.network_capex_usd + yearly.operations_usd
        + yearly.licences_usd)
    network = network + (fabric_cost.network_tco_usd - modelled)  # terms beyond this decomposition stay fixed
    if fabric_cost.cluster_tco_usd is None or fabric_cost.servers is None:
        return network
    return network + _server_draws(spec, catalog, fabric_cost, assumptions, draws,
                                   r_kwh * r_pue, r_colo, r_support)


def _fabric_cost_ratios(catalog: Catalog, fabric_cost: FabricCost, assumptions: Assumptions, draws: Draws,
                        global_support: np.ndarray | float) -> tuple:
    """Draws / deterministic value of the fabric's own costs block (``fabrics.<id>.costs``): its
    support share (unless the spec fixed one for every fabric: then the global parameter's ratio),
    its staffing multiplier and its licence price, keyed per fabric. A fabric without a costs block,
    or a single node (no scale-out fabric: no fabric multiplier or licence), keeps them fixed."""
    try:
        costs = catalog.fabric(fabric_cost.fabric).costs
    except Exception:  # noqa: BLE001 - not a catalog profile id: nothing fabric-specific to draw
        costs = None
    if costs is None:
        return global_support, 1.0, 1.0
    point = assumptions.price_point
    key = fabric_cost.fabric
    support = (global_support if assumptions.support_fraction_set_by_spec
               else draws.ratio(f"costs:support_fraction_per_year:{key}", costs.support_fraction_per_year, point))
    if fabric_cost.topology.tiers == 0:
        return support, 1.0, 1.0
    staff = draws.ratio(f"costs:ops_fte_multiplier:{key}", costs.ops_fte_multiplier, point)
    licence = draws.ratio(f"costs:licence_usd_per_node_year:{key}", costs.licence_usd_per_node_year, point)
    return support, staff, licence


def _fte_ratio(spec: ClusterSpec, catalog: Catalog, draws: Draws, assumptions: Assumptions) -> np.ndarray:
    """Network FTE at the drawn staffing parameters / FTE at the deterministic ones."""
    import numpy as np

    point = assumptions.price_point
    maturity = f"maturity_fte_multiplier_{spec.operations.maturity}"
    names = ("network_fte_per_1024_gpus", "ops_fte_scaling_exponent", "min_network_fte", maturity)
    drawn = [draws.of_range(f"param:{name}", catalog.parameter(name).value, point) for name in names]
    if all(np.ptp(values) == 0 for values in drawn):
        return np.ones(draws.n)
    base = opex.network_fte(spec.cluster.gpus, assumptions.network_fte_per_1024_gpus,
                            assumptions.ops_fte_scaling_exponent, assumptions.min_network_fte,
                            assumptions.maturity_fte_multiplier)
    per_1024, exponent, minimum, multiplier = drawn
    fte = np.maximum(minimum, per_1024 * (spec.cluster.gpus / 1024.0) ** exponent) * multiplier
    return fte / base if base > 0 else np.ones(draws.n)


def _server_draws(spec, catalog, fabric_cost, assumptions, draws, r_energy, r_colo, r_support) -> np.ndarray:
    """Server capex and opex over the horizon at the drawn server, included-NIC and opex prices."""
    import numpy as np

    servers = fabric_cost.servers
    point = assumptions.price_point
    server = catalog.server(servers.server_id)
    unit = draws.of_range(f"price:{server.id}", server.price_usd, point)
    if server.included_nic is not None and server.included_nics:
        nic = catalog.nic(server.included_nic)
        unit = unit - server.included_nics * draws.of_range(f"price:{nic.id}", nic.price_usd, point)
    capex = servers.servers * np.maximum(unit, 0.0)
    energy = opex.energy_cost_usd_per_year(servers.power_w, assumptions.pue, assumptions.energy_usd_per_kwh)
    colo = (opex.colocation_cost_usd_per_year(servers.power_w, assumptions.colo_usd_per_kw_month)
            if assumptions.include_colocation else 0.0)
    support = assumptions.support_fraction_per_year * r_support * capex
    r_power = draws.of_field(f"power:{server.id}", server, "power_w") / server.power_w
    yearly = energy * r_energy * r_power + colo * r_colo * r_power + support
    modelled = servers.capex_usd + assumptions.horizon_years * (
        energy + colo + assumptions.support_fraction_per_year * servers.capex_usd)
    exact = servers.capex_usd + servers.opex_usd_per_year * assumptions.horizon_years
    return capex + yearly * assumptions.horizon_years + (exact - modelled)
