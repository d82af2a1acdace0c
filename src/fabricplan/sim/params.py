"""Numbers of ``perf_defaults`` the simulator reads (sim sits below perf): the catalog's one reader."""

from __future__ import annotations


def sim_parameter(name: str, catalog=None) -> float:
    """The number ``perf_defaults.parameters.<name>.value`` of ``catalog``
    (:meth:`fabricplan.catalog.Catalog.perf_value`; ``None``: the bundled default catalog, overlays
    apply otherwise). Unit and source sit beside it in the yaml."""
    from fabricplan.catalog.catalog import default_catalog

    return float((catalog or default_catalog()).perf_value(name))
