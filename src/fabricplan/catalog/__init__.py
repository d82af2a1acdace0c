"""Bundled hardware, fabric and price data with sources; user files layer over it."""

from fabricplan.catalog.catalog import SECTIONS, Catalog, load_catalog
from fabricplan.catalog.models import (
    FabricProfile,
    Gpu,
    Nic,
    Optic,
    Parameter,
    PricePoint,
    Range,
    Server,
    Switch,
)

__all__ = [
    "SECTIONS", "Catalog", "load_catalog", "FabricProfile", "Gpu", "Nic", "Optic", "Parameter",
    "PricePoint", "Range", "Server", "Switch",
]
