"""Switch and link rules of the fluid model: one function per rule, each ``rule(s)`` on a
:class:`~fabricplan.sim.fluid_state.FluidState`, run in the order of :func:`switch_rules` every step.

* :func:`arrive`: bytes land after their link's propagation (a ring of ``D`` rows).
* :func:`drop_overflow` (lossy queues): bytes above the egress buffer are dropped, drop-tail
  (:func:`drop_tail`, for senders with ``drop_tail``) or in proportion to what each flow brought.
* :func:`ingress`: bytes at each switch ingress, per upstream queue (PFC, credits, the limit checks).
* :func:`serve`: a link shares its capacity among its queues in proportion to their backlog, a
  queue among its flows in proportion to their bytes (FIFO as a fluid); a queue whose downstream
  sent XOFF one propagation delay ago sends nothing (PFC), and with InfiniBand credits a queue
  sends at most the free VL buffer downstream (:func:`credit_limit`).
* :func:`receiver_rate` (senders with ``receiver_rate``): packets reaching each receiver.
* :func:`red_ecn` (senders with ``ecn``): RED marking on the standing egress backlog, the path's
  marking probability ``1 - prod(1-p)`` and the marked packets.
* :func:`pfc_xoff_xon` (PFC on): XOFF at ``xoff_q`` ingress bytes, XON at ``xon_q``.
"""

from __future__ import annotations

import numpy as np

from fabricplan.sim.fluid_state import FluidState

_bincount, _where, _max_reduce = np.bincount, np.where, np.maximum.reduce


def switch_rules(s: FluidState, sender) -> list:
    """The switch rules this run needs, in step order (before the senders)."""
    rules = [arrive]
    if s.lossy:
        rules.append(drop_overflow)
    rules += [ingress, serve]
    if sender.receiver_rate:
        rules.append(receiver_rate)
    if sender.ecn:
        rules.append(red_ecn)
    if s.uses_pfc:
        rules.append(pfc_xoff_xon)
    return rules


def arrive(s: FluidState) -> None:
    """This step's ring row lands: at the next hop's queue, or at the receiver (``got``)."""
    landing = s.ring_rows[s.slot]
    np.multiply(s.ring_heads[s.slot], s.keep_arrival_tail, out=s.arrivals_tail)
    s.q += s.arrivals
    landing.take(s.last, out=s.got)
    s.delivered += s.got
    if s.clear_landing:
        landing.fill(0.0)
    s.qsum = _bincount(s.e_q, weights=s.q, minlength=s.Q)


def drop_overflow(s: FluidState) -> None:
    """Lossy queues drop what exceeds their buffer; dropped bytes are sent again (``retransmit``)
    and the sender rule hears of them (``on_loss``)."""
    over, sender = s.over, s.sender
    np.subtract(s.qsum, s.buffer_lossy_q, out=over)
    if _max_reduce(over) <= 1e-9:
        return
    if sender.drop_tail:
        drop_e = drop_tail(s.arrivals, s.e_q, over, s.loss_rng)
    else:  # in proportion to what each flow brought this step
        arr_q = _bincount(s.e_q, weights=s.arrivals, minlength=s.Q)
        share = _where(over > 1e-9, np.minimum(1.0, over / arr_q), 0.0)
        share = np.nan_to_num(share)
        drop_e = s.arrivals * share[s.e_q]
    s.q -= drop_e
    drop_f = _bincount(s.e_flow, weights=drop_e, minlength=s.F)
    s.dropped += drop_f
    s.retransmit += drop_f
    s.qsum = _bincount(s.e_q, weights=s.q, minlength=s.Q)
    sender.on_loss(s, drop_f)


def drop_tail(arrivals, e_q, over, rng) -> np.ndarray:
    """Bytes dropped per entry when queues overflow by ``over`` bytes, drop-tail style: the step's
    arrivals at an overflowing queue come in a random order (each entry's turn drawn with weight
    its bytes, an exponential race) and the last ones to arrive find the buffer full, so the loss
    falls whole on a few flows instead of a sliver on every flow. Spreading it evenly made every
    TCP sender of an incast lose at once, time out together and restart together, so the fluid
    incast never recovered (64-to-1: no flow done in 3 s); ns-3 and testbeds lose packets of some
    flows only (docs/validation.md, "packet-level runs")."""
    drop_e = np.zeros(len(arrivals))
    hit = ((over[e_q] > 1e-9) & (arrivals > 0)).nonzero()[0]
    if not hit.size:
        return drop_e
    key = rng.exponential(size=hit.size) / arrivals[hit]
    order = hit[np.lexsort((key, e_q[hit]))]          # by queue, the first to be dropped first
    qs = e_q[order]
    arr = arrivals[order]
    cum = arr.cumsum()
    start = np.concatenate(((0,), (qs[1:] != qs[:-1]).nonzero()[0] + 1))   # each queue's first
    bounds = np.concatenate((start, (len(order),)))
    before = cum - arr - np.repeat(cum[start] - arr[start], bounds[1:] - bounds[:-1])
    drop_e[order] = np.minimum(np.maximum(over[qs] - before, 0.0), arr)
    return drop_e


def ingress(s: FluidState) -> None:
    """Bytes at each downstream ingress, per upstream queue (``occ``), and the most ever seen."""
    s.occ = _bincount(s.prev_bins, weights=s.q, minlength=s.Q + 1)[:s.Q]
    np.maximum(s.max_ingress, s.occ, out=s.max_ingress)


def serve(s: FluidState) -> None:
    """Departures: ``dep`` per entry goes into the ring row where it lands; ``qpost`` is the
    standing backlog per queue. PFC: a queue paused one propagation delay ago sends nothing;
    credits: at most the free VL buffer downstream."""
    qsum, q = s.qsum, s.q
    if s.uses_pfc:
        seen = s.pause_hist[(s.slot - s.d0) % s.D] if s.uniform else s.pause_hist[s.pause_index[s.slot], s.q_range]
        demand = _where(seen, 0.0, qsum)
    else:
        demand = qsum
    link_demand = _bincount(s.q_link, weights=demand, minlength=s.L)[s.q_link] if s.P > 1 else demand
    cap = s.cap_step_q
    served = _where(link_demand > cap, demand * cap / link_demand, demand)
    if s.uses_credits:
        served = credit_limit(s, served)
    frac_q = _where(qsum > 0, served / qsum, 0.0)
    if s.uniform:  # departures go straight into the ring slot where they land
        dep = s.ring_rows[(s.t_step + s.d0) % s.D]
        np.multiply(q, frac_q[s.e_q], out=dep)
    else:
        dep = q * frac_q[s.e_q]
        s.ring[(s.t_step + s.d_e) % s.D, s.e_range] = dep
    q -= dep
    s.dep = dep
    s.serve = served
    s.qpost = qpost = qsum - served
    np.maximum(s.max_queue, qpost, out=s.max_queue)


def credit_limit(s: FluidState, served: np.ndarray) -> np.ndarray:
    """InfiniBand credits: a queue sends at most the downstream VL buffer minus what sits there and
    what is on the wire to it (a NIC's receiver: unlimited); ``credit_wait`` counts the steps a
    queue with backlog had too little credit."""
    in_flight_q = _bincount(s.e_q, weights=np.add.reduce(s.ring, axis=0), minlength=s.Q)   # ring.sum(axis=0)
    credit = np.maximum(s.vl_buffer_q - s.occ - in_flight_q, 0.0)     # inf towards a host
    blocked = (credit < served - 1e-9) & (s.qsum > 1e-9)
    np.add(s.credit_wait, s.dt_us, out=s.credit_wait, where=blocked)
    return np.minimum(served, credit)


def receiver_rate(s: FluidState) -> None:
    """Packets per second reaching each receiver (the NP; marked with the path probability)."""
    s.recv_pps = s.dep[s.last] / s.dt / s.pkt


def red_ecn(s: FluidState) -> None:
    """RED/ECN on the standing egress backlog (what this step's arrivals could not leave):
    ``p = 0`` below Kmin, linear to Pmax at Kmax, 1 above; a path marks ``1 - prod(1-p)`` of the
    packets reaching its receiver (ECN-capable transport)."""
    qpost = s.qpost
    p_q = np.minimum(np.maximum((qpost - s.kmin) * s.red_slope, 0.0), s.pmax)
    p_q[qpost > s.kmax] = 1.0
    s.p_q = p_q
    log_keep_q = np.log1p(-np.minimum(p_q, 1.0 - 1e-12))
    s.p_path = p_path = -np.expm1(_bincount(s.e_flow, weights=log_keep_q[s.e_q], minlength=s.F))
    s.marks += s.recv_pps * s.dt * p_path


def pfc_xoff_xon(s: FluidState) -> None:
    """PFC per ingress (the queue id of the link it arrived on): XOFF at or above ``xoff_q``, XON
    at or below ``xon_q``, else unchanged; hosts never pause (their ``xoff_q`` is infinite);
    ``pause_us`` counts XOFF time."""
    occ_after = _bincount(s.prev_bins, weights=s.q, minlength=s.Q + 1)[:s.Q]
    # XON <= XOFF (new_state), so "XOFF at or above xoff, else XON at or below xon, else as it was" is:
    pause_gen = (occ_after >= s.xoff_q) | ((occ_after > s.xon_q) & s.pause_gen)   # xoff_q = inf at hosts
    s.pause_hist[s.slot] = pause_gen
    np.add(s.pause_us, s.dt_us, out=s.pause_us, where=pause_gen)
    s.pause_gen = pause_gen
