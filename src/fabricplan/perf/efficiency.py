"""Efficiency models: what share of the ideal per-NIC bandwidth a collective gets on a design.

The collective model asks one question of the network, through one seam::

    model(case: TrafficCase) -> Efficiency        (an :class:`EfficiencyModel`)

``case`` says which traffic pattern (``ring``, ``tree``, ``all_to_all``) runs over how many nodes,
where they sit (:class:`~fabricplan.design.NetworkPlacement`) and on which fabric profile
(routing, flow and congestion control). Models are chosen by name (``--efficiency-model``):

* ``analytic`` (default): static-ECMP hash collisions on the leaf uplinks (balls into bins,
  :mod:`fabricplan.perf.ecmp`), mostly removed by adaptive routing, times the cap of
  oversubscribed tiers (:func:`oversubscription_factor`).
* ``ideal``: every pattern gets the full per-NIC bandwidth (no collisions, no oversubscription):
  the bound a perfect network would give, useful to see how much the fabric's routing costs.
* ``sim``: the flow-level simulator (:mod:`fabricplan.perf.sim_efficiency`): NCCL's connections
  routed over the communicator's part of the design, max-min rates; cached by scenario hash.

A new model (e.g. a simulator-backed one) is a callable with a ``name`` registered with
:func:`register_efficiency_model`; perf never changes for it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from fabricplan.design import NetworkPlacement
from fabricplan.errors import InputError
from fabricplan.perf.ecmp import routed_efficiency
from fabricplan.perf.latency import perf_parameter

PATTERNS = ("ring", "tree", "all_to_all")


@dataclass(frozen=True)
class TrafficCase:
    """One question to an efficiency model: ``pattern`` over ``n_nodes`` nodes at ``placement`` on
    ``profile`` (a catalog FabricProfile as built: routing, flow/congestion control), the numbers
    from ``catalog`` (the one the API or CLI loaded, overlays included)."""

    pattern: str
    n_nodes: int
    placement: NetworkPlacement
    profile: object
    catalog: object


@dataclass(frozen=True)
class Efficiency:
    """Share of the ideal per-NIC bandwidth [0-1] and the part of it due to oversubscribed tiers."""

    value: float
    oversubscription: float = 1.0
    model: str = "analytic"


@runtime_checkable
class EfficiencyModel(Protocol):
    """A named callable ``TrafficCase -> Efficiency``."""

    name: str

    def __call__(self, case: TrafficCase) -> Efficiency: ...


def crossing_share(pattern: str, n_nodes: int, block_nodes: int, aligned: bool = True) -> float:
    """Share of the traffic a block's nodes send that leaves the block (a leaf group or a pod) [0-1].

    The same flow counts as the ECMP model (:func:`routing_efficiency`), for a communicator of
    ``n_nodes`` nodes packed in rank order, ``m = block_nodes`` of them per block:

    * ``ring``: one ring hop per channel leaves a block, out of ``m`` hops that start in it: ``1/m``
      (rail-aligned rings stay on their rail leaf inside a scalable unit; under a ToR a ring leaves
      every rack, so ``m`` is only the servers per ToR). CollNet/SHARP counts as ring: the leaf
      reduces its hosts' data and sends one stream up.
    * ``tree``: every node's tree connections are taken to leave the block, ``1`` (as the ECMP
      count; conservative: a rank-ordered binary tree would cross about once per block).
    * ``all_to_all``: the share of remote peers outside the block, ``(n - m) / (n - 1)`` (PXN keeps
      rail-optimised traffic on the destination's rail, so peers in the same SU stay local).

    0 when the communicator fits in one block. Without topology-aware scheduling
    (``aligned=False``) a communicator that spans blocks is taken to have its ring neighbours and
    peers under other leaves: share 1 for every pattern.
    """
    if n_nodes <= block_nodes or block_nodes < 1:
        return 0.0
    if not aligned:
        return 1.0
    if pattern == "ring":
        return 1.0 / block_nodes
    if pattern == "tree":
        return 1.0
    if pattern == "all_to_all":
        return (n_nodes - block_nodes) / (n_nodes - 1)
    raise InputError(f"unknown traffic pattern '{pattern}'; known: {', '.join(PATTERNS)}")


def oversubscription_factor(placement: NetworkPlacement, pattern: str, n_nodes: int) -> float:
    """Share of the per-NIC bandwidth left when the traffic crossing oversubscribed tiers is capped.

    A tier with realised down:up ratio ``r`` (``FabricSize.oversubscription_effective``; r = d/u,
    d host/down ports at the line rate, u uplinks) carries at most ``d x B / r`` up, i.e. 1/r of its
    hosts' bandwidth. If every node under it runs the collective and a share ``s`` of their
    traffic must leave (:func:`crossing_share`), that traffic asks for ``s x d x B``; a synchronous
    collective runs at the pace of its slowest hop, so every rank's inter-node bandwidth scales by

        f = min(1, 1 / (r x s))      per crossed tier (leaf -> spine, spine -> core); the minimum over tiers

    (capacity over demand at a saturated link; fat-tree oversubscription, Al-Fares et al.,
    SIGCOMM 2008 §2.1; Leiserson, IEEE Trans. Comput. 34(10), 1985). ``s = 1`` gives the plain
    ``1/r``; traffic that stays under one leaf (``s = 0``) is unaffected, as is every pattern at
    1:1 (``r <= 1``).
    """
    if placement.tiers <= 1 or not placement.oversubscription:
        return 1.0
    factor = 1.0
    for ratio, block in zip(placement.oversubscription, (placement.nodes_per_leaf, placement.nodes_per_pod)):
        share = crossing_share(pattern, n_nodes, block, placement.aligned) if block else 0.0
        if share > 0 and ratio * share > 1.0:
            factor = min(factor, 1.0 / (ratio * share))
    return factor


def ecmp_flows(placement: NetworkPlacement, pattern: str, n_nodes: int, channels_per_nic: int,
               qps_per_connection: int) -> int:
    """Flows (queue pairs) hashed onto one leaf's uplinks: ring = channels per NIC (each ring leaves
    a leaf group once), tree = every node under the leaf, all_to_all = every node to every remote
    node; each times the queue pairs per connection and the NICs of one node on the leaf.

    Without topology-aware scheduling (``placement.aligned`` False) a ring's neighbours sit under
    other leaves (as :func:`crossing_share` takes it), so every node under the leaf sends its ring
    channels up: ``nodes_per_leaf x channels`` flows. The flow-level simulator (``sim`` model)
    measures the same effect on the placement's graph.
    """
    remote_nodes = max(n_nodes - placement.nodes_per_leaf, 1)
    ring = channels_per_nic if placement.aligned else placement.nodes_per_leaf * channels_per_nic
    per_pattern = {"ring": ring, "tree": placement.nodes_per_leaf * channels_per_nic,
                   "all_to_all": placement.nodes_per_leaf * remote_nodes}
    if pattern not in per_pattern:
        raise InputError(f"unknown traffic pattern '{pattern}'; known: {', '.join(PATTERNS)}")
    return per_pattern[pattern] * qps_per_connection * max(placement.nics_per_leaf, 1)


def routing_efficiency(fabric, placement: NetworkPlacement, pattern: str, n_nodes: int, catalog) -> float:
    """Share of the per-NIC bandwidth left after ECMP collisions and oversubscribed uplinks [0-1].

    ``ecmp(flows, leaf uplinks) x oversubscription_factor``, flows from :func:`ecmp_flows` with
    NCCL's channels per NIC and queue pairs per connection (``perf_defaults.yaml``); with adaptive
    routing only ``adaptive_routing_residual_collision_fraction`` of the collision loss remains.
    1 when the job fits under one leaf.
    """
    if placement.tiers <= 1 or n_nodes <= placement.nodes_per_leaf:
        return 1.0
    flows = ecmp_flows(placement, pattern, n_nodes, int(perf_parameter("nccl_channels_per_nic", catalog)),
                       int(perf_parameter("nccl_ib_qps_per_connection", catalog)))
    ecmp = routed_efficiency(flows, placement.leaf_uplinks, fabric.routing == "adaptive",
                             perf_parameter("adaptive_routing_residual_collision_fraction", catalog))
    return ecmp * oversubscription_factor(placement, pattern, n_nodes)


class AnalyticEfficiency:
    """The default model: ECMP balls-into-bins collisions x oversubscription cap (module docstring)."""

    name = "analytic"

    def __call__(self, case: TrafficCase) -> Efficiency:
        return Efficiency(value=routing_efficiency(case.profile, case.placement, case.pattern, case.n_nodes,
                                                   case.catalog),
                          oversubscription=oversubscription_factor(case.placement, case.pattern, case.n_nodes),
                          model=self.name)


class IdealEfficiency:
    """A perfect network: the full per-NIC bandwidth for every pattern (the upper bound)."""

    name = "ideal"

    def __call__(self, case: TrafficCase) -> Efficiency:
        return Efficiency(value=1.0, oversubscription=1.0, model=self.name)


def lazy_model(target: str) -> Callable[[], EfficiencyModel]:
    """A factory for the model class at ``"module:Class"``, imported when first asked for (as a
    package entry point is): a model that loads a simulator costs nothing until it is chosen, and
    this module never imports the models built on top of it."""
    def factory() -> EfficiencyModel:
        import importlib

        module, _, name = target.partition(":")
        return getattr(importlib.import_module(module), name)()

    return factory


_MODELS: dict[str, Callable[[], EfficiencyModel]] = {
    "analytic": AnalyticEfficiency, "ideal": IdealEfficiency,
    "sim": lazy_model("fabricplan.perf.sim_efficiency:SimEfficiency"),  # the flow-level simulator
    "auto": lazy_model("fabricplan.perf.sim_efficiency:AutoEfficiency"),  # sim within a budget, else analytic
}
DEFAULT_MODEL = "analytic"


def register_efficiency_model(name: str, factory: Callable[[], EfficiencyModel]) -> None:
    """Make ``factory()`` selectable by ``name`` (``--efficiency-model NAME``, ``Plan(efficiency_model=NAME)``)."""
    if not name or not name.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"an efficiency model name is letters, digits, '-' and '_', got {name!r}")
    _MODELS[name] = factory


def efficiency_models() -> list[str]:
    """Names of the registered efficiency models."""
    return sorted(_MODELS)


def efficiency_model(model: str | EfficiencyModel | None = None) -> EfficiencyModel:
    """The model named ``model`` (default ``analytic``), or ``model`` itself if it is one.
    InputError naming the known models for an unknown name."""
    if model is None:
        model = DEFAULT_MODEL
    if not isinstance(model, str):
        if not callable(model):
            raise InputError(f"an efficiency model must be callable, got {type(model).__name__}")
        return model
    if model not in _MODELS:
        raise InputError(f"unknown efficiency model '{model}'; known: {', '.join(efficiency_models())}",
                         location="--efficiency-model")
    return _MODELS[model]()
