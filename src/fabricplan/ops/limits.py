"""Validity ranges of what the ops readers and flags accept (program limits, not defaults).

These are the widths of protocol fields and plausibility bounds far outside any real network, so
that a corrupt or hostile input is refused with its valid range instead of overflowing a float,
exceeding Python's 4,300-digit integer conversion limit, or producing an absurd headroom. The
physical default numbers the models use are in ``catalog/data/ops_defaults.yaml``.
"""

from __future__ import annotations

from fabricplan.units import LINK_RATE_RANGE_MBPS

#: Digits accepted in one number of an ops input (a u64 has 20; nothing here needs more).
MAX_NUMBER_DIGITS = 20
#: SAI/CONFIG_DB attributes of buffer sizes, thresholds, timers and weights are u32.
U32_MAX = 2**32 - 1
#: DSCP is a 6-bit field (RFC 2474 section 3).
DSCP_RANGE = (0, 63)
#: PCP / 802.1p priority is a 3-bit field (IEEE 802.1Q-2018 6.9.3); PFC has 8 priorities.
PRIORITY_RANGE = (0, 7)
#: MTU: the IPv4 minimum (RFC 791) to the largest 16-bit IP length; SONiC's PORT.mtu is within.
MTU_RANGE_BYTES = (68, 65535)
#: Link speed: 1 Mb/s up to 10 Tb/s (the link-rate range of every rate flag: fabricplan.units).
SPEED_RANGE_MBPS = LINK_RATE_RANGE_MBPS
#: Cable length: 0 m up to 120 km, the reach of the longest coherent Ethernet optics (400ZR+/ZR).
CABLE_RANGE_M = (0, 120_000)
