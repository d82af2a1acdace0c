"""Fluid congestion dynamics: queues, RED/ECN, PFC, DCQCN, InfiniBand credits (and CC), TCP.

A time-stepped fluid model (step ``dt``, ``perf_defaults.sim_fluid_step_us``), vectorised with
numpy over *entries*: one entry per (flow, hop) of every flow's path (the CSR of
:class:`~fabricplan.sim.network.Flows`). Entry ``e`` holds the bytes of its flow waiting in the
egress queue of its hop's link (hop 0 is the sending NIC's queue). Per step:

1. **Arrivals** from the previous hop land after the link's propagation delay (whole steps, at
   least one; a ring buffer). On a lossy queue, bytes above the egress buffer are dropped, shared
   among the flows in proportion to what they brought this step.
2. **CP, RED/ECN** on egress (CoNEXT'16 assumes marking on egress): ``p(q) = 0`` below Kmin,
   ``(q-Kmin)/(Kmax-Kmin) Pmax`` up to Kmax, 1 above; a path marks with ``1 - prod(1-p)``.
3. **Service**: a link's capacity is shared among its unpaused priority queues in proportion to
   their backlog; within a queue each flow leaves in proportion to its bytes there (FIFO as a
   fluid). A queue whose downstream ingress asserted PFC XOFF (seen one propagation delay later)
   sends nothing; with InfiniBand credits a queue sends at most the free VL buffer downstream
   (buffer minus what sits there and what is on the wire): no pause frames, no loss.
4. **PFC** per ingress port and priority (the bytes at a switch that arrived on that link): XOFF
   at ``pfc_xoff_bytes``, XON at ``pfc_xon_bytes``; the headroom above XOFF is the in-flight
   volume, ``capacity x (2 propagation + 2 dt) + 2 packets`` (IEEE 802.1Qbb accounting,
   reference/pfc_headroom.md section 1.1, with the step as the response time).
5. **Senders**: DCQCN RP as the CoNEXT'16 per-flow fluid model (reference/dcqcn.md section 4.3)
   driven by the path marking probability and the flow's sending rate one control-loop delay ago
   (the path's round trip plus ``extra_loop_delay_us``), NP CNPs at most one per ``tau``;
   ``none``/``ib-credit`` send at line rate; ``ib-cc`` cuts the rate by a CCT step per BECN
   interval while a queue on the path is above the FECN threshold and recovers one step per CCTI
   timer; ``tcp`` is window-based (slow start from IW, congestion avoidance, halving on loss,
   a timeout of ``tcp_min_rto_us`` when fewer than ``dupack`` packets remain in flight to
   trigger fast retransmit, i.e. incast collapse). Dropped bytes are sent again.

All quantities are bytes of wire data (payload + headers) unless a name says payload. What this
model leaves out compared with a packet-level simulator is listed in docs/simulator.md.

``tcp`` runs a compiled copy of the step loop when numba is installed (``fluid_tcp_kernel.py``, the
same arithmetic in the same order: identical results, ~15x fewer us per step); every other mode,
and TCP with ``record_every`` or several priorities or propagation delays, runs the numpy loop here.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace

import numpy as np

from fabricplan.errors import InputError
from fabricplan.sim.network import HOST, Flows, Network

CC_MODES = ("dcqcn", "none", "ib-credit", "ib-cc", "tcp")

#: Program limits (not physical defaults).
MAX_STEPS = 20_000_000
MAX_ENTRIES = 5_000_000


@dataclass(frozen=True)
class FluidConfig:
    """Everything the fluid model needs besides the network and the flows (defaults: catalog)."""

    cc: str
    pfc: bool
    step_us: float
    payload_bytes: float
    header_bytes: float
    pfc_xoff_bytes: float | None      # None: sim_pfc_xoff_buffer_fraction of each port's buffer
    pfc_xon_bytes: float | None       # None: XOFF minus sim_pfc_resume_offset_bytes
    pfc_resume_offset_bytes: float
    pfc_xoff_buffer_fraction: float
    ib_vl_buffer_bytes: float
    ib_cc_threshold_bytes: float
    ib_cc_decrease_fraction: float
    ib_cc_recovery_us: float
    tcp_min_rto_us: float
    tcp_initial_window_segments: float
    tcp_dupack_threshold: float
    dcqcn: object                      # fabricplan.sim.dcqcn.DcqcnParams
    extra_loop_delay_us: float = 0.0
    max_time_us: float = 50_000.0
    record_every: int = 0              # keep a time series every this many steps (0: none)
    # run TCP mode's steps compiled when numba is installed (same results; fluid_tcp_kernel.py)
    accelerate: bool = field(default=True, repr=False, compare=False)

    @property
    def packet_bytes(self) -> float:
        return self.payload_bytes + self.header_bytes

    @property
    def lossless(self) -> bool:
        """Whether switch queues never drop: PFC on (RoCE) or credits (InfiniBand); TCP is lossy."""
        return self.cc in ("ib-credit", "ib-cc") or (self.pfc and self.cc != "tcp")

    @property
    def uses_pfc(self) -> bool:
        return self.pfc and self.cc in ("dcqcn", "none")

    @property
    def uses_credits(self) -> bool:
        return self.cc in ("ib-credit", "ib-cc")

    def with_values(self, **values) -> FluidConfig:
        return replace(self, **{k: v for k, v in values.items() if v is not None})


def fluid_config(catalog=None, **overrides) -> FluidConfig:
    """A :class:`FluidConfig` from ``perf_defaults`` (``sim_*``, ``tcp_*``, ``dcqcn_*``) plus overrides."""
    from fabricplan.sim.params import sim_parameter as perf_parameter
    from fabricplan.sim.dcqcn import dcqcn_params

    def value(name: str) -> float:
        return perf_parameter(name, catalog)

    config = FluidConfig(
        cc="dcqcn", pfc=True, step_us=value("sim_fluid_step_us"), payload_bytes=value("sim_packet_payload_bytes"),
        header_bytes=value("sim_packet_header_bytes"), pfc_xoff_bytes=None, pfc_xon_bytes=None,
        pfc_resume_offset_bytes=value("sim_pfc_resume_offset_bytes"),
        pfc_xoff_buffer_fraction=value("sim_pfc_xoff_buffer_fraction"),
        ib_vl_buffer_bytes=value("sim_ib_vl_buffer_bytes"), ib_cc_threshold_bytes=value("sim_ib_cc_threshold_bytes"),
        ib_cc_decrease_fraction=value("sim_ib_cc_rate_decrease_fraction"),
        ib_cc_recovery_us=value("sim_ib_cc_recovery_us"), tcp_min_rto_us=value("tcp_min_rto_us"),
        tcp_initial_window_segments=value("tcp_initial_window_segments"),
        tcp_dupack_threshold=value("tcp_dupack_threshold"), dcqcn=dcqcn_params(catalog))
    dcqcn = overrides.pop("dcqcn", None)
    config = config.with_values(**overrides)
    if dcqcn is not None:
        config = replace(config, dcqcn=dcqcn)
    return check_config(config)


def check_config(config: FluidConfig) -> FluidConfig:
    """InputError naming the CLI flag of the first bad setting."""
    if config.cc not in CC_MODES:
        raise InputError(f"must be one of {', '.join(CC_MODES)}, got '{config.cc}'", location="--cc")
    for name, flag, low in (("step_us", "--step-us", 0.0), ("payload_bytes", "--mtu", 0.0),
                            ("max_time_us", "--max-time-ms", 0.0)):
        number = getattr(config, name)
        if not math.isfinite(number) or number <= low:
            raise InputError(f"must be a number > {low:g}, got {number:g}", location=flag)
    for name, flag in (("pfc_xoff_bytes", "--pfc-xoff-kb"), ("pfc_xon_bytes", "--pfc-xon-kb")):
        number = getattr(config, name)
        if number is not None and (not math.isfinite(number) or number <= 0):
            raise InputError(f"must be a number of KB > 0, got {number / 1e3:g}", location=flag)
    if config.pfc_xoff_bytes is not None and config.pfc_xon_bytes is not None \
            and config.pfc_xon_bytes > config.pfc_xoff_bytes:
        raise InputError("must not exceed --pfc-xoff-kb", location="--pfc-xon-kb")
    if not math.isfinite(config.extra_loop_delay_us) or config.extra_loop_delay_us < 0:
        raise InputError("must be >= 0 us", location="--loop-delay-us")
    return config


@dataclass
class FluidResult:
    """What one fluid run measured (arrays per flow, per link or per queue; bytes are wire bytes)."""

    network: Network
    flows: Flows
    config: FluidConfig
    finish_us: np.ndarray           # per flow, when its last byte reached the receiver (nan: not done)
    fct_us: np.ndarray              # per flow, finish - start + ack return + store-and-forward (nan: not done)
    ideal_fct_us: np.ndarray        # per flow, alone on an idle path
    wire_bytes: np.ndarray          # per flow, bytes on the wire (payload + headers)
    delivered_bytes: np.ndarray     # per flow
    injected_bytes: np.ndarray      # per flow, including retransmissions
    dropped_bytes: np.ndarray       # per flow
    ecn_marks: np.ndarray           # per flow, expected marked packets
    cnps: np.ndarray                # per flow, expected CNPs (DCQCN) or BECNs (ib-cc)
    timeouts: np.ndarray            # per flow, TCP retransmission timeouts
    pause_us: np.ndarray            # per queue (link x priority): time the downstream asserted XOFF
    credit_wait_us: np.ndarray      # per queue: time with backlog but no credit (InfiniBand)
    max_ingress_bytes: np.ndarray   # per queue: most bytes held at the downstream ingress
    ingress_limit_bytes: np.ndarray  # per queue: the lossless buffer there (XOFF + headroom, or VL buffer)
    max_queue_bytes: np.ndarray     # per queue: the longest egress backlog
    queued_bytes_end: float
    in_flight_bytes_end: float
    min_queue_bytes: float          # smallest entry backlog ever seen (conservation check: >= 0)
    min_rate_gbps: float            # smallest sending rate ever seen (>= 0)
    sim_time_us: float
    steps: int
    wall_s: float                   # the run (set-up included; the compiled loop's one-off compile/load not)
    n_priorities: int
    priority: np.ndarray
    alpha_end: np.ndarray = None     # per flow, DCQCN alpha when the run stopped
    rate_end_gbps: np.ndarray = None  # per flow, DCQCN R_C (or the line rate) when the run stopped
    timeline: dict = field(default_factory=dict)

    @property
    def done(self) -> np.ndarray:
        return np.isfinite(self.finish_us)


def _increase_events(r, p, log1m, B, T, F):
    """Rates of the CoNEXT'16 increase events, per flow: (byte-counter events, byte-counter AI
    events, timer events, timer AI events).

    An event every ``n`` packets (``n = B`` for the byte counter, ``n = T r`` for the timer) happens
    at rate ``r p / ((1-p)^(-n) - 1)`` and is an additive-increase event (past the F fast-recovery
    stages) with probability ``(1-p)^(F n)``; written ``r p (1-p)^n / (1 - (1-p)^n)`` to stay finite.
    For ``n p -> 0`` the rate tends to ``r/n`` (one event per counter): ``r/B`` and ``1/T``.
    """
    x_b = B * log1m                     # log (1-p)^B  (<= 0)
    x_t = T * r * log1m
    small_b = x_b > -1e-12
    small_t = x_t > -1e-12
    rp = r * p
    ev_b = np.where(small_b, r / B, rp * np.exp(x_b) / np.where(small_b, 1.0, -np.expm1(x_b)))
    ai_b = np.where(small_b, r / B, ev_b * np.exp(F * x_b))
    t_limit = np.where(log1m < 0, p / (-T * np.where(log1m < 0, log1m, -1.0)), 1.0 / T)
    ev_t = np.where(small_t, t_limit, rp * np.exp(x_t) / np.where(small_t, 1.0, -np.expm1(x_t)))
    ai_t = np.where(small_t, t_limit, ev_t * np.exp(F * x_t))
    return ev_b, ai_b, ev_t, ai_t


def simulate_fluid(network: Network, flows: Flows, config: FluidConfig, priority=None) -> FluidResult:
    """Run the fluid model (module docstring) until every flow is delivered or ``max_time_us``."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        return _simulate(network, flows, config, priority)


def _simulate(network: Network, flows: Flows, config: FluidConfig, priority) -> FluidResult:
    started = time.perf_counter()
    cfg = config
    dt_us = cfg.step_us
    dt = dt_us * 1e-6
    F = flows.n_flows
    if F == 0:
        raise InputError("no flows to simulate", location="flows")
    lengths = np.diff(flows.path_ptr)
    if np.any(lengths == 0):
        raise InputError("every flow needs a path of at least one link (source and destination differ)",
                         location="flows")
    E = int(lengths.sum())
    if E > MAX_ENTRIES:
        raise InputError(f"{E} flow-hops exceed the simulator's limit of {MAX_ENTRIES}", location="flows")
    L = network.n_links
    prio = np.zeros(F, dtype=np.int64) if priority is None else np.asarray(priority, dtype=np.int64)
    P = int(prio.max()) + 1
    Q = L * P
    pkt = cfg.packet_bytes

    # ---- static per-entry structure
    e_flow = flows.flow_of_entry()
    e_link = flows.path_links.astype(np.int64)
    e_hop = np.arange(E) - flows.path_ptr[:-1][e_flow]
    # queues (link x priority) that some flow uses, numbered compactly 0..Q-1; results are mapped
    # back to every link x priority of the network at the end
    Q_all = Q
    used_q, e_q = np.unique(e_link * P + prio[e_flow], return_inverse=True)
    e_q = e_q.astype(np.int64)
    Q = len(used_q)
    used_links, q_link = np.unique(used_q // P, return_inverse=True)
    L = len(used_links)
    q_glink = used_q // P
    first = flows.path_ptr[:-1]
    last = flows.path_ptr[1:] - 1
    not_last = np.ones(E, dtype=bool)
    not_last[last] = False
    nl = np.flatnonzero(not_last)
    has_prev = e_hop > 0
    hp = np.flatnonzero(has_prev)
    e_prevq = np.full(E, -1, dtype=np.int64)
    e_prevq[hp] = e_q[hp - 1]

    cap_Bps = network.capacity_gbps * 1e9 / 8.0                        # per link, bytes/s
    cap_step_q = cap_Bps[q_glink] * dt
    delay_steps_link = np.maximum(1, np.rint(network.latency_us / dt_us).astype(np.int64))
    d_e = delay_steps_link[e_link]
    D = int(d_e.max()) + 1
    d_q = delay_steps_link[q_glink]
    to_host_q = network.node_kind[network.link_dst[q_glink]] == HOST
    from_host_q = network.node_kind[network.link_src[q_glink]] == HOST
    lat_path_us = np.bincount(e_flow, weights=network.latency_us[e_link], minlength=F)
    first_link = e_link[first]
    line_Bps = cap_Bps[first_link]
    bottleneck_Bps = np.minimum.reduceat(cap_Bps[e_link], flows.path_ptr[:-1])

    # ---- buffers and thresholds per queue
    buffer_q = network.buffer_bytes[q_glink].astype(float)
    xoff_q = np.full(Q, cfg.pfc_xoff_bytes) if cfg.pfc_xoff_bytes is not None \
        else buffer_q * cfg.pfc_xoff_buffer_fraction
    xon_q = np.full(Q, cfg.pfc_xon_bytes) if cfg.pfc_xon_bytes is not None \
        else np.maximum(xoff_q - cfg.pfc_resume_offset_bytes, 0.0)
    xon_q = np.minimum(xon_q, xoff_q)
    headroom_q = cap_Bps[q_glink] * (2 * d_q * dt + 2 * dt) + 2 * pkt
    if cfg.uses_credits:
        ingress_limit_q = np.full(Q, cfg.ib_vl_buffer_bytes)
    elif cfg.uses_pfc:
        ingress_limit_q = xoff_q + headroom_q
    else:
        ingress_limit_q = np.full(Q, np.inf)
    ingress_limit_q[to_host_q] = np.inf
    lossy = not cfg.lossless
    dp = cfg.dcqcn
    kmin, kmax, pmax = dp.kmin_kb * 1e3, dp.kmax_kb * 1e3, dp.pmax

    # ---- flow state
    size_payload = flows.size_bytes
    wire = np.ceil(size_payload / cfg.payload_bytes) * pkt
    start_us = flows.start_us
    injected = np.zeros(F)
    delivered = np.zeros(F)
    dropped = np.zeros(F)
    retransmit = np.zeros(F)
    marks = np.zeros(F)
    cnps = np.zeros(F)
    timeouts = np.zeros(F)
    finish = np.full(F, np.nan)
    q = np.zeros(E)
    ring = np.zeros((D, E))      # bytes that left entry e, by the step they land at the next hop
    arrivals = np.zeros(E)
    line_Bps_flow = cap_Bps[e_link[first]]
    # a NIC holds two packets of a flow, or two steps of line rate if that is more (so that the
    # step length never throttles a sender)
    nic_room = np.maximum(2.0 * pkt, 2.0 * line_Bps_flow * dt)
    # DCQCN (rates in wire packets/s)
    line_pps = line_Bps / pkt
    Rc = line_pps.copy()
    Rt = line_pps.copy()
    alpha = np.ones(F)
    rai = dp.rai_mbps * 1e6 / 8.0 / pkt
    rhai = max(dp.rhai_mbps, dp.rai_mbps) * 1e6 / 8.0 / pkt
    min_pps = np.minimum(dp.min_rate_mbps * 1e6 / 8.0 / pkt, line_pps)
    B = dp.byte_counter_bytes / pkt
    T = dp.rate_timer_us * 1e-6
    tau = dp.cnp_interval_us * 1e-6
    taup = dp.alpha_interval_us * 1e-6
    Fr = dp.fast_recovery_steps
    loop_steps = np.maximum(1, np.rint((2 * lat_path_us + cfg.extra_loop_delay_us) / dt_us).astype(np.int64))
    Dc = int(loop_steps.max()) + 1
    p_hist = np.zeros((Dc, F))
    r_hist = np.zeros((Dc, F))
    # IB CC
    ccti = np.zeros(F)
    # TCP (drop-tail losses fall on randomly ordered arrivals: a fixed seed keeps runs reproducible)
    loss_rng = np.random.default_rng(0)
    cwnd = np.full(F, cfg.tcp_initial_window_segments * pkt)
    ssthresh = np.full(F, np.inf)
    stall_until = np.zeros(F)
    recover_until = np.zeros(F)
    base_rtt_us = 2 * lat_path_us
    # PFC / credits
    pause_gen = np.zeros(Q, dtype=bool)
    pause_hist = np.zeros((D, Q), dtype=bool)
    pause_us = np.zeros(Q)
    credit_wait = np.zeros(Q)
    max_ingress = np.zeros(Q)
    max_queue = np.zeros(Q)
    min_q = 0.0
    min_rate = np.inf
    flow_idx = np.arange(F)
    rec_flows = flow_idx[: min(F, 64)]
    timeline = {"t_us": [], "rate_gbps": [], "queue_kb": [], "paused_ports": [], "queues": used_q,
                "flows": rec_flows}
    q_range = np.arange(Q)
    pause_index = [(s - d_q) % D for s in range(D)]  # per ring slot: the slots the pauses were sent in
    nl_next = nl + 1
    # one propagation delay everywhere (the usual case): plain row operations instead of 2-D fancy indexing
    uniform = bool(np.all(d_e == d_e[0]) and np.all(d_q == d_e[0]))
    d0 = int(d_e[0])
    e_range = np.arange(E)
    prev_keys = e_prevq[hp]
    ecn = cfg.cc == "dcqcn"
    p_path = np.zeros(F)

    max_steps = int(min(MAX_STEPS, math.ceil(cfg.max_time_us / dt_us)))
    # ---- per-step work, hoisted out of the loop. At the sizes of the benchmark scenarios (a few
    # hundred flow-hops) a step costs numpy's per-call overhead, not arithmetic, so the loop below
    # makes as few numpy calls as it can with the same arithmetic as before (results are identical
    # bit for bit): mode flags decided once, the delayed-signal history kept only for the reaction
    # points that read it, masks and sentinel bins instead of fancy indexing, ufunc reductions
    # instead of array methods, and a completion test against per-flow thresholds.
    cc = cfg.cc
    tcp = cc == "tcp"
    ibcc = cc == "ib-cc"
    uses_pfc = cfg.uses_pfc
    uses_credits = cfg.uses_credits
    reacts = ecn or ibcc                 # senders read the path signal one control loop later
    # with one propagation delay everywhere every ring row is overwritten the step after it lands,
    # so it need not be cleared (credits read the whole ring; the end of the run clears it)
    clear_landing = uses_credits or not uniform
    slot = 0
    ring_rows = [ring[s] for s in range(D)]
    ring_heads = [row[:-1] for row in ring_rows]
    arrivals_tail = arrivals[1:]
    keep_arrival = np.ones(E)            # 0 where an entry is a flow's first hop (nothing arrives there)
    keep_arrival[first] = 0.0
    keep_arrival_tail = keep_arrival[1:]
    got = np.zeros(F)
    # ingress occupancy: entries without a previous hop go to a sentinel bin Q
    prev_bins = np.where(e_prevq >= 0, e_prevq, Q)
    # lossy buffers; a NIC's send queue is host memory, not a switch buffer: never over
    buffer_lossy_q = np.where(from_host_q, np.inf, buffer_q)
    over = np.zeros(Q)
    remaining = np.zeros(F)
    done_at = wire - 1e-6 * wire
    pending_at = done_at.copy()          # inf once a flow has finished
    reached = np.zeros(F, dtype=bool)
    n_done = 0
    start_last_us = float(start_us.max())
    uniform_loop = bool(np.all(loop_steps == loop_steps[0]))
    loop0 = int(loop_steps[0])
    add_reduce, min_reduce, max_reduce = np.add.reduce, np.minimum.reduce, np.maximum.reduce
    bincount, where = np.bincount, np.where
    t_step = 0
    t_us = 0.0
    # the compiled loop's one-off set-up (importing numba, compiling the kernel or loading it from
    # numba's cache) is not run time, as ns-3's compile is outside its run loop
    load_started = time.perf_counter()
    accelerated = cfg.accelerate and tcp and uniform and P == 1 and lossy and not cfg.record_every \
        and not uses_pfc and not uses_credits and _kernel_available()
    if accelerated:  # the same steps, compiled (fluid_tcp_kernel.py)
        from fabricplan.sim import fluid_tcp_kernel as kern

        steps = kern.kernel()
        draws, draw_ptr, status = np.zeros(0), 0, kern.NEED_DRAWS
        args = lambda: (  # noqa: E731
            dt_us, D, d0, ring, q, arrivals, keep_arrival, e_q, e_flow, prev_bins, first, last, Q, buffer_lossy_q,
            cap_step_q, max_ingress, max_queue, wire, retransmit, injected, delivered, dropped, start_us,
            start_last_us, stall_until, recover_until, cwnd, ssthresh, timeouts, base_rtt_us, pkt,
            cfg.tcp_dupack_threshold * pkt, cfg.tcp_min_rto_us, pending_at, finish, n_done, min_q, min_rate, draws,
            draw_ptr)
        steps(t_step, t_step, *args())  # runs no step: compiles or loads the kernel
        started += time.perf_counter() - load_started
        while status == kern.NEED_DRAWS:
            if len(draws) - draw_ptr < E:  # the generator's next draws, as _drop_tail would take them
                draws = np.concatenate((draws[draw_ptr:], loss_rng.exponential(size=max(16 * E, 1 << 16))))
                draw_ptr = 0
            status, t_step, slot, n_done, min_q, min_rate, draw_ptr = steps(t_step, max_steps, *args())
    while not accelerated and t_step < max_steps:
        t_us = t_step * dt_us
        slot = t_step % D
        # 1. arrivals
        landing = ring_rows[slot]
        np.multiply(ring_heads[slot], keep_arrival_tail, out=arrivals_tail)
        q += arrivals
        landing.take(last, out=got)
        delivered += got
        if clear_landing:
            landing.fill(0.0)
        qsum = bincount(e_q, weights=q, minlength=Q)
        if lossy:
            np.subtract(qsum, buffer_lossy_q, out=over)
            if max_reduce(over) > 1e-9:
                arr_q = bincount(e_q, weights=arrivals, minlength=Q)
                if tcp:
                    drop_e = _drop_tail(arrivals, e_q, over, loss_rng)
                else:
                    share = where(over > 1e-9, np.minimum(1.0, over / arr_q), 0.0)
                    share = np.nan_to_num(share)
                    drop_e = arrivals * share[e_q]
                q -= drop_e
                drop_f = bincount(e_flow, weights=drop_e, minlength=F)
                dropped += drop_f
                retransmit += drop_f
                qsum = bincount(e_q, weights=q, minlength=Q)
                if tcp:
                    _tcp_loss(drop_f, t_us, injected, delivered, dropped, cwnd, ssthresh, stall_until,
                              recover_until, timeouts, base_rtt_us, cfg, pkt)
        # ingress occupancy (per upstream queue id) and in-flight bytes per link
        occ = bincount(prev_bins, weights=q, minlength=Q + 1)[:Q]
        np.maximum(max_ingress, occ, out=max_ingress)
        # 2. service
        if uses_pfc:
            seen = pause_hist[(slot - d0) % D] if uniform else pause_hist[pause_index[slot], q_range]
            demand = where(seen, 0.0, qsum)
        else:
            demand = qsum
        link_demand = bincount(q_link, weights=demand, minlength=L)[q_link] if P > 1 else demand
        serve = where(link_demand > cap_step_q, demand * cap_step_q / link_demand, demand)
        if uses_credits:
            in_flight_q = bincount(e_q, weights=ring.sum(axis=0), minlength=Q)
            credit = np.maximum(cfg.ib_vl_buffer_bytes - occ - in_flight_q, 0.0)
            credit[to_host_q] = np.inf
            blocked = (credit < serve - 1e-9) & (qsum > 1e-9)
            credit_wait[blocked] += dt_us
            serve = np.minimum(serve, credit)
        frac_q = where(qsum > 0, serve / qsum, 0.0)
        if uniform:  # departures go straight into the ring slot where they land
            dep = ring_rows[(t_step + d0) % D]
            np.multiply(q, frac_q[e_q], out=dep)
        else:
            dep = q * frac_q[e_q]
            ring[(t_step + d_e) % D, e_range] = dep
        q -= dep
        # 3. RED/ECN on the standing egress backlog (what this step's arrivals could not leave)
        qpost = qsum - serve
        np.maximum(max_queue, qpost, out=max_queue)
        if ecn:
            p_q = np.minimum(np.maximum((qpost - kmin) * (pmax / (kmax - kmin)), 0.0), pmax)
            p_q[qpost > kmax] = 1.0
        if reacts:
            recv_pps = dep[last] / dt / pkt  # packets reaching the NP (marked with the path probability)
        # 4. PFC state per ingress (queue id of the link it arrived on)
        if uses_pfc:
            occ_after = bincount(prev_bins, weights=q, minlength=Q + 1)[:Q]
            pause_gen = where(occ_after >= xoff_q, True, where(occ_after <= xon_q, False, pause_gen))
            pause_gen[to_host_q] = False
            pause_hist[slot] = pause_gen
            pause_us[pause_gen] += dt_us
        if ecn:  # path marking probability; ECN-capable transport: packets reaching the receiver marked
            log_keep_q = np.log1p(-np.minimum(p_q, 1.0 - 1e-12))
            p_path = -np.expm1(bincount(e_flow, weights=log_keep_q[e_q], minlength=F))
            marks += recv_pps * dt * p_path
        # 5. senders
        np.add(wire, retransmit, out=remaining)
        remaining -= injected
        active = remaining > 1e-9
        if start_last_us > t_us:
            active &= start_us <= t_us
        if tcp:
            active &= stall_until <= t_us
            in_flight = injected - delivered - dropped
            budget = np.maximum(cwnd - in_flight, 0.0)
        elif ecn:
            budget = Rc * pkt * dt
        elif ibcc:
            budget = line_Bps * dt * cfg.ib_cc_decrease_fraction ** ccti
        else:
            budget = line_Bps * dt
        if not tcp:
            budget = np.minimum(budget, np.maximum(nic_room - q[first], 0.0))
        inject = where(active, np.minimum(budget, remaining), 0.0)
        np.maximum(inject, 0.0, out=inject)
        injected += inject
        q[first] += inject
        # 6. reaction points, driven by the congestion signal one control-loop delay ago
        if reacts:
            if ibcc:  # FECN: a queue on the path above the threshold
                signal = bincount(e_flow, weights=(qpost > cfg.ib_cc_threshold_bytes)[e_q].astype(float),
                                  minlength=F) > 0
            else:
                signal = p_path
            cslot = t_step % Dc
            p_hist[cslot] = signal
            r_hist[cslot] = recv_pps
            if uniform_loop:
                back = (t_step - loop0) % Dc
                p_d = p_hist[back]
                r_d = r_hist[back]
            else:
                back = (t_step - loop_steps) % Dc
                p_d = p_hist[back, flow_idx]
                r_d = r_hist[back, flow_idx]
        if ecn:
            log1m = np.log1p(-np.minimum(p_d, 1.0 - 1e-12))
            cut = -np.expm1(tau * r_d * log1m)            # P(a CNP in tau)
            a_rate = -np.expm1(taup * r_d * log1m)        # P(a mark in tau')
            byte_ev, byte_ai, timer_ev, timer_ai = _increase_events(r_d, p_d, log1m, B, T, Fr)
            d_alpha = dp.g / taup * (a_rate - alpha)
            # hyper increase (R_HAI) once both counters are past F stages: an AI event of one counter
            # while the other has also gone F events unmarked (extension of the CoNEXT'16 model,
            # which leaves R_HAI out; negligible at the fixed point, where (1-p)^(F B) ~ 0)
            past_b = np.exp(Fr * B * log1m)
            past_t = np.exp(Fr * T * r_d * log1m)
            d_rt = -(Rt - Rc) / tau * cut + rai * (byte_ai + timer_ai) \
                + (rhai - rai) * (byte_ai * past_t + timer_ai * past_b)
            d_rc = -Rc * alpha / (2 * tau) * cut + (Rt - Rc) / 2 * (byte_ev + timer_ev)
            alpha += dt * d_alpha
            Rt = np.minimum(np.maximum(Rt + dt * d_rt, min_pps), line_pps)
            Rc = np.minimum(np.maximum(Rc + dt * d_rc, min_pps), line_pps)
            np.minimum(np.maximum(alpha, 0.0, out=alpha), 1.0, out=alpha)
            cnps += dt * where(recv_pps > 0, -np.expm1(tau * recv_pps * np.log1p(-np.minimum(p_path, 1 - 1e-12)))
                               / tau, 0.0)
            rate_now = float(min_reduce(Rc)) * pkt * 8 / 1e9
            min_rate = min(min_rate, rate_now)
        elif ibcc:  # BECN returns with the loop delay; one CCT step per interval
            becn = (p_d > 0) & (r_d > 0)
            step = dt / (cfg.ib_cc_recovery_us * 1e-6)
            ccti = np.maximum(ccti + step * where(becn, 1.0, -1.0), 0.0)
            cnps += where(becn, step, 0.0)
            marks += recv_pps * dt * signal  # FECN-marked packets
        elif tcp:
            slow = cwnd < ssthresh
            cwnd += where(slow, got, pkt * got / np.maximum(cwnd, pkt))
        if min_rate > 0.0:  # inject >= 0: once the minimum is 0 it stays 0
            min_rate = min(min_rate, float(min_reduce(inject)))
        # completion (delivered bytes only grow, so a flow's threshold goes to inf once it is met)
        np.greater_equal(delivered, pending_at, out=reached)
        if np.count_nonzero(reached):
            finish[reached] = t_us + dt_us
            pending_at[reached] = np.inf
            n_done += int(np.count_nonzero(reached))
        qmin = float(min_reduce(q))
        if qmin < min_q:
            min_q = qmin
        if cfg.record_every and t_step % cfg.record_every == 0:
            timeline["t_us"].append(t_us)
            timeline["rate_gbps"].append(inject[rec_flows] / dt / pkt * pkt * 8 / 1e9)
            timeline["queue_kb"].append(qpost / 1e3)
            timeline["paused_ports"].append(int(pause_gen.sum()))
        if n_done == F:
            break
        t_step += 1
        # idle skip: nothing in the network and nobody may send now (TCP timeouts, later starts)
        if tcp or start_last_us > t_us:
            if add_reduce(q) <= 1e-9:
                ring_rows[slot].fill(0.0)  # landed already
            if add_reduce(q) <= 1e-9 and not np.count_nonzero(ring):
                pending = np.isnan(finish)
                wake = np.maximum(stall_until[pending], start_us[pending])
                nxt = float(wake.min()) if wake.size else t_us
                if nxt > t_us + dt_us:
                    t_step = max(t_step, int(math.floor(nxt / dt_us)))
    ring_rows[slot].fill(0.0)  # the last step's landing row had landed
    sim_time_us = min(t_step, max_steps) * dt_us
    store_forward_us = (lengths - 1) * pkt / cap_Bps[first_link] * 1e6
    fct = finish - start_us + lat_path_us + store_forward_us
    ideal = wire / bottleneck_Bps * 1e6 + 2 * lat_path_us + store_forward_us
    def full(values, fill=0.0):
        out = np.full(Q_all, fill, dtype=float)
        out[used_q] = values
        return out

    pause_us, credit_wait, max_ingress, max_queue = (full(a) for a in (pause_us, credit_wait, max_ingress, max_queue))
    ingress_limit_q = full(ingress_limit_q, np.inf)
    for key in ("rate_gbps", "queue_kb"):
        timeline[key] = np.array(timeline[key]) if timeline[key] else np.zeros((0, 0))
    return FluidResult(
        network=network, flows=flows, config=cfg, finish_us=finish, fct_us=fct, ideal_fct_us=ideal, wire_bytes=wire,
        delivered_bytes=delivered, injected_bytes=injected, dropped_bytes=dropped, ecn_marks=marks, cnps=cnps,
        timeouts=timeouts, pause_us=pause_us, credit_wait_us=credit_wait, max_ingress_bytes=max_ingress,
        ingress_limit_bytes=ingress_limit_q, max_queue_bytes=max_queue, queued_bytes_end=float(q.sum()),
        in_flight_bytes_end=float(ring.sum()), min_queue_bytes=min_q,
        min_rate_gbps=0.0 if not math.isfinite(min_rate) else min_rate, sim_time_us=sim_time_us, steps=t_step,
        wall_s=time.perf_counter() - started, n_priorities=P, priority=prio, alpha_end=alpha.copy(),
        rate_end_gbps=Rc * pkt * 8 / 1e9, timeline=timeline)


def _kernel_available() -> bool:
    from fabricplan.sim.fluid_tcp_kernel import available

    return available()


def _drop_tail(arrivals, e_q, over, rng) -> np.ndarray:
    """Bytes dropped per entry when queues overflow by ``over`` bytes, drop-tail style: the step's
    arrivals at an overflowing queue come in a random order (each entry's turn drawn with weight
    its bytes, an exponential race) and the last ones to arrive find the buffer full, so the loss
    falls whole on a few flows instead of a sliver on every flow. Spreading it evenly made every
    TCP sender of an incast lose at once, time out together and restart together, so the fluid
    incast never recovered (64-to-1: no flow done in 3 s); ns-3 and testbeds lose packets of some
    flows only (docs/validation.md, "packet-level runs")."""
    drop_e = np.zeros(len(arrivals))
    hit = np.flatnonzero((over[e_q] > 1e-9) & (arrivals > 0))
    if not hit.size:
        return drop_e
    key = rng.exponential(size=hit.size) / arrivals[hit]
    order = hit[np.lexsort((key, e_q[hit]))]          # by queue, the first to be dropped first
    qs = e_q[order]
    arr = arrivals[order]
    cum = np.cumsum(arr)
    start = np.flatnonzero(qs[1:] != qs[:-1]) + 1
    start = np.concatenate(((0,), start))
    counts = np.diff(np.concatenate((start, (len(order),))))
    before = cum - arr - np.repeat(cum[start] - arr[start], counts)
    drop_e[order] = np.minimum(np.maximum(over[qs] - before, 0.0), arr)
    return drop_e


def _tcp_loss(drop_f, t_us, injected, delivered, dropped, cwnd, ssthresh, stall_until, recover_until, timeouts,
              base_rtt_us, cfg: FluidConfig, pkt: float) -> None:
    """TCP's reaction to this step's losses (in place): fast retransmit and halving once per round
    trip, or a retransmission timeout when fewer than ``dupack`` packets remain in flight."""
    lost = (drop_f > 1e-9) & (recover_until <= t_us) & (stall_until <= t_us)
    if not lost.any():
        return
    in_flight = injected - delivered - dropped
    timeout = lost & (in_flight < cfg.tcp_dupack_threshold * pkt)
    fast = lost & ~timeout
    half = np.maximum(cwnd / 2.0, 2.0 * pkt)
    ssthresh[lost] = half[lost]
    cwnd[fast] = half[fast]
    recover_until[fast] = t_us + base_rtt_us[fast]
    cwnd[timeout] = pkt
    stall_until[timeout] = t_us + cfg.tcp_min_rto_us
    recover_until[timeout] = t_us + cfg.tcp_min_rto_us
    timeouts[timeout] += 1
