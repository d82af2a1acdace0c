"""The fluid model's state: one :class:`FluidState` per run, read and written by every rule.

:func:`new_state` builds it from a network, its flows and a :class:`~fabricplan.sim.fluid.FluidConfig`:
first the structure that never changes (entries, queues, delays, thresholds), then the per-step
arrays the rules of ``fluid_switch.py`` and ``fluid_senders.py`` update in place. Sizes: ``F``
flows, ``E`` entries (one per flow and hop, hop 0 the sending NIC's queue), ``Q`` queues (the link
x priority pairs some flow uses, numbered compactly), ``L`` links in use, ``P`` priorities, ``D``
ring rows (the longest propagation in steps + 1). Bytes are wire bytes (payload + headers).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from fabricplan.errors import InputError
from fabricplan.sim.network import HOST, Flows, Network

#: The run's configuration, a :class:`fabricplan.sim.fluid.FluidConfig` (named, not imported: the
#: loop in ``fluid.py`` builds the state, so the state module does not reach back up to it).
FluidConfig = Any

#: Program limits (not physical defaults).
MAX_STEPS = 20_000_000
MAX_ENTRIES = 5_000_000
#: Program limit: the bytes one run's state may take (checked before any per-step array is
#: allocated; the ring of in-flight bytes, one row per step of the longest propagation, dominates).
MAX_STATE_BYTES = 2 * 1024 ** 3
#: Bytes of state per flow, per flow-hop, per queue and per ring row besides the ring itself: an
#: upper estimate from the arrays ``_per_step`` and ``_structure`` allocate (float64 each) and the
#: views kept per ring row.
_BYTES_PER_FLOW, _BYTES_PER_ENTRY, _BYTES_PER_QUEUE, _BYTES_PER_ROW = 8 * 40, 8 * 20, 8 * 30, 400


@dataclass(slots=True, eq=False)
class FluidState:
    """Everything one fluid run holds (module docstring); arrays are per flow ``[F]``, per entry
    ``[E]`` or per queue ``[Q]``. Rules update the arrays in place or rebind the per-step ones."""

    cfg: FluidConfig
    # ---- sizes and time
    F: int
    E: int
    Q: int
    L: int
    P: int
    D: int
    Q_all: int                   # link x priority pairs of the whole network (results cover all)
    dt_us: float
    dt: float                    # seconds
    pkt: float                   # wire bytes per packet
    max_steps: int
    t_step: int                  # the step being run
    t_us: float                  # its start
    slot: int                    # t_step % D: the ring row landing now
    # ---- structure (never changes)
    prio: np.ndarray             # [F] priority of each flow
    lengths: np.ndarray          # [F] links per path
    e_flow: np.ndarray           # [E] flow of the entry
    e_q: np.ndarray              # [E] queue of the entry
    first: np.ndarray            # [F] entry of the flow's first hop (its NIC)
    last: np.ndarray             # [F] entry of the flow's last hop
    prev_bins: np.ndarray        # [E] queue of the previous hop (Q: none, a sentinel bin)
    keep_arrival: np.ndarray     # [E] 0 where an entry is a flow's first hop (nothing arrives there)
    keep_arrival_tail: np.ndarray  # keep_arrival[1:]
    used_q: np.ndarray           # [Q] network queue id (link x P + priority) of each queue
    q_link: np.ndarray           # [Q] link (0..L-1) of the queue
    q_glink: np.ndarray          # [Q] network link of the queue
    cap_Bps: np.ndarray          # per network link, bytes/s
    cap_step_q: np.ndarray       # [Q] bytes the queue's link sends per step
    first_link: np.ndarray       # [F] the flow's first link
    line_Bps: np.ndarray         # [F] the sender's line rate, bytes/s
    line_step: np.ndarray        # [F] line_Bps * dt: bytes per step at line rate
    bottleneck_Bps: np.ndarray   # [F] slowest link on the path
    lat_path_us: np.ndarray      # [F] propagation along the path
    d_e: np.ndarray              # [E] propagation of the entry's link, steps
    d_q: np.ndarray              # [Q] propagation of the queue's link, steps
    d0: int                      # that delay when it is the same everywhere
    uniform: bool                # one propagation delay everywhere: plain ring rows
    pause_index: list            # per ring slot: [Q] the slots the pauses seen now were sent in
    q_range: np.ndarray          # arange(Q)
    e_range: np.ndarray          # arange(E)
    to_host_q: np.ndarray        # [Q] the queue's link goes to a host (no pause, infinite credit)
    from_host_q: np.ndarray      # [Q] the queue is a NIC's send queue
    buffer_lossy_q: np.ndarray   # [Q] egress buffer of a lossy queue (inf at a NIC: host memory)
    xoff_q: np.ndarray           # [Q] downstream ingress bytes that send XOFF (inf at a host: hosts never pause)
    xon_q: np.ndarray            # [Q] ... that send XON
    ingress_limit_q: np.ndarray  # [Q] lossless buffer at the downstream ingress (XOFF + headroom, VL buffer)
    vl_buffer_q: np.ndarray      # [Q] InfiniBand VL buffer downstream (credits), bytes (inf at a host)
    kmin: float                  # RED/ECN thresholds, bytes, and the marking probability at Kmax
    kmax: float
    pmax: float
    red_slope: float             # pmax / (kmax - kmin)
    wire: np.ndarray             # [F] bytes to deliver
    start_us: np.ndarray         # [F]
    start_last_us: float
    nic_room: np.ndarray         # [F] bytes a NIC holds of one flow
    lossy: bool
    uses_pfc: bool
    uses_credits: bool
    clear_landing: bool          # ring rows must be cleared once landed (credits or several delays)
    rec_flows: np.ndarray        # flows whose rates the time series keeps
    # ---- per step (rebound or updated in place by the rules)
    q: np.ndarray                # [E] bytes waiting in the entry's egress queue
    ring: np.ndarray             # [D, E] bytes that left entry e, by the step they land at the next hop
    ring_rows: list              # ring's rows
    ring_heads: list             # ring's rows without their last entry
    arrivals: np.ndarray         # [E] bytes that landed this step
    arrivals_tail: np.ndarray    # arrivals[1:]
    got: np.ndarray              # [F] bytes that reached the receiver this step
    qsum: np.ndarray             # [Q] backlog before service
    over: np.ndarray             # [Q] bytes above the lossy buffer
    occ: np.ndarray              # [Q] bytes at the downstream ingress that arrived on the queue's link
    serve: np.ndarray            # [Q] bytes served this step
    dep: np.ndarray              # [E] bytes that left the entry this step
    qpost: np.ndarray            # [Q] standing backlog after service
    recv_pps: np.ndarray         # [F] packets reaching the receiver per second (senders with receiver_rate)
    p_q: np.ndarray              # [Q] RED marking probability (senders with ecn)
    p_path: np.ndarray           # [F] path marking probability (senders with ecn)
    pause_gen: np.ndarray        # [Q] the downstream ingress asserts XOFF now
    pause_hist: np.ndarray       # [D, Q] pause_gen by the step it was sent in
    remaining: np.ndarray        # [F] bytes still to inject (retransmissions included)
    active: np.ndarray           # [F] may send this step
    inject: np.ndarray           # [F] bytes injected this step
    rate_pps: np.ndarray         # [F] the sender's rate, packets/s (DCQCN's R_C; else the line rate)
    alpha: np.ndarray            # [F] DCQCN's alpha (1 for the others)
    wait_until: np.ndarray       # [F] a sender rule with ``waits`` holds the flow until then (TCP's RTO)
    loss_rng: np.random.Generator  # drop-tail order (a fixed seed keeps runs reproducible)
    # ---- per-flow and per-queue counters (the result)
    injected: np.ndarray
    delivered: np.ndarray
    dropped: np.ndarray
    retransmit: np.ndarray
    marks: np.ndarray
    cnps: np.ndarray
    timeouts: np.ndarray
    finish: np.ndarray           # [F] nan until the last byte is delivered
    pending_at: np.ndarray       # [F] delivered bytes that finish the flow (inf once finished)
    reached: np.ndarray          # [F] scratch: finished this step
    n_done: int
    pause_us: np.ndarray
    credit_wait: np.ndarray
    max_ingress: np.ndarray
    max_queue: np.ndarray
    min_q: float
    min_rate: float
    timeline: dict
    started: float               # perf_counter at the start (the compiled loop's set-up is added back)
    sender: object = None        # the run's SenderRule (fluid_senders.py), set before the first step


def new_state(network: Network, flows: Flows, cfg: FluidConfig, priority, started: float) -> FluidState:
    """The state at t = 0 (InputError for flows the model cannot run)."""
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
    prio = np.zeros(F, dtype=np.int64) if priority is None else np.asarray(priority, dtype=np.int64)
    delays = np.maximum(1, np.rint(network.latency_us[flows.path_links] / cfg.step_us))
    _check_memory(F, E, min(E, network.n_links * (int(prio.max()) + 1)), int(delays.max()) + 1, cfg.step_us)
    parts = _structure(network, flows, cfg, prio, lengths)
    parts.update(_thresholds(network, cfg, parts))
    parts.update(_per_step(flows, cfg, parts))
    dt_us = cfg.step_us
    return FluidState(cfg=cfg, F=F, E=E, dt_us=dt_us, dt=dt_us * 1e-6, pkt=cfg.packet_bytes,
                      max_steps=int(min(MAX_STEPS, math.ceil(cfg.max_time_us / dt_us))), t_step=0, t_us=0.0, slot=0,
                      prio=prio, lengths=lengths, started=started, **parts)


def state_bytes(F: int, E: int, Q: int, D: int) -> int:
    """Bytes a run's state takes, an upper estimate: the ring ``D x E`` float64, the pause history
    ``D x Q`` bool and the pause index ``D x Q`` int64, plus the per-flow, per-entry, per-queue and
    per-row arrays."""
    return (D * (E * 8 + Q * 9 + _BYTES_PER_ROW) + F * _BYTES_PER_FLOW + E * _BYTES_PER_ENTRY
            + Q * _BYTES_PER_QUEUE)


def _check_memory(F: int, E: int, Q: int, D: int, step_us: float) -> None:
    """InputError, before the per-step arrays are allocated, for a state over :data:`MAX_STATE_BYTES`,
    naming what drives it: the delay rows (propagation / step) or the flow-hops."""
    need = state_bytes(F, E, Q, D)
    if need <= MAX_STATE_BYTES:
        return
    rows = D * (E * 8 + Q * 9 + _BYTES_PER_ROW)
    if rows >= need / 2:
        why = (f"{D - 1:,} steps of {step_us:g} us in the longest link's propagation x {E:,} flow-hops; "
               "raise --step-us or lower --link-latency-us")
        where = "--step-us, --link-latency-us"
    else:
        why = f"{F:,} flows over {E:,} flow-hops; lower --hosts, --senders or --k"
        where = "--hosts, --senders, --k"
    raise InputError(f"the simulation state would take {_gib(need)}, more than the {_gib(MAX_STATE_BYTES)} "
                     f"budget ({why})", location=where)


def _gib(n: float) -> str:
    """``2 GiB``, ``146.0 TiB``: bytes in binary units, for a message."""
    return f"{n / 1024 ** 4:,.1f} TiB" if n >= 1024 ** 4 else f"{n / 1024 ** 3:,.1f} GiB"


def _structure(network: Network, flows: Flows, cfg: FluidConfig, prio, lengths) -> dict:
    """Entries, queues and links, and the propagation delays in steps."""
    dt_us, dt, F, E = cfg.step_us, cfg.step_us * 1e-6, flows.n_flows, int(lengths.sum())
    P = int(prio.max()) + 1
    e_flow = flows.flow_of_entry()
    e_link = flows.path_links.astype(np.int64)
    e_hop = np.arange(E) - flows.path_ptr[:-1][e_flow]
    # queues (link x priority) that some flow uses, numbered compactly 0..Q-1; results are mapped
    # back to every link x priority of the network at the end
    used_q, e_q = np.unique(e_link * P + prio[e_flow], return_inverse=True)
    e_q = e_q.astype(np.int64)
    Q = len(used_q)
    used_links, q_link = np.unique(used_q // P, return_inverse=True)
    q_glink = used_q // P
    first = flows.path_ptr[:-1]
    last = flows.path_ptr[1:] - 1
    hp = np.flatnonzero(e_hop > 0)
    e_prevq = np.full(E, -1, dtype=np.int64)
    e_prevq[hp] = e_q[hp - 1]
    cap_Bps = network.capacity_gbps * 1e9 / 8.0                        # per link, bytes/s
    delay_steps_link = np.maximum(1, np.rint(network.latency_us / dt_us).astype(np.int64))
    d_e = delay_steps_link[e_link]
    D = int(d_e.max()) + 1
    d_q = delay_steps_link[q_glink]
    first_link = e_link[first]
    keep_arrival = np.ones(E)            # 0 where an entry is a flow's first hop (nothing arrives there)
    keep_arrival[first] = 0.0
    # one propagation delay everywhere (the usual case): plain row operations instead of 2-D fancy indexing
    uniform = bool(np.all(d_e == d_e[0]) and np.all(d_q == d_e[0]))
    return dict(
        Q=Q, L=len(used_links), P=P, D=D, Q_all=network.n_links * P, e_flow=e_flow, e_q=e_q, first=first, last=last,
        # ingress occupancy: entries without a previous hop go to a sentinel bin Q
        prev_bins=np.where(e_prevq >= 0, e_prevq, Q), keep_arrival=keep_arrival, keep_arrival_tail=keep_arrival[1:], used_q=used_q,
        q_link=q_link, cap_Bps=cap_Bps, cap_step_q=cap_Bps[q_glink] * dt, first_link=first_link,
        line_Bps=cap_Bps[first_link], bottleneck_Bps=np.minimum.reduceat(cap_Bps[e_link], flows.path_ptr[:-1]),
        lat_path_us=np.bincount(e_flow, weights=network.latency_us[e_link], minlength=F), d_e=d_e, d0=int(d_e[0]),
        uniform=uniform, pause_index=[(s - d_q) % D for s in range(D)], q_range=np.arange(Q), e_range=np.arange(E),
        q_glink=q_glink, d_q=d_q, to_host_q=network.node_kind[network.link_dst[q_glink]] == HOST,
        from_host_q=network.node_kind[network.link_src[q_glink]] == HOST)


def _thresholds(network: Network, cfg: FluidConfig, parts: dict) -> dict:
    """Buffers, PFC thresholds and headroom, the lossless limits, RED thresholds."""
    Q, to_host_q, dt, pkt = parts["Q"], parts["to_host_q"], cfg.step_us * 1e-6, cfg.packet_bytes
    q_glink, d_q, cap_Bps = parts["q_glink"], parts["d_q"], parts["cap_Bps"]
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
    dp = cfg.dcqcn
    kmin, kmax, pmax = dp.kmin_kb * 1e3, dp.kmax_kb * 1e3, dp.pmax
    return dict(
        # lossy buffers; a NIC's send queue is host memory, not a switch buffer: never over
        buffer_lossy_q=np.where(parts["from_host_q"], np.inf, buffer_q), xoff_q=np.where(to_host_q, np.inf, xoff_q),
        xon_q=xon_q, ingress_limit_q=ingress_limit_q, vl_buffer_q=np.where(to_host_q, np.inf, cfg.ib_vl_buffer_bytes),
        kmin=kmin, kmax=kmax, pmax=pmax,
        red_slope=pmax / (kmax - kmin), lossy=not cfg.lossless, uses_pfc=cfg.uses_pfc, uses_credits=cfg.uses_credits,
        # with one propagation delay everywhere every ring row is overwritten the step after it lands,
        # so it need not be cleared (credits read the whole ring; the end of the run clears it)
        clear_landing=cfg.uses_credits or not parts["uniform"])


def _per_step(flows: Flows, cfg: FluidConfig, parts: dict) -> dict:
    """The arrays the step loop updates, at t = 0."""
    F, E, Q, D, pkt = flows.n_flows, len(parts["e_q"]), parts["Q"], parts["D"], cfg.packet_bytes
    dt = cfg.step_us * 1e-6
    wire = np.ceil(flows.size_bytes / cfg.payload_bytes) * pkt
    ring = np.zeros((D, E))
    ring_rows = [ring[s] for s in range(D)]
    arrivals = np.zeros(E)
    line_Bps = parts["line_Bps"]
    rec_flows = np.arange(F)[: min(F, 64)]
    return dict(
        # a NIC holds two packets of a flow, or two steps of line rate if that is more (so that the
        # step length never throttles a sender)
        wire=wire, start_us=flows.start_us, start_last_us=float(flows.start_us.max()),
        nic_room=np.maximum(2.0 * pkt, 2.0 * line_Bps * dt), line_step=line_Bps * dt, rec_flows=rec_flows,
        q=np.zeros(E), ring=ring, ring_rows=ring_rows, ring_heads=[row[:-1] for row in ring_rows], arrivals=arrivals,
        arrivals_tail=arrivals[1:], got=np.zeros(F), qsum=np.zeros(Q), over=np.zeros(Q), occ=np.zeros(Q),
        serve=np.zeros(Q), dep=np.zeros(E), qpost=np.zeros(Q), recv_pps=np.zeros(F), p_q=np.zeros(Q),
        p_path=np.zeros(F), pause_gen=np.zeros(Q, dtype=bool), pause_hist=np.zeros((D, Q), dtype=bool),
        remaining=np.zeros(F), active=np.zeros(F, dtype=bool), inject=np.zeros(F), rate_pps=line_Bps / pkt,
        alpha=np.ones(F), wait_until=np.zeros(F), loss_rng=np.random.default_rng(0),
        injected=np.zeros(F), delivered=np.zeros(F), dropped=np.zeros(F), retransmit=np.zeros(F), marks=np.zeros(F),
        cnps=np.zeros(F), timeouts=np.zeros(F), finish=np.full(F, np.nan), pending_at=wire - 1e-6 * wire,
        reached=np.zeros(F, dtype=bool), n_done=0, pause_us=np.zeros(Q), credit_wait=np.zeros(Q),
        max_ingress=np.zeros(Q), max_queue=np.zeros(Q), min_q=0.0, min_rate=np.inf,
        timeline={"t_us": [], "rate_gbps": [], "queue_kb": [], "paused_ports": [], "queues": parts["used_q"],
                  "flows": rec_flows})
