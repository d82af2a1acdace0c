"""Optional compiled step loop of the fluid model for ``--cc tcp`` (needs numba: ``pip install
fabricplan[fast]``).

Why compiled: at the sizes of the benchmark scenarios (a 64-to-1 incast is 260 flow-hops) one
numpy step of :func:`fabricplan.sim.fluid.simulate_fluid` is ~45 numpy calls of ~1 us of call
overhead each, so 20 ms of an incast at the 1 us step costs ~0.8 s whatever the arithmetic; ns-3
runs the same incast at ~1,000 simulated us per wall second on the same machine, so the 100x goal
needs ~10 us per step, which no arrangement of numpy calls reaches, and a longer step would coarsen
the 1 us link propagation the scenario conventions fix (docs/simulator.md). This kernel is the same
arithmetic as the numpy loop (TCP mode: lossy drop-tail queues, no PFC, no credits, no ECN, one
priority, one propagation delay everywhere), element by element in the same order, so results are
the numpy loop's bit for bit (tests/sim/test_fluid_kernel.py), except that the idle test sums the
queues sequentially instead of pairwise (it only compares the sum with 1e-9 bytes).

The drop-tail order of :func:`fabricplan.sim.fluid_switch.drop_tail` draws from the run's generator:
the kernel takes the draws from a buffer the caller refills from the same generator (a generator's
exponential draws in several calls equal one call of the total size), and returns ``NEED_DRAWS``
at the start of a step when fewer than one per flow-hop remain.
"""

from __future__ import annotations

import math

import numpy as np

ENDED, DONE, NEED_DRAWS = 0, 1, 2


def available() -> bool:
    """Whether numba can be imported (the compiled loop is optional)."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


_KERNEL = None


def kernel():
    """The compiled step loop (compiled on first use, cached on disk by numba)."""
    global _KERNEL
    if _KERNEL is None:
        import numba

        _KERNEL = numba.njit(cache=True, nogil=True)(_tcp_steps)
    return _KERNEL


def _tcp_steps(t_step, max_steps, dt_us, D, d0, ring, q, arrivals, keep_arrival, e_q, e_flow, prev_bins, first, last,
               Q, buffer_lossy_q, cap_step_q, max_ingress, max_queue, wire, retransmit, injected, delivered, dropped,
               start_us, start_last_us, stall_until, recover_until, cwnd, ssthresh, timeouts, base_rtt_us, pkt,
               dupack_bytes, min_rto_us, pending_at, finish, n_done, min_q, min_rate, draws, draw_ptr):
    """Run TCP-mode steps from ``t_step`` (module docstring); returns ``(status, t_step, slot,
    n_done, min_q, min_rate, draw_ptr)``, arrays updated in place."""
    E = q.shape[0]
    F = wire.shape[0]
    qsum = np.zeros(Q)
    over = np.zeros(Q)
    occ = np.zeros(Q + 1)
    serve = np.zeros(Q)
    frac = np.zeros(Q)
    got = np.zeros(F)
    inject = np.zeros(F)
    drop_e = np.zeros(E)
    drop_f = np.zeros(F)
    hit = np.zeros(E, dtype=np.int64)
    key = np.zeros(E)
    slot = t_step % D
    while t_step < max_steps:
        if draws.shape[0] - draw_ptr < E:
            return NEED_DRAWS, t_step, slot, n_done, min_q, min_rate, draw_ptr
        t_us = t_step * dt_us
        slot = t_step % D
        # 1. arrivals
        for e in range(1, E):
            arrivals[e] = ring[slot, e - 1] * keep_arrival[e]
        for e in range(E):
            q[e] += arrivals[e]
        for f in range(F):
            got[f] = ring[slot, last[f]]
            delivered[f] += got[f]
        qsum[:] = 0.0
        for e in range(E):
            qsum[e_q[e]] += q[e]
        worst = -np.inf
        for i in range(Q):
            over[i] = qsum[i] - buffer_lossy_q[i]
            if over[i] > worst:
                worst = over[i]
        if worst > 1e-9:
            # drop-tail: arrivals in a random order, the last ones find the buffer full
            n_hit = 0
            for e in range(E):
                if over[e_q[e]] > 1e-9 and arrivals[e] > 0:
                    hit[n_hit] = e
                    n_hit += 1
            for j in range(n_hit):
                key[j] = draws[draw_ptr + j] / arrivals[hit[j]]
            draw_ptr += n_hit
            hits = hit[:n_hit]
            by_key = np.argsort(key[:n_hit], kind="mergesort")
            qs_by_key = np.empty(n_hit, dtype=np.int64)
            for j in range(n_hit):
                qs_by_key[j] = e_q[hits[by_key[j]]]
            by_q = np.argsort(qs_by_key, kind="mergesort")
            drop_e[:] = 0.0
            cum = 0.0
            group_base = 0.0
            prev_q = -1
            for j in range(n_hit):
                e = hits[by_key[by_q[j]]]
                a = arrivals[e]
                cum += a
                if e_q[e] != prev_q:
                    group_base = cum - a
                    prev_q = e_q[e]
                before = cum - a - group_base
                d = over[e_q[e]] - before
                if d < 0.0:
                    d = 0.0
                if d > a:
                    d = a
                drop_e[e] = d
            for e in range(E):
                q[e] -= drop_e[e]
            drop_f[:] = 0.0
            for e in range(E):
                drop_f[e_flow[e]] += drop_e[e]
            for f in range(F):
                dropped[f] += drop_f[f]
                retransmit[f] += drop_f[f]
            qsum[:] = 0.0
            for e in range(E):
                qsum[e_q[e]] += q[e]
            # TCP's reaction: fast retransmit and halving once per round trip, or a timeout
            for f in range(F):
                if drop_f[f] > 1e-9 and recover_until[f] <= t_us and stall_until[f] <= t_us:
                    in_flight = injected[f] - delivered[f] - dropped[f]
                    half = cwnd[f] / 2.0
                    if half < 2.0 * pkt:
                        half = 2.0 * pkt
                    ssthresh[f] = half
                    if in_flight < dupack_bytes:
                        cwnd[f] = pkt
                        stall_until[f] = t_us + min_rto_us
                        recover_until[f] = t_us + min_rto_us
                        timeouts[f] += 1
                    else:
                        cwnd[f] = half
                        recover_until[f] = t_us + base_rtt_us[f]
        # ingress occupancy
        occ[:] = 0.0
        for e in range(E):
            occ[prev_bins[e]] += q[e]
        for i in range(Q):
            if occ[i] > max_ingress[i]:
                max_ingress[i] = occ[i]
        # 2. service (one priority: a queue's demand is its link's)
        for i in range(Q):
            s = qsum[i]
            if s > cap_step_q[i]:
                s = qsum[i] * cap_step_q[i] / qsum[i]
            serve[i] = s
            frac[i] = serve[i] / qsum[i] if qsum[i] > 0 else 0.0
        w = (t_step + d0) % D
        for e in range(E):
            dep = q[e] * frac[e_q[e]]
            ring[w, e] = dep
            q[e] -= dep
        for i in range(Q):
            qpost = qsum[i] - serve[i]
            if qpost > max_queue[i]:
                max_queue[i] = qpost
        # 5. senders (window-based)
        for f in range(F):
            remaining = wire[f] + retransmit[f] - injected[f]
            ok = remaining > 1e-9
            if start_last_us > t_us:
                ok = ok and start_us[f] <= t_us
            ok = ok and stall_until[f] <= t_us
            in_flight = injected[f] - delivered[f] - dropped[f]
            budget = cwnd[f] - in_flight
            if budget < 0.0:
                budget = 0.0
            x = 0.0
            if ok:
                x = budget if budget < remaining else remaining
            if x < 0.0:
                x = 0.0
            inject[f] = x
            injected[f] += x
            q[first[f]] += x
            # 6. congestion window: slow start, then congestion avoidance
            if cwnd[f] < ssthresh[f]:
                cwnd[f] += got[f]
            else:
                cwnd[f] += pkt * got[f] / (cwnd[f] if cwnd[f] > pkt else pkt)
        if min_rate > 0.0:
            for f in range(F):
                if inject[f] < min_rate:
                    min_rate = inject[f]
        # completion
        for f in range(F):
            if delivered[f] >= pending_at[f]:
                finish[f] = t_us + dt_us
                pending_at[f] = np.inf
                n_done += 1
        for e in range(E):
            if q[e] < min_q:
                min_q = q[e]
        if n_done == F:
            return DONE, t_step, slot, n_done, min_q, min_rate, draw_ptr
        t_step += 1
        # idle skip: nothing in the network and nobody may send now (TCP timeouts)
        total = 0.0
        for e in range(E):
            total += q[e]
        if total <= 1e-9:
            ring[slot, :] = 0.0  # landed already
            busy = False
            for r in range(D):
                for e in range(E):
                    if ring[r, e] != 0.0:
                        busy = True
            if not busy:
                nxt = np.inf
                any_pending = False
                for f in range(F):
                    if math.isnan(finish[f]):
                        any_pending = True
                        wake = stall_until[f] if stall_until[f] > start_us[f] else start_us[f]
                        if wake < nxt:
                            nxt = wake
                if not any_pending:
                    nxt = t_us
                if nxt > t_us + dt_us:
                    jump = int(math.floor(nxt / dt_us))
                    if jump > t_step:
                        t_step = jump
    return ENDED, t_step, slot, n_done, min_q, min_rate, draw_ptr
