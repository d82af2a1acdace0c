"""fabricplan: choose, size, price and check the network fabric of a GPU training cluster.

Typed API (the CLI calls the same functions)::

    import fabricplan
    spec = fabricplan.load_spec("examples/mid-128-h100.yaml")
    report = fabricplan.cost(spec)
    size = fabricplan.size_topology(spec, "infiniband-ndr")
"""

from fabricplan.api import cost, size_topology
from fabricplan.catalog import Catalog, load_catalog
from fabricplan.errors import CatalogError, FabricplanError, InputError
from fabricplan.spec import ClusterSpec, load_spec

__version__ = "0.1.0"

__all__ = [
    "Catalog", "CatalogError", "ClusterSpec", "FabricplanError", "InputError", "cost", "load_catalog",
    "load_spec", "size_topology", "__version__",
]
