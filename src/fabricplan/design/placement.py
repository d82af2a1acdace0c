"""Where a communicator's nodes sit in a sized fabric: the input of the routing and hop models.

A placement is read off the whole cluster's :class:`~fabricplan.topology.FabricSize` (sized once
per design); it never sizes a fabric itself. For a communicator of ``n`` nodes packed in rank order:

* ``tiers``: switch tiers its traffic crosses. The tier count the sizing rules would choose for
  ``n`` nodes alone (:func:`fabricplan.topology.tiers_needed`, capacity arithmetic only), and at
  least 2 once ``n`` exceeds one leaf group of the cluster (it fits one switch on paper, but its
  nodes hang off several of the cluster's leaves).
* ``nodes_per_leaf``: nodes whose NICs of one rail share a leaf (rail-optimised: a scalable unit;
  rail-only: the servers of one rail leaf, so with 2-3 tiers nodes under different rail leaves cross
  their rail's spines (and cores), never another rail; ToR ``leaf_spine``: a rack; ``fat_tree``:
  host ports of a leaf // NICs per node). A node that is a multi-host NVLink domain under ToRs spans
  several ToRs (each host has its own ToR ports); it counts as one node per leaf group, with all its
  NICs under it (``nics_per_leaf``), so traffic between domains crosses the spines.
* ``nodes_per_pod``: nodes under one pod's spines of a 3+ tier fabric (0 otherwise).
* ``oversubscription``: the realised down:up ratio per tier with uplinks
  (``FabricSize.oversubscription_effective``), ``leaf_uplinks`` and ``nics_per_leaf`` (1 on rails,
  all of a node's NICs under a ToR); ``aligned``: topology-aware scheduling packs the
  communicator onto whole leaf groups in rank order.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricplan.topology import FabricSize, tiers_needed


@dataclass(frozen=True)
class FabricTopology:
    """The spec's ``topology`` section and scheduling, as the sizing and placement read them.

    ``style``, ``oversubscription`` (down:up per tier: leaf, spine), ``reserved_leaf_ports`` and
    ``tiers`` (None = auto) size the fabric for ``cluster_nodes`` nodes (None = just the
    communicator's nodes); ``topology_aware_scheduling`` says whether jobs are packed onto whole
    leaf groups in rank order (True) or land on arbitrary leaves (False). The defaults are a
    non-blocking rail-optimised fabric with aligned placement.
    """

    style: str = "rail_optimized"
    oversubscription: tuple[float, ...] = (1.0, 1.0)
    reserved_leaf_ports: int = 0
    tiers: int | None = None
    cluster_nodes: int | None = None
    topology_aware_scheduling: bool = True
    planes: int = 1  # multi_plane: independent planes (topology.planes); 1 for the other styles

    def __post_init__(self) -> None:  # one form for the ratios everywhere downstream
        object.__setattr__(self, "oversubscription", tuple(float(r) for r in self.oversubscription))


@dataclass(frozen=True)
class NetworkPlacement:
    """Where a communicator's nodes sit in the fabric (for ECMP, oversubscription and hop counts).

    See the module docstring for each field. The defaults describe one node (no network).
    """

    tiers: int = 1
    nodes_per_leaf: int = 1
    leaf_uplinks: int = 1
    nodes_per_pod: int = 0
    oversubscription: tuple[float, ...] = ()
    nics_per_leaf: int = 1
    aligned: bool = True

    @property
    def switches_on_path(self) -> int:
        """Switches on the longest shortest path of a folded Clos the communicator spans: up to its
        top tier and down again, ``2 x tiers - 1`` (1, 3, 5, 7 for 1-4 tiers; at least 1)."""
        return switches_across(self.tiers)


def switches_across(tiers: int) -> int:
    """Switches on the longest shortest path through ``tiers`` tiers of a folded Clos: ``2t - 1``
    (1, 3, 5, 7); a fabric-less single node is quoted as one switch hop."""
    return max(2 * tiers - 1, 1)


def nodes_per_leaf(size: FabricSize, nics_per_node: int) -> int:
    """Whole nodes under one leaf group: the style's servers per leaf (rail SU, ToR rack), else
    (``fat_tree``, NIC ports filled in order) host ports // NICs per node; at least 1."""
    if size.servers_per_leaf:
        return size.servers_per_leaf
    return max(size.leaf_host_ports_max // nics_per_node, 1)


def nodes_per_pod(size: FabricSize, nics_per_node: int, per_leaf: int) -> int:
    """Nodes under one pod's spines of a 3+ tier fabric (0 otherwise): a rail pod holds
    ``leaves_per_pod / rails`` scalable units (rail-only: rail leaves), a ToR/fat-tree pod ``leaves_per_pod`` leaves."""
    if size.tiers < 3 or not size.leaves_per_pod:
        return 0
    rails = size.style in ("rail_optimized", "rail_only", "multi_plane")  # a pod's leaves count every rail's
    leaf_groups = size.leaves_per_pod // nics_per_node if rails else size.leaves_per_pod
    return max(leaf_groups, 1) * per_leaf


def place(n_nodes: int, whole: FabricSize, *, aligned: bool = True) -> NetworkPlacement:
    """Placement of ``n_nodes`` nodes (packed in rank order) in the sized fabric ``whole``.

    Reads the leaf group, uplinks, realised oversubscription and pod size of ``whole`` and the
    tiers the communicator spans (module docstring). InputError (from the sizing rules) when the
    design cannot hold ``n_nodes``.
    """
    if n_nodes <= 1:
        return NetworkPlacement(aligned=aligned)
    nics = whole.nics_per_node
    tiers = tiers_needed(nodes=n_nodes, nics_per_node=nics, radix=whole.radix, style=whole.style,
                         oversubscription=whole.oversubscription, reserved_leaf_ports=whole.reserved_leaf_ports,
                         nics_per_host=whole.nics_per_host or None)
    nics_per_leaf = 1 if whole.style in ("rail_optimized", "rail_only", "multi_plane") else nics
    per_leaf = nodes_per_leaf(whole, nics) if whole.tiers >= 2 else n_nodes
    if tiers == 1 and n_nodes > per_leaf:  # fits one switch alone, but spans the cluster's leaves
        tiers = 2
    if tiers == 1:
        return NetworkPlacement(1, n_nodes, 1, nics_per_leaf=nics_per_leaf, aligned=aligned)
    return NetworkPlacement(tiers, per_leaf, max(whole.leaf_uplinks, 1),
                            nodes_per_pod=nodes_per_pod(whole, nics, per_leaf),
                            oversubscription=tuple(float(r) for r in whole.oversubscription_effective),
                            nics_per_leaf=nics_per_leaf, aligned=aligned)
