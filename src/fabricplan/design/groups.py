"""Where a job's parallel groups sit on its nodes: Megatron-Core's rank order, group by group.

Megatron-Core numbers a job's ranks with tensor parallelism fastest, then context (and expert)
parallelism, data parallelism and pipeline stages slowest (``megatron/core/parallel_state.py``
``initialize_model_parallel(order="tp-cp-ep-dp-pp")``; ``RankGenerator`` /
``generate_masked_orthogonal_rank_groups``). Dense layers use the generator ``tp, cp, dp, pp`` (ep
= 1: their gradients are reduced over the ``dp-cp`` group); expert layers a second generator
``tp, ep, edp, pp`` (cp = 1, ``edp = dp x cp / ep``: ``expert_decoder_rank_generator``). A rank
``r`` sits on node ``r // gpus_per_node`` (the launcher fills nodes in rank order).

So with tp 4 on 8-GPU nodes two tensor-parallel groups share a node, and a data-parallel group of
3 (ranks 4 apart: 0, 4, 8) has 2 ranks on one node and 1 on the next: the groups span nodes
partly. :func:`group_shapes` gives each distinct shape of a kind of group (ranks, the most and
fewest ranks on one of its nodes, the nodes it sits on and the nodes from its first to its last),
which the step model times through the collective model; every group of a kind runs at the same
time and the slowest paces the step.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

#: Kinds of communicator a step runs, and the dimensions of Megatron-Core's generator each spans.
#: Dense generator dims (fastest first): tp, cp, dp, pp. Expert generator: tp, ep, edp, pp.
GROUP_KINDS = ("tp", "cp", "dp", "pp", "ep", "edp")


@dataclass(frozen=True)
class GroupShape:
    """One parallel group's place on the nodes.

    ``ranks``: its GPUs; ``max_per_node`` / ``min_per_node``: the most and fewest of them on one of
    its nodes (equal when the group splits evenly); ``nodes``: nodes holding its ranks; ``span_nodes``:
    nodes from its first to its last, inclusive (larger than ``nodes`` for a strided group whose
    ranks skip nodes); ``crosses_nodes``: for a pipeline, whether any two neighbouring stages sit on
    different nodes; ``count``: groups of this kind with this shape.
    """

    ranks: int
    max_per_node: int
    min_per_node: int
    nodes: int
    span_nodes: int
    crosses_nodes: bool
    count: int

    @property
    def even(self) -> bool:
        """Every node of the group holds the same number of its ranks."""
        return self.max_per_node == self.min_per_node


def _dims(kind: str, tp: int, cp: int, dp: int, pp: int, ep: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(sizes fastest first, indices of the group's dims) of the generator ``kind`` is carved from."""
    if kind in ("ep", "edp"):
        edp = dp * cp // max(ep, 1)
        return (tp, ep, edp, pp), ((1,) if kind == "ep" else (2,))
    sizes = (tp, cp, dp, pp)
    return sizes, {"tp": (0,), "cp": (1,), "dp": (1, 2), "pp": (3,)}[kind]


def group_ranks(kind: str, *, tp: int, cp: int, dp: int, pp: int, ep: int = 1):
    """Every group of ``kind`` as a 2-D numpy array (one row per group, ranks in group order), in
    Megatron-Core's rank order (module docstring). ``dp`` is the dense gradient group (``dp-cp`` in
    Megatron-Core); ``edp`` the expert-data-parallel group."""
    import numpy as np

    sizes, members = _dims(kind, tp, cp, dp, pp, ep)
    grid = np.arange(int(np.prod(sizes))).reshape(tuple(reversed(sizes)))  # C order: the last axis is tp
    axes = [len(sizes) - 1 - i for i in range(len(sizes))]  # axis of each dim, fastest first
    others = [axes[i] for i in range(len(sizes)) if i not in members]
    inner = [axes[i] for i in reversed(members)]  # slowest member first, so rows list the fastest last
    moved = np.transpose(grid, others + inner)
    return moved.reshape(-1, int(np.prod([sizes[i] for i in members])))


@lru_cache(maxsize=512)
def group_shapes(kind: str, *, tp: int, cp: int, dp: int, pp: int, ep: int = 1,
                 gpus_per_node: int) -> tuple[GroupShape, ...]:
    """The distinct shapes of the groups of ``kind`` on ``gpus_per_node``-GPU nodes (most common first)."""
    import numpy as np

    ranks = group_ranks(kind, tp=tp, cp=cp, dp=dp, pp=pp, ep=ep)
    nodes = ranks // max(int(gpus_per_node), 1)
    n_groups, size = nodes.shape
    crosses = (np.diff(nodes, axis=1) != 0).any(axis=1) if size > 1 else np.zeros(n_groups, dtype=bool)
    ordered = np.sort(nodes, axis=1)
    keys = np.arange(n_groups)[:, None] * (int(ordered.max()) + 1) + ordered
    unique, counts = np.unique(keys.ravel(), return_counts=True)
    row = unique // (int(ordered.max()) + 1)
    starts = np.flatnonzero(np.r_[True, row[1:] != row[:-1]])
    most = np.maximum.reduceat(counts, starts)
    fewest = np.minimum.reduceat(counts, starts)
    held = np.diff(np.r_[starts, len(row)])
    span = ordered[:, -1] - ordered[:, 0] + 1
    table = np.stack([np.full(n_groups, size), most, fewest, held, span, crosses.astype(int)], axis=1)
    shapes, tally = np.unique(table, axis=0, return_counts=True)
    found = [GroupShape(int(a), int(b), int(c), int(d), int(e), bool(f), int(n))
             for (a, b, c, d, e, f), n in zip(shapes, tally)]
    return tuple(sorted(found, key=lambda g: (-g.count, g.span_nodes)))
