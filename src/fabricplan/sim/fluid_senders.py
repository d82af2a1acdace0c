"""Sender rules of the fluid model, one class per ``--cc`` mode, chosen from :data:`SENDER_RULES`.

A rule is a :class:`SenderRule` subclass registered under its mode name
(:func:`register_sender_rule`); every run makes a new instance, which holds the rule's own
per-flow arrays. The step loop (``fluid.py``) calls, on the run's
:class:`~fabricplan.sim.fluid_state.FluidState` ``s`` (``s.t_step``, ``s.t_us``: the step):

* ``init(s)`` once, before the first step;
* ``budget(s) -> array``: the bytes each flow may inject this step (rate-based rules end with
  :func:`nic_limited`); flows that have nothing left or have not started are already out of
  ``s.active``; the loop injects ``min(budget, remaining)``;
* ``react(s)`` after the injection: the reaction point (rates, windows) from this step's signals;
* ``on_loss(s, drop_f)`` on lossy queues, after a step's drops (``drop_f`` bytes per flow);
* ``run_compiled(s) -> bool``: run the steps itself (a compiled loop) and say so, else False.

Class attributes say what the rule needs from the switches and the link layer: ``link``
(``"pfc"``: RoCE, lossless with ``--pfc on``; ``"credit"``: InfiniBand credits, lossless;
``"lossy"``: drops whatever ``--pfc`` says), ``ecn`` (switches RED/ECN-mark: ``s.p_path``),
``receiver_rate`` (``s.recv_pps``), ``drop_tail`` (losses fall whole on a few flows) and ``waits``
(the rule may hold flows until ``s.wait_until``; the loop skips idle time to the earliest wake).
"""

from __future__ import annotations

import time

import numpy as np

from fabricplan.errors import InputError
from fabricplan.sim.fluid_state import FluidState

_bincount, _where, _min_reduce = np.bincount, np.where, np.minimum.reduce
_LINKS = ("pfc", "credit", "lossy")


class SenderRule:
    """The hook interface (module docstring); the base class sends at line rate and never reacts."""

    link = "pfc"
    ecn = False
    receiver_rate = False
    drop_tail = False
    waits = False

    def init(self, s: FluidState) -> None:
        pass

    def budget(self, s: FluidState) -> np.ndarray:
        return nic_limited(s, s.line_step)

    def react(self, s: FluidState) -> None:
        pass

    def on_loss(self, s: FluidState, drop_f: np.ndarray) -> None:
        pass

    def run_compiled(self, s: FluidState) -> bool:
        return False


#: ``--cc`` mode -> its sender rule class.
SENDER_RULES: dict[str, type[SenderRule]] = {}


def register_sender_rule(name: str, rule: type[SenderRule], *, replace: bool = False) -> type[SenderRule]:
    """Make ``rule`` the sender of ``--cc name`` (``replace`` to override a registered one)."""
    if not (isinstance(rule, type) and issubclass(rule, SenderRule)):
        raise TypeError(f"a sender rule must subclass SenderRule, got {rule!r}")
    if rule.link not in _LINKS:
        raise ValueError(f"{rule.__name__}.link must be one of {', '.join(_LINKS)}, got {rule.link!r}")
    if name in SENDER_RULES and not replace:
        raise ValueError(f"sender rule '{name}' is already registered")
    SENDER_RULES[name] = rule
    return rule


def sender_rule(cc: str) -> type[SenderRule]:
    """The registered rule of ``--cc cc`` (InputError naming the modes if there is none)."""
    rule = SENDER_RULES.get(cc)
    if rule is None:
        raise InputError(f"must be one of {', '.join(SENDER_RULES)}, got '{cc}'", location="--cc")
    return rule


def nic_limited(s: FluidState, budget: np.ndarray) -> np.ndarray:
    """``budget`` capped by the room left in each flow's NIC send queue."""
    return np.minimum(budget, np.maximum(s.nic_room - s.q[s.first], 0.0))


class LineRate(SenderRule):
    """``none`` (with PFC: the PFC-only baseline) and ``ib-credit``: line rate, no reaction."""


class IbCredit(LineRate):
    link = "credit"


class LoopDelay:
    """The path's signal and receive rate one control-loop delay ago (the path's round trip plus
    ``extra_loop_delay_us``, whole steps, at least one): a ring of ``Dc`` rows per flow."""

    def __init__(self, s: FluidState):
        self.loop_steps = np.maximum(1, np.rint((2 * s.lat_path_us + s.cfg.extra_loop_delay_us) / s.dt_us)
                                     .astype(np.int64))
        self.Dc = int(self.loop_steps.max()) + 1
        self.p_hist = np.zeros((self.Dc, s.F))
        self.r_hist = np.zeros((self.Dc, s.F))
        self.uniform = bool(np.all(self.loop_steps == self.loop_steps[0]))
        self.loop0 = int(self.loop_steps[0])
        self.flow_idx = np.arange(s.F)

    def delayed(self, s: FluidState, signal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Keep this step's ``signal`` and ``s.recv_pps``; return both as of one loop delay ago."""
        cslot = s.t_step % self.Dc
        self.p_hist[cslot] = signal
        self.r_hist[cslot] = s.recv_pps
        if self.uniform:
            back = (s.t_step - self.loop0) % self.Dc
            return self.p_hist[back], self.r_hist[back]
        back = (s.t_step - self.loop_steps) % self.Dc
        return self.p_hist[back, self.flow_idx], self.r_hist[back, self.flow_idx]


class Dcqcn(SenderRule):
    """``dcqcn``: the CoNEXT'16 per-flow RP fluid model (reference/dcqcn.md section 4.3) on
    ``R_C`` (``s.rate_pps``), ``R_T`` and ``alpha``, driven by the path marking probability and the
    receive rate one loop delay ago; NP CNPs at most one per ``tau``; hyper increase by ``R_HAI``
    past F stages of both counters (an extension: CoNEXT'16 leaves R_HAI out)."""

    ecn = True
    receiver_rate = True

    def init(self, s: FluidState) -> None:
        dp, pkt = s.cfg.dcqcn, s.pkt
        self.delay = LoopDelay(s)
        self.line_pps = s.line_Bps / pkt
        self.Rt = self.line_pps.copy()
        self.rai = dp.rai_mbps * 1e6 / 8.0 / pkt
        self.rhai = max(dp.rhai_mbps, dp.rai_mbps) * 1e6 / 8.0 / pkt
        self.min_pps = np.minimum(dp.min_rate_mbps * 1e6 / 8.0 / pkt, self.line_pps)
        self.B = dp.byte_counter_bytes / pkt
        self.T = dp.rate_timer_us * 1e-6
        self.tau = dp.cnp_interval_us * 1e-6
        self.taup = dp.alpha_interval_us * 1e-6
        self.Fr = dp.fast_recovery_steps
        self.g_taup = dp.g / self.taup

    def budget(self, s: FluidState) -> np.ndarray:
        return nic_limited(s, s.rate_pps * s.pkt * s.dt)

    def react(self, s: FluidState) -> None:
        p_d, r_d = self.delay.delayed(s, s.p_path)
        tau, taup, B, T, Fr, rai = self.tau, self.taup, self.B, self.T, self.Fr, self.rai
        Rc, Rt, alpha, dt = s.rate_pps, self.Rt, s.alpha, s.dt
        log1m = np.log1p(-np.minimum(p_d, 1.0 - 1e-12))
        cut = -np.expm1(tau * r_d * log1m)            # P(a CNP in tau)
        a_rate = -np.expm1(taup * r_d * log1m)        # P(a mark in tau')
        byte_ev, byte_ai, timer_ev, timer_ai = increase_events(r_d, p_d, log1m, B, T, Fr)
        d_alpha = self.g_taup * (a_rate - alpha)
        # hyper increase (R_HAI) once both counters are past F stages: an AI event of one counter
        # while the other has also gone F events unmarked (extension of the CoNEXT'16 model,
        # which leaves R_HAI out; negligible at the fixed point, where (1-p)^(F B) ~ 0)
        past_b = np.exp(Fr * B * log1m)
        past_t = np.exp(Fr * T * r_d * log1m)
        gap = Rt - Rc
        d_rt = -gap / tau * cut + rai * (byte_ai + timer_ai) \
            + (self.rhai - rai) * (byte_ai * past_t + timer_ai * past_b)
        d_rc = -Rc * alpha / (2 * tau) * cut + gap / 2 * (byte_ev + timer_ev)
        alpha += dt * d_alpha
        self.Rt = np.minimum(np.maximum(Rt + dt * d_rt, self.min_pps), self.line_pps)
        s.rate_pps = Rc = np.minimum(np.maximum(Rc + dt * d_rc, self.min_pps), self.line_pps)
        np.minimum(np.maximum(alpha, 0.0, out=alpha), 1.0, out=alpha)
        recv_pps = s.recv_pps
        s.cnps += dt * _where(recv_pps > 0, -np.expm1(tau * recv_pps * np.log1p(-np.minimum(s.p_path, 1 - 1e-12)))
                              / tau, 0.0)
        s.min_rate = min(s.min_rate, float(_min_reduce(Rc)) * s.pkt * 8 / 1e9)


def increase_events(r, p, log1m, B, T, F):
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
    r_b = r / B
    ev_b = _where(small_b, r_b, rp * np.exp(x_b) / _where(small_b, 1.0, -np.expm1(x_b)))
    ai_b = _where(small_b, r_b, ev_b * np.exp(F * x_b))
    marked = log1m < 0
    t_limit = _where(marked, p / (-T * _where(marked, log1m, -1.0)), 1.0 / T)
    ev_t = _where(small_t, t_limit, rp * np.exp(x_t) / _where(small_t, 1.0, -np.expm1(x_t)))
    ai_t = _where(small_t, t_limit, ev_t * np.exp(F * x_t))
    return ev_b, ai_b, ev_t, ai_t


class IbCc(SenderRule):
    """``ib-cc``: InfiniBand congestion control on credits. A switch queue above
    ``ib_cc_threshold_bytes`` marks FECN; the BECN returns one loop delay later and the source
    moves one CCT index step per ``ib_cc_recovery_us`` up while marked, down without; its rate is
    the line rate times ``ib_cc_decrease_fraction`` per index step."""

    link = "credit"
    receiver_rate = True

    def init(self, s: FluidState) -> None:
        self.delay = LoopDelay(s)
        self.ccti = np.zeros(s.F)

    def budget(self, s: FluidState) -> np.ndarray:
        return nic_limited(s, s.line_step * s.cfg.ib_cc_decrease_fraction ** self.ccti)

    def react(self, s: FluidState) -> None:
        fecn = (s.qpost > s.cfg.ib_cc_threshold_bytes)[s.e_q]           # bincount weighs True as 1.0
        signal = _bincount(s.e_flow, weights=fecn, minlength=s.F) > 0    # a queue on the path above it
        p_d, r_d = self.delay.delayed(s, signal)
        becn = (p_d > 0) & (r_d > 0)
        step = s.dt / (s.cfg.ib_cc_recovery_us * 1e-6)
        self.ccti = np.maximum(self.ccti + _where(becn, step, -step), 0.0)   # step x (+1 or -1)
        s.cnps += _where(becn, step, 0.0)
        s.marks += s.recv_pps * s.dt * signal  # FECN-marked packets


class Tcp(SenderRule):
    """``tcp`` (lossy, drop-tail): window-based: IW ``tcp_initial_window_segments``, slow start,
    congestion avoidance; a loss halves the window once per round trip (fast retransmit), unless
    fewer than ``tcp_dupack_threshold`` packets remain in flight: then a timeout of
    ``tcp_min_rto_us`` and a restart at one segment (incast collapse). Runs compiled when it can
    (:meth:`run_compiled`, ``fluid_tcp_kernel.py``)."""

    link = "lossy"
    drop_tail = True
    waits = True

    def init(self, s: FluidState) -> None:
        self.cwnd = np.full(s.F, s.cfg.tcp_initial_window_segments * s.pkt)
        self.ssthresh = np.full(s.F, np.inf)
        self.recover_until = np.zeros(s.F)
        self.base_rtt_us = 2 * s.lat_path_us

    def budget(self, s: FluidState) -> np.ndarray:
        in_flight = s.injected - s.delivered - s.dropped
        return np.maximum(self.cwnd - in_flight, 0.0)

    def react(self, s: FluidState) -> None:
        cwnd, got = self.cwnd, s.got
        slow = cwnd < self.ssthresh
        cwnd += _where(slow, got, s.pkt * got / np.maximum(cwnd, s.pkt))

    def on_loss(self, s: FluidState, drop_f: np.ndarray) -> None:
        """Fast retransmit and halving once per round trip, or a retransmission timeout when fewer
        than ``dupack`` packets remain in flight (``s.wait_until``: the RTO)."""
        t_us, pkt, cwnd, stall_until, recover_until = s.t_us, s.pkt, self.cwnd, s.wait_until, self.recover_until
        lost = (drop_f > 1e-9) & (recover_until <= t_us) & (stall_until <= t_us)
        if not lost.any():
            return
        in_flight = s.injected - s.delivered - s.dropped
        timeout = lost & (in_flight < s.cfg.tcp_dupack_threshold * pkt)
        fast = lost & ~timeout
        half = np.maximum(cwnd / 2.0, 2.0 * pkt)
        self.ssthresh[lost] = half[lost]
        cwnd[fast] = half[fast]
        recover_until[fast] = t_us + self.base_rtt_us[fast]
        cwnd[timeout] = pkt
        stall_until[timeout] = t_us + s.cfg.tcp_min_rto_us
        recover_until[timeout] = t_us + s.cfg.tcp_min_rto_us
        s.timeouts[timeout] += 1

    def run_compiled(self, s: FluidState) -> bool:
        """The same steps, compiled (``fluid_tcp_kernel.py``), when numba is installed and the run
        fits the kernel: one priority, one propagation delay, no time series."""
        from fabricplan.sim import fluid_tcp_kernel as kern

        # the one-off set-up (importing numba, compiling the kernel or loading it from numba's
        # cache) is not run time, as ns-3's compile is outside its run loop
        load_started = time.perf_counter()
        cfg = s.cfg
        if not (cfg.accelerate and s.uniform and s.P == 1 and s.lossy and not cfg.record_every
                and not s.uses_pfc and not s.uses_credits and kern.available()):
            return False
        steps = kern.kernel()
        draws, draw_ptr, status = np.zeros(0), 0, kern.NEED_DRAWS
        args = lambda: (  # noqa: E731
            s.dt_us, s.D, s.d0, s.ring, s.q, s.arrivals, s.keep_arrival, s.e_q,
            s.e_flow, s.prev_bins, s.first, s.last, s.Q, s.buffer_lossy_q, s.cap_step_q, s.max_ingress, s.max_queue,
            s.wire, s.retransmit, s.injected, s.delivered, s.dropped, s.start_us, s.start_last_us, s.wait_until,
            self.recover_until, self.cwnd, self.ssthresh, s.timeouts, self.base_rtt_us, s.pkt,
            cfg.tcp_dupack_threshold * s.pkt, cfg.tcp_min_rto_us, s.pending_at, s.finish, s.n_done, s.min_q,
            s.min_rate, draws, draw_ptr)
        steps(s.t_step, s.t_step, *args())  # runs no step: compiles or loads the kernel
        s.started += time.perf_counter() - load_started
        while status == kern.NEED_DRAWS:
            if len(draws) - draw_ptr < s.E:  # the generator's next draws, as drop_tail would take them
                draws = np.concatenate((draws[draw_ptr:], s.loss_rng.exponential(size=max(16 * s.E, 1 << 16))))
                draw_ptr = 0
            status, s.t_step, s.slot, s.n_done, s.min_q, s.min_rate, draw_ptr = steps(s.t_step, s.max_steps, *args())
        return True


for _name, _rule in (("dcqcn", Dcqcn), ("none", LineRate), ("ib-credit", IbCredit), ("ib-cc", IbCc), ("tcp", Tcp)):
    register_sender_rule(_name, _rule)
