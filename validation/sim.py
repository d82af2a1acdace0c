"""Flow-level simulator results next to published figures (docs/validation.md, tests/sim).

Each :class:`Row` runs one scenario with the simulator and states the published figure it is
compared with, where it comes from and the band the result must fall in. ``gated`` rows fail the
tests and ``scripts/validate_sim.py``; checked-only rows are shown, with the reason they are not
gated. The scenarios follow the conventions of docs/simulator.md (host ``h`` on leaf ``h // (k/2)``, a
seeded random derangement for permutations, every flow starting at t = 0, 1 MB per flow).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

FLOW_BYTES = 1e6


def _catalog():
    """The bundled catalog: these rows check the simulator on the bundled numbers (link rate,
    latency, buffers) against the published figures."""
    from fabricplan.catalog import default_catalog

    return default_catalog()


@dataclass(frozen=True)
class Row:
    """One comparison: ``run()`` gives the simulated value; it must lie in ``[low, high]``."""

    name: str
    published: str
    source: str
    low: float
    high: float
    run: Callable[[], float]
    gated: bool = True
    note: str = ""


def _permutation(k: int, routing: str, *, seeds: int = 4, measure: str = "mean", granularity: str = "packet") -> float:
    from fabricplan.sim import traffic
    from fabricplan.sim.flowsim import simulate
    from fabricplan.sim.network import fat_tree

    network = fat_tree(k, 3, catalog=_catalog())
    values = []
    for seed in range(seeds):
        src, dst = traffic.permutation(network.n_hosts, seed)
        result = simulate(network, src, dst, FLOW_BYTES, pattern="permutation", routing=routing, seed=seed,
                          granularity=granularity)
        values.append(result.flow_efficiency["mean"] if measure == "mean" else result.efficiency)
    return float(np.mean(values))


def _incast_ratio() -> float:
    """Completion of a 32-to-1 incast with adaptive routing over that with ECMP (1 = no help)."""
    from fabricplan.sim import traffic
    from fabricplan.sim.flowsim import simulate
    from fabricplan.sim.network import fat_tree

    network = fat_tree(16, 3, catalog=_catalog())
    src, dst = traffic.incast(np.arange(8, 8 + 32))
    ecmp = simulate(network, src, dst, FLOW_BYTES, pattern="incast", routing="ecmp")
    adaptive = simulate(network, src, dst, FLOW_BYTES, pattern="incast", routing="adaptive")
    return adaptive.fct_us["max"] / ecmp.fct_us["max"]


def _uplink_collisions(flows: int = 32, uplinks: int = 32, seeds: int = 200) -> float:
    """Mean busiest-uplink load of ``flows`` leaf-crossing ECMP flows on ``uplinks`` uplinks, simulated
    (lockstep efficiency = 1 / busiest load), over the exact expectation
    (:func:`fabricplan.perf.ecmp.expected_max_load`)."""
    from fabricplan.perf.ecmp import expected_max_load
    from fabricplan.sim.fabric import clos_network
    from fabricplan.sim.flowsim import simulate

    # leaf 0's hosts each send one flow to a distinct host on leaves 1..: only leaf 0's uplinks can
    # collide (every destination leaf receives from leaf 0 over distinct spines' down links only once
    # per spine chosen; the down links see at most the same collisions as the up links)
    network = clos_network(flows * 2, flows, uplinks, catalog=_catalog())
    src = np.arange(flows)
    dst = flows + np.arange(flows)
    values = [simulate(network, src, dst, FLOW_BYTES, pattern="ring", routing="ecmp", seed=seed).efficiency
              for seed in range(seeds)]
    return float(np.mean(1.0 / np.array(values))) / expected_max_load(flows, uplinks)


def _alltoall_ecmp() -> float:
    """ECMP all-to-all efficiency (16 peers in flight) of 256 nodes on a 2-tier 32-port-leaf Clos."""
    from fabricplan.sim import traffic
    from fabricplan.sim.fabric import clos_network, job_nodes, node_hosts
    from fabricplan.sim.flowsim import simulate

    network = clos_network(256, 32, 32, catalog=_catalog())
    values = []
    for seed in range(3):
        ranks = node_hosts(job_nodes(256, 256, aligned=True), 1)
        src, dst = traffic.all_to_all(ranks, 16, 2)
        values.append(simulate(network, src, dst, FLOW_BYTES, pattern="all_to_all", routing="ecmp",
                               seed=seed).efficiency)
    return float(np.mean(values))


HEDERA = ("Al-Fares et al., \"Hedera: Dynamic Flow Scheduling for Data Center Networks\", NSDI 2010, abstract: "
          "Hedera reaches 96 % of optimal bisection bandwidth, \"up to 113 % better than static load-balancing "
          "methods\" (ECMP), i.e. ECMP at 0.96 / 2.13 = 0.45 of optimal")
MPTCP = ("Raiciu et al., \"Improving Datacenter Performance and Robustness with Multipath TCP\", SIGCOMM 2011, "
         "section 4 (FatTree, permutation traffic): single-path TCP over ECMP reaches about half of the optimal "
         "throughput; multipath (8 subflows) above 90 %")
COLOSSUS = ("NVIDIA newsroom, 28 Oct 2024 (xAI Colossus, 100,000 H100): standard Ethernet \"60 % data throughput\" "
            "from flow collisions, Spectrum-X adaptive routing 95 %")

ROWS: tuple[Row, ...] = (
    Row("ECMP, random permutation, k=16 3-tier fat tree (1,024 hosts): mean throughput / line rate",
        "0.45 (Hedera, worst pattern); ~0.5 (MPTCP paper)", HEDERA + "; " + MPTCP, 0.38, 0.52,
        lambda: _permutation(16, "ecmp")),
    Row("Per-packet adaptive routing, same permutation: mean throughput / line rate",
        "0.96 of optimal (Hedera, global scheduling); > 0.9 (MPTCP, 8 subflows)", HEDERA + "; " + MPTCP, 0.90, 1.0,
        lambda: _permutation(16, "adaptive"),
        note="the fluid limit of per-packet adaptive routing balances perfectly on a symmetric fat tree (1.0); "
             "packet-level effects (queues, feedback delay) take the last few percent"),
    Row("Packet spraying, same permutation: mean throughput / line rate",
        "near-optimal on symmetric Clos (Dixit et al., random packet spraying, INFOCOM 2013)",
        "Dixit et al., \"On the Impact of Packet Spraying in Data Center Networks\", INFOCOM 2013", 0.90, 1.0,
        lambda: _permutation(16, "spray")),
    Row("Flowlet adaptive routing (one decision per flow), same permutation: mean throughput / line rate",
        "between ECMP and per-packet (CONGA, Alizadeh et al., SIGCOMM 2014: flowlet balancing recovers most of the "
        "ECMP loss)", "Alizadeh et al., \"CONGA: Distributed Congestion-Aware Load Balancing for Datacenters\", "
        "SIGCOMM 2014", 0.6, 0.95, lambda: _permutation(16, "adaptive", granularity="flowlet")),
    Row("32-to-1 incast: completion with adaptive routing / with ECMP", "1.0: the receiver's link is the "
        "bottleneck, no path choice helps (any load-balancing paper's incast case)",
        "bottleneck argument: all 32 flows share the receiver's host link", 0.999, 1.001, _incast_ratio),
    Row("ECMP on one leaf's uplinks, 32 flows on 32 uplinks, 200 seeds: simulated / exact mean busiest-uplink load",
        "1.0 (Gonnet 1981, exact E[max] of balls into bins: perf.ecmp)",
        "G. H. Gonnet, J. ACM 28(2), 1981; fabricplan.perf.ecmp.expected_max_load", 0.95, 1.05,
        _uplink_collisions),
    Row("ECMP all-to-all, 256 nodes, 16 peers in flight, 2-tier Clos: efficiency", "0.60 (Ethernet at scale, "
        "NVIDIA on Colossus)", COLOSSUS, 0.45, 0.75, _alltoall_ecmp, gated=False,
        note="checked only: the vendor figure is for a 100,000-GPU production mix, not this pattern"),
)


def run_rows(rows=ROWS) -> list[tuple[Row, float, bool]]:
    """Every row with its simulated value and whether it lies in its band."""
    results = []
    for row in rows:
        value = row.run()
        results.append((row, value, row.low <= value <= row.high))
    return results
