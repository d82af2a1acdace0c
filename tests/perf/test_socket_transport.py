"""NCCL's socket transport model (perf/socket_transport.py) and the fabric latency of p2p traffic."""

from __future__ import annotations

import math

import pytest

from fabricplan.catalog import load_catalog
from fabricplan.design import fabric_as_built
from fabricplan.perf import socket_transport as st
from fabricplan.perf.collectives import collective_time
from fabricplan.perf.latency import point_to_point_latency
from validation.perf import (
    calibrated_tcp_host_stack_us,
    socket_transport_failures,
    socket_transport_rows,
)

CATALOG = load_catalog()
# SHARP is off as installed (NCCL_COLLNET_ENABLE=0): tests of CollNet/NVLS-SHARP turn it on.
IB_SHARP = fabric_as_built(CATALOG, "infiniband-ndr", sharp=True)
H100 = CATALOG.gpu("h100-sxm")


# --- mechanism functions: exact arithmetic ---------------------------------------------------------

def test_auto_threads_and_sockets_by_nic_vendor():
    # net_socket.cc L358-L389: AWS 2 x 8, GCP 4 x 1, anything else 0 helper threads.
    assert st.auto_threads_and_sockets("aws_ena", CATALOG) == (2, 8)
    assert st.auto_threads_and_sockets("gcp_gvnic", CATALOG) == (4, 1)
    assert st.auto_threads_and_sockets("generic", CATALOG) == (0, 0)


def test_threads_and_sockets_caps():
    assert st.threads_and_sockets(4, 4, 16, 64) == (4, 16)
    assert st.threads_and_sockets(32, 1, 16, 64) == (16, 16)   # threads clamped to 16
    assert st.threads_and_sockets(8, 16, 16, 64) == (8, 64)    # 8 x 16 = 128 > 64 -> 8 per thread
    assert st.threads_and_sockets(3, 30, 16, 64) == (3, 63)    # 64 // 3 = 21 per thread
    assert st.threads_and_sockets(0, 8, 16, 64) == (0, 0)      # no thread, no data socket


def test_sockets_per_message_is_min_of_sockets_and_64k_tasks():
    assert st.sockets_per_message(16, 8, 65536) == 1
    assert st.sockets_per_message(16, 65536, 65536) == 1
    assert st.sockets_per_message(16, 65537, 65536) == 2
    assert st.sockets_per_message(16, 128 * 1024, 65536) == 2
    assert st.sockets_per_message(16, 4 * 2**20, 65536) == 16
    assert st.sockets_per_message(0, 4 * 2**20, 65536) == 1    # control socket only


def test_connection_rate_is_sockets_times_the_slowest_socket():
    # 16 sockets on 4 threads: 4 per core, 42/4 = 10.5 Gb/s each, 16 x 10.5 = 168 Gb/s.
    assert st.connection_gbps(16, 4, 42.0) == pytest.approx(168.0)
    # 6 sockets on 4 threads: the busiest thread has 2, so every socket runs at 21: 126 Gb/s.
    assert st.connection_gbps(6, 4, 42.0) == pytest.approx(126.0)
    # AWS 16 sockets on 2 threads, 10 Gb/s per flow: min(42/8, 10) = 5.25 -> 84 Gb/s.
    assert st.connection_gbps(16, 2, 42.0, 10.0) == pytest.approx(84.0)
    # 8 sockets on 8 threads capped at 5 Gb/s per flow (outside a placement group): 40 Gb/s.
    assert st.connection_gbps(8, 8, 42.0, 5.0) == pytest.approx(40.0)
    assert st.connection_gbps(1, 0, 42.0) == pytest.approx(42.0)   # proxy thread, one stream


def test_tcp_goodput_fraction():
    assert st.tcp_goodput_fraction(1500, 52, 38) == pytest.approx(1448 / 1538)
    assert st.tcp_goodput_fraction(9000, 52, 38) == pytest.approx(8948 / 9038)
    assert st.tcp_goodput_fraction(1460, 52, 38) == pytest.approx(1408 / 1498)


def test_host_bounce_bounds():
    assert st.pcie_bounce_bound_gbytes_per_s(12.0, shared_uplink=True) == 6.0
    assert st.pcie_bounce_bound_gbytes_per_s(48.0, shared_uplink=False) == 48.0
    # 563.2 GB/s x 0.75 = 422.4; / (4 touches x 2 directions x 8 NICs) = 6.6 GB/s per NIC.
    assert st.dram_bounce_bound_gbytes_per_s(563.2 * 0.75, 4, 8) == pytest.approx(6.6)
    assert st.dram_bounce_bound_gbytes_per_s(422.4, 4, 1) == pytest.approx(52.8)
    assert st.unpack_bound_gbytes_per_s(3.35, 1.0) == pytest.approx(1675.0)


def test_socket_message_latency_and_per_peer_cost():
    # 4 calls (header + payload, both ends) x 1.12 us; payloads <= 128 B inline from 2.27: 2 calls.
    assert st.socket_message_latency_us(20.1, 1.12, 4096, 128) == pytest.approx(20.1 + 4.48)
    assert st.socket_message_latency_us(20.1, 1.12, 8, 128) == pytest.approx(20.1 + 2.24)
    assert st.socket_message_latency_us(20.1, 1.12, 8, 0) == pytest.approx(20.1 + 4.48)
    assert st.socket_per_peer_latency_us(1.12) == pytest.approx(2.24)
    tcp = CATALOG.fabric("ethernet-tcp")
    assert st.socket_inline_bytes(tcp, "2.17.1", catalog=CATALOG) == 0
    assert st.socket_inline_bytes(tcp, "2.30.7", catalog=CATALOG) == 128


def test_ethernet_tcp_per_nic_bandwidth_and_its_limit():
    tcp = CATALOG.fabric("ethernet-tcp")
    large = st.socket_nic_bandwidth(tcp, message_bytes=4 * 2**20, nics_per_node=8, gpus_per_node=8,
                                    compute_capability=90, catalog=CATALOG)
    assert (large.threads, large.sockets, large.active_sockets, large.connections_per_nic) == (4, 16, 16, 2)
    assert large.link_gbytes_per_s == pytest.approx(50.0 * 8948 / 9038)
    assert large.sockets_gbytes_per_s == pytest.approx(2 * 168.0 / 8)   # 42 GB/s
    assert large.pcie_gbytes_per_s == pytest.approx(24.0)               # Gen5 x16 48 / 2 crossings
    assert large.gbytes_per_s == pytest.approx(6.6) and large.limit == "dram"
    # The profile's displayed effective bandwidth is this value (it must not drift from the model).
    assert tcp.effective_bandwidth_gbytes_per_s == pytest.approx(large.gbytes_per_s, rel=0.01)
    # One NIC per node: the DRAM bound (52.8) lifts and PCIe's 24 GB/s binds.
    one = st.socket_nic_bandwidth(tcp, message_bytes=4 * 2**20, nics_per_node=1, gpus_per_node=1,
                                  compute_capability=90, catalog=CATALOG)
    assert one.gbytes_per_s == pytest.approx(24.0) and one.limit == "pcie"
    # A 64 KiB message uses one socket, alone on its core: 42 Gb/s x 2 connections = 10.5 GB/s.
    small = st.socket_nic_bandwidth(tcp, message_bytes=65536, nics_per_node=1, gpus_per_node=1,
                                    compute_capability=90, catalog=CATALOG)
    assert small.active_sockets == 1 and small.gbytes_per_s == pytest.approx(10.5) and small.limit == "sockets"
    # NCCL's own default on a generic NIC: no helper thread; one proxy core serves the NIC.
    default = tcp.model_copy(update={"socket": tcp.socket.model_copy(update={"nthreads": None,
                                                                            "nsocks_per_thread": None})})
    auto = st.socket_nic_bandwidth(default, message_bytes=4 * 2**20, nics_per_node=1, gpus_per_node=1,
                                   compute_capability=90, catalog=CATALOG)
    assert (auto.threads, auto.sockets, auto.active_sockets) == (0, 0, 1)
    assert auto.gbytes_per_s == pytest.approx(42.0 / 8) and auto.limit == "sockets"


def test_tcpx_has_no_host_bounce_and_doubles_channels():
    tcpx = CATALOG.fabric("ethernet-tcpx")
    bw = st.socket_nic_bandwidth(tcpx, message_bytes=4 * 2**20, nics_per_node=8, gpus_per_node=8,
                                 compute_capability=90, hbm_tbytes_per_s=3.35, catalog=CATALOG)
    assert bw.connections_per_nic == 4
    assert math.isinf(bw.dram_gbytes_per_s)
    assert bw.link_gbytes_per_s == pytest.approx(50.0 * 0.966)
    assert bw.pcie_gbytes_per_s == pytest.approx(48.0)
    assert bw.unpack_gbytes_per_s == pytest.approx(1675.0)
    assert bw.gbytes_per_s == pytest.approx(48.0) and bw.limit == "pcie"
    assert tcpx.effective_bandwidth_gbytes_per_s == pytest.approx(bw.gbytes_per_s, rel=0.01)


# --- the collective model on socket profiles -------------------------------------------------------

def test_ethernet_tcp_large_all_reduce_uses_the_socket_bandwidth():
    result = collective_time("all_reduce", 2**30, 16, 8, "ethernet-tcp", H100, catalog=CATALOG)
    assert result.per_nic_bandwidth_gbytes_per_s == pytest.approx(6.6)
    tcpx = collective_time("all_reduce", 2**30, 16, 8, "ethernet-tcpx", H100, catalog=CATALOG)
    assert tcpx.per_nic_bandwidth_gbytes_per_s == pytest.approx(48.0)
    ring = [collective_time("all_reduce", 2**30, 128, 1, f, H100, algorithm="ring", catalog=CATALOG)
            for f in ("ethernet-tcp", "ethernet-tcpx")]
    # One GPU and NIC per node: kernel TCP is PCIe-bounce bound (24 GB/s), TCPX at 48.
    assert ring[0].per_nic_bandwidth_gbytes_per_s == pytest.approx(24.0)
    assert ring[1].busbw_gbytes_per_s > 1.5 * ring[0].busbw_gbytes_per_s


def test_no_collnet_or_multinode_nvls_on_sockets():
    # Even a socket profile claiming in-network reduction gets no CollNet/NVLS (SHARP is a verbs plugin).
    tcp = CATALOG.fabric("ethernet-tcp").model_copy(update={"in_network_reduction": True})
    for algorithm in ("collnet_direct", "collnet_chain", "nvls"):
        with pytest.raises(Exception, match="not available"):
            collective_time("all_reduce", 2**30, 1024, 8, tcp, H100, algorithm=algorithm, catalog=CATALOG)
    assert collective_time("all_reduce", 2**30, 1024, 8, tcp, H100, algorithm="nvls_tree",
                           catalog=CATALOG).algorithm == "nvls_tree"
    ib = collective_time("all_reduce", 2**30, 1024, 8, IB_SHARP, H100, catalog=CATALOG)
    assert ib.algorithm == "collnet_chain"


# Values the model gave before issue 12 (commit 2b160ad): InfiniBand and RoCE collectives of NCCL's
# tuner must be bit for bit the same (the socket model and latencyInter change touch neither). Issue 14
# replaced adaptive routing's unsourced 10 % residual collision loss by NVIDIA's 95 % vs 60 %
# (12.5 %): InfiniBand values that carry an ECMP term moved in the 8th digit.
UNCHANGED_ALL_REDUCE_US = {
    ("infiniband-ndr", 8, 16): 34.972149450097646,  # issue 27: + NCCL's proxy op pick-up (9.77 us)
    # issue 14: adaptive routing keeps 12.5 % of the ECMP loss, not 10 %; issue 27 (SHARP): NVLS across nodes
    # moves its 8 B at the NVLS+SHARP data path (nccl_tuner.nvls_multinode_algbw_gbytes_per_s), 8th digit
    ("infiniband-ndr", 8, 1024): 43.00003569388921,
    # issue 27: + the proxy terms; then + NVLSTree's 256 KiB chunk stored and forwarded at the 2 network
    # crossings (nccl_tuner.nvls_tree_store_forward_us: 2 x 262,144 B x 128 ops / 376 GB/s = 178.5 us)
    ("infiniband-ndr", 2**30, 16): 4737.755648659611,
    ("infiniband-ndr", 2**30, 1024): 5860.687723840345,
    ("roce-v2", 8, 16): 36.31216425120773,
    ("roce-v2", 8, 1024): 123.12881567414331,
    ("roce-v2", 2**30, 16): 4744.315670861275,  # issue 27: + NVLSTree store-and-forward, 182.4 us (as NDR)
    ("roce-v2", 2**30, 1024): 13046.342221142831,
}


@pytest.mark.parametrize("key", sorted(UNCHANGED_ALL_REDUCE_US))
def test_ib_and_roce_all_reduce_unchanged(key):
    fabric, size, n = key  # the values were taken with SHARP on (the profile's default before it became an option)
    fabric = IB_SHARP if fabric == "infiniband-ndr" else fabric
    assert collective_time("all_reduce", size, n, 8, fabric, H100, catalog=CATALOG).time_us == \
        UNCHANGED_ALL_REDUCE_US[key]


def test_ib_send_recv_and_all_to_all_unchanged():
    # InfiniBand is NCCL's latency reference (latencyInter 0): the 9.31 us and 213.9 us stay, the
    # send plus NCCL's proxy op pick-up (9.77 us, issue 27) across nodes.
    assert collective_time("send_recv", 8, 16, 8, "infiniband-ndr", H100,
                           catalog=CATALOG).time_us == pytest.approx(9.30612765957447 + 9.77)
    assert collective_time("all_to_all", 8, 1024, 8, "infiniband-ndr", H100,
                           catalog=CATALOG).time_us == 213.9001726797277  # issue 14: sourced AR residual


def test_small_send_recv_and_all_to_all_latency_ordered_ib_roce_tcp():
    fabrics = ("infiniband-ndr", "roce-v2", "ethernet-tcp")
    send = [collective_time("send_recv", 8, 16, 8, f, H100, catalog=CATALOG) for f in fabrics]
    a2a = [collective_time("all_to_all", 8, 1024, 8, f, H100, catalog=CATALOG) for f in fabrics]
    assert send[0].time_us < send[1].time_us < send[2].time_us
    assert a2a[0].time_us < a2a[1].time_us < a2a[2].time_us
    # RoCE pays its extra one-way latency over IB once (1 Tomahawk-5 hop: 0.8 - 0.13 us).
    # (plus 8 B at 46 vs 47 GB/s and the ECMP share: ~1e-4 us)
    assert send[1].time_us - send[0].time_us == pytest.approx(0.67, abs=1e-3)
    assert send[1].fabric_latency_us == pytest.approx(0.67, abs=1e-9)
    # TCP: kernel stack 20.1 + 2 calls x 1.12 (8 B inline) + 0.8 switch - (1.3 + 0.13) over IB.
    assert send[2].fabric_latency_us == pytest.approx(20.1 + 2.24 + 0.8 - 1.3 - 0.13, abs=1e-9)
    # (plus the slower NIC's share of the 8 B and of LL's store-and-forward step: < 0.05 us), less NCCL's
    # proxy op pick-up on IB, which TCP's host stack, calibrated on a socket run, already holds.
    assert send[2].time_us - send[0].time_us == pytest.approx(
        send[2].fabric_latency_us - send[0].proxy_overhead_us, abs=0.05)
    assert send[0].proxy_overhead_us == pytest.approx(9.77) and send[2].proxy_overhead_us == 0.0
    # All-to-all on TCP: + 2 x 1.12 us of system calls per remote peer (1,016 of them).
    tcp_extra = a2a[2].time_us - a2a[0].time_us
    assert tcp_extra > 1016 * 2.24


def test_tcp_point_to_point_latency_has_the_socket_calls():
    tcp = CATALOG.fabric("ethernet-tcp")
    switch = CATALOG.switch(tcp.hardware.switch).port_to_port_latency_ns
    small = point_to_point_latency(tcp, switch, "same_leaf", 8, catalog=CATALOG)
    large = point_to_point_latency(tcp, switch, "same_leaf", 4096, catalog=CATALOG)
    assert small.host_stack_us == pytest.approx(20.1 + 2.24)
    assert large.host_stack_us == pytest.approx(20.1 + 4.48)
    old_release = point_to_point_latency(tcp, switch, "same_leaf", 8, catalog=CATALOG, nccl_version="2.17.1")
    assert old_release.host_stack_us == pytest.approx(20.1 + 4.48)


# --- validation against public socket-transport measurements ---------------------------------------

def test_socket_rows_within_their_tolerance():
    rows = socket_transport_rows()
    gated = [row for row in rows if row.tolerance is not None]
    assert len(rows) == 10 and len(gated) == 5
    assert {row.group for row in rows} == {"calibrated", "checked"}
    for row in gated:
        assert abs(row.error) <= row.tolerance, row
    assert socket_transport_failures(rows) == []


def test_calibration_row_sets_the_tcp_host_stack():
    # fabrics.yaml holds the value rounded to 0.1 us.
    assert calibrated_tcp_host_stack_us() == pytest.approx(CATALOG.fabric("ethernet-tcp").host_stack_latency_us,
                                                           abs=0.05)


def test_socket_validation_fails_past_tolerance():
    # Without the PCIe bounce (a x16 link carrying socket traffic once) the V100 100G rows miss.
    wider = CATALOG.with_values({"perf_defaults.parameters.pcie_x16_gbytes_per_s.value": {70: 24.0, 90: 48.0}})
    failures = socket_transport_failures(socket_transport_rows(wider))
    assert {row.quantity.split(":")[0] for row in failures} >= {"aws_p3dn_100g_allreduce", "v100_100g_1thread_allreduce"}
    slower = CATALOG.with_values({"fabrics.ethernet-tcp.host_stack_latency_us": 30.0})
    assert [row.quantity for row in socket_transport_failures(socket_transport_rows(slower))] == \
        ["azure_25g_bcast_8B: time_us"]


def test_drawn_socket_figures_give_the_scalar_model_at_each_drawn_value():
    """One function for a point and for draws: arrays of figures give, per draw, what the same
    function gives with the catalog set to that draw's values."""
    import numpy as np

    from fabricplan.catalog import load_catalog
    from fabricplan.perf.socket_transport import socket_nic_bandwidth

    catalog = load_catalog()
    for fabric in ("ethernet-tcp", "ethernet-tcpx"):
        profile = catalog.fabric(fabric)
        shape = dict(message_bytes=4 * 2**20, nics_per_node=8, gpus_per_node=8, compute_capability=90,
                     hbm_tbytes_per_s=3.35)
        values = {"tcp_receive_gbps_per_core": np.array([20.0, 42.0, 80.0]),
                  "socket_dram_touches_per_byte": np.array([4.0, 2.0, 1.0]),
                  "devmem_tcp_line_rate_fraction": np.array([0.9, 0.966, 0.99])}
        drawn = socket_nic_bandwidth(profile, figures=values, catalog=catalog, **shape).gbytes_per_s
        assert drawn.shape == (3,)
        for i in range(3):
            overlay = catalog.with_values({f"perf_defaults.parameters.{name}.value": float(v[i])
                                           for name, v in values.items()})
            assert drawn[i] == pytest.approx(socket_nic_bandwidth(profile, catalog=overlay, **shape).gbytes_per_s,
                                             rel=1e-12)
