"""fabricplan: choose, size, price and check the network fabric of a GPU training cluster.

Typed API (the CLI calls the same functions)::

    import fabricplan
    spec = fabricplan.load_spec("examples/mid-128-h100.yaml")
    report = fabricplan.cost(spec)
    size = fabricplan.size_topology(spec, "infiniband-ndr")

The public names load on first use, so that ``import fabricplan`` (and every CLI command, which
imports this package first) does not pay for the pydantic models, numpy and the catalog up front.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from fabricplan.errors import CatalogError, FabricplanError, InputError

if TYPE_CHECKING:
    from fabricplan.api import cost, size_topology
    from fabricplan.catalog import Catalog, load_catalog
    from fabricplan.spec import ClusterSpec, load_spec

__version__ = "0.1.0"

__all__ = [
    "Catalog", "CatalogError", "ClusterSpec", "FabricplanError", "InputError", "cost", "load_catalog",
    "load_spec", "size_topology", "__version__",
]

# Public name -> the module that defines it (imported on first access).
_LAZY = {
    "Catalog": "fabricplan.catalog",
    "load_catalog": "fabricplan.catalog",
    "ClusterSpec": "fabricplan.spec",
    "load_spec": "fabricplan.spec",
    "size_topology": "fabricplan.api",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'fabricplan' has no attribute '{name}'")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """`fabricplan.cost` is both the API function and the name of the `fabricplan.cost` subpackage.

    Importing a subpackage binds it as an attribute of its parent; the setter below ignores that,
    so `fabricplan.cost` stays the function, as it was when the API was imported eagerly.
    """

    @property
    def cost(self) -> Any:
        from fabricplan.api import cost

        return cost

    @cost.setter
    def cost(self, value: Any) -> None:
        pass


sys.modules[__name__].__class__ = _Package
