"""The ``sim`` efficiency model: collective efficiency from the flow-level simulator, cached.

For a :class:`~fabricplan.perf.efficiency.TrafficCase` it builds the part of the design the
communicator spans (:func:`fabricplan.sim.fabric.placement_network`), puts the nodes in rank
order (topology-aware scheduling) or in a seeded random order on the same leaves (without it),
opens NCCL's connections for the pattern and routes them as the fabric profile says:

* ``ring`` / ``tree``: ``nccl_channels_per_nic`` channels per NIC (ring, or double binary tree
  both ways), each connection with ``nccl_ib_qps_per_connection`` queue pairs
  (``NCCL_IB_QPS_PER_CONNECTION``); lockstep: the collective runs at its slowest connection.
* ``all_to_all``: ``nccl_alltoall_peers_in_flight`` concurrent peers per rank (shift
  permutations), ``nccl_channels_per_net_peer`` connections per peer; the exchange lasts until
  its busiest link drains.

Routing is the profile's (``ecmp`` hashing per QP, or per-packet ``adaptive``). The value is the
mean over :data:`SEEDS` hash seeds (the expectation the analytic model also gives); the
``oversubscription`` part is the same traffic sprayed evenly over all paths (no collisions left,
only capacity). A case the simulator would not finish quickly (more than
:data:`MAX_CONNECTIONS` connections) falls back to the analytic model, and says so in
``Efficiency.model`` (``"analytic (sim fallback)"``) and in :func:`usage`.

Results are cached by a hash of the scenario (every input above, the catalog numbers read and
:data:`MODEL_VERSION`): in memory, and as small JSON files in ``<user cache dir>/sim/``
(:mod:`fabricplan.cache`: trusted entries only, the folder's size bounded;
``FABRICPLAN_CACHE_DIR=off`` turns the disk cache off). A cache entry is only a speed-up:
unreadable entries are recomputed.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

from fabricplan.perf.efficiency import AnalyticEfficiency, Efficiency, TrafficCase
from fabricplan.perf.params import perf_parameter

#: Bump when the simulator's results change, so that old disk-cache entries are not read.
MODEL_VERSION = 1
#: Program settings: hash seeds averaged per case; connections above which a case falls back.
SEEDS = 3
MAX_CONNECTIONS = 4_096

_MEMORY: dict[str, dict] = {}
_USAGE: Counter = Counter()
_AUTO: Counter = Counter()


def usage() -> dict[str, int]:
    """How the ``sim`` model answered since the process started: ``simulated``, ``memory_cache``,
    ``disk_cache``, ``fallback`` (analytic) counts."""
    return {key: int(_USAGE[key]) for key in ("simulated", "memory_cache", "disk_cache", "fallback")}


def usage_note(before: dict[str, int]) -> str:
    """One sentence on how the ``sim`` model answered since ``before`` (a :func:`usage` snapshot)."""
    now = usage()
    delta = {key: now[key] - before.get(key, 0) for key in now}
    asked = sum(delta.values())
    # how many came from the cache is left out: it changes between identical runs (issue 30)
    text = f"Efficiency model 'sim' (flow-level simulation): {asked} traffic cases simulated"
    if delta["fallback"]:
        text += (f", {delta['fallback']} too large to simulate quickly (over {MAX_CONNECTIONS:,} connections) "
                 "and taken from the analytic model")
    return text + "."


def clear_memory_cache() -> None:
    """Forget in-memory results (tests)."""
    _MEMORY.clear()


def _cache_path(key: str) -> Path | None:
    from fabricplan.cache import cache_dir

    folder = cache_dir()
    return None if folder is None else folder / "sim" / f"{key}.json"


def _read(key: str) -> dict | None:
    from fabricplan.cache import read_bytes

    raw = read_bytes(_cache_path(key))
    if raw is None:
        return None
    try:
        data = json.loads(raw)
        return data if isinstance(data, dict) and {"value", "oversubscription"} <= set(data) else None
    except ValueError:
        return None


def _write(key: str, data: dict) -> None:
    from fabricplan.cache import write_bytes

    write_bytes(_cache_path(key), json.dumps(data).encode("utf-8"))


def scenario(case: TrafficCase) -> dict:
    """Every input of one simulated case, as plain JSON values (the cache key's contents)."""
    p = case.placement
    profile = case.profile
    catalog = case.catalog
    return {
        "version": MODEL_VERSION, "pattern": case.pattern, "n_nodes": int(case.n_nodes),
        "placement": [int(p.tiers), int(p.nodes_per_leaf), int(p.leaf_uplinks), int(p.nodes_per_pod),
                      [float(r) for r in p.oversubscription], int(p.nics_per_leaf), bool(p.aligned)],
        "routing": str(getattr(profile, "routing", "ecmp")),
        # Every link runs at the profile's rate (sim.fabric.placement_network); the flows' latency
        # against their transfer time makes the result depend on it, so it is part of the key.
        "link_gbps": float(getattr(profile, "link_rate_gbps", 0) or 0),
        "channels_per_nic": int(perf_parameter("nccl_channels_per_nic", catalog)),
        "qps": int(perf_parameter("nccl_ib_qps_per_connection", catalog)),
        "peers": int(perf_parameter("nccl_alltoall_peers_in_flight", catalog)),
        "channels_per_peer": int(perf_parameter("nccl_channels_per_net_peer", catalog)),
        "seeds": SEEDS,
    }


def scenario_key(case: TrafficCase, inputs: dict | None = None) -> str:
    """sha256 of :func:`scenario` (24 hex digits); ``inputs`` = its result when already built."""
    text = json.dumps(inputs or scenario(case), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def connections(inputs: dict) -> int:
    """Connections the case opens (before routing): what bounds its cost."""
    hosts = inputs["n_nodes"] * max(inputs["placement"][5], 1)
    if inputs["pattern"] == "ring":
        return hosts * inputs["channels_per_nic"]
    if inputs["pattern"] == "tree":
        return 2 * max(inputs["n_nodes"] - 1, 0) * max(inputs["placement"][5], 1) * inputs["channels_per_nic"]
    return hosts * min(inputs["peers"], max(inputs["n_nodes"] - 1, 1)) * inputs["channels_per_peer"]


def simulate_case(case: TrafficCase, inputs: dict | None = None) -> dict:
    """Simulate one case (module docstring): ``{"value", "oversubscription", "tail"}``, the tail
    being the mean over seeds of the 1st-percentile connection share."""
    import numpy as np

    from fabricplan.sim import traffic
    from fabricplan.sim.fabric import job_nodes, node_hosts, placement_network
    from fabricplan.sim.flowsim import simulate

    inputs = inputs or scenario(case)
    link_gbps = inputs["link_gbps"] or None
    network = placement_network(case.placement, case.n_nodes, link_gbps=link_gbps, catalog=case.catalog)
    hosts_per_node = max(int(case.placement.nics_per_leaf), 1)
    routing = "adaptive" if inputs["routing"] == "adaptive" else "ecmp"
    values, tails = [], []
    for seed in range(SEEDS):
        ranks = node_hosts(job_nodes(case.n_nodes, case.n_nodes, aligned=case.placement.aligned, seed=seed),
                           hosts_per_node)
        if case.pattern == "ring":
            src, dst = traffic.ring(ranks, inputs["channels_per_nic"])
        elif case.pattern == "tree":
            src, dst = traffic.tree(ranks, inputs["channels_per_nic"])
        else:
            src, dst = traffic.all_to_all(ranks, inputs["peers"], inputs["channels_per_peer"])
        result = simulate(network, src, dst, 1e6, pattern=case.pattern, routing=routing, qps=inputs["qps"], seed=seed)
        values.append(result.efficiency)
        tails.append(result.flow_efficiency["p1"])
        if routing == "adaptive" and seed == 0:
            break  # per-packet adaptive routing draws no hashes: one run is the answer
    sprayed = simulate(network, src, dst, 1e6, pattern=case.pattern, routing="spray").efficiency
    value = float(np.mean(values))
    return {"value": value, "oversubscription": float(max(sprayed, value)), "tail": float(np.mean(tails))}


class SimEfficiency:
    """``TrafficCase -> Efficiency`` from the flow-level simulator (module docstring)."""

    name = "sim"

    @staticmethod
    def usage() -> dict[str, int]:
        return usage()

    @staticmethod
    def usage_note(before: dict[str, int]) -> str:
        return usage_note(before)

    def __call__(self, case: TrafficCase) -> Efficiency:
        if case.n_nodes <= 1 or case.placement.tiers <= 1:
            return Efficiency(1.0, 1.0, self.name)  # one switch: nothing to collide on
        inputs = scenario(case)
        if connections(inputs) > MAX_CONNECTIONS:
            _USAGE["fallback"] += 1
            fallback = AnalyticEfficiency()(case)
            return Efficiency(fallback.value, fallback.oversubscription, "analytic (sim fallback)")
        return self.simulated(case, inputs)

    def simulated(self, case: TrafficCase, inputs: dict) -> Efficiency:
        """The case's simulated efficiency (``inputs`` = :func:`scenario` of it), from the memory or
        disk cache when there, else simulated and stored."""
        key = scenario_key(case, inputs)
        data = _MEMORY.get(key)
        if data is not None:
            _USAGE["memory_cache"] += 1
        else:
            data = _read(key)
            if data is not None:
                _USAGE["disk_cache"] += 1
            else:
                data = simulate_case(case, inputs)
                _USAGE["simulated"] += 1
                _write(key, data)
            _MEMORY[key] = data
        return Efficiency(float(data["value"]), float(data["oversubscription"]), self.name)


class AutoEfficiency:
    """``auto``: the simulator where the case is within the catalog's budget, else the analytic model.

    A case is simulated (or read from the cache, as ``sim``) when it opens at most
    ``sim_auto_max_connections`` connections (perf_defaults; the budget that keeps a cold-cache
    ``compare`` near its speed goal); larger ones take the analytic model. ``Efficiency.model`` says
    which answered each case (``"sim"`` or ``"analytic (auto: over budget)"``) and :meth:`usage_note`
    gives the counts in compare's notes.
    """

    name = "auto"

    def __init__(self) -> None:
        self._sim = SimEfficiency()

    @staticmethod
    def usage() -> dict[str, int]:
        return {**usage(), **{f"auto_{key}": int(_AUTO[key]) for key in ("sim", "analytic")}}

    @staticmethod
    def usage_note(before: dict[str, int]) -> str:
        now = AutoEfficiency.usage()
        sim = now["auto_sim"] - before.get("auto_sim", 0)
        analytic = now["auto_analytic"] - before.get("auto_analytic", 0)
        # how many came from the cache is left out: it changes between identical runs (issue 30)
        return (f"Efficiency model 'auto': {sim} traffic cases from the flow-level simulator, {analytic} over "
                "the simulation budget (perf_defaults.sim_auto_max_connections) from the analytic model.")

    def __call__(self, case: TrafficCase) -> Efficiency:
        if case.n_nodes <= 1 or case.placement.tiers <= 1:
            _AUTO["sim"] += 1
            return Efficiency(1.0, 1.0, "sim")
        budget = int(perf_parameter("sim_auto_max_connections", case.catalog))
        inputs = scenario(case)
        if connections(inputs) > min(budget, MAX_CONNECTIONS):
            _AUTO["analytic"] += 1
            fallback = AnalyticEfficiency()(case)
            return Efficiency(fallback.value, fallback.oversubscription, "analytic (auto: over budget)")
        _AUTO["sim"] += 1
        return self._sim.simulated(case, inputs)
