"""The fluid congestion model: DCQCN fixed point and dynamics, PFC, credits, TCP, conservation.

Each reproduction states its tolerance. Published behaviour: CoNEXT'16 (Zhu et al., 'ECN or Delay',
section 4), DCQCN SIGCOMM'15, the incast-collapse literature (Vasudevan et al., SIGCOMM'09).
"""

from __future__ import annotations

import numpy as np
import pytest

from fabricplan.catalog import load_catalog
from fabricplan.sim.dcqcn import dcqcn_params, fixed_point
from fabricplan.sim.fluid import fluid_config, simulate_fluid
from fabricplan.sim.network import Flows, equal_cost_paths, fat_tree
from fabricplan.sim.scenarios import run_scenarios

CATALOG = load_catalog()

LONG = 1e12  # bytes: flows that outlast the run


def _incast_run(n, link=40, delay_us=0.0, time_ms=12.0, step_us=2.0, k=8, starts=None, buffer_bytes=None,
                record_us=10.0, tail=0.5, **dcqcn):
    """n long DCQCN flows from hosts k/2.. (other leaves) to host 0, each on its first equal-cost path."""
    net = fat_tree(k, 2, link_gbps=link, buffer_bytes=buffer_bytes, catalog=CATALOG)
    src = list(range(k // 2, k // 2 + n))
    paths = [equal_cost_paths(net, s, 0)[0] for s in src]
    flows = Flows.from_paths(src, [0] * n, LONG, paths, start_us=starts)
    cfg = fluid_config(CATALOG, cc="dcqcn", pfc=False, step_us=step_us, max_time_us=time_ms * 1e3,
                       record_every=max(1, int(record_us / step_us)), extra_loop_delay_us=delay_us,
                       dcqcn=dcqcn_params(CATALOG, **dcqcn))
    result = simulate_fluid(net, flows, cfg)
    t = np.asarray(result.timeline["t_us"])
    queues = result.timeline["queue_kb"]
    bottleneck = queues[:, int(np.argmax(queues.mean(axis=0)))]
    late = t >= time_ms * 1e3 * (1 - tail)
    total = result.timeline["rate_gbps"][late].sum(axis=1)
    return {"result": result, "queue_kb": bottleneck[late].mean(), "queue_std": bottleneck[late].std(),
            "util_gbps": total.mean(), "rate_std": total.std(), "cfg": cfg}


def test_fluid_fixed_point_matches_the_closed_form():
    # 2 flows at 40G, one bottleneck, loop delay = the path's round trip (8 us): the time-averaged
    # queue, the rates and alpha settle at the fixed point of CoNEXT'16 eq. (p_fixed) within 10 %.
    run = _incast_run(2, time_ms=60.0, step_us=2.0, tail=0.15)
    cfg = run["cfg"]
    closed = fixed_point(40, 2, cfg.dcqcn.with_values(packet_bytes=cfg.packet_bytes))
    result = run["result"]
    assert run["queue_kb"] == pytest.approx(closed.queue_bytes / 1e3, rel=0.10)
    assert result.rate_end_gbps == pytest.approx([closed.rate_gbps] * 2, rel=0.10)
    assert result.alpha_end == pytest.approx([closed.alpha] * 2, rel=0.10)
    # the cube-root (Taylor) form of dcqcn.md overestimates the same queue by 10-30 %
    assert closed.queue_taylor_bytes > 1.1 * closed.queue_bytes


def test_two_dcqcn_flows_at_40g_converge_to_fair_share():
    # flow 1 alone at line rate, flow 2 joins at 2 ms: within 10 % of the 20 Gb/s fair share well
    # inside the CoNEXT'16 bound (97 ms for N = 2), and the link stays full.
    run = _incast_run(2, time_ms=30.0, step_us=2.0, starts=[0.0, 2000.0])
    rates = run["result"].rate_end_gbps
    assert abs(rates[0] - rates[1]) < 0.1 * 20
    assert rates.sum() == pytest.approx(40, rel=0.02)
    assert run["util_gbps"] == pytest.approx(40, rel=0.02)


@pytest.fixture(scope="module")
def ten_flows():
    """N = 10 at 40G (the paper's unstable case at 85 us), 12 ms each; the varied knob in the key."""
    cases = {"default": {}, "delay85": {"delay_us": 85.0}, "g16": {"g": 1 / 16},
             # the CoNEXT'16 model has no hyper increase: R_HAI = R_AI turns it off
             "delay85_long": {"delay_us": 85.0, "time_ms": 30.0, "tail": 0.3, "rhai_mbps": 40.0},
             "rai10_long": {"delay_us": 85.0, "rai_mbps": 10.0, "rhai_mbps": 10.0, "time_ms": 30.0, "tail": 0.3}}
    return {name: _incast_run(10, **kwargs) for name, kwargs in cases.items()}


def test_large_loop_delay_makes_dcqcn_oscillate(ten_flows):
    # CoNEXT'16 figure 10: 10 flows are stable at a small delay and oscillate at 85 us, losing throughput
    base, slow = ten_flows["default"], ten_flows["delay85"]
    assert slow["rate_std"] > 2 * base["rate_std"]
    assert slow["util_gbps"] < base["util_gbps"] - 2.0
    assert base["util_gbps"] == pytest.approx(40, rel=0.03)


def test_smaller_rai_damps_the_oscillation(ten_flows):
    # CoNEXT'16 section 4.2: "Smaller R_AI means flows increase their rate more gently, and stabilizes
    # the system" -- at the unstable 85 us, 10 Mb/s swings less than 40 Mb/s (over the last 9 of 30 ms),
    # with the paper's model (no hyper increase; with R_HAI = 200 Mb/s the hyper increase dominates
    # the recovery and R_AI alone no longer damps it)
    default, gentle = ten_flows["delay85_long"], ten_flows["rai10_long"]
    assert gentle["rate_std"] < 0.7 * default["rate_std"]
    assert gentle["queue_std"] < default["queue_std"]


def test_larger_g_is_less_stable(ten_flows):
    # g is the EWMA gain of alpha; the DCTCP analysis bounds it for stability (Alizadeh et al.,
    # SIGMETRICS'11) and DCQCN picked 1/256 (SIGCOMM'15 section 5.3): g = 1/16 swings more.
    assert ten_flows["g16"]["rate_std"] > ten_flows["default"]["rate_std"]


def test_larger_kmax_holds_a_longer_queue():
    # q* = p*/Pmax (Kmax-Kmin) + Kmin: the queue grows with Kmax (CoNEXT'16 section 4.2 trade-off).
    # A 4 MB buffer so that neither run drops.
    small = _incast_run(2, time_ms=40.0, buffer_bytes=4e6)
    large = _incast_run(2, time_ms=40.0, buffer_bytes=4e6, kmax_kb=1000)
    assert large["queue_kb"] > 2 * small["queue_kb"]
    assert large["result"].dropped_bytes.sum() == 0 and small["result"].dropped_bytes.sum() == 0


# ---------------------------------------------------------------- incast with PFC, credits, TCP

@pytest.fixture(scope="module")
def incast():
    """16-to-1 incast of 1 MB on a k=8 two-tier tree at 100G with each flow control."""
    runs = {}
    for name, kwargs in {"pfc": {"cc": "dcqcn", "pfc": "on"}, "none_pfc": {"cc": "none", "pfc": "on"},
                         "lossy": {"cc": "none", "pfc": "off"}, "ib": {"cc": "ib-credit"},
                         "ibcc": {"cc": "ib-cc"}}.items():
        runs[name] = run_scenarios("incast", k=8, senders=16, flow_size="1MB", max_time_ms=20, catalog=CATALOG, **kwargs)
    return runs


def _paused(result, src_tier, dst_tier):
    net, fl = result.network, result.fluid
    links = np.flatnonzero((net.node_tier[net.link_src] == src_tier) & (net.node_tier[net.link_dst] == dst_tier))
    return fl.pause_us[links]


def test_incast_with_pfc_is_lossless_and_pauses_reach_the_senders_switch(incast):
    for name in ("pfc", "none_pfc"):
        run = incast[name]
        doc = run.document()
        assert doc["drops_bytes"] == 0 and doc["completed"] == 16
        # PAUSE from the spines reaches the senders' leaves (leaf -> spine links paused) and the
        # senders' NICs (host -> leaf links paused): 4 hops back from the receiver
        senders_leaves = np.unique(run.network.leaf_of(np.arange(4, 20)))
        leaf_up = [run.network.link_ids(leaf, spine) for leaf in senders_leaves
                   for spine in np.flatnonzero(run.network.node_tier == 2)]
        assert max(run.fluid.pause_us[np.asarray(leaf_up)]) > 0
        assert _paused(run, 0, 1).max() > 0
        assert doc["pause_spread_hops"] == 4
        # PFC keeps every lossless ingress within XOFF + headroom
        assert np.all(run.fluid.max_ingress_bytes <= run.fluid.ingress_limit_bytes + 1e-6)


def test_incast_without_pfc_or_credits_drops(incast):
    doc = incast["lossy"].document()
    assert doc["drops_packets"] > 10
    assert doc["pfc_paused_ports"] == 0


def test_infiniband_credits_are_lossless_without_pause_frames(incast):
    for name in ("ib", "ibcc"):
        run = incast[name]
        doc = run.document()
        assert doc["drops_bytes"] == 0 and doc["completed"] == 16
        assert doc["pfc_paused_ports"] == 0
        # back-pressure spreads as a congestion tree of credit-starved ports, up to the senders' leaves
        assert doc["credit_blocked_ports"] >= 8
        assert np.all(run.fluid.max_ingress_bytes <= run.fluid.ingress_limit_bytes + 1e-6)
    assert incast["ibcc"].document()["cnps"] > 0  # BECNs


def test_victim_flow_suffers_head_of_line_blocking_under_pfc(incast):
    # the victim (host 20 -> host 1) shares paused links with the incast: PFC slows it several-fold
    assert incast["none_pfc"].document()["victim_slowdown"] > 3
    assert incast["lossy"].document()["victim_slowdown"] < incast["none_pfc"].document()["victim_slowdown"]


def test_tcp_incast_collapses_past_the_buffer():
    # Synchronised incast (Vasudevan et al., SIGCOMM'09, figure 1): while N senders fit their windows
    # in the 375 KB buffer, goodput stays near line rate; past it, flows lose whole windows, wait the
    # 200 ms minimum RTO and goodput collapses by over 10x.
    few = run_scenarios("incast", k=16, senders=4, cc="tcp", max_time_ms=600, catalog=CATALOG).document()
    many = run_scenarios("incast", k=16, senders=64, cc="tcp", max_time_ms=600, catalog=CATALOG).document()
    assert few["goodput_gbps"] > 80 and few["tcp_timeouts"] == 0
    assert many["tcp_timeouts"] > 0 and many["drops_packets"] > 0
    # 64 senders have not all finished in 600 ms: no goodput of a finished run, but what moved in the window
    assert not many["complete"] and many["goodput_gbps"] is None
    assert many["delivered_gbps_in_window"] < few["goodput_gbps"] / 10


def test_ecmp_collisions_on_a_permutation_and_adaptive_routing():
    # ECMP hash collisions stretch a permutation's tail; adaptive routing and spraying recover most
    # of it; on an incast the receiver's link is the bottleneck, so adaptive routing cannot help.
    perm = {r: run_scenarios("permutation", k=8, routing=r, cc="none", max_time_ms=5, catalog=CATALOG).document()
            for r in ("ecmp", "adaptive", "spray")}
    ideal = perm["spray"]["fct_us"]["max"]
    assert perm["ecmp"]["fct_us"]["max"] > 1.5 * ideal
    assert perm["adaptive"]["fct_us"]["max"] < perm["ecmp"]["fct_us"]["max"]
    assert perm["spray"]["goodput_gbps"] > perm["ecmp"]["goodput_gbps"]
    inc = {r: run_scenarios("incast", k=8, senders=8, routing=r, cc="none", max_time_ms=5, catalog=CATALOG).document()
           for r in ("ecmp", "adaptive")}
    assert inc["adaptive"]["fct_us"]["max"] == pytest.approx(inc["ecmp"]["fct_us"]["max"], rel=0.05)


# ---------------------------------------------------------------- conservation properties

@pytest.mark.parametrize("cc, pfc, stop_ms", [("dcqcn", "on", 0.3), ("none", "off", 0.3), ("ib-credit", "on", 0.3),
                                               ("tcp", "off", 0.3), ("dcqcn", "off", 2.0), ("none", "on", 5.0)])
def test_bytes_are_conserved_and_nothing_goes_negative(cc, pfc, stop_ms):
    run = run_scenarios("incast,permutation", k=8, senders=16, flow_size="256KB", cc=cc, pfc=pfc,
                        max_time_ms=stop_ms, catalog=CATALOG)
    fl = run.fluid
    sent = fl.injected_bytes.sum()
    accounted = fl.delivered_bytes.sum() + fl.queued_bytes_end + fl.in_flight_bytes_end + fl.dropped_bytes.sum()
    assert accounted == pytest.approx(sent, rel=1e-9, abs=1e-3)      # bytes in = out + queued + dropped
    assert fl.min_queue_bytes >= -1e-6                                 # no negative queue
    assert fl.min_rate_gbps >= 0                                       # no negative rate
    assert np.all(fl.delivered_bytes <= fl.wire_bytes + 1e-6)
    if run.fluid.config.lossless:
        assert fl.dropped_bytes.sum() == 0
        assert np.all(fl.max_ingress_bytes <= fl.ingress_limit_bytes + 1e-6)


def test_several_jobs_share_the_fabric():
    doc = run_scenarios("incast,permutation", k=8, senders=8, flow_size="256KB", max_time_ms=10, catalog=CATALOG).document()
    assert set(doc["jobs"]) == {"incast", "permutation"}
    assert doc["jobs"]["incast"]["flows"] == 8 and doc["jobs"]["permutation"]["flows"] == 32
    alone = run_scenarios("permutation", k=8, flow_size="256KB", max_time_ms=10, catalog=CATALOG).document()
    # sharing with an incast slows the permutation's tail
    assert doc["jobs"]["permutation"]["fct_us"]["max"] > alone["fct_us"]["max"]
