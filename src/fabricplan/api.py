"""The typed Python API for notebooks and scripts: the same functions the CLI calls."""

from __future__ import annotations

from pathlib import Path

from fabricplan.catalog import Catalog, load_catalog
from fabricplan.cost import CostReport
from fabricplan.cost import cost as _cost
from fabricplan.design import resolve
from fabricplan.spec import ClusterSpec, FabricChoice, check_references, load_spec
from fabricplan.topology import FabricSize


def _as_spec(spec: ClusterSpec | str | Path, catalog: Catalog) -> ClusterSpec:
    if isinstance(spec, ClusterSpec):
        check_references(spec, catalog)
        return spec
    return load_spec(spec, catalog)


def size_topology(spec: ClusterSpec | str | Path, fabric: str | FabricChoice,
                  catalog: Catalog | None = None) -> FabricSize:
    """Size the spec's topology for one fabric profile (e.g. ``"infiniband-ndr"``)."""
    catalog = catalog or load_catalog()
    spec = _as_spec(spec, catalog)
    return resolve(spec, catalog, fabric).size


def cost(spec: ClusterSpec | str | Path, catalog: Catalog | None = None, **kwargs: object) -> CostReport:
    """Bill of materials, power, opex and TCO for every fabric in the spec."""
    catalog = catalog or load_catalog()
    return _cost(_as_spec(spec, catalog), catalog, **kwargs)  # type: ignore[arg-type]
