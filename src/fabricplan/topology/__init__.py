"""Topology sizing engine: switch, link and port counts for 0–4 tier GPU fabrics (pure functions).

>>> f = size_fabric(nodes=256, nics_per_node=8, radix=64, style="rail_optimized")
>>> (f.tiers, f.leaf_switches, f.spine_switches, f.host_links)
(2, 64, 32, 2048)
"""

from fabricplan.topology.layout import STYLES, Style, plane_style
from fabricplan.topology.ports import leaf_ports, max_endpoints
from fabricplan.topology.sizing import FabricSize, plane_of, size_fabric, tier_capacities, tiers_needed

__all__ = ["STYLES", "FabricSize", "Style", "leaf_ports", "max_endpoints", "plane_of", "plane_style", "size_fabric",
           "tier_capacities", "tiers_needed"]
