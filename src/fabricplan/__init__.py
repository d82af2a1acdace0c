"""fabricplan: choose, size, price and check the network fabric of a GPU training cluster.

Typed API (the CLI calls the same functions; docs/api.md)::

    import fabricplan as fp
    spec = fp.load_spec("examples/mid-128-h100-existing-ethernet.yaml")
    report = fp.compare(spec)                       # CompareReport: ranking, reasons, rules
    costs = fp.cost(spec)                           # CostReport: BOM, capex, opex, TCO
    design = fp.design(spec, "infiniband-ndr")      # FabricDesign: hardware, sized topology
    steps = fp.step_time(spec)                      # StepResult per job and fabric
    ar = fp.collective_time("all_reduce", "8GiB", gpus=16)

Names load on first use, so ``import fabricplan`` stays fast.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# name -> module that defines it ("cost", "design" and "fleet" are packages that are also callable).
_EXPORTS = {
    "load_spec": "fabricplan.api", "ClusterSpec": "fabricplan.spec", "FabricChoice": "fabricplan.spec",
    "JobSpec": "fabricplan.spec",
    "Catalog": "fabricplan.catalog", "load_catalog": "fabricplan.catalog",
    "FabricplanError": "fabricplan.errors", "InputError": "fabricplan.errors", "CatalogError": "fabricplan.errors",
    "compare": "fabricplan.api", "collective_time": "fabricplan.api", "step_time": "fabricplan.api",
    "lint": "fabricplan.api", "headroom": "fabricplan.api", "size_topology": "fabricplan.api",
    "calibrate": "fabricplan.api", "check_measured": "fabricplan.api",
    "expected_rtt_us": "fabricplan.api",
    "expected_under_load": "fabricplan.api", "health": "fabricplan.api",
    "Plan": "fabricplan.plan", "register_efficiency_model": "fabricplan.perf.efficiency",
}
_PACKAGES = ("cost", "design", "fleet")

__all__ = sorted([*_EXPORTS, *_PACKAGES, "__version__"])


def __getattr__(name: str) -> Any:
    if name in _PACKAGES:
        return importlib.import_module(f"fabricplan.{name}")
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'fabricplan' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
