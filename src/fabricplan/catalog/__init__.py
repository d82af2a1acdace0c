"""Bundled hardware, fabric and price data with sources; user files layer over it."""

from fabricplan.catalog.catalog import (
    ALL_SECTIONS,
    DOCUMENTS,
    SECTIONS,
    SET_BY_PATH,
    Catalog,
    default_catalog,
    load_catalog,
    require_catalog,
)
from fabricplan.catalog.documents import NcclTuner, OpsDefaults, PerfDefaults, PerfParameter, TunerVersion
from fabricplan.catalog.models import (
    FabricCosts,
    FabricProfile,
    Gpu,
    LinkMedium,
    ModelPreset,
    Nic,
    Optic,
    Parameter,
    PricePoint,
    Range,
    Server,
    Switch,
)

__all__ = [
    "ALL_SECTIONS", "DOCUMENTS", "SECTIONS", "SET_BY_PATH", "Catalog", "default_catalog", "load_catalog", "require_catalog",
    "FabricCosts", "FabricProfile", "Gpu", "LinkMedium", "ModelPreset", "NcclTuner", "Nic", "OpsDefaults", "Optic", "Parameter",
    "PerfDefaults", "PerfParameter", "PricePoint", "Range", "Server", "Switch", "TunerVersion",
]
