"""Floor-plan distances: how long each tier's links run, from rack pitch, row length and hall size.

Pure functions; every number comes from the catalog's ``floor_*`` parameters (with sources there).

Racks stand in rows of ``racks_per_row`` racks, ``rack_width_m`` each, rows ``row_pitch_m`` apart.
A block of R racks fills ``rows = ceil(R / racks_per_row)`` rows, so it is
``length = min(R, racks_per_row) x rack_width`` long and ``depth = rows x row_pitch`` deep. A switch
sits at the centre of the racks it serves and a cable runs along the row and across rows (Manhattan
routing in overhead trays), so the longest run of a block is::

    run = (length / 2 + depth / 2 + overhead) x (1 + slack)

with ``overhead`` the drops into and out of the tray. Per tier (docs/reference/topology.md §1.3):

* host links: in-rack (``in_rack_run_m``) for ToR leaf-spine; otherwise the servers one leaf serves
  (a rail-optimised scalable unit, a rail-only rail's servers (one rail leaf's with 2-3 tiers), or a
  fat-tree leaf's servers);
* leaf-spine links: a 2-tier fabric's whole hall, a 3+-tier fabric's pod;
* spine-core and core-super-core links: the whole hall, which grows with the GPU count.

The hall holds the servers only (network racks and cross aisles are inside the overhead and slack).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fabricplan.catalog import Catalog, PricePoint
from fabricplan.topology import FabricSize, plane_of

#: The link tiers of a fabric, bottom to top (the keys of :class:`TierRuns`.as_dict()).
LINK_TIERS: tuple[str, ...] = ("host", "leaf_spine", "spine_core", "core_super_core")


@dataclass(frozen=True)
class FloorPlan:
    """The catalog's floor-plan parameters at one price point (metres, racks, servers)."""

    rack_width_m: float
    row_pitch_m: float
    racks_per_row: float
    servers_per_rack: float
    in_rack_run_m: float
    run_overhead_m: float
    slack_fraction: float

    @classmethod
    def from_catalog(cls, catalog: Catalog, point: PricePoint = "default") -> FloorPlan:
        def value(name: str) -> float:
            return catalog.parameter(f"floor_{name}").value.at(point)

        return cls(rack_width_m=value("rack_width_m"), row_pitch_m=value("row_pitch_m"),
                   racks_per_row=value("racks_per_row"), servers_per_rack=value("servers_per_rack"),
                   in_rack_run_m=value("in_rack_run_m"), run_overhead_m=value("run_overhead_m"),
                   slack_fraction=value("slack_fraction"))


def racks_for(servers: float, plan: FloorPlan) -> int:
    """Racks that hold ``servers`` servers: ``ceil(servers / servers_per_rack)`` (at least 1)."""
    return max(math.ceil(servers / max(plan.servers_per_rack, 1e-9) - 1e-9), 1)


def block_run_m(racks: int, plan: FloorPlan) -> float:
    """Longest run from the centre of a block of ``racks`` racks to its farthest rack (module formula)."""
    per_row = max(int(plan.racks_per_row), 1)
    rows = math.ceil(racks / per_row)
    length = min(racks, per_row) * plan.rack_width_m
    depth = rows * plan.row_pitch_m
    return (length / 2 + depth / 2 + plan.run_overhead_m) * (1 + plan.slack_fraction)


@dataclass(frozen=True)
class TierRuns:
    """Longest run [m] of each link tier of one sized fabric (0 where the tier has no links)."""

    host_m: float
    leaf_spine_m: float
    spine_core_m: float
    core_super_core_m: float
    hall_racks: int

    def as_dict(self) -> dict[str, float]:
        return dict(zip(LINK_TIERS, (self.host_m, self.leaf_spine_m, self.spine_core_m, self.core_super_core_m),
                        strict=True))


def servers_per_leaf(size: FabricSize) -> float:
    """Servers whose NICs one leaf (or one rail-optimised scalable unit) serves."""
    if size.style in ("rail_optimized", "leaf_spine", "rail_only"):  # rail-only: a rail (leaf)'s servers
        return max(size.servers_per_leaf, 1)
    return max(size.leaf_host_ports_max / max(size.nics_per_node, 1), 1.0)  # fat tree: NIC ports fill leaves


def tier_runs(size: FabricSize, plan: FloorPlan) -> TierRuns:
    """The longest run of each tier of ``size`` on the floor plan (module docstring); a multi-plane
    fabric's runs are one plane's (the planes sit side by side over the same racks)."""
    size = plane_of(size)
    hall = racks_for(size.nodes, plan)
    if size.tiers == 0:
        return TierRuns(0.0, 0.0, 0.0, 0.0, hall)
    if size.host_links_in_rack:
        host = plan.in_rack_run_m
    else:
        host = block_run_m(min(racks_for(servers_per_leaf(size), plan), hall), plan)
    whole = block_run_m(hall, plan)
    if size.tiers >= 3 and size.leaf_switches:
        pod_servers = size.nodes * min(size.leaves_per_pod / size.leaf_switches, 1.0)
        leaf_spine = block_run_m(min(racks_for(pod_servers, plan), hall), plan)
    else:
        leaf_spine = whole
    return TierRuns(
        host_m=host,
        leaf_spine_m=leaf_spine if size.leaf_spine_links else 0.0,
        spine_core_m=whole if size.spine_core_links else 0.0,
        core_super_core_m=whole if size.core_super_core_links else 0.0,
        hall_racks=hall,
    )
