"""Operating-cost models: energy, colocation, support and operations staff. Pure functions.

TCO structure follows the shared reference docs/reference/costs.md §5:
``TCO = capex + sum over years of [IT power x 8,760 h x PUE x $/kWh + colo $/kW-month x 12 x kW
+ FTE x cost + support fraction x capex]`` (no discounting).
"""

from __future__ import annotations

from fabricplan.catalog.inputs import maximum

HOURS_PER_YEAR = 8760.0  # 365 days x 24 h (a definition)


def energy_cost_usd_per_year(it_power_w: float, pue: float, energy_usd_per_kwh: float) -> float:
    """Facility energy cost of an IT load running all year.

    ``it_power_w / 1000 [kW] x 8,760 [h] x PUE x price [USD/kWh]``.

    References: docs/reference/costs.md §5 TCO formula; PUE and price defaults in the catalog (aiinframap 2026,
    SemiAnalysis 2024).
    """
    return it_power_w / 1000.0 * HOURS_PER_YEAR * pue * energy_usd_per_kwh


def colocation_cost_usd_per_year(it_power_w: float, colo_usd_per_kw_month: float) -> float:
    """Wholesale colocation rent, charged per kW of IT load: ``kW x rate x 12``.

    References: 515engine "What does 1 MW of data center space cost" (rate excludes power).
    """
    return it_power_w / 1000.0 * colo_usd_per_kw_month * 12.0


def support_cost_usd_per_year(hardware_capex_usd: float, support_fraction_per_year: float) -> float:
    """Vendor support and maintenance as a fraction of the hardware capex the contract covers, per year."""
    return hardware_capex_usd * support_fraction_per_year


def network_fte(gpus: int, fte_per_1024_gpus: float, scaling_exponent: float, min_fte: float,
                maturity_multiplier: float = 1.0, fabric_multiplier: float = 1.0, switches: int | None = None) -> float:
    """Network operations staff for a cluster, in full-time equivalents (floats or arrays of draws).

    ``max(min_fte, f1024 x (gpus / 1024) ** b) x maturity multiplier x fabric multiplier``, and 0 for a
    fabric with no switches (``switches == 0``: one node, its GPUs on NVLink): no fabric, no fabric staff.

    f1024 = 6 network FTE per 1,024 GPUs comes from Hedgehog's staffing breakdown (4 NetOps + 2
    network automation); the exponent b < 1 (sub-linear growth) and the minimum are assumptions,
    and the maturity and fabric multipliers default to 1.0 because no public source quantifies
    them (docs/reference/costs.md §2.4). All are catalog parameters the user can override.
    """
    if switches == 0:
        return 0.0
    base = fte_per_1024_gpus * (gpus / 1024.0) ** scaling_exponent
    return maximum(min_fte, base) * maturity_multiplier * fabric_multiplier
