"""Routing of connections onto equal-cost paths: ECMP hashing, adaptive routing, packet spraying.

A *connection* (one NCCL connection, one transfer of a scenario) goes ``src -> dst`` between hosts.
Routing turns connections into the weighted link usage :mod:`fabricplan.sim.maxmin` reads: entry
``(flow, link, weight)`` says that a share ``weight`` of the connection's bytes crosses ``link``.
Every mode chooses among the same equal-cost up-down paths (:func:`fabricplan.sim.network.equal_cost_paths`):

* ``ecmp``: the connection opens ``qps`` queue pairs (``NCCL_IB_QPS_PER_CONNECTION``, default 1 in
  the NCCL environment-variable documentation; ``perf_defaults.nccl_ib_qps_per_connection``) and
  splits its data evenly over them; each QP is hashed onto one of the ``P`` equal-cost paths and
  keeps it (hash-threshold next-hop selection, RFC 2992; the 5-tuple hash of distinct QPs is
  modelled as a uniform draw from a seeded generator). Weight ``1/qps`` per QP.
* ``adaptive`` with ``granularity="flowlet"``: each QP (a flowlet: a burst re-routed as a whole)
  goes, in a seeded random order, onto the path whose busiest link is least loaded once it is
  added: greedy least-loaded path (CONGA, Alizadeh et al., SIGCOMM 2014, section 3; flowlets as in
  Kandula et al., "Dynamic load balancing without packet reordering", CCR 2007).
* ``adaptive`` with ``granularity="packet"`` (default; InfiniBand adaptive routing and Spectrum-X
  choose the egress port per packet by its queue): a connection's packets go where queues are
  shortest, which in the fluid limit moves traffic until every path a connection uses has the
  same busiest-link load (a Wardrop equilibrium: Wardrop, Proc. ICE 1(3), 1952). Modelled from
  the even split by multiplicative-weights steps: each path's share shrinks by
  ``exp(-rate x (its busiest-link utilisation - the best path's))`` and is renormalised
  (Arora, Hazan & Kale, Theory of Computing 8, 2012).
* ``spray``: packets go round-robin or at random over all ``P`` paths regardless of load: an even
  split, weight ``1/P`` each (random packet spraying, Dixit et al., INFOCOM 2013).

Per-packet modes (``adaptive`` per packet, ``spray``) choose a packet's port at each switch on the
way up from what that switch sees (its own queues, or nothing); below the top of the path the port
is fixed by the destination. So the downlinks get the superposition of choices made upstream
without knowledge of them: balanced on average (the fluid split above), but with packet-scale
fluctuations that queue at a busy downlink (:func:`downlink_backlog_packets`; the flow-level
simulator adds that wait to a flow's completion). ECMP and flowlets pin a flow to one path: no such
per-packet fluctuation.

Paths between two leaves are computed once per network and shared by the hosts beneath them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fabricplan.errors import InputError
from fabricplan.sim.network import Network, _up_chains, _up_table, equal_cost_paths

ROUTINGS = ("ecmp", "adaptive", "spray")
GRANULARITIES = ("packet", "flowlet")

#: Numerical settings of the per-packet adaptive model (not physical defaults): at most this many
#: multiplicative-weights steps at this rate, stopping once paths in use differ by under the tolerance.
ADAPTIVE_STEPS = 30
ADAPTIVE_RATE = 40.0
ADAPTIVE_TOLERANCE = 1e-6
#: Program limit: padded path-table entries (connections x paths x hops) held at once.
MAX_TABLE_ENTRIES = 50_000_000
#: Program limit: equal-cost paths kept per pair of leaves. Above it (e.g. (k/2)^2 core paths
#: between pods of a large 3-tier fabric) a uniform random subset of this size, drawn per leaf
#: pair from a generator seeded by the pair, stands for the set: an ECMP draw from it is still a
#: uniform draw over all paths, and different pairs use different subsets, so core links share
#: the load evenly on average (spraying over the subset is even only on average at the top tier).
MAX_PATHS_PER_PAIR = 128


@dataclass(frozen=True, eq=False)
class Routed:
    """Weighted link usage of ``n_flows`` connections (module docstring) and how many equal-cost
    paths each connection had (``n_paths``)."""

    n_flows: int
    entry_flow: np.ndarray
    entry_link: np.ndarray
    entry_weight: np.ndarray
    n_paths: np.ndarray

    def link_load(self, rate: np.ndarray, n_links: int) -> np.ndarray:
        """Traffic on each link for per-connection rates ``rate``."""
        return np.bincount(self.entry_link, weights=self.entry_weight * rate[self.entry_flow], minlength=n_links)


def _leaf_paths(network: Network, a: int, b: int) -> np.ndarray:
    """``P x hops`` link ids of the up-down paths between switches ``a`` and ``b`` (cached)."""
    cache = network._cache.setdefault("leaf_paths", {})
    table = cache.get((a, b))
    if table is None:
        if a == b:
            table = np.zeros((1, 0), dtype=np.int64)
        else:
            up_a, up_b = _up_chains(network, a), _up_chains(network, b)
            common = set(up_a) & set(up_b)
            if "reverse" not in network._cache:
                network._cache["reverse"] = network.reverse_links()
            reverse = network._cache["reverse"]
            rows: list[list[int]] = []
            if common:
                shared = np.fromiter(common, dtype=np.int64, count=len(common))
                levels = network.node_tier[shared]
                tops = np.sort(shared[levels == levels.min()]).tolist()  # the lowest tier both reach
                sizes = np.array([len(up_a[c]) * len(up_b[c]) for c in tops], dtype=np.int64)
                total = int(sizes.sum())
                if total > MAX_PATHS_PER_PAIR:  # index the (top, up, down) combinations without listing them
                    picked = np.sort(np.random.default_rng((a, b)).choice(total, MAX_PATHS_PER_PAIR, replace=False))
                else:
                    picked = np.arange(total)
                offsets = np.concatenate([[0], np.cumsum(sizes)])
                which = np.searchsorted(offsets, picked, side="right") - 1
                if total == len(tops) and len(picked) == total:  # one chain each way per top (fat trees)
                    up = np.array([up_a[c][0] for c in tops], dtype=np.int64).reshape(total, -1)
                    down = reverse[np.array([up_b[c][0] for c in tops], dtype=np.int64).reshape(total, -1)[:, ::-1]]
                    cache[(a, b)] = np.concatenate([up, down], axis=1)
                    return cache[(a, b)]
                for index, t in zip(picked.tolist(), which.tolist()):
                    c = tops[t]
                    up_index, down_index = divmod(index - int(offsets[t]), len(up_b[c]))
                    up, down = up_a[c][up_index], up_b[c][down_index]
                    rows.append(list(up) + [int(reverse[link]) for link in down[::-1]])
            table = np.array(rows, dtype=np.int64).reshape(len(rows), -1)
        cache[(a, b)] = table
    return table


def _host_tables(network: Network) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per host its uplink and leaf (-1 for multi-homed hosts), and the reverse of every link (cached)."""
    if "host_up" not in network._cache:
        up = _up_table(network)
        network._cache["host_up"] = np.array([up[h][0][1] if len(up[h]) == 1 else -1
                                              for h in range(network.n_hosts)], dtype=np.int64)
        network._cache["host_leaf"] = np.array([up[h][0][0] if len(up[h]) == 1 else -1
                                                for h in range(network.n_hosts)], dtype=np.int64)
        network._cache["reverse"] = network.reverse_links()
    return network._cache["host_up"], network._cache["host_leaf"], network._cache["reverse"]


def path_tables(network: Network, src: np.ndarray, dst: np.ndarray):
    """Equal-cost paths of connections ``src[i] -> dst[i]``, shared by connections between the same leaves.

    Returns ``(simple, pair, padded, count)``: ``simple[i]`` when both hosts have one uplink (their
    host links are then left out of the table and are the same on every path); ``pair[i]`` the
    row of ``padded`` (``U x Pmax x H`` link ids, padding ``network.n_links``, a dummy link) with
    connection ``i``'s paths; ``count[u]`` the number of real paths of row ``u``.
    """
    dummy = network.n_links
    host_up, leaf, _ = _host_tables(network)
    single = host_up >= 0
    simple = single[src] & single[dst] & (src != dst)
    keys = np.stack([np.where(simple, leaf[src], src), np.where(simple, leaf[dst], dst), simple], axis=1)
    unique, pair = np.unique(keys, axis=0, return_inverse=True)
    pair = pair.ravel()
    tables: list[np.ndarray] = []
    for a, b, is_simple in unique:
        if is_simple:
            tables.append(_leaf_paths(network, int(a), int(b)))
        else:  # multi-homed hosts or a host to itself: its own path list
            found = equal_cost_paths(network, int(a), int(b))
            tables.append(np.array(found, dtype=np.int64).reshape(len(found), -1))
    count = np.array([len(t) for t in tables], dtype=np.int64)
    if np.any(count == 0):
        bad = int(np.flatnonzero(count[pair] == 0)[0])
        raise InputError(f"no path from host {src[bad]} to host {dst[bad]}", location="flows")
    p_max = int(count.max()) if len(count) else 1
    h_max = max((t.shape[1] for t in tables), default=0)
    padded = np.full((len(tables), p_max, h_max), dummy, dtype=np.int64)
    for u, table in enumerate(tables):
        padded[u, :table.shape[0], :table.shape[1]] = table
    return simple, pair, padded, count


def route(network: Network, src, dst, *, routing: str = "ecmp", qps: int = 1, seed: int = 0,
          granularity: str = "packet", demand=None) -> Routed:
    """Route connections ``src[i] -> dst[i]`` (host ids) as ``routing`` says (module docstring).

    ``qps``: queue pairs per connection (ECMP, and flowlets of adaptive routing); ``seed`` fixes
    the hash draws and the flowlet order; ``demand`` (per connection, default 1) weighs each
    connection's traffic when adaptive routing balances load. InputError for an unknown routing or
    granularity, ``qps < 1`` or hosts with no path between them.
    """
    if routing not in ROUTINGS:
        raise InputError(f"unknown routing '{routing}'; known: {', '.join(ROUTINGS)}", location="--routing")
    if granularity not in GRANULARITIES:
        raise InputError(f"unknown adaptive granularity '{granularity}'; known: {', '.join(GRANULARITIES)}",
                         location="granularity")
    if not isinstance(qps, (int, np.integer)) or qps < 1:
        raise InputError(f"queue pairs per connection must be an integer >= 1, got {qps!r}", location="--qps")
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    for name, hosts in (("src", src), ("dst", dst)):
        if len(hosts) and (hosts.min() < 0 or hosts.max() >= network.n_hosts):
            raise InputError(f"{name} hosts must be 0..{network.n_hosts - 1}", location="flows")
    n = len(src)
    if n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return Routed(0, empty, empty, np.zeros(0), empty)
    simple, pair, padded, count = path_tables(network, src, dst)
    dummy = network.n_links
    host_up, _, reverse = _host_tables(network)
    demand = np.ones(n) if demand is None else np.broadcast_to(np.asarray(demand, dtype=float), (n,))
    rng = np.random.default_rng(seed)
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    hosted = np.flatnonzero(simple)  # host links: the same on every path, weight 1
    parts.append((np.concatenate([hosted, hosted]),
                  np.concatenate([host_up[src[hosted]], reverse[host_up[dst[hosted]]]]), np.ones(2 * len(hosted))))
    paths = count[pair]
    one = np.flatnonzero(paths == 1)
    parts.append(_rows(padded[pair[one], 0][:, None, :], one, np.ones((len(one), 1)), dummy))
    many = np.flatnonzero(paths > 1)
    if len(many):
        tables = padded[pair[many]]  # m x Pmax x H
        valid = np.arange(padded.shape[1])[None, :] < paths[many][:, None]
        if len(many) * tables.shape[1] * max(tables.shape[2], 1) > MAX_TABLE_ENTRIES:
            raise InputError(f"{len(many):,} connections x {tables.shape[1]} paths exceed the simulator's "
                             f"{MAX_TABLE_ENTRIES:,}-entry path table", location="flows")
        if routing == "spray":
            weight = valid / paths[many][:, None]
        elif routing == "ecmp":
            choice = np.minimum((rng.random((len(many), qps)) * paths[many][:, None]).astype(np.int64),
                                paths[many][:, None] - 1)
            weight = np.zeros(valid.shape)
            np.add.at(weight, (np.repeat(np.arange(len(many)), qps), choice.ravel()), 1.0 / qps)
        elif granularity == "flowlet":
            weight = _greedy_flowlets(network, tables, paths[many], demand[many], qps, rng)
        else:
            weight = _balanced_split(network, tables, valid, paths[many], demand[many])
        parts.append(_rows(tables, many, weight, dummy))
    flow = np.concatenate([p[0] for p in parts])
    link = np.concatenate([p[1] for p in parts])
    weight = np.concatenate([p[2] for p in parts])
    return Routed(n, flow, link, weight, paths)


def _rows(tables: np.ndarray, flows: np.ndarray, weight: np.ndarray, dummy: int):
    """Entries of connections ``flows`` with path weights ``weight`` (m x P) over ``tables``
    (m x P x H); paths of one connection that share a link add up."""
    if not len(flows) or tables.shape[2] == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    per_entry = np.broadcast_to(weight[:, :, None], tables.shape)
    keep = (tables != dummy) & (per_entry > 0)
    flow = np.broadcast_to(flows[:, None, None], tables.shape)[keep]
    link = tables[keep]
    w = per_entry[keep]
    if weight.shape[1] == 1:
        return flow, link, w
    key = flow * (dummy + 1) + link
    unique, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    return flow[first], link[first], np.bincount(inverse.ravel(), weights=w)


def _link_weights(links: np.ndarray, weight: np.ndarray, n_slots: int) -> np.ndarray:
    """Traffic per link (dummy last) of path weights ``weight`` (F x P) over ``links`` (F x P x H)."""
    per_entry = np.broadcast_to(weight[:, :, None], links.shape)
    return np.bincount(links.ravel(), weights=per_entry.ravel(), minlength=n_slots)


def _balanced_split(network: Network, links, valid, count, demand) -> np.ndarray:
    """Per-packet adaptive routing: from the even split, traffic moves off paths whose busiest link
    is above the connection's best path (multiplicative weights, module docstring). ``links``
    are the connections' paths without their host links (the same on every path).

    Steps of a fixed rate can overshoot and oscillate where the even split is far from balanced
    (a failed uplink leaves some pairs one path short: the split alternates between two bad
    states). Without equilibrium within the steps, the split with the lowest busiest-link load
    seen is kept, so adaptive routing is never worse than the even split (spraying) it starts from."""
    inverse_capacity = np.append(1.0 / network.capacity_gbps, 0.0)  # the dummy link costs nothing
    weight = valid / count[:, None]
    best, best_peak = weight, np.inf
    for _ in range(ADAPTIVE_STEPS):
        utilisation = _link_weights(links, weight * demand[:, None], len(inverse_capacity)) * inverse_capacity
        peak = float(utilisation.max())
        if peak <= best_peak * (1.0 + ADAPTIVE_TOLERANCE):
            best, best_peak = weight, min(peak, best_peak)
        cost = utilisation[links].max(axis=2)
        cost[~valid] = np.inf
        excess = cost - cost.min(axis=1, keepdims=True)
        if float(np.max(np.where(valid & (weight > ADAPTIVE_TOLERANCE), excess, 0.0))) < ADAPTIVE_TOLERANCE:
            return weight  # every path in use is as good as the best one: equilibrium
        updated = weight * np.exp(-ADAPTIVE_RATE * np.where(valid, excess, 0.0))
        updated[~valid] = 0.0
        weight = updated / updated.sum(axis=1, keepdims=True)
    return best


def _greedy_flowlets(network: Network, links, count, demand, qps: int, rng) -> np.ndarray:
    """Flowlet adaptive routing: each QP in random order onto the least-loaded path (module docstring)."""
    utilisation = np.zeros(network.n_links + 1)
    inverse_capacity = np.append(1.0 / network.capacity_gbps, 0.0)
    weight = np.zeros(links.shape[:2])
    for i in rng.permutation(len(links)):
        table = links[i, :count[i]]
        step = demand[i] / qps * inverse_capacity[table]
        for _ in range(qps):
            best = int(np.argmin((utilisation[table] + step).max(axis=1)))
            utilisation[table[best]] += step[best]
            weight[i, best] += 1.0 / qps
    return weight


def downlink_backlog_packets(load, fan_in, packets):
    """Expected packets queued at a downlink fed by per-packet choices made upstream (module docstring).

    ``load`` is the link's utilisation ``rho`` under the fluid split (0..1), ``fan_in`` the
    number of input ports of the switch that feed it, ``packets`` how many packet times the
    transfer lasts. Per packet time the link receives ``A ~ Binomial(fan_in, rho / fan_in)``
    packets (each input's packet picks this output at random, independently of the others:
    the upstream choice did not see it) and sends one, so its queue is a reflected random walk
    with step variance ``s2 = rho (1 - rho / fan_in)``:

    * below saturation, the heavy-traffic mean queue of a discrete-time queue with deterministic
      service, ``s2 / (2 (1 - rho))`` (Kingman, "The single server queue in heavy traffic",
      Proc. Cambridge Phil. Soc. 57, 1961; for Poisson arrivals this is M/D/1's ``rho^2 / (2(1-rho))``
      plus the packet in service);
    * at saturation (``rho -> 1``, every link of a permutation on a full fat tree), the mean of the
      reflected walk after ``n`` steps, ``sqrt(2 n s2 / pi)`` (Feller, An Introduction to
      Probability Theory, vol. 1, III.7: ``E|S_n| ~ sqrt(2 n / pi) sigma``).

    The smaller of the two: a queue cannot build beyond the walk's reach in ``n`` steps. Arrays
    broadcast; zero where ``load`` or ``packets`` is zero or ``fan_in < 2`` (one input: no
    collision)."""
    rho = np.clip(np.asarray(load, dtype=float), 0.0, 1.0)
    m = np.asarray(fan_in, dtype=float)
    n = np.maximum(np.asarray(packets, dtype=float), 0.0)
    s2 = np.where(m >= 2, rho * (1.0 - rho / np.maximum(m, 1.0)), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        steady = np.where(rho < 1.0, s2 / (2.0 * (1.0 - rho)), np.inf)
    return np.minimum(steady, np.sqrt(2.0 * n * s2 / np.pi))


def downlink_fan_in(network: Network) -> np.ndarray:
    """Per link, the input ports of its sending switch that can feed it when it goes down a tier
    (every other port of the switch: traffic from above and from its other children), else 0
    (uplinks and host NICs: the deciding side)."""
    tier = network.node_tier
    down = (tier[network.link_dst] < tier[network.link_src]) & (network.node_kind[network.link_src] != 0)
    in_degree = np.bincount(network.link_dst, minlength=network.n_nodes)
    return np.where(down, in_degree[network.link_src] - 1, 0)
