"""What-if scenarios: factors applied on top of the spec and catalog before the chain runs."""

from __future__ import annotations

from dataclasses import dataclass, replace

from fabricplan.catalog import Catalog
from fabricplan.catalog.models import OPTICS_BASES
from fabricplan.cost import Assumptions, resolve_assumptions
from fabricplan.cost.bom import CATEGORIES
from fabricplan.errors import InputError
from fabricplan.spec import ClusterSpec


@dataclass(frozen=True)
class Levers:
    """What-if adjustments applied on top of the spec and catalog (sensitivity analysis)."""

    efficiency_multiplier: float = 1.0  # scales compute speed (step_time compute_efficiency_multiplier)
    bandwidth_multiplier: float = 1.0   # scales the fabric's per-NIC bandwidth (RDMA ceiling or socket model)


@dataclass(frozen=True)
class Scenario:
    """What-if adjustments: category price multipliers, energy price multiplier, efficiency; and
    fabric-specific ones (fabric id -> multiplier) so a factor can move one fabric against another:
    its network hardware prices (all categories), its per-NIC bandwidth, its operations staff, and
    its optics basis (fabric id -> ``vendor`` | ``third_party``: whose optics and cables it is priced with)."""

    price_multipliers: tuple[tuple[str, float], ...] = ()
    energy_multiplier: float = 1.0
    levers: Levers = Levers()
    fabric_price_multipliers: tuple[tuple[str, float], ...] = ()
    fabric_bandwidth_multipliers: tuple[tuple[str, float], ...] = ()
    fabric_staff_multipliers: tuple[tuple[str, float], ...] = ()
    fabric_optics_basis: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        for fabric, basis in self.fabric_optics_basis:
            if basis not in OPTICS_BASES:
                raise InputError(f"optics basis of '{fabric}' must be one of {', '.join(OPTICS_BASES)}, got '{basis}'",
                                 location=f"scenario.fabric_optics_basis.{fabric}")

    def assumptions(self, spec: ClusterSpec, catalog: Catalog) -> Assumptions:
        """The economic assumptions every fabric shares under this scenario."""
        return resolve_assumptions(spec, catalog, dict(self.price_multipliers), self.energy_multiplier)

    def fabric_case(self, spec: ClusterSpec, catalog: Catalog, fabric: str,
                    assumptions: Assumptions) -> tuple[Assumptions, Levers]:
        """The assumptions and levers of one fabric under the scenario's fabric-specific factors."""
        levers = self.levers
        price = dict(self.fabric_price_multipliers).get(fabric)
        if price is not None:
            base = dict(self.price_multipliers)
            assumptions = resolve_assumptions(spec, catalog, {c: base.get(c, 1.0) * price for c in CATEGORIES},
                                              self.energy_multiplier)
        staff = dict(self.fabric_staff_multipliers).get(fabric)
        if staff is not None:
            assumptions = assumptions.model_copy(update={
                "maturity_fte_multiplier": assumptions.maturity_fte_multiplier * staff})
        basis = dict(self.fabric_optics_basis).get(fabric)
        if basis is not None:
            assumptions = assumptions.model_copy(update={"optics_basis": {**assumptions.optics_basis, fabric: basis}})
        bandwidth = dict(self.fabric_bandwidth_multipliers).get(fabric)
        if bandwidth is not None:
            levers = replace(levers, bandwidth_multiplier=levers.bandwidth_multiplier * bandwidth)
        return assumptions, levers


def optics_bases(spec: ClusterSpec, catalog: Catalog) -> dict[str, str]:
    """Each compared fabric's optics basis as the spec and catalog set it (``vendor`` or
    ``third_party``; :func:`fabricplan.cost.tco.fabric_optics_basis`), for what-ifs that flip it."""
    from fabricplan.cost.tco import fabric_optics_basis

    return dict(fabric_optics_basis(spec, catalog))
