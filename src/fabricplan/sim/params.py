"""Numbers of ``perf_defaults`` the simulator reads (sim sits below perf): the catalog's one reader."""

from __future__ import annotations


def sim_parameter(name: str, catalog) -> float:
    """The number ``perf_defaults.parameters.<name>.value`` of ``catalog``
    (:meth:`fabricplan.catalog.Catalog.perf_value`, overlays apply; ``None`` is a TypeError, never the
    bundled catalog). Unit and source sit beside it in the yaml."""
    from fabricplan.catalog.catalog import require_catalog

    return float(require_catalog(catalog, "sim_parameter", name).perf_value(name))
