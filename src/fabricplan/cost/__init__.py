"""Bill of materials, power, operations and TCO for each fabric."""

from fabricplan.cost.bom import BomLine, bill_of_materials, count_parts
from fabricplan.cost.tco import (
    Assumptions,
    CostReport,
    FabricCost,
    cost,
    cost_design,
    cost_fabric,
    resolve_assumptions,
)

__all__ = [
    "Assumptions", "BomLine", "CostReport", "FabricCost", "bill_of_materials", "cost", "cost_design",
    "cost_fabric", "count_parts", "resolve_assumptions",
]



def _install() -> None:
    """``fabricplan.cost(...)`` is the API function :func:`fabricplan.api.cost` (see fabricplan._callable)."""
    from fabricplan._callable import make_callable

    make_callable(__name__, "cost")


_install()
