"""Traffic patterns as connections ``src -> dst`` between hosts.

Collectives run over ``ranks``: a ``nodes x hosts_per_node`` array of host ids in rank order (one
column per NIC a node uses; :func:`fabricplan.sim.fabric.node_hosts`). NCCL keeps a channel's
inter-node traffic on one NIC and rail, so column ``r`` of one node talks to column ``r`` of others.

* :func:`ring`: every channel is a ring over the nodes in rank order: node ``i`` sends to node
  ``i+1`` (NCCL ring all-reduce, all-gather, reduce-scatter; Patarasuk & Yuan, JPDC 69(2), 2009).
* :func:`tree`: NCCL's double binary tree (Sanders, Speck & Träff, Parallel Computing 35(12),
  2009; NCCL 2.4 "Massively scale your deep learning training with NCCL 2.4", NVIDIA blog 2019):
  tree 0 is the binary tree whose node ``r`` has parent ``(r ^ b) | 2b`` for its lowest set bit
  ``b`` (or ``r ^ b`` past the end); tree 1 mirrors it (``n-1-r``) for an even node count and
  shifts it by one for an odd one. Channels alternate trees; every edge carries data both ways
  (reduce up, broadcast down).
* :func:`all_to_all`: every node sends to every other node. NCCL progresses a bounded number of
  peers at once; it is modelled as ``peers`` concurrent shifts ``i -> i+s`` (each a permutation),
  the shifts spread evenly over ``1 .. n-1``.
* :func:`permutation`: a seeded random derangement over all hosts (no host sends to itself;
  uniform by rejection sampling); :func:`incast`: ``senders`` hosts to one.
"""

from __future__ import annotations

import numpy as np

from fabricplan.errors import InputError


def _columns(ranks) -> np.ndarray:
    ranks = np.asarray(ranks, dtype=np.int64)
    return ranks[:, None] if ranks.ndim == 1 else ranks


def ring(ranks, channels_per_nic: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Ring connections per NIC column and channel (module docstring)."""
    ranks = _columns(ranks)
    if len(ranks) < 2:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    src = np.tile(ranks.T.ravel(), channels_per_nic)
    dst = np.tile(np.roll(ranks, -1, axis=0).T.ravel(), channels_per_nic)
    return src, dst


def binary_tree_parents(n: int) -> np.ndarray:
    """Parent of each rank in tree 0 of the double binary tree (-1 for the root 0)."""
    parent = np.full(n, -1, dtype=np.int64)
    for r in range(1, n):
        bit = r & -r
        up = (r ^ bit) | (bit << 1)
        parent[r] = up if up < n else r ^ bit
    return parent


def tree_edges(n: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """(child, parent) rank arrays of the two trees of the double binary tree."""
    parent = binary_tree_parents(n)
    child = np.flatnonzero(parent >= 0)
    first = (child, parent[child])
    if n % 2 == 0:
        second = (n - 1 - child, n - 1 - parent[child])
    else:
        second = ((child + 1) % n, (parent[child] + 1) % n)
    return [first, second]


def tree(ranks, channels_per_nic: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Double-binary-tree connections, both directions, channels alternating trees."""
    ranks = _columns(ranks)
    n = len(ranks)
    if n < 2:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    trees = tree_edges(n)
    src, dst = [], []
    for column in ranks.T:
        for channel in range(channels_per_nic):
            child, parent = trees[channel % 2]
            src += [column[child], column[parent]]
            dst += [column[parent], column[child]]
    return np.concatenate(src), np.concatenate(dst)


def shifts(n: int, peers: int) -> np.ndarray:
    """``min(peers, n-1)`` shifts spread evenly over ``1 .. n-1``."""
    count = min(max(int(peers), 1), n - 1)
    return np.unique(np.round(np.linspace(1, n - 1, count)).astype(np.int64))


def all_to_all(ranks, peers: int, channels_per_peer: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """``peers`` concurrent shift permutations per NIC column (module docstring)."""
    ranks = _columns(ranks)
    n = len(ranks)
    if n < 2:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    src, dst = [], []
    for s in shifts(n, peers):
        for _ in range(channels_per_peer):
            src.append(ranks.T.ravel())
            dst.append(np.roll(ranks, -int(s), axis=0).T.ravel())
    return np.concatenate(src), np.concatenate(dst)


def permutation(n_hosts: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A seeded uniformly random derangement: host ``i`` sends to ``dst[i] != i``."""
    if n_hosts < 2:
        raise InputError(f"a permutation needs at least 2 hosts, got {n_hosts}", location="--hosts")
    rng = np.random.default_rng(seed)
    hosts = np.arange(n_hosts)
    while True:
        dst = rng.permutation(n_hosts)
        if not np.any(dst == hosts):
            return hosts, dst


def incast(senders, receiver: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Every host of ``senders`` sends to ``receiver``."""
    src = np.asarray(senders, dtype=np.int64)
    return src, np.full(len(src), receiver, dtype=np.int64)
