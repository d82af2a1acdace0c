"""Flow-level and fluid network simulation over a fabric's real graph (docs/simulator.md).

``network`` holds the contract every simulator model reads (:class:`Network`, :func:`fat_tree`,
:func:`equal_cost_paths`, :class:`Flows`); numpy is the only heavy dependency and loads with it.
"""

from fabricplan.sim.network import Flows, Network, equal_cost_paths, fat_tree

__all__ = ["Flows", "Network", "equal_cost_paths", "fat_tree"]
