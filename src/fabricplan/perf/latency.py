"""Point-to-point latency across a fabric: host stack, switch hops, cable, serialisation.

One-way time of one message between two GPUs' NICs::

    t = host_stack + n_switches * port_to_port + cable_propagation + message_bytes / link_rate
        (small messages: wire serialisation at line rate)
    t_bw = t_small(0 B) + message_bytes / effective_bandwidth      (bandwidth-bound regime)

``host_stack_latency_us`` is the fabric profile's end-host pair cost (kernel TCP vs RDMA verbs,
both NICs and PCIe, as perftest/ib_write_lat reports it back to back); switch latency comes from
the catalog switch; hops from the tier the two endpoints share: same leaf = 1 switch, same pod
(leaf-spine-leaf) = 3, across the core = 5. Host links are copper (DAC) only when the caller says
they are in-rack (``host_links_in_rack``, the ``leaf_spine`` style) and the fabric has a DAC;
otherwise fibre.

References
----------
.. [1] linux-rdma/perftest#131: ib_write_lat 0.93 us inline / 1.32 us not inline.
.. [2] Switch port-to-port latencies: catalog ``switches.yaml`` (sources per entry).
.. [3] Fibre group index 1.468: Corning SMF-28 datasheet (perf_defaults.yaml).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from fabricplan.errors import InputError
from fabricplan.perf.params import perf_parameter, perf_table, perf_value  # noqa: F401 - re-exported
from fabricplan.perf.socket_transport import socket_inline_bytes, socket_message_latency_us

HopClass = Literal["same_leaf", "same_pod", "cross_core"]
SWITCHES_BY_HOP_CLASS: dict[str, int] = {"same_leaf": 1, "same_pod": 3, "cross_core": 5}


@dataclass(frozen=True)
class LatencyBreakdown:
    """One-way point-to-point latency and its parts [us]."""

    fabric: str
    hop_class: str
    switches: int
    message_bytes: int
    host_stack_us: float
    switching_us: float
    propagation_us: float
    serialization_us: float
    total_us: float
    bandwidth_bound_us: float


def serialization_us(message_bytes: int, link_rate_gbps: float) -> float:
    """Time to put one message on the wire at line rate [us]: ``bytes x 8 / (Gb/s x 1000)``.

    Cut-through switches forward after the header, so the message is serialised once end to end
    (per-packet headers are not counted).
    """
    return message_bytes * 8.0 / (link_rate_gbps * 1000.0)


def host_stack_us(fabric, message_bytes: int = 8, *, nccl_version: str | None = None, catalog) -> float:
    """End-host pair cost of one message on ``fabric`` [us].

    RDMA profiles: ``host_stack_latency_us`` (perftest). Socket-transport profiles (``socket``
    block): the kernel TCP stack plus NCCL's socket system calls,
    :func:`fabricplan.perf.socket_transport.socket_message_latency_us` (payloads of at most 128 B
    ride inline from NCCL 2.27; ``nccl_version=None`` = a current release).
    """
    if getattr(fabric, "socket", None) is None:
        return fabric.host_stack_latency_us
    return socket_message_latency_us(fabric.host_stack_latency_us, perf_parameter("socket_syscall_us", catalog),
                                     message_bytes, socket_inline_bytes(fabric, nccl_version, catalog=catalog))


def point_to_point_latency(fabric, switch_port_to_port_ns: float, hop_class: HopClass | int = "same_leaf",
                           message_bytes: int = 8, *, host_links_in_rack: bool = False,
                           catalog, nccl_version: str | None = None) -> LatencyBreakdown:
    """One-way latency between two NICs on ``fabric`` (a catalog FabricProfile) [us].

    ``hop_class`` is "same_leaf", "same_pod", "cross_core" or a number of switches.
    ``host_links_in_rack``: the NIC-to-leaf links are in-rack cables (the ``leaf_spine`` ToR style,
    ``FabricSize.host_links_in_rack``); only then, and only if the fabric has a host DAC, do they
    propagate at copper speed. Otherwise (rail-optimised and other styles, or topology unknown)
    host links are optical, as the BOM counts them (cost/bom.py).
    Returns both the small-message time (serialised at line rate) and the bandwidth-bound time
    (``message_bytes / effective_bandwidth``). The host stack is :func:`host_stack_us` (the socket
    transport adds its system calls; ``nccl_version`` decides whether small payloads ride inline).
    """
    if message_bytes < 0:
        raise InputError(f"message size must be >= 0 bytes, got {message_bytes}")
    if isinstance(hop_class, int):
        switches, label = hop_class, f"{hop_class}_switches"
    elif hop_class in SWITCHES_BY_HOP_CLASS:
        switches, label = SWITCHES_BY_HOP_CLASS[hop_class], hop_class
    else:
        raise InputError(f"unknown hop class '{hop_class}'; known: {', '.join(SWITCHES_BY_HOP_CLASS)}")
    switching = switches * switch_port_to_port_ns / 1000.0
    copper = host_links_in_rack and fabric.hardware.host_dac is not None
    host_prop = perf_parameter("copper_propagation_ns_per_m" if copper else "fibre_propagation_ns_per_m", catalog)
    propagation = (2 * perf_parameter("host_link_length_m", catalog) * host_prop
                   + max(switches - 1, 0) * perf_parameter("switch_link_length_m", catalog)
                   * perf_parameter("fibre_propagation_ns_per_m", catalog)) / 1000.0
    wire = serialization_us(message_bytes, fabric.link_rate_gbps)
    host = host_stack_us(fabric, message_bytes, nccl_version=nccl_version, catalog=catalog)
    fixed = host + switching + propagation
    bandwidth_bound = fixed + message_bytes / (fabric.effective_bandwidth_gbytes_per_s * 1000.0)
    return LatencyBreakdown(fabric=fabric.id, hop_class=label, switches=switches, message_bytes=message_bytes,
                            host_stack_us=host, switching_us=switching,
                            propagation_us=propagation, serialization_us=wire, total_us=fixed + wire,
                            bandwidth_bound_us=max(bandwidth_bound, fixed + wire))
