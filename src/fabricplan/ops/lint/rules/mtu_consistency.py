"""MTU001 — MTU is consistent across the link.

A NIC MTU above the switch port MTU means jumbo RoCE frames are dropped at the switch (counted
as oversize, not as congestion), and SONiC sizes PG headroom from ``PORT.mtu``, so a larger
frame also overruns the headroom.

Passing::

    NIC /sys/class/net/eth2/mtu 9000, switch PORT.Ethernet0.mtu 9100

Failing::

    NIC mtu 9216 > switch mtu 9100
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fabricplan.ops.lint.finding import Finding
from fabricplan.ops.lint.rules._common import finding, hset, interface
from fabricplan.ops.model import Link

ID = "MTU001"
SEVERITY = "error"
SCOPE = "link"
TITLE = "NIC MTU fits the switch port MTU"
OPTIONS: dict[str, str] = {}


def defaults(catalog: Any) -> dict[str, Any]:
    """This rule has no options."""
    return {}


def check(link: Link, options: dict[str, Any], catalog: Any) -> Iterator[Finding]:
    nic, port = link.nic, link.switch
    if nic is None or port is None or nic.mtu is None or port.mtu is None:
        return
    if nic.mtu > port.mtu:
        yield finding(ID, link, f"NIC MTU {nic.mtu} is larger than the switch port MTU {port.mtu}",
                      f"ip link set dev {interface(nic)} mtu {port.mtu}, "
                      f"or {hset('PORT|' + port.port, 'mtu', nic.mtu)} (then re-check headroom)",
                      {"nic": {"mtu": nic.mtu}, "switch": {"mtu": port.mtu}}, nic.where("mtu"))
