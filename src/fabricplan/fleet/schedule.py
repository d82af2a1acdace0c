"""Where the scheduler puts each arriving job, and when.

The cluster's nodes sit in **leaf groups** (the nodes whose NICs share leaves: a rail-optimised
scalable unit, a ToR rack) and, with three tiers, in **pods** (leaf groups under the same spines);
:func:`layout_of` reads both from the design's cabled network. Jobs start in arrival order
(first come, first served: a job waits until its nodes are free and no earlier job waits), and a
**policy** chooses their nodes from the free ones:

* ``packed`` (topology-aware): the fullest leaf group that still holds the job (best fit); a job
  larger than any group's free nodes takes the pod that holds it with the fewest free nodes, its
  emptiest-first leaf groups; ranks follow leaf groups, so a ring crosses as few leaves as it can
  (the placement topology-aware schedulers aim at: Slurm's topology/tree plugin packs jobs onto
  the fewest leaf switches, slurm.conf ``TopologyPlugin``);
* ``first_fit``: the lowest-numbered free nodes (a scheduler that ignores the topology but keeps
  node order);
* ``random``: free nodes drawn at random, ranks in draw order (no topology and no order);
* a callable ``policy(free, n_nodes, layout, rng) -> node ids`` (the user's own).

Fragmentation is not assumed: it emerges from the arrivals, the durations and the policy.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from fabricplan.errors import InputError
from fabricplan.sim.network import HOST

POLICIES = ("packed", "first_fit", "random")


@dataclass(frozen=True)
class Layout:
    """``leaf_of_node`` and ``pod_of_node`` (group indices, 0-based) of every node."""

    leaf_of_node: np.ndarray
    pod_of_node: np.ndarray

    @property
    def nodes(self) -> int:
        return len(self.leaf_of_node)

    def leaves_spanned(self, nodes) -> int:
        """Leaf groups a set of nodes touches."""
        return int(len(np.unique(self.leaf_of_node[np.asarray(nodes, dtype=np.int64)])))

    def fewest_leaves(self, n_nodes: int) -> int:
        """The fewest leaf groups ``n_nodes`` nodes can span (full groups first)."""
        sizes = np.sort(np.bincount(self.leaf_of_node))[::-1]
        return int(np.searchsorted(np.cumsum(sizes), n_nodes) + 1)


def layout_of(network, nics_per_node: int) -> Layout:
    """Leaf group and pod of every node of a design's network (NIC 0's leaf; the lowest spine above it)."""
    src, dst = network.link_src, network.link_dst
    host = network.node_kind[src] == HOST
    leaf_of_host = np.empty(network.n_hosts, dtype=np.int64)
    leaf_of_host[src[host]] = dst[host]
    nodes = network.n_hosts // max(nics_per_node, 1)
    leaf_switch = leaf_of_host[np.arange(nodes) * nics_per_node]
    up = (network.node_tier[src] == 1) & (network.node_tier[dst] == 2)
    lowest_spine = np.full(len(network.node_kind), -1, dtype=np.int64)
    if up.any():
        order = np.argsort(-dst[up])  # keep the lowest spine id per leaf
        lowest_spine[src[up][order]] = dst[up][order]
    _, leaf = np.unique(leaf_switch, return_inverse=True)
    _, pod = np.unique(lowest_spine[leaf_switch], return_inverse=True)
    if network.node_tier.max() < 3:
        pod = np.zeros(nodes, dtype=np.int64)
    return Layout(leaf_of_node=leaf.astype(np.int64), pod_of_node=pod.astype(np.int64))


def _packed(free: np.ndarray, n: int, layout: Layout, rng) -> np.ndarray | None:
    leaf = layout.leaf_of_node
    free_per_leaf = np.bincount(leaf[free], minlength=leaf.max() + 1)
    fits = np.flatnonzero(free_per_leaf >= n)
    if len(fits):
        best = fits[np.argmin(free_per_leaf[fits])]
        return np.flatnonzero(free & (leaf == best))[:n]
    pod = layout.pod_of_node
    free_per_pod = np.bincount(pod[free], minlength=pod.max() + 1)
    pods = np.flatnonzero(free_per_pod >= n)
    pool = free & (pod == pods[np.argmin(free_per_pod[pods])]) if len(pods) else free
    counts = np.bincount(leaf[pool], minlength=leaf.max() + 1)
    chosen: list[np.ndarray] = []
    taken = 0
    for group in np.argsort(-counts, kind="stable"):
        if taken >= n or counts[group] == 0:
            break
        members = np.flatnonzero(pool & (leaf == group))[: n - taken]
        chosen.append(members)
        taken += len(members)
    return np.concatenate(chosen) if taken >= n else None


def _first_fit(free: np.ndarray, n: int, layout: Layout, rng) -> np.ndarray | None:
    nodes = np.flatnonzero(free)
    return nodes[:n] if len(nodes) >= n else None


def _random(free: np.ndarray, n: int, layout: Layout, rng) -> np.ndarray | None:
    nodes = np.flatnonzero(free)
    return rng.permutation(nodes)[:n] if len(nodes) >= n else None


_BUILT_IN: dict[str, Callable] = {"packed": _packed, "first_fit": _first_fit, "random": _random}


def policy_function(policy: str | Callable) -> tuple[str, Callable]:
    """(name, function) of a policy: a built-in name or a callable. InputError for an unknown name."""
    if callable(policy):
        return getattr(policy, "__name__", "custom"), policy
    if policy not in _BUILT_IN:
        raise InputError(f"unknown scheduler policy '{policy}'; known: {', '.join(POLICIES)} or a callable",
                         location="--policy")
    return policy, _BUILT_IN[policy]


def _checked(nodes, free: np.ndarray, n: int, name: str) -> np.ndarray:
    nodes = np.asarray(nodes, dtype=np.int64).ravel()
    if len(nodes) != n or len(np.unique(nodes)) != n or nodes.min() < 0 or nodes.max() >= len(free) \
            or not free[nodes].all():
        raise InputError(f"scheduler policy '{name}' returned {len(nodes)} nodes for a job of {n}; it must return "
                         f"{n} distinct free node ids (or None to wait)", location="policy")
    return nodes


@dataclass(frozen=True)
class Timeline:
    """Per instance (arrival order): start and end [hours] (``inf`` when it never started within the
    run) and its node ids in rank order (empty when it never started)."""

    start_hours: np.ndarray
    end_hours: np.ndarray
    nodes: tuple[np.ndarray, ...]

    def running(self, t_hours: float) -> np.ndarray:
        """Indices of the instances running at ``t_hours``."""
        return np.flatnonzero((self.start_hours <= t_hours) & (self.end_hours > t_hours))


def schedule(arrivals, kinds, layout: Layout, policy: str | Callable = "packed", *, end_hours: float,
             seed: int = 0) -> Timeline:
    """First-come-first-served placement of ``arrivals`` until ``end_hours`` (module docstring)."""
    name, choose = policy_function(policy)
    rng = np.random.default_rng(seed)
    count = len(arrivals)
    start = np.full(count, np.inf)
    end = np.full(count, np.inf)
    placed: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * count
    free = np.ones(layout.nodes, dtype=bool)
    ends: list[tuple[float, int]] = []
    queue: list[int] = []
    head = 0

    def start_waiting(now: float) -> None:
        while queue:
            job = queue[0]
            n = kinds[int(arrivals.kind[job])].nodes
            if n > layout.nodes:
                raise InputError(f"job '{kinds[int(arrivals.kind[job])].name}' needs {n} nodes; the cluster has "
                                 f"{layout.nodes}", location="jobs")
            nodes = choose(free.copy(), n, layout, rng) if free.sum() >= n else None
            if nodes is None:
                return
            nodes = _checked(nodes, free, n, name)
            queue.pop(0)
            free[nodes] = False
            placed[job] = nodes
            start[job] = now
            end[job] = now + float(arrivals.duration_hours[job])
            heapq.heappush(ends, (end[job], job))

    while True:
        next_arrival = float(arrivals.arrive_hours[head]) if head < count else np.inf
        next_end = ends[0][0] if ends else np.inf
        now = min(next_arrival, next_end)
        if now >= end_hours or not np.isfinite(now):
            break
        if next_end <= next_arrival:
            _, job = heapq.heappop(ends)
            free[placed[job]] = True
        else:
            queue.append(head)
            head += 1
        start_waiting(now)
    return Timeline(start_hours=start, end_hours=end, nodes=tuple(placed))
