"""A job's collective on a whole design: the design's cabled fabric, the job's nodes, NCCL's connections.

:func:`design_collective` is the per-design, per-placement entry point: it cables the design's
sized fabric (:func:`fabricplan.sim.fabric.design_network`: every NIC, leaf, spine and core, with
the design's port speed), puts the job's ``n_nodes`` nodes where the scheduler would
(:func:`fabricplan.sim.fabric.job_nodes`: packed in rank order with topology-aware scheduling,
scattered at random without), opens every NIC's connections for the pattern
(:mod:`fabricplan.sim.traffic`) and simulates them (:func:`fabricplan.sim.flowsim.simulate`).
Defaults come from the design (routing from the fabric profile, placement from the spec's
``operations.topology_aware_scheduling``) and from ``perf_defaults`` (channels per NIC, queue
pairs per connection, all-to-all peers in flight).
"""

from __future__ import annotations

from fabricplan.errors import InputError
from fabricplan.sim import traffic
from fabricplan.sim.fabric import design_network, job_nodes, node_hosts
from fabricplan.sim.flowsim import FlowResult, simulate
from fabricplan.sim.params import sim_parameter

PATTERNS = ("ring", "tree", "all_to_all", "permutation")


def pattern_connections(pattern: str, ranks, *, channels_per_nic: int, peers: int, channels_per_peer: int,
                        seed: int = 0):
    """``(src, dst)`` of ``pattern`` over ``ranks`` (nodes x NICs host ids, rank order)."""
    if pattern == "ring":
        return traffic.ring(ranks, channels_per_nic)
    if pattern == "tree":
        return traffic.tree(ranks, channels_per_nic)
    if pattern == "all_to_all":
        return traffic.all_to_all(ranks, peers, channels_per_peer)
    if pattern == "permutation":
        flat = ranks.ravel()
        src, dst = traffic.permutation(len(flat), seed)
        return flat[src], flat[dst]
    raise InputError(f"unknown pattern '{pattern}'; known: {', '.join(PATTERNS)}", location="pattern")


def design_collective(design, pattern: str, *, n_nodes: int | None = None, routing: str | None = None,
                      aligned: bool | None = None, qps: int | None = None, seed: int = 0, size_bytes: float = 1e6,
                      catalog, network=None) -> FlowResult:
    """Simulate ``pattern`` for a job of ``n_nodes`` nodes (default: every node) on ``design`` (a
    :class:`~fabricplan.design.FabricDesign`); see the module docstring. ``network`` reuses a
    network already built with :func:`design_network` for this design."""
    size = design.size
    if size.tiers < 1:
        raise InputError("a single node has no scale-out fabric to simulate", location="cluster.gpus")
    profile = design.network.profile
    n_nodes = size.nodes if n_nodes is None else int(n_nodes)
    aligned = design.network.layout.topology_aware_scheduling if aligned is None else aligned
    routing = routing or ("adaptive" if profile.routing == "adaptive" else "ecmp")
    qps = int(qps or sim_parameter("nccl_ib_qps_per_connection", catalog))
    network = network or design_network(size, link_gbps=design.hardware.port_speed_gbps, catalog=catalog)
    ranks = node_hosts(job_nodes(size.nodes, n_nodes, aligned=aligned, seed=seed), size.nics_per_node)
    src, dst = pattern_connections(pattern, ranks, channels_per_nic=int(sim_parameter("nccl_channels_per_nic", catalog)),
                                   peers=int(sim_parameter("nccl_alltoall_peers_in_flight", catalog)),
                                   channels_per_peer=int(sim_parameter("nccl_channels_per_net_peer", catalog)),
                                   seed=seed)
    return simulate(network, src, dst, size_bytes, pattern=pattern, routing=routing, qps=qps, seed=seed)
