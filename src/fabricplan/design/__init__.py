"""Fabric design: a fabric choice becomes hardware, a sized topology and the placement of ranks.

``resolve(spec, catalog, fabric) -> FabricDesign`` is the one place this happens; cost prices a
design, perf reads its :class:`NetworkView`, and nothing downstream sizes a fabric again.
"""

from fabricplan.design.design import (
    FabricDesign,
    NetworkView,
    bare_network,
    clear_cache,
    cluster_gpu,
    layout_of,
    resolve,
    size_design,
)
from fabricplan.design.hardware import (
    FabricHardware,
    effective_profile,
    fabric_as_built,
    fabric_at_nic_speed,
    resolve_hardware,
)
from fabricplan.design.placement import FabricTopology, NetworkPlacement, place, switches_across

__all__ = [
    "FabricDesign", "FabricHardware", "FabricTopology", "NetworkPlacement", "NetworkView", "bare_network",
    "clear_cache", "cluster_gpu", "effective_profile", "fabric_as_built", "fabric_at_nic_speed", "layout_of", "place", "resolve", "resolve_hardware",
    "size_design", "switches_across",
]



def _install() -> None:
    """``fabricplan.design(...)`` is the API function :func:`fabricplan.api.design` (see fabricplan._callable)."""
    from fabricplan._callable import make_callable

    make_callable(__name__, "design")


_install()
