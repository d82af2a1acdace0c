"""The numbers of ``perf_defaults`` (catalog/data/perf_defaults.yaml) as the performance models read them.

Each accessor takes the catalog it reads (overlays apply); ``None`` means the bundled default
catalog. Units and sources sit beside each value in the data file.
"""

from __future__ import annotations

from fabricplan.catalog.catalog import default_catalog
from fabricplan.errors import CatalogError


def perf_value(name: str, catalog=None) -> float | dict | str:
    """The ``value`` of a ``perf_defaults`` parameter as stored (number, table or id).

    ``catalog`` is a :class:`~fabricplan.catalog.Catalog` (overlays apply); ``None`` means the
    bundled default catalog. Unit and source sit alongside in ``perf_defaults.yaml``.
    """
    parameters = (catalog or default_catalog()).perf_defaults.parameters
    entry = parameters.get(name)
    if entry is None:
        raise CatalogError(f"no perf parameter '{name}'; known: {', '.join(parameters)}",
                           location="perf_defaults.parameters")
    return entry.value


def perf_parameter(name: str, catalog=None) -> float:
    """A number from ``perf_defaults`` (``catalog=None``: the bundled default catalog)."""
    return float(perf_value(name, catalog))  # type: ignore[arg-type]


def perf_table(name: str, catalog=None) -> dict:
    """A mapping-valued ``perf_defaults`` entry, as a new dict (``catalog=None``: bundled default)."""
    return dict(perf_value(name, catalog))  # type: ignore[arg-type]
