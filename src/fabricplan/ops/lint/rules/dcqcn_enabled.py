"""DCQCN001 — DCQCN is enabled on the RoCE priority on every NIC (reaction and notification point).

``/sys/class/net/IF/ecn/roce_rp/enable/P`` (the sender slows down on CNPs) and
``roce_np/enable/P`` (the receiver sends CNPs for ECN-marked packets) must both read 1 for the
RoCE priority P. A NIC without a captured ``ecn/`` tree is reported, since it cannot be checked.

Passing::

    ecn/roce_rp/enable/3 = 1, ecn/roce_np/enable/3 = 1

Failing::

    ecn/roce_np/enable/3 = 0    -> ECN marks are ignored, PFC does all the work
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fabricplan.ops.lint.finding import Finding
from fabricplan.ops.lint.options import from_catalog
from fabricplan.ops.lint.rules._common import CLASSIFICATION_OPTIONS, finding, interface, roce_priority
from fabricplan.ops.model import Link

ID = "DCQCN001"
SEVERITY = "error"
SCOPE = "link"
TITLE = "DCQCN (RP and NP) enabled on the RoCE priority on every NIC"
OPTIONS: dict[str, str] = dict(CLASSIFICATION_OPTIONS)


def defaults(catalog: Any) -> dict[str, Any]:
    """Default options, from the catalog's ``ops_defaults`` (``OPTIONS``)."""
    return from_catalog(OPTIONS, catalog)


def check(link: Link, options: dict[str, Any], catalog: Any) -> Iterator[Finding]:
    nic = link.nic
    if nic is None:
        return
    iface = interface(nic)
    if nic.dcqcn is None:
        yield finding(ID, link, "no DCQCN state captured for this NIC (sysfs ecn/ tree missing)",
                      f"capture it: grep -H -r . /sys/class/net/{iface}/ecn (see docs/network-engineers.md)",
                      {}, nic.source)
        return
    prio = roce_priority(link, options)
    for role, enabled, what in (("roce_rp", nic.dcqcn.rp_enabled, "reaction point (sender rate control)"),
                                ("roce_np", nic.dcqcn.np_enabled, "notification point (CNP generation)")):
        if prio not in enabled:
            key = f"{role}/enable/{prio}"
            yield finding(ID, link, f"DCQCN {what} is disabled on RoCE priority {prio}",
                          f"echo 1 > /sys/class/net/{iface}/ecn/{key}",
                          {"nic": {f"{role}_enabled": sorted(enabled), "priority": prio}},
                          nic.dcqcn.locations.get(key, nic.source))
