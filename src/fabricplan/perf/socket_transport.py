"""NCCL's socket transport (kernel TCP) and GPUDirect-TCPX: per-NIC bandwidth and latency.

A fabric profile with a ``socket`` block (``catalog/data/fabrics.yaml``) does not run at a fixed
per-NIC bandwidth: what NCCL's Socket network achieves is the smallest of

* the link's TCP goodput (:func:`tcp_goodput_fraction`),
* the connections' socket throughput: sockets x threads (:func:`threads_and_sockets`, NCCL's auto
  values by NIC vendor :func:`auto_threads_and_sockets`), the sockets one message uses
  (:func:`sockets_per_message`), the static equal split over them with per-core receive processing
  and per-flow caps (:func:`connection_gbps`), times the connections per NIC,
* the host bounce: GPU -> pinned host -> socket buffer -> NIC and back, against PCIe and DRAM
  (:func:`pcie_bounce_bound_gbytes_per_s`, :func:`dram_bounce_bound_gbytes_per_s`);

GPUDirect-TCPX / devmem TCP removes the bounce and the receive copy, pays a GPU-side unpack
(:func:`unpack_bound_gbytes_per_s`) and runs twice the channels. :func:`socket_nic_bandwidth`
combines them; :func:`socket_message_latency_us` and :func:`socket_per_peer_latency_us` are the
small-message and per-peer (all-to-all) costs. Every constant is a ``perf_defaults`` parameter.

Sections (§) refer to docs/reference/socket_transport.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fabricplan.catalog.inputs import is_array, minimum
from fabricplan.perf.params import perf_parameter, perf_table


def auto_threads_and_sockets(nic_vendor: str, catalog) -> tuple[int, int]:
    """NCCL's automatic (``NCCL_SOCKET_NTHREADS``, ``NCCL_NSOCKS_PERTHREAD``) by NIC vendor.

    AWS ENA -> (2, 8), Google gVNIC -> (4, 1), any other vendor -> (0, 0): no helper thread and no
    data socket (the payload rides the control socket). net_socket.cc L358-L389, §2.
    """
    if nic_vendor == "aws_ena":
        return (int(perf_parameter("socket_auto_threads_aws_ena", catalog)),
                int(perf_parameter("socket_auto_sockets_per_thread_aws_ena", catalog)))
    if nic_vendor == "gcp_gvnic":
        return (int(perf_parameter("socket_auto_threads_gcp_gvnic", catalog)),
                int(perf_parameter("socket_auto_sockets_per_thread_gcp_gvnic", catalog)))
    return int(perf_parameter("socket_auto_threads_generic", catalog)), 0


def threads_and_sockets(nthreads: int, nsocks_per_thread: int, max_threads: int, max_sockets: int) -> tuple[int, int]:
    """(helper threads, data sockets) of one connection after NCCL's caps.

    ``threads = min(nthreads, max_threads)``; if ``threads x nsocks_per_thread > max_sockets`` the
    sockets per thread are cut to ``max_sockets // threads``; sockets = threads x sockets per
    thread. No thread means no data socket. net_socket.cc L348-L405, §2.
    """
    threads = max(min(nthreads, max_threads), 0)
    if threads == 0:
        return 0, 0
    per_thread = max(nsocks_per_thread, 0)
    if threads * per_thread > max_sockets:
        per_thread = max_sockets // threads
    return threads, threads * per_thread


def sockets_per_message(n_sockets: int, message_bytes: float, min_task_bytes: int) -> int:
    """Streams one message of ``message_bytes`` travels on: ``min(nSocks, ceil(S / 64 KiB))``.

    A message is cut into tasks of ``max(min_task_bytes, ceil(S / nSocks))`` dealt round-robin
    over the sockets, so a message below 128 KiB uses one or two sockets. With no data socket the
    whole payload rides the control socket: 1 stream. net_socket.cc L608-L720, §2.
    """
    if n_sockets <= 0:
        return 1
    return max(1, min(n_sockets, math.ceil(message_bytes / min_task_bytes)))


def connection_gbps(active_sockets: int, n_threads: int, per_core_gbps: float,
                    per_flow_cap_gbps: float | None = None) -> float:
    """Throughput of one connection [Gb/s]: ``active x min(per_core / busiest, flow cap)``.

    The static equal split gives every active socket the same share, so the connection runs at
    ``active x`` its slowest socket (Jeaugey, NVIDIA/nccl-tests#83, NVIDIA/nccl#438). Sockets go to
    helper threads by index mod threads; a thread runs on one core, which processes at most
    ``per_core_gbps`` (Cai et al. SIGCOMM'21), so the busiest thread's
    ``ceil(active / min(threads, active))`` sockets each get ``per_core / busiest``. No helper thread
    (NCCL's default on a generic NIC): the proxy thread's core serves the stream. A cloud per-flow
    cap (AWS 5/10/25 Gb/s) bounds each socket. §2, §5, §6.
    """
    active = max(active_sockets, 1)
    cores = min(max(n_threads, 1), active)
    busiest = math.ceil(active / cores)
    per_socket = per_core_gbps / busiest
    if per_flow_cap_gbps is not None:
        per_socket = minimum(per_socket, per_flow_cap_gbps)
    return active * per_socket


def tcp_goodput_fraction(mtu_bytes: int, header_bytes: int, frame_overhead_bytes: int) -> float:
    """Share of the line rate that carries TCP payload: ``(MTU - headers) / (MTU + framing)``.

    IPv4 + TCP + timestamps = 52 B per segment, Ethernet preamble, header, FCS and gap 38 B per
    frame (RFC 791/9293/7323, IEEE 802.3): 0.942 at MTU 1500, 0.994 at 9000.
    """
    return (mtu_bytes - header_bytes) / (mtu_bytes + frame_overhead_bytes)


def pcie_bounce_bound_gbytes_per_s(pcie_x16_gbytes_per_s: float, shared_uplink: bool) -> float:
    """Per-NIC bound of the host bounce on PCIe [GB/s]: ``pcie / crossings``.

    Every socket byte crosses PCIe twice per node and direction (GPU <-> root complex, root complex
    <-> NIC); when GPU and NIC sit behind one PCIe switch, both crossings use its uplink (2),
    otherwise each link carries it once (1). NCCL's x16 link value per generation (topo.cc). §6.
    """
    return pcie_x16_gbytes_per_s / (2 if shared_uplink else 1)


def dram_bounce_bound_gbytes_per_s(dram_gbytes_per_s: float, touches_per_byte: float, nics_per_node: int,
                                   directions: int = 2) -> float:
    """Per-NIC bound of the host bounce on DRAM [GB/s]: ``dram / (touches x directions x NICs)``.

    Each payload byte is touched ~4 times in host DRAM per direction (GPU store, kernel copy read
    and write, NIC DMA); a ring node sends and receives at the same rate (``directions = 2``) on
    every NIC of the node at once. §6 (derived).
    """
    return dram_gbytes_per_s / (touches_per_byte * directions * max(nics_per_node, 1))


def unpack_bound_gbytes_per_s(hbm_tbytes_per_s: float, nics_per_gpu: float) -> float:
    """Per-NIC bound of GPUDirect-TCPX's receive unpack [GB/s]: ``HBM / (2 x NICs per GPU)``.

    Payload lands in 4 KiB pages scattered in GPU memory; NCCL's device unpack reads and writes
    each byte once more in HBM (src/device/network/unpack/, §5). Far from binding on HBM3.
    """
    return hbm_tbytes_per_s * 1000.0 / (2.0 * max(nics_per_gpu, 1e-9))


def socket_message_latency_us(host_stack_us: float, syscall_us: float, message_bytes: float,
                              inline_bytes: int) -> float:
    """One-way time of one socket message over the host stacks [us] (wire and switches excluded).

    ``host_stack + syscalls x syscall_us``: the sender writes a 4-byte size header on the control
    socket and the payload on a data socket, the receiver reads both (4 calls); a payload of at
    most ``inline_bytes`` (NCCL >= 2.27) rides behind the header (2 calls). net_socket.cc, §2.
    ``inline_bytes = 0`` models releases before 2.27.
    """
    calls = 2 if 0 < message_bytes <= inline_bytes else 4
    return host_stack_us + calls * syscall_us


def socket_per_peer_latency_us(syscall_us: float) -> float:
    """Proxy CPU time per peer message of an all-to-all [us]: ``2 x syscall_us``.

    The proxy thread serves the peers one after another; each peer costs a header send and a
    payload send (and the two receives on the peer's proxy, in parallel). §2.
    """
    return 2.0 * syscall_us


@dataclass(frozen=True)
class SocketBandwidth:
    """Achievable per-NIC bandwidth of the socket transport and each bound [GB/s] (floats, or numpy
    arrays of draws where :func:`socket_nic_bandwidth` was given drawn figures)."""

    variant: str
    threads: int
    sockets: int
    active_sockets: int
    connections_per_nic: int
    link_gbytes_per_s: float
    sockets_gbytes_per_s: float
    pcie_gbytes_per_s: float
    dram_gbytes_per_s: float
    unpack_gbytes_per_s: float
    gbytes_per_s: float
    limit: str


def socket_settings(socket, catalog) -> tuple[int, int]:
    """(threads, data sockets) of a profile's ``socket`` block: its settings or NCCL's auto values."""
    auto_threads, auto_sockets = auto_threads_and_sockets(socket.nic_vendor, catalog)
    nthreads = auto_threads if socket.nthreads is None else socket.nthreads
    per_thread = auto_sockets if socket.nsocks_per_thread is None else socket.nsocks_per_thread
    return threads_and_sockets(nthreads, per_thread, int(perf_parameter("socket_max_threads", catalog)),
                               int(perf_parameter("socket_max_sockets", catalog)))


def _by_compute_capability(table: dict, compute_capability: int) -> float:
    table = {int(k): float(v) for k, v in table.items()}
    eligible = [cc for cc in table if cc <= compute_capability]
    return table[max(eligible)] if eligible else table[min(table)]


#: The socket figures (``perf_defaults`` names) :func:`socket_nic_bandwidth` takes as arrays of draws
#: in ``figures``: the ranged numbers the socket-transport bandwidth is made of (the Monte Carlo draws
#: them; the devmem share acts on ``gpudirect_tcpx`` only, the others on the ``kernel`` variant only).
SOCKET_DRAWN = ("tcp_receive_gbps_per_core", "socket_dram_touches_per_byte", "host_dram_sustained_fraction",
                "host_dram_peak_gbytes_per_s", "devmem_tcp_line_rate_fraction")


def socket_nic_bandwidth(profile, *, message_bytes: float, nics_per_node: int, gpus_per_node: int,
                         compute_capability: int, hbm_tbytes_per_s: float | None = None,
                         catalog, figures: Mapping[str, Any] | None = None) -> SocketBandwidth:
    """Per-NIC bandwidth [GB/s] of a socket-transport ``profile`` for messages of ``message_bytes``.

    ``min(link goodput, connections x connection rate, PCIe bounce, DRAM bounce, unpack)``:
    connections per NIC = NCCL channels per NIC (x2 for unpack networks, connect.cc); kernel
    sockets carry ``connection_gbps`` each, bounded per NIC by one proxy core when NCCL runs no
    helper thread; the bounce bounds apply to the ``kernel`` variant, the unpack bound to
    ``gpudirect_tcpx`` (whose link ceiling is devmem TCP's measured share of line rate, and whose
    receive copy, the per-core limit, is gone).

    ``figures`` gives any of :data:`SOCKET_DRAWN` by name in place of the catalog's value, as numbers
    or as numpy arrays of draws; the bounds and ``gbytes_per_s`` are then arrays, elementwise the
    same formula, and ``limit`` names the bound that is lowest on average.
    """
    given = figures or {}

    def figure(name: str):
        return given[name] if name in given else perf_parameter(name, catalog)

    socket = profile.socket
    tcpx = socket.variant == "gpudirect_tcpx"
    threads, sockets = socket_settings(socket, catalog)
    active = sockets_per_message(sockets, message_bytes, int(perf_parameter("socket_min_task_bytes", catalog)))
    channels = int(perf_parameter("nccl_channels_per_nic", catalog))
    if tcpx:
        channels *= int(perf_parameter("nccl_unpack_channel_multiplier", catalog))
    goodput = tcp_goodput_fraction(socket.mtu_bytes, int(perf_parameter("tcp_ip_header_bytes", catalog)),
                                   int(perf_parameter("ethernet_frame_overhead_bytes", catalog)))
    if tcpx:
        goodput = minimum(goodput, figure("devmem_tcp_line_rate_fraction"))
    link = profile.link_rate_gbps / 8.0 * goodput
    per_core = math.inf if tcpx else figure("tcp_receive_gbps_per_core")
    streams = channels * connection_gbps(active, threads, per_core, socket.per_flow_cap_gbps)
    if threads == 0 and not tcpx:  # one proxy thread per GPU progresses every connection
        streams = minimum(streams, per_core)
    sockets_bound = streams / 8.0
    pcie_x16 = _by_compute_capability(perf_table("pcie_x16_gbytes_per_s", catalog), compute_capability)
    if tcpx:  # NIC <-> GPU peer to peer below the switch: one crossing of the NIC's link
        pcie, dram = pcie_x16, math.inf
        nics_per_gpu = nics_per_node / max(gpus_per_node, 1)
        unpack = unpack_bound_gbytes_per_s(hbm_tbytes_per_s, nics_per_gpu) if hbm_tbytes_per_s else math.inf
    else:
        pcie = pcie_bounce_bound_gbytes_per_s(pcie_x16, socket.gpu_nic_share_pcie_uplink)
        dram_total = figure("host_dram_peak_gbytes_per_s") * figure("host_dram_sustained_fraction")
        dram = dram_bounce_bound_gbytes_per_s(dram_total, figure("socket_dram_touches_per_byte"), nics_per_node)
        unpack = math.inf
    bounds = {"link": link, "sockets": sockets_bound, "pcie": pcie, "dram": dram, "unpack": unpack}
    if any(is_array(bound) for bound in bounds.values()):
        import numpy as np

        lowest = np.minimum.reduce(np.broadcast_arrays(*(np.asarray(b, dtype=float) for b in bounds.values())))
        limit = min(bounds, key=lambda k: float(np.mean(bounds[k])))
    else:
        limit = min(bounds, key=lambda k: bounds[k])
        lowest = bounds[limit]
    return SocketBandwidth(variant=socket.variant, threads=threads, sockets=sockets, active_sockets=active,
                           connections_per_nic=channels, link_gbytes_per_s=link, sockets_gbytes_per_s=sockets_bound,
                           pcie_gbytes_per_s=pcie, dram_gbytes_per_s=dram, unpack_gbytes_per_s=unpack,
                           gbytes_per_s=lowest, limit=limit)


def socket_inline_bytes(profile, nccl_version: str | None = None, *, catalog) -> int:
    """Inline payload limit for ``nccl_version`` (0 before 2.27, when NCCL had no inlining)."""
    if nccl_version is not None:
        major, minor = (int(x) for x in nccl_version.split(".")[:2])
        if (major, minor) < (2, 27):
            return 0
    return int(perf_parameter("socket_inline_bytes", catalog))
