"""Port arithmetic for folded-Clos (fat-tree / leaf-spine) fabrics: pure integer helpers.

Notation used throughout the topology package:

* ``k``  switch radix (ports at the chosen port speed, after breakout),
* ``r``  oversubscription of one tier, down:up *bandwidth* ratio (1 = non-blocking),
* ``d``  down ports of a switch at that tier, ``u = k - d`` up ports.

Oversubscription values are converted to :class:`fractions.Fraction` so that floor/ceil
never suffer from binary floating-point rounding (``64 * 3 / 4`` is exactly 48).
"""

from __future__ import annotations

import math
from fractions import Fraction
from numbers import Real

from fabricplan.errors import InputError

#: Tier names used as keys of the per-tier port dictionaries, bottom to top.
TIER_NAMES: tuple[str, str, str, str] = ("leaf", "spine", "core", "super_core")
#: The engine sizes 1- to 4-tier folded Clos fabrics (and 0 tiers for a single node).
MAX_SUPPORTED_TIERS = 4
#: Ratios a user may give: leaf and spine tier. Further tiers (the core of a 4-tier fabric) are 1:1.
MAX_GIVEN_RATIOS = 2


def as_ratio(value: Real, name: str = "oversubscription") -> Fraction:
    """Validate one oversubscription ratio (a real number >= 1) and return it as an exact Fraction."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise InputError(f"must be a number >= 1 (down:up bandwidth ratio), got {value!r}", name)
    if not math.isfinite(float(value)) or value < 1:
        raise InputError(
            f"must be a finite number >= 1 (1 = non-blocking, 3 = 3:1 down:up), got {value!r}", name
        )
    return Fraction(value)


def check_radix(radix: int) -> None:
    """A radix must be an even integer >= 4 (even so that a non-blocking leaf splits k/2 : k/2)."""
    if isinstance(radix, bool) or not isinstance(radix, int) or radix < 4 or radix % 2:
        raise InputError(f"must be an even integer >= 4 (switch ports at the chosen speed), got {radix!r}",
                         "radix")


def leaf_ports(radix: int, oversubscription: Real = 1) -> tuple[int, int]:
    """Split a switch's ports into (down, up) for a down:up oversubscription ``r``.

    ``down = floor(k·r/(r+1))``, ``up = k − down`` (docs/reference/topology.md §1.2). At r = 1 this is (k/2, k/2);
    e.g. ``leaf_ports(64, 3) == (48, 16)``. Rounding favours uplinks, so the realised ratio
    ``down/up`` never exceeds ``r``.
    """
    check_radix(radix)
    r = as_ratio(oversubscription)
    down = math.floor(radix * r / (r + 1))
    return down, radix - down


def uplinks_needed(down_used: int, oversubscription: Real) -> int:
    """Uplinks that keep ``down_used`` down ports at (or below) ``r``:1: ``ceil(down_used / r)``."""
    return math.ceil(Fraction(down_used) / as_ratio(oversubscription))


def tier_ratios(oversubscription: tuple[Real, ...] | list[Real] | Real) -> tuple[Fraction, ...]:
    """Validate the per-tier oversubscription ``(leaf, spine)``; return one ratio per tier with uplinks.

    Entry 0 applies to the leaf (ToR / rail leaf) tier, entry 1 to the spine (aggregation) tier.
    Tiers not given (the spine when only one ratio is given, the core of a 4-tier fabric) are 1:1,
    so the result always has ``MAX_SUPPORTED_TIERS − 1`` entries (leaf, spine, core). The top tier
    has no uplinks, so it has no ratio.
    """
    if isinstance(oversubscription, Real) and not isinstance(oversubscription, bool):
        oversubscription = (oversubscription,)
    if not isinstance(oversubscription, (tuple, list)) or not 1 <= len(oversubscription) <= MAX_GIVEN_RATIOS:
        raise InputError(
            "must be a tuple of 1 or 2 down:up ratios (leaf tier, spine tier), "
            f"e.g. (1.0, 1.0) or (3.0,), got {oversubscription!r}",
            "oversubscription",
        )
    given = tuple(as_ratio(r, f"oversubscription[{i}]") for i, r in enumerate(oversubscription))
    return given + (Fraction(1),) * (MAX_SUPPORTED_TIERS - 1 - len(given))


def down_ports_per_tier(radix: int, ratios: tuple[Fraction, ...]) -> tuple[int, ...]:
    """Down ports ``d_i = floor(k·r_i/(r_i+1))`` of each tier with uplinks (leaf, spine, core, ...)."""
    return tuple(leaf_ports(radix, r)[0] for r in ratios)


def max_leaves(radix: int, tiers: int, leaves_per_pod: int, down_ports: tuple[int, ...] = ()) -> int:
    """Most leaves a ``tiers``-tier Clos of radix-k switches can hold.

    * 2 tiers: every leaf needs at least one link to every spine, so ``L ≤ k``.
    * 3 tiers (Al-Fares et al., SIGCOMM 2008, generalised): a pod holds ``leaves_per_pod`` leaves and
      each core switch has one port per pod, so at most ``k`` pods: ``L ≤ k · leaves_per_pod``.
    * t ≥ 4 tiers (recursive folded Clos / k-ary n-tree): a level-i block joins up to ``d_i`` level-(i−1)
      blocks (one down port of each tier-i switch per block), and the top tier joins up to ``k``
      level-(t−2) blocks: ``L ≤ k · leaves_per_pod · d_2 ··· d_{t−2}`` (``down_ports[i] = d_i``).
      Non-blocking: ``k · (k/2)^{t−2}`` leaves, i.e. ``2·(k/2)^t`` endpoints (k⁴/8 at 4 tiers).
    """
    if tiers == 2:
        return radix
    if 3 <= tiers <= MAX_SUPPORTED_TIERS:
        return radix * math.prod(down_ports[2:tiers - 1], start=leaves_per_pod)
    raise ValueError(f"max_leaves is defined for 2 to {MAX_SUPPORTED_TIERS} tiers, not {tiers}")


def max_endpoints(radix: int, tiers: int, oversubscription: tuple[Real, ...] | Real = (1.0, 1.0),
                  reserved_leaf_ports: int = 0) -> int:
    """Capacity (NIC ports) of a generic fat tree (no rails) of radix ``k``.

    * 1 tier: ``k − reserved``.
    * 2 tiers: ``k · d`` with ``d`` the leaf's host ports (= k²/2 at 1:1; docs/reference/topology.md §1.1–1.2).
    * 3 tiers: ``k · da · d`` with ``da`` the spine's down ports (= k³/4 at 1:1; Al-Fares 2008).
    * 4 tiers: ``k · dc · da · d`` with ``dc`` the core's down ports (= k⁴/8 at 1:1).

    ``reserved_leaf_ports`` (e.g. one UFM port per leaf) are taken from each leaf's down ports.
    """
    check_radix(radix)
    check_count(reserved_leaf_ports, "reserved_leaf_ports", minimum=0)
    if isinstance(tiers, bool) or not isinstance(tiers, int) or not 1 <= tiers <= MAX_SUPPORTED_TIERS:
        raise InputError(f"must be 1, 2, 3 or 4, got {tiers!r}", "tiers")
    down = down_ports_per_tier(radix, tier_ratios(oversubscription))
    if tiers == 1:
        return max(radix - reserved_leaf_ports, 0)
    host_ports = max(down[0] - reserved_leaf_ports, 0)
    return max_leaves(radix, tiers, down[1], down) * host_ports


def check_count(value: int, name: str, minimum: int = 1) -> None:
    """Raise InputError unless ``value`` is an int >= ``minimum`` (bools rejected)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InputError(f"must be an integer >= {minimum}, got {value!r}", name)


def upper_tier_switches(lower_switches: int, uplinks_per_lower: int, uplink_ports_max: int,
                        upper_down_ports: int) -> tuple[int, int]:
    """Size the tier above a group of identical lower switches; return ``(switches, uplinks_per_lower)``.

    Each lower switch needs ``uplinks_per_lower`` uplinks and spreads them evenly over *all* upper
    switches (``c`` links to each), so the upper count ``S`` must satisfy

    * ``S`` divides ``uplink_ports_max`` (the lower switch's u): uplinks always spread evenly and the
      fabric can later grow to a full tree without re-cabling (docs/reference/topology.md §1.1: "choose S from the
      divisors of k/2");
    * ``lower_switches · ceil(uplinks_per_lower / S) ≤ upper_down_ports`` (ports on each upper switch).

    Among the feasible ``S`` the one giving each lower switch the fewest uplinks, ``S·ceil(need/S)``,
    is returned (ties: the fewest upper switches), with the lower switch's uplinks rounded up to that
    even spread (never above ``u`` because ``S | u``). Example: 32 rail leaves with 31 hosts each at
    1:1 → ``S = 16`` spines and 32 uplinks per leaf (DGX H100 SuperPOD RA, 4 SU).

    Why fewest uplinks first, not fewest upper switches: the feasible ``S`` form an up-set of the
    divisors of ``u`` that loses its smallest members as ``lower_switches`` grows, and
    ``S·ceil(need/S)`` is not monotone in ``S``. Taking the smallest feasible ``S`` could round a
    leaf's uplinks far up (radix 44 at 1.5:1, 13 one-server ToR leaves needing 9 uplinks each: 6
    spines and 12 uplinks per leaf, 156 links) and then drop them when one more leaf forces more
    spines (14 leaves: 9 spines, 9 uplinks, 126 links), so a bigger cluster got fewer links. The
    minimum of ``S·ceil(need/S)`` over a shrinking up-set is non-decreasing, and so is its
    smallest argmin ``S``; upper switch counts and uplinks per lower switch are therefore both
    monotone in the number of lower switches (and in ``uplinks_per_lower``).
    """
    if uplinks_per_lower <= 0 or lower_switches <= 0:
        return 0, 0
    best: tuple[int, int] | None = None
    for upper in _divisors(uplink_ports_max):
        links_each = -(-uplinks_per_lower // upper)
        if lower_switches * links_each <= upper_down_ports:
            if best is None or upper * links_each < best[1]:
                best = (upper, upper * links_each)
    if best is None:
        raise ValueError(  # callers check capacity first; reaching here is a bug
            f"{lower_switches} switches × {uplinks_per_lower} uplinks do not fit {upper_down_ports}-port uppers"
        )
    return best


def _divisors(n: int) -> list[int]:
    """Divisors of ``n`` in increasing order."""
    small = [i for i in range(1, math.isqrt(n) + 1) if n % i == 0]
    return small + [n // i for i in reversed(small) if i * i != n]
