"""Bill of materials, power, operations and TCO for each fabric."""

from fabricplan.cost.bom import BomLine, bill_of_materials, count_parts
from fabricplan.cost.hardware import FabricHardware, resolve_hardware
from fabricplan.cost.tco import (
    Assumptions,
    CostReport,
    FabricCost,
    cost,
    cost_fabric,
    resolve_assumptions,
    size_for,
)

__all__ = [
    "Assumptions", "BomLine", "CostReport", "FabricCost", "FabricHardware", "bill_of_materials",
    "cost", "cost_fabric", "count_parts", "resolve_assumptions", "resolve_hardware", "size_for",
]
