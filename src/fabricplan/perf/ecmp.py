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

from fabricplan.errors import InputError

EXACT_FLOW_LIMIT = 512  # above this many flows the independent-binomial approximation is used

# Numerical truncation (program settings, not physical inputs). The binomial branch sums the
# maximum-load tail over ``CAP_SPREAD_SIGMAS * sqrt(F/U) + CAP_SPREAD_FLOWS`` caps above the mean.
CAP_SPREAD_SIGMAS = 12
CAP_SPREAD_FLOWS = 12
# Probability mass further than this many standard deviations (plus the same number of flows)
# from the mean is left out of the CDF sums: by the Chernoff/Bernstein bounds it is below
# exp(-50), far under double precision's 1e-16 relative to the CDF values used (>= ~0.3).
TAIL_WINDOW_SIGMAS = 40


def _log_gamma(values: np.ndarray) -> np.ndarray:
    """``ln Gamma(x)`` element-wise (``math.lgamma``; numpy has no log-gamma of its own)."""
    return np.fromiter((math.lgamma(float(v)) for v in values), dtype=float, count=len(values))


def _poisson_log_pmf(k: np.ndarray, rate: float) -> np.ndarray:
    """``ln P(X = k)`` for ``X ~ Poisson(rate)``: ``k ln(rate) - rate - ln Gamma(k + 1)``."""
    return k * math.log(rate) - rate - _log_gamma(k + 1.0)


def _binomial_log_pmf(k: np.ndarray, trials: int, p: float) -> np.ndarray:
    """``ln P(X = k)`` for ``X ~ Binomial(n, p)``:
    ``ln Gamma(n+1) - ln Gamma(k+1) - ln Gamma(n-k+1) + k ln p + (n-k) ln(1-p)``."""
    return (math.lgamma(trials + 1.0) - _log_gamma(k + 1.0) - _log_gamma(trials - k + 1.0)
            + k * math.log(p) + (trials - k) * math.log1p(-p))


def _log_cdf(log_pmf: np.ndarray) -> np.ndarray:
    """``ln P(X <= k)`` for each ``k`` of a window holding all but a negligible part of the mass.

    Below the median the CDF is the running sum of the pmf from the left; above it
    ``ln(1 - P(X > k))`` with ``P(X > k)`` summed from the right (``log1p``), so values near 1
    keep their precision instead of cancelling in ``1 - CDF``.
    """
    pmf = np.exp(log_pmf)
    below = np.cumsum(pmf)
    above = np.concatenate((np.cumsum(pmf[::-1])[::-1][1:], [0.0]))  # P(X > k)
    with np.errstate(divide="ignore"):
        return np.where(below <= 0.5, np.log(below), np.log1p(-np.minimum(above, 1.0)))


def _truncated_sum_pmf(rate: float, cap: int, bins: int, total: int) -> float:
    """P(sum of ``bins`` iid Poisson(rate) truncated to <= cap equals ``total``)."""
    pmf = np.exp(_poisson_log_pmf(np.arange(cap + 1, dtype=float), rate))
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

    Exact, by Poissonisation [1]_: with ``X_i ~ Poisson(F/U)``,
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
    normaliser = math.exp(float(_poisson_log_pmf(np.array([float(n_flows)]), float(n_flows))[0]))
    # P(X <= c) for every cap c < F the loop can reach; the window runs past F so that the
    # right-hand tail sums in `_log_cdf` hold all of the mass that matters.
    window = np.arange(n_flows + 1 + TAIL_WINDOW_SIGMAS * (math.isqrt(n_flows) + 1), dtype=float)
    log_cdf = _log_cdf(_poisson_log_pmf(window, rate))
    expected = float(math.ceil(rate))  # P(max < ceil(F/U)) = 0
    for cap in range(math.ceil(rate), n_flows):
        log_all_below = n_uplinks * float(log_cdf[cap])
        p_max_at_most = math.exp(log_all_below) * _truncated_sum_pmf(rate, cap, n_uplinks, n_flows) / normaliser
        p_max_at_most = min(max(p_max_at_most, 0.0), 1.0)
        if 1.0 - p_max_at_most < 1e-9:
            break
        expected += 1.0 - p_max_at_most
    return expected


def _expected_max_load_independent(n_flows: int, n_uplinks: int) -> float:
    """Large-F approximation: uplink loads as independent Binomial(F, 1/U), ``P(max <= c) = F_B(c)^U``.

    The dependence between bins (they sum to F) matters little once each holds many flows [2]_.
    ``E[max] = ceil(F/U) + sum_{c >= ceil(F/U)} (1 - F_B(c)^U)``, the sum cut where the terms vanish.
    """
    rate = n_flows / n_uplinks
    p = 1.0 / n_uplinks
    spread = math.sqrt(rate) * CAP_SPREAD_SIGMAS + CAP_SPREAD_FLOWS
    caps = np.arange(max(math.ceil(rate) - 1, 0), int(rate + spread) + 1)
    if len(caps) <= 1:
        return float(rate)
    margin = TAIL_WINDOW_SIGMAS * (math.sqrt(rate * (1.0 - p)) + 1.0)
    low = max(int(rate - margin), 0)
    high = min(int(caps[-1] + margin) + 1, n_flows)
    window = np.arange(low, high + 1, dtype=float)
    # A cap at or past F (only possible for tiny F) has F_B = 1: the window's last value.
    log_cdf = _log_cdf(_binomial_log_pmf(window, n_flows, p))[np.minimum(caps, high) - low]
    p_max_above = -np.expm1(n_uplinks * log_cdf)  # 1 - F_B(c)^U without cancellation
    return float(caps[0] + 1 + np.sum(p_max_above[1:]))


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
