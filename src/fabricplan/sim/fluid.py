"""Fluid congestion dynamics: queues, RED/ECN, PFC, DCQCN, InfiniBand credits (and CC), TCP.

A time-stepped fluid model (step ``dt``, ``perf_defaults.sim_fluid_step_us``), vectorised with
numpy over *entries*: one entry per (flow, hop) of every flow's path (the CSR of
:class:`~fabricplan.sim.network.Flows`). Entry ``e`` holds the bytes of its flow waiting in the
egress queue of its hop's link (hop 0 is the sending NIC's queue). Per step:

1. **Arrivals** from the previous hop land after the link's propagation delay (whole steps, at
   least one; a ring buffer). On a lossy queue, bytes above the egress buffer are dropped, shared
   among the flows in proportion to what they brought this step (drop-tail for TCP: whole
   arrivals of a few flows, in a seeded random order).
2. **Service**: a link's capacity is shared among its unpaused priority queues in proportion to
   their backlog; within a queue each flow leaves in proportion to its bytes there (FIFO as a
   fluid). A queue whose downstream ingress asserted PFC XOFF (seen one propagation delay later)
   sends nothing; with InfiniBand credits a queue sends at most the free VL buffer downstream
   (buffer minus what sits there and what is on the wire): no pause frames, no loss.
3. **CP, RED/ECN** on egress (CoNEXT'16 assumes marking on egress), for ECN senders: ``p(q) = 0``
   below Kmin, ``(q-Kmin)/(Kmax-Kmin) Pmax`` up to Kmax, 1 above; a path marks ``1 - prod(1-p)``.
4. **PFC** per ingress port and priority (the bytes at a switch that arrived on that link): XOFF
   at ``pfc_xoff_bytes``, XON at ``pfc_xon_bytes``; the headroom above XOFF is the in-flight
   volume, ``capacity x (2 propagation + 2 dt) + 2 packets`` (IEEE 802.1Qbb accounting,
   reference/pfc_headroom.md section 1.1, with the step as the response time).
5. **Senders** inject what their rule allows, then react: DCQCN RP as the CoNEXT'16 per-flow
   fluid model (reference/dcqcn.md section 4.3) driven by the path marking probability and the
   flow's sending rate one control-loop delay ago (the path's round trip plus
   ``extra_loop_delay_us``), NP CNPs at most one per ``tau``; ``none``/``ib-credit`` send at line
   rate; ``ib-cc`` cuts the rate by a CCT step per BECN interval while a queue on the path is above
   the FECN threshold and recovers one step per CCTI timer; ``tcp`` is window-based (slow start
   from IW, congestion avoidance, halving on loss, a timeout of ``tcp_min_rto_us`` when fewer than
   ``dupack`` packets remain in flight to trigger fast retransmit, i.e. incast collapse). Dropped
   bytes are sent again.

**Structure.** A small core and its rules, each a function or class that fits on a screen:

* ``fluid_state.py``: :class:`~fabricplan.sim.fluid_state.FluidState`, one dataclass of numpy
  arrays per run (structure, thresholds, per-step arrays, counters), built by ``new_state``.
* ``fluid_switch.py``: the switch and link rules, ``rule(s)`` each (``arrive``,
  ``drop_overflow``, ``ingress``, ``serve`` with PFC pause and ``credit_limit``,
  ``receiver_rate``, ``red_ecn``, ``pfc_xoff_xon``); ``switch_rules`` picks the ones a run needs.
* ``fluid_senders.py``: one :class:`~fabricplan.sim.fluid_senders.SenderRule` per ``--cc`` mode
  in the registry ``SENDER_RULES`` (hooks ``init(s)``, ``budget(s)``, ``react(s)``,
  ``on_loss(s, drop_f)``, ``run_compiled(s)``; class attributes for what it needs of the
  switches). A new mode is a subclass registered with ``register_sender_rule(name, cls)``: the
  loop, ``--cc`` and the config's lossless/PFC/credit properties pick it up unchanged.
* here: the configuration, the step loop (:func:`_run_steps`: the run's rules in order, every
  step, then the idle skip), the senders' injection and the bookkeeping rules, the result.

All quantities are bytes of wire data (payload + headers) unless a name says payload. What this
model leaves out compared with a packet-level simulator is listed in docs/simulator.md.

``tcp`` runs a compiled copy of the step loop when numba is installed (``fluid_tcp_kernel.py``, the
same arithmetic in the same order: identical results, ~15x fewer us per step; ``Tcp.run_compiled``);
every other mode, and TCP with ``record_every`` or several priorities or propagation delays, runs
the numpy loop.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace

import numpy as np

from fabricplan.errors import InputError
from fabricplan.sim.fluid_senders import SENDER_RULES, SenderRule, register_sender_rule, sender_rule
from fabricplan.sim.fluid_state import MAX_ENTRIES, MAX_STEPS, FluidState, new_state
from fabricplan.sim.fluid_switch import switch_rules
from fabricplan.sim.network import Flows, Network

__all__ = ["FluidConfig", "FluidResult", "SENDER_RULES", "SenderRule", "check_config", "fluid_config",
           "register_sender_rule", "simulate_fluid", "MAX_ENTRIES", "MAX_STEPS"]

_add_reduce, _min_reduce = np.add.reduce, np.minimum.reduce


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
        return self.uses_credits or self.uses_pfc

    @property
    def uses_pfc(self) -> bool:
        """PFC on and a sender rule on a PFC link (RoCE: dcqcn, none)."""
        return self.pfc and sender_rule(self.cc).link == "pfc"

    @property
    def uses_credits(self) -> bool:
        """A sender rule on InfiniBand credits (ib-credit, ib-cc)."""
        return sender_rule(self.cc).link == "credit"

    def with_values(self, **values) -> FluidConfig:
        return replace(self, **{k: v for k, v in values.items() if v is not None})


def fluid_config(catalog, **overrides) -> FluidConfig:
    """A :class:`FluidConfig` from ``catalog``'s ``perf_defaults`` (``sim_*``, ``tcp_*``, ``dcqcn_*``) plus overrides."""
    from fabricplan.sim.dcqcn import dcqcn_params
    from fabricplan.sim.params import sim_parameter as perf_parameter

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


#: Program limits (not physical defaults) of a run's settings: the integration step (1 ns .. 1 ms),
#: the payload per packet (the smallest Ethernet frame .. 64 KiB, beyond any jumbo or InfiniBand
#: MTU), PFC thresholds (up to 10 GB, beyond the deepest switch buffer) and the control-loop delay
#: added to each round trip (up to 1 s).
STEP_US_RANGE = (0.001, 1_000.0)
PAYLOAD_BYTES_RANGE = (64, 65_536)
PFC_THRESHOLD_KB_RANGE = (0.001, 10_000_000.0)
LOOP_DELAY_US_RANGE = (0.0, 1_000_000.0)


def _within(value: float, bounds: tuple[float, float], flag: str, unit: str) -> None:
    """InputError naming ``flag`` and its range unless ``value`` is finite and within ``bounds``."""
    from fabricplan.units import format_span

    low, high = bounds
    if not (math.isfinite(value) and low <= value <= high):
        raise InputError(f"must be in {format_span(low, high, unit)}, got {value:g}", location=flag)


def check_config(config: FluidConfig) -> FluidConfig:
    """InputError naming the CLI flag of the first bad setting and its accepted range."""
    sender_rule(config.cc)  # a registered --cc mode
    _within(config.step_us, STEP_US_RANGE, "--step-us", "us")
    _within(config.payload_bytes, PAYLOAD_BYTES_RANGE, "--mtu", "bytes")
    if not math.isfinite(config.max_time_us) or config.max_time_us <= 0:
        raise InputError(f"must be a number > 0, got {config.max_time_us / 1e3:g}", location="--max-time-ms")
    for name, flag in (("pfc_xoff_bytes", "--pfc-xoff-kb"), ("pfc_xon_bytes", "--pfc-xon-kb")):
        number = getattr(config, name)
        if number is not None:
            _within(number / 1e3, PFC_THRESHOLD_KB_RANGE, flag, "KB")
    if config.pfc_xoff_bytes is not None and config.pfc_xon_bytes is not None \
            and config.pfc_xon_bytes > config.pfc_xoff_bytes:
        raise InputError("must not exceed --pfc-xoff-kb", location="--pfc-xon-kb")
    _within(config.extra_loop_delay_us, LOOP_DELAY_US_RANGE, "--loop-delay-us", "us")
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


def simulate_fluid(network: Network, flows: Flows, config: FluidConfig, priority=None) -> FluidResult:
    """Run the fluid model (module docstring) until every flow is delivered or ``max_time_us``."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        return _simulate(network, flows, config, priority)


def _simulate(network: Network, flows: Flows, config: FluidConfig, priority) -> FluidResult:
    s = new_state(network, flows, config, priority, started=time.perf_counter())
    s.sender = sender = sender_rule(config.cc)()
    sender.init(s)
    if not sender.run_compiled(s):
        _run_steps(s, _step_rules(s, sender), sender.waits)
    return _result(network, flows, s)


def _step_rules(s: FluidState, sender: SenderRule) -> list:
    """One step, as the rules to call in order: the switches', the senders', the bookkeeping."""
    rules = switch_rules(s, sender) + [_inject]
    if type(sender).react is not SenderRule.react:
        rules.append(sender.react)
    rules.append(_track)
    if s.cfg.record_every:
        rules.append(_record)
    return rules


def _run_steps(s: FluidState, rules: list, waits: bool) -> None:
    """The step loop: every rule once per step, until every flow is done or ``max_steps``."""
    while s.t_step < s.max_steps:
        s.t_us = s.t_step * s.dt_us
        s.slot = s.t_step % s.D
        for rule in rules:
            rule(s)
        if s.n_done == s.F:
            break
        s.t_step += 1
        if (waits or s.start_last_us > s.t_us) and _add_reduce(s.q) <= 1e-9:
            _skip_idle(s)


def _inject(s: FluidState) -> None:
    """Senders inject ``min(budget, remaining)``: flows with bytes left (lost bytes included) that
    have started and, for a rule that ``waits``, are not held."""
    remaining, sender, t_us = s.remaining, s.sender, s.t_us
    np.add(s.wire, s.retransmit, out=remaining)
    remaining -= s.injected
    active = remaining > 1e-9
    if s.start_last_us > t_us:
        active &= s.start_us <= t_us
    if sender.waits:
        active &= s.wait_until <= t_us
    s.active = active
    budget = sender.budget(s)
    inject = np.where(s.active, np.minimum(budget, remaining), 0.0)
    np.maximum(inject, 0.0, out=inject)
    s.injected += inject
    s.q[s.first] += inject
    s.inject = inject


def _track(s: FluidState) -> None:
    """Completions (delivered bytes only grow, so a flow's threshold goes to inf once it is met),
    the smallest rate and queue seen."""
    if s.min_rate > 0.0:  # inject >= 0: once the minimum is 0 it stays 0
        s.min_rate = min(s.min_rate, float(_min_reduce(s.inject)))
    reached = s.reached
    np.greater_equal(s.delivered, s.pending_at, out=reached)
    if np.count_nonzero(reached):
        s.finish[reached] = s.t_us + s.dt_us
        s.pending_at[reached] = np.inf
        s.n_done += int(np.count_nonzero(reached))
    qmin = float(_min_reduce(s.q))
    if qmin < s.min_q:
        s.min_q = qmin


def _record(s: FluidState) -> None:
    """The time series, every ``record_every`` steps: rates of the first 64 flows, queues, pauses."""
    if s.t_step % s.cfg.record_every == 0:
        timeline, dt, pkt = s.timeline, s.dt, s.pkt
        timeline["t_us"].append(s.t_us)
        timeline["rate_gbps"].append(s.inject[s.rec_flows] / dt / pkt * pkt * 8 / 1e9)
        timeline["queue_kb"].append(s.qpost / 1e3)
        timeline["paused_ports"].append(int(s.pause_gen.sum()))


def _skip_idle(s: FluidState) -> None:
    """Nothing queued (the caller checked) and, if nothing is in flight either, nobody may send now
    (held flows, later starts): jump to the next wake. Called after ``t_step`` moved on; ``s.t_us``
    and ``s.slot`` are still the step just run."""
    s.ring_rows[s.slot].fill(0.0)  # landed already
    if not np.count_nonzero(s.ring):
        pending = np.isnan(s.finish)
        wake = np.maximum(s.wait_until[pending], s.start_us[pending])
        nxt = float(wake.min()) if wake.size else s.t_us
        if nxt > s.t_us + s.dt_us:
            s.t_step = max(s.t_step, int(math.floor(nxt / s.dt_us)))


def _result(network: Network, flows: Flows, s: FluidState) -> FluidResult:
    s.ring_rows[s.slot].fill(0.0)  # the last step's landing row had landed
    sim_time_us = min(s.t_step, s.max_steps) * s.dt_us
    store_forward_us = (s.lengths - 1) * s.pkt / s.cap_Bps[s.first_link] * 1e6
    fct = s.finish - s.start_us + s.lat_path_us + store_forward_us
    ideal = s.wire / s.bottleneck_Bps * 1e6 + 2 * s.lat_path_us + store_forward_us

    def full(values, fill=0.0):
        out = np.full(s.Q_all, fill, dtype=float)
        out[s.used_q] = values
        return out

    timeline = s.timeline
    for key in ("rate_gbps", "queue_kb"):
        timeline[key] = np.array(timeline[key]) if timeline[key] else np.zeros((0, 0))
    return FluidResult(
        network=network, flows=flows, config=s.cfg, finish_us=s.finish, fct_us=fct, ideal_fct_us=ideal,
        wire_bytes=s.wire, delivered_bytes=s.delivered, injected_bytes=s.injected, dropped_bytes=s.dropped,
        ecn_marks=s.marks, cnps=s.cnps, timeouts=s.timeouts, pause_us=full(s.pause_us),
        credit_wait_us=full(s.credit_wait), max_ingress_bytes=full(s.max_ingress),
        ingress_limit_bytes=full(s.ingress_limit_q, np.inf), max_queue_bytes=full(s.max_queue),
        queued_bytes_end=float(s.q.sum()), in_flight_bytes_end=float(s.ring.sum()), min_queue_bytes=s.min_q,
        min_rate_gbps=0.0 if not math.isfinite(s.min_rate) else s.min_rate, sim_time_us=sim_time_us,
        steps=s.t_step, wall_s=time.perf_counter() - s.started, n_priorities=s.P, priority=s.prio,
        alpha_end=s.alpha.copy(), rate_end_gbps=s.rate_pps * s.pkt * 8 / 1e9, timeline=timeline)
