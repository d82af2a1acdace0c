"""Max-min fair rates by progressive filling, and flow completion times, vectorised with numpy.

A flow ``f`` puts a share ``w[f, l]`` of its bytes on link ``l`` (1 on a single path; ``1/P`` on
each of ``P`` paths when it is sprayed; ``1/q`` per queue pair when a connection's data is split
evenly over ``q`` QPs). The usage is a sparse list of entries ``(entry_flow, entry_link,
entry_weight)``. Link ``l`` carries ``sum_f w[f, l] x rate[f] <= capacity[l]``.

**Progressive filling** (Bertsekas & Gallager, *Data Networks*, 2nd ed., 1992, section 6.5.2):
raise every unfrozen flow's rate by the same amount until some link saturates,

    inc = min over links l with W_l > 0 of residual_l / W_l,   W_l = sum of unfrozen w[f, l],

freeze the flows crossing a saturated link (and any flow that reached its ``demand``), repeat.
Each round freezes at least one link, so there are at most ``n_links`` rounds; each round is a few
``bincount`` passes over the entries. The result is the unique max-min fair allocation: no link
over capacity, and every flow crosses a saturated link on which no other flow has a larger rate
(its bottleneck), or is at its demand.

**Completion times**: flows start at ``start_us`` (0 by the scenario convention); at every event
(a start or a completion) rates are max-min again over the flows still running, and each flow's
remaining bytes drain at its rate (fluid flow-level model, as in flow-level simulators such as
htsim's or SimGrid's max-min models; packets, queues and congestion control are left out).
"""

from __future__ import annotations

import numpy as np

#: Relative tolerance (a numerical setting, not a physical one): a link whose residual capacity is
#: below this share of its capacity is saturated; a flow with less than this share of its bytes left
#: has finished.
RELATIVE_TOLERANCE = 1e-9

#: Bytes per microsecond carried by 1 Gb/s: 1e9 / 8 / 1e6.
BYTES_PER_US_PER_GBPS = 125.0


def max_min_rates(n_flows: int, entry_flow: np.ndarray, entry_link: np.ndarray, capacity: np.ndarray,
                  entry_weight: np.ndarray | None = None, demand: np.ndarray | None = None,
                  active: np.ndarray | None = None) -> np.ndarray:
    """Max-min fair rate of each flow (units of ``capacity``), by progressive filling (module docstring).

    ``active`` (bool per flow, default all) leaves the others at rate 0 and off the links. A flow
    that crosses no link gets its ``demand`` (``inf`` without one).
    """
    entry_flow = np.asarray(entry_flow, dtype=np.int64)
    entry_link = np.asarray(entry_link, dtype=np.int64)
    capacity = np.asarray(capacity, dtype=np.float64)
    weight = np.ones(len(entry_flow)) if entry_weight is None else np.asarray(entry_weight, dtype=np.float64)
    if len(entry_link) < len(capacity):  # only the links some flow crosses take part: index them densely
        crossed, entry_link = np.unique(entry_link, return_inverse=True)
        capacity = capacity[crossed]
    n_links = len(capacity)
    rate = np.zeros(n_flows)
    running = np.ones(n_flows, dtype=bool) if active is None else np.asarray(active, dtype=bool).copy()
    limit = None if demand is None else np.asarray(demand, dtype=np.float64)
    crossing = np.bincount(entry_flow[weight > 0], minlength=n_flows) > 0
    free = running & ~crossing
    rate[free] = np.inf if limit is None else limit[free]
    running &= crossing
    if limit is not None:
        running &= limit > 0
    residual = capacity.copy()
    tolerance = RELATIVE_TOLERANCE * np.maximum(capacity, RELATIVE_TOLERANCE)
    while running.any():
        on = running[entry_flow]
        load = np.bincount(entry_link[on], weights=weight[on], minlength=n_links)
        used = np.flatnonzero(load > RELATIVE_TOLERANCE * RELATIVE_TOLERANCE)
        share = residual[used] / load[used]
        bottleneck = used[np.argmin(share)]
        inc = float(share.min())
        if limit is not None:
            inc = min(inc, float(np.min(limit[running] - rate[running])))
        inc = max(inc, 0.0)
        rate[running] += inc
        residual[used] -= inc * load[used]
        saturated = np.zeros(n_links, dtype=bool)
        saturated[used] = residual[used] <= tolerance[used]
        if limit is None or inc >= share.min():
            saturated[bottleneck] = True  # exact by construction; round-off must not miss it
        residual[saturated] = 0.0
        stop = np.zeros(n_flows, dtype=bool)
        stop[entry_flow[on & saturated[entry_link]]] = True
        if limit is not None:
            stop |= running & (limit - rate <= RELATIVE_TOLERANCE * np.maximum(limit, RELATIVE_TOLERANCE))
        running &= ~stop
    return rate


def completion_times(size_bytes: np.ndarray, entry_flow: np.ndarray, entry_link: np.ndarray,
                     capacity_gbps: np.ndarray, entry_weight: np.ndarray | None = None,
                     start_us: np.ndarray | None = None, demand_gbps: np.ndarray | None = None) -> np.ndarray:
    """Time [us] each flow's bytes finish draining under max-min rates recomputed at every start and
    completion (module docstring); ``inf`` for a flow that gets no rate. Propagation is not included."""
    size = np.asarray(size_bytes, dtype=np.float64)
    n = len(size)
    start = np.zeros(n) if start_us is None else np.asarray(start_us, dtype=np.float64)
    remaining = size.copy()
    finish = np.full(n, np.inf)
    finish[size <= 0] = start[size <= 0]
    pending = size > 0
    now = float(start[pending].min()) if pending.any() else 0.0
    while pending.any():
        running = pending & (start <= now)
        rate = max_min_rates(n, entry_flow, entry_link, capacity_gbps, entry_weight, demand_gbps, running)
        speed = rate * BYTES_PER_US_PER_GBPS  # bytes per us
        draining = running & (speed > 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            until_done = np.where(draining, remaining / np.where(draining, speed, 1.0), np.inf)
        later = pending & ~running
        next_start = float(start[later].min()) if later.any() else np.inf
        step = min(float(until_done.min()), next_start - now)
        if not np.isfinite(step):
            break  # the remaining flows cannot move (no capacity); they never finish
        now += step
        remaining[draining] -= speed[draining] * step
        done = draining & (remaining <= RELATIVE_TOLERANCE * size)
        # flows within round-off of finishing at this event finish together
        done |= draining & (until_done <= step * (1 + 1e-12))
        finish[done] = now
        remaining[done] = 0.0
        pending &= ~done
    return finish
