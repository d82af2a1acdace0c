"""Numbers of ``perf_defaults`` the simulator reads (sim sits below perf, so it reads the catalog itself)."""

from __future__ import annotations

from fabricplan.errors import CatalogError


def sim_parameter(name: str, catalog=None) -> float:
    """The number ``perf_defaults.parameters.<name>.value`` of ``catalog`` (``None``: the bundled
    default catalog, overlays apply otherwise). Unit and source sit beside it in the yaml."""
    from fabricplan.catalog.catalog import default_catalog

    parameters = (catalog or default_catalog()).perf_defaults.parameters
    entry = parameters.get(name)
    if entry is None:
        raise CatalogError(f"no perf parameter '{name}'", location="perf_defaults.parameters")
    return float(entry.value)
