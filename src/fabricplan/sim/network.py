"""The simulator's network contract: a directed-link graph, equal-cost up-down paths and flows.

Every simulator model (flow-level routing and max-min rates, the fluid congestion dynamics) reads
the same three things, all numpy arrays so that models stay vectorised:

* :class:`Network`: nodes (hosts ``0 .. n_hosts-1`` first, then switches) and directed links
  ``link_src[l] -> link_dst[l]`` with ``capacity_gbps``, ``latency_us`` (propagation) and
  ``buffer_bytes`` (the egress buffer of the port that sends on ``l``). Every cable is two links.
* :func:`equal_cost_paths`: the shortest up-down (valley-free) paths between two hosts of a folded
  Clos, each an array of link ids in order: up from the source to the lowest tier where the two
  hosts share an ancestor, then down (Al-Fares et al., "A Scalable, Commodity Data Center Network
  Architecture", SIGCOMM 2008, section 3; Leiserson, IEEE Trans. Comput. 34(10), 1985).
* :class:`Flows`: per flow ``src``, ``dst``, ``size_bytes``, ``start_us`` and its path as CSR
  (``path_links[path_ptr[i]:path_ptr[i+1]]`` are flow ``i``'s link ids, in order).

:func:`fat_tree` builds the generic k-ary fat tree of the scenario conventions (docs/simulator.md): host
``h`` sits on leaf ``h // (k/2)``; 2 tiers = ``k`` leaves of ``k/2`` hosts under ``k/2`` spines
(``k^2/2`` hosts); 3 tiers = ``k`` pods of ``k/2`` leaves and ``k/2`` aggregation switches under
``(k/2)^2`` cores (``k^3/4`` hosts, Al-Fares et al. section 3.1).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fabricplan.errors import InputError

HOST, SWITCH = 0, 1
TIER_HOST, TIER_LEAF, TIER_SPINE, TIER_CORE = 0, 1, 2, 3

#: Program limit (not a default): a generic fat tree above this many hosts is refused.
MAX_FAT_TREE_HOSTS = 1 << 20
#: Program limit: switch-to-switch links of a generic fat tree (the whole switch fabric is built
#: whatever --hosts attaches): 4 x 2^20, up to a 2-tier k=2,896 or a 3-tier k=202 tree.
MAX_FAT_TREE_SWITCH_LINKS = 1 << 22


@dataclass(frozen=True, eq=False)
class Network:
    """A directed-link network (module docstring). Arrays are read-only; ``n_hosts`` hosts first.

    ``node_kind[n]`` is 0 for a host, 1 for a switch; ``node_tier[n]`` 0 host, 1 leaf, 2 spine
    (aggregation), 3 core. Link ``l`` goes ``link_src[l] -> link_dst[l]``.
    """

    link_src: np.ndarray
    link_dst: np.ndarray
    capacity_gbps: np.ndarray
    latency_us: np.ndarray
    buffer_bytes: np.ndarray
    node_kind: np.ndarray
    node_tier: np.ndarray
    n_hosts: int
    _keys: np.ndarray = field(init=False, repr=False)
    _order: np.ndarray = field(init=False, repr=False)
    _cache: dict = field(init=False, repr=False, default_factory=dict)

    def __post_init__(self) -> None:
        n_links = len(self.link_src)
        arrays = {"link_src": (self.link_src, np.int64), "link_dst": (self.link_dst, np.int64),
                  "capacity_gbps": (self.capacity_gbps, np.float64), "latency_us": (self.latency_us, np.float64),
                  "buffer_bytes": (self.buffer_bytes, np.float64)}
        for name, (value, dtype) in arrays.items():
            array = np.array(value, dtype=dtype)
            if array.shape != (n_links,):
                raise ValueError(f"Network.{name} must have one entry per link ({n_links}), got {array.shape}")
            array.setflags(write=False)
            object.__setattr__(self, name, array)
        for name in ("node_kind", "node_tier"):
            array = np.array(getattr(self, name), dtype=np.int64)
            array.setflags(write=False)
            object.__setattr__(self, name, array)
        if self.node_kind.shape != self.node_tier.shape:
            raise ValueError("Network.node_kind and node_tier must have one entry per node")
        if n_links and (self.link_src.min() < 0 or max(self.link_src.max(), self.link_dst.max()) >= self.n_nodes):
            raise ValueError("Network link endpoints must be node ids 0..n_nodes-1")
        keys = self.link_src * self.n_nodes + self.link_dst
        order = np.argsort(keys, kind="stable")
        object.__setattr__(self, "_keys", keys[order])
        object.__setattr__(self, "_order", order)

    @property
    def n_nodes(self) -> int:
        return len(self.node_kind)

    @property
    def n_links(self) -> int:
        return len(self.link_src)

    def link_ids(self, u, v) -> np.ndarray:
        """Link ids of ``u[i] -> v[i]`` (arrays or scalars); -1 where there is no such link; the
        first of parallel cables."""
        u = np.asarray(u, dtype=np.int64)
        v = np.asarray(v, dtype=np.int64)
        keys = u * self.n_nodes + v
        pos = np.searchsorted(self._keys, keys)
        pos_clipped = np.minimum(pos, max(self.n_links - 1, 0))
        found = (pos < self.n_links) & (self._keys[pos_clipped] == keys) if self.n_links else np.zeros_like(keys, bool)
        return np.where(found, self._order[pos_clipped] if self.n_links else -1, -1)

    def link_id(self, u: int, v: int) -> int:
        """The id of the link ``u -> v``; KeyError if there is none."""
        link = int(self.link_ids(u, v))
        if link < 0:
            raise KeyError(f"no link {u} -> {v}")
        return link

    def reverse_links(self) -> np.ndarray:
        """For every link ``u -> v`` the id of ``v -> u`` (-1 where the cable is one-way); the i-th
        of parallel cables ``u -> v`` pairs with the i-th ``v -> u``."""
        if not self.n_links:
            return np.zeros(0, dtype=np.int64)
        first = np.searchsorted(self._keys, self._keys)  # first sorted position of each key
        rank = np.empty(self.n_links, dtype=np.int64)
        rank[self._order] = np.arange(self.n_links) - first  # occurrence of each link among parallels
        back = self.link_dst * self.n_nodes + self.link_src
        start = np.searchsorted(self._keys, back)
        pos = np.minimum(start + rank, self.n_links - 1)
        found = self._keys[pos] == back
        return np.where(found, self._order[pos], -1)

    def leaf_of(self, hosts) -> np.ndarray:
        """The (first) leaf each host's uplink reaches."""
        hosts = np.asarray(hosts, dtype=np.int64)
        up = _up_table(self)
        return np.array([up[int(h)][0][0] if up[int(h)] else -1 for h in np.atleast_1d(hosts)]).reshape(hosts.shape)


def _catalog_value(name: str, catalog) -> float:
    from fabricplan.sim.params import sim_parameter

    return sim_parameter(name, catalog)


def fat_tree(k: int, tiers: int = 2, link_gbps: float | None = None, link_latency_us: float | None = None,
             buffer_bytes: float | None = None, hosts: int | None = None, *, catalog) -> Network:
    """A k-ary fat tree of 2 or 3 tiers (module docstring), every link ``link_gbps``.

    ``hosts`` attaches only hosts ``0 .. hosts-1`` (filling leaves in order) to the full switch
    fabric. ``None`` defaults come from ``perf_defaults`` in ``catalog`` (``sim_link_gbps``,
    ``sim_link_latency_us``, ``sim_switch_buffer_bytes_per_port``). Node ids: hosts, then leaves,
    then spines (aggregation), then cores. InputError for an odd ``k``, other tiers or too many hosts.
    """
    if not isinstance(k, (int, np.integer)) or k < 2 or k % 2:
        raise InputError(f"fat-tree radix k must be an even integer >= 2, got {k!r}", location="--k")
    if tiers not in (2, 3):
        raise InputError(f"fat-tree tiers must be 2 or 3, got {tiers!r}", location="--tiers")
    link_gbps = _catalog_value("sim_link_gbps", catalog) if link_gbps is None else float(link_gbps)
    link_latency_us = _catalog_value("sim_link_latency_us", catalog) if link_latency_us is None else float(link_latency_us)
    buffer_bytes = (_catalog_value("sim_switch_buffer_bytes_per_port", catalog) if buffer_bytes is None
                    else float(buffer_bytes))
    if link_gbps <= 0:
        raise InputError(f"the link rate must be > 0, got {link_gbps:g} Gb/s", location="--link")
    if link_latency_us < 0:
        raise InputError(f"the link latency must be >= 0, got {link_latency_us:g} us", location="--link-latency-us")
    if buffer_bytes <= 0:
        raise InputError(f"the switch buffer must be > 0, got {buffer_bytes:g} bytes", location="buffer_bytes")
    half = k // 2
    if tiers == 2:
        n_leaves, n_spines, n_cores = k, half, 0
    else:
        n_leaves, n_spines, n_cores = k * half, k * half, half * half
    capacity = n_leaves * half
    n_hosts = capacity if hosts is None else int(hosts)
    if hosts is None and capacity > MAX_FAT_TREE_HOSTS:  # the radix asked for too big a tree
        raise InputError(f"a {tiers}-tier k={k} fat tree has {capacity:,} hosts, more than the simulator's "
                         f"{MAX_FAT_TREE_HOSTS:,}; lower --k or give --hosts", location="--k")
    switch_links = n_leaves * half * (1 if tiers == 2 else 2)
    if switch_links > MAX_FAT_TREE_SWITCH_LINKS:
        raise InputError(f"a {tiers}-tier k={k} fat tree has {switch_links:,} switch-to-switch links, more than the "
                         f"simulator's {MAX_FAT_TREE_SWITCH_LINKS:,}; lower --k", location="--k")
    if not 1 <= n_hosts <= min(capacity, MAX_FAT_TREE_HOSTS):
        raise InputError(f"a {tiers}-tier k={k} fat tree holds 1..{capacity} hosts, got {n_hosts}",
                         location="--hosts")
    leaf0 = n_hosts
    spine0 = leaf0 + n_leaves
    core0 = spine0 + n_spines
    h = np.arange(n_hosts)
    pairs = [(h, leaf0 + h // half)]
    leaves = np.arange(n_leaves)
    if tiers == 2:
        # every leaf to every spine
        pairs.append((leaf0 + np.repeat(leaves, half), spine0 + np.tile(np.arange(half), n_leaves)))
    else:
        # leaf j of pod p to every aggregation switch of pod p; aggregation switch i of every pod to
        # cores i*half .. i*half+half-1 (Al-Fares et al. section 3.1)
        pod = np.repeat(leaves // half, half)
        agg = pod * half + np.tile(np.arange(half), n_leaves)
        pairs.append((leaf0 + np.repeat(leaves, half), spine0 + agg))
        aggs = np.arange(n_spines)
        core = (aggs % half)[:, None] * half + np.arange(half)[None, :]
        pairs.append((spine0 + np.repeat(aggs, half), core0 + core.ravel()))
    up_src = np.concatenate([p[0] for p in pairs])
    up_dst = np.concatenate([p[1] for p in pairs])
    src = np.concatenate([up_src, up_dst])
    dst = np.concatenate([up_dst, up_src])
    n_links = len(src)
    n_nodes = core0 + n_cores
    kind = np.full(n_nodes, SWITCH)
    kind[:n_hosts] = HOST
    tier = np.zeros(n_nodes, dtype=np.int64)
    tier[leaf0:spine0] = TIER_LEAF
    tier[spine0:core0] = TIER_SPINE
    tier[core0:] = TIER_CORE
    return Network(link_src=src, link_dst=dst, capacity_gbps=np.full(n_links, link_gbps),
                   latency_us=np.full(n_links, link_latency_us), buffer_bytes=np.full(n_links, buffer_bytes),
                   node_kind=kind, node_tier=tier, n_hosts=n_hosts)


# ---------------------------------------------------------------- equal-cost paths

def _cache(network: Network) -> dict:
    return network._cache


def _up_table(network: Network) -> list[list[tuple[int, int]]]:
    """Per node, its (upper neighbour, link id) pairs (links to a higher tier), cached on the network."""
    cache = _cache(network)
    if "up" not in cache:
        up: list[list[tuple[int, int]]] = [[] for _ in range(network.n_nodes)]
        tier = network.node_tier
        rising = np.flatnonzero(tier[network.link_dst] > tier[network.link_src])
        for link in rising[np.lexsort((network.link_dst[rising], network.link_src[rising]))]:
            up[int(network.link_src[link])].append((int(network.link_dst[link]), int(link)))
        cache["up"] = up
    return cache["up"]


def _up_chains(network: Network, node: int) -> dict[int, list[tuple[int, ...]]]:
    """Every upward chain from ``node``: top node -> list of link-id tuples (the empty chain at node),
    memoised per network."""
    memo = _cache(network).setdefault("chains", {})
    if node not in memo:
        result: dict[int, list[tuple[int, ...]]] = {node: [()]}
        for parent, link in _up_table(network)[node]:
            for top, links in _up_chains(network, parent).items():
                result.setdefault(top, []).extend((link,) + chain for chain in links)
        memo[node] = result
    return memo[node]


def equal_cost_paths(network: Network, src_host: int, dst_host: int) -> list[np.ndarray]:
    """The shortest up-down paths ``src_host -> dst_host``, each an int64 array of link ids in order.

    Up from the source to the lowest tier where an ancestor of both hosts exists, then down the
    reverse of the destination's upward chains; one path per (up chain, down chain) meeting at each
    such top switch, in a deterministic order. A host to itself: one empty path. Empty list if the
    hosts share no ancestor. (In a k-ary fat tree: 1 path under one leaf, ``k/2`` across leaves of
    a pod or a 2-tier tree, ``(k/2)^2`` across pods.)
    """
    for host in (src_host, dst_host):
        if not 0 <= host < network.n_hosts:
            raise InputError(f"host {host} is not in the network (0..{network.n_hosts - 1})", location="hosts")
    if src_host == dst_host:
        return [np.zeros(0, dtype=np.int64)]
    up_src = _up_chains(network, int(src_host))
    up_dst = _up_chains(network, int(dst_host))
    common = set(up_src) & set(up_dst)
    if not common:
        return []
    tier = network.node_tier
    top_tier = min(int(tier[c]) for c in common)
    cache = _cache(network)
    if "reverse" not in cache:
        cache["reverse"] = network.reverse_links()
    reverse = cache["reverse"]
    paths = []
    for top in sorted(c for c in common if tier[c] == top_tier):
        for up in up_src[top]:
            for down in up_dst[top]:
                paths.append(np.concatenate([np.asarray(up, dtype=np.int64),
                                             reverse[np.asarray(down[::-1], dtype=np.int64)]]))
    return paths


# ---------------------------------------------------------------- flows

@dataclass(frozen=True, eq=False)
class Flows:
    """Flows over a :class:`Network`: per flow ``src``, ``dst`` (host ids), ``size_bytes``,
    ``start_us``; its links in order as CSR (``path_links[path_ptr[i]:path_ptr[i+1]]``)."""

    src: np.ndarray
    dst: np.ndarray
    size_bytes: np.ndarray
    start_us: np.ndarray
    path_ptr: np.ndarray
    path_links: np.ndarray

    def __post_init__(self) -> None:
        n = len(self.src)
        for name, dtype, length in (("src", np.int64, n), ("dst", np.int64, n), ("size_bytes", np.float64, n),
                                    ("start_us", np.float64, n), ("path_ptr", np.int64, n + 1),
                                    ("path_links", np.int64, None)):
            array = np.array(getattr(self, name), dtype=dtype)
            if array.ndim != 1 or (length is not None and len(array) != length):
                raise ValueError(f"Flows.{name} must be 1-D with {length} entries, got shape {array.shape}")
            array.setflags(write=False)
            object.__setattr__(self, name, array)
        if self.path_ptr[0] != 0 or self.path_ptr[-1] != len(self.path_links) or np.any(np.diff(self.path_ptr) < 0):
            raise ValueError("Flows.path_ptr must start at 0, not decrease and end at len(path_links)")

    @classmethod
    def from_paths(cls, src, dst, size_bytes, paths, start_us=None) -> Flows:
        """Flows from per-flow link-id arrays ``paths``; ``size_bytes`` a scalar or one per flow,
        ``start_us`` (default 0: all flows start at t = 0, the scenario convention)."""
        src = np.asarray(src, dtype=np.int64)
        n = len(src)
        if len(paths) != n:
            raise ValueError(f"one path per flow: {n} flows, {len(paths)} paths")
        lengths = np.fromiter((len(p) for p in paths), dtype=np.int64, count=n)
        ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lengths, out=ptr[1:])
        links = np.concatenate([np.asarray(p, dtype=np.int64) for p in paths]) if n else np.zeros(0, np.int64)
        return cls(src=src, dst=np.asarray(dst, dtype=np.int64),
                   size_bytes=np.broadcast_to(np.asarray(size_bytes, dtype=np.float64), (n,)),
                   start_us=np.zeros(n) if start_us is None else np.broadcast_to(np.asarray(start_us, float), (n,)),
                   path_ptr=ptr, path_links=links)

    @property
    def n_flows(self) -> int:
        return len(self.src)

    def path(self, i: int) -> np.ndarray:
        """Flow ``i``'s link ids, in order."""
        return self.path_links[self.path_ptr[i]:self.path_ptr[i + 1]]

    def flow_of_entry(self) -> np.ndarray:
        """For each entry of ``path_links``, the flow it belongs to (for vectorised link sums:
        ``np.bincount(path_links, weights=rate[flow_of_entry()])`` is the load per link)."""
        return np.repeat(np.arange(self.n_flows), np.diff(self.path_ptr))
