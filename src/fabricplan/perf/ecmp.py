"""ECMP hash collisions: the expected maximum load of flows hashed onto uplinks.

With static ECMP each flow (a queue pair) is hashed onto one of ``U`` equal-cost uplinks. The
busiest uplink sets the pace of a synchronous collective, so the achievable share of the ideal
bandwidth is ``ceil(F/U) / E[max load]`` for ``F`` equal flows: the classic balls-into-bins
maximum. Adaptive routing re-balances and keeps only a residual share of that loss.

References
----------
.. [1] G. H. Gonnet, "Expected Length of the Longest Probe Sequence in Hash Code Searching",
   J. ACM 28(2):289-304, 1981 (exact distribution of the maximum bucket occupancy).
.. [2] M. Raab and A. Steger, "'Balls into Bins' - A Simple and Tight Analysis", RANDOM 1998
   (the maximum load is ~ F/U + sqrt(2 (F/U) ln U) for F >> U ln U).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import stats

from fabricplan.errors import InputError

EXACT_FLOW_LIMIT = 512  # above this many flows the independent-binomial approximation is used


def _truncated_sum_pmf(rate: float, cap: int, bins: int, total: int) -> float:
    """P(sum of ``bins`` iid Poisson(rate) truncated to <= cap equals ``total``)."""
    pmf = stats.poisson.pmf(np.arange(cap + 1), rate)
    pmf = pmf / pmf.sum()
    result = np.array([1.0])
    power = pmf
    remaining = bins
    while remaining:
        if remaining & 1:
            result = np.convolve(result, power)[: total + 1]
        remaining >>= 1
        if remaining:
            power = np.convolve(power, power)[: total + 1]
    return float(result[total]) if total < len(result) else 0.0


@lru_cache(maxsize=4096)
def expected_max_load(n_flows: int, n_uplinks: int) -> float:
    """Expected number of flows on the busiest of ``n_uplinks`` when ``n_flows`` hash uniformly.

    Exact, by Poissonisation: with ``X_i ~ Poisson(F/U)``,
    ``P(max <= c) = P(X <= c)^U * P(sum of truncated X = F) / P(Poisson(F) = F)`` and
    ``E[max] = sum_c (1 - P(max <= c))`` [flows].
    """
    if n_flows < 0 or n_uplinks < 1:
        raise InputError(f"need n_flows >= 0 and n_uplinks >= 1, got {n_flows} and {n_uplinks}")
    if n_flows == 0:
        return 0.0
    if n_uplinks == 1:
        return float(n_flows)
    rate = n_flows / n_uplinks
    if n_flows > EXACT_FLOW_LIMIT:
        return _expected_max_load_independent(n_flows, n_uplinks)
    normaliser = stats.poisson.pmf(n_flows, n_flows)
    expected = float(math.ceil(rate))  # P(max < ceil(F/U)) = 0
    for cap in range(math.ceil(rate), n_flows):
        log_all_below = n_uplinks * stats.poisson.logcdf(cap, rate)
        p_max_at_most = math.exp(log_all_below) * _truncated_sum_pmf(rate, cap, n_uplinks, n_flows) / normaliser
        p_max_at_most = min(max(p_max_at_most, 0.0), 1.0)
        if 1.0 - p_max_at_most < 1e-9:
            break
        expected += 1.0 - p_max_at_most
    return expected


def _expected_max_load_independent(n_flows: int, n_uplinks: int) -> float:
    """Large-F approximation: uplink loads as independent Binomial(F, 1/U), ``P(max <= c) = F_B(c)^U``.

    The dependence between bins (they sum to F) matters little once each holds many flows [2]_.
    """
    rate = n_flows / n_uplinks
    spread = math.sqrt(rate) * 12 + 12
    caps = np.arange(max(math.ceil(rate) - 1, 0), int(rate + spread) + 1)
    log_cdf = stats.binom.logcdf(caps, n_flows, 1.0 / n_uplinks)
    p_max_at_most = np.exp(n_uplinks * log_cdf)
    return float(caps[0] + 1 + np.sum(1.0 - p_max_at_most[1:])) if len(caps) > 1 else float(rate)


def ecmp_efficiency(n_flows: int, n_uplinks: int) -> float:
    """Share of the ideal uplink bandwidth a synchronous job gets under static ECMP [0-1].

    ``ceil(F/U) / E[max load]``: 1 when every uplink carries its fair share, lower when hash
    collisions stack flows on one uplink. 1 flow per uplink on 32 uplinks gives ~0.29.
    """
    if n_flows <= 0:
        return 1.0
    return math.ceil(n_flows / n_uplinks) / expected_max_load(n_flows, n_uplinks)


def routed_efficiency(n_flows: int, n_uplinks: int, adaptive: bool, residual_fraction: float) -> float:
    """ECMP efficiency, or with adaptive routing ``1 - residual * (1 - ecmp_efficiency)``."""
    loss = 1.0 - ecmp_efficiency(n_flows, n_uplinks)
    return float(1.0 - (residual_fraction * loss if adaptive else loss))
