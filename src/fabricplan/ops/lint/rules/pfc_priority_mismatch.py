"""PFC001 — the PFC-enabled priority sets are equal on both ends of each link.

The NIC's ``mlnx_qos`` "enabled" row must equal the switch port's ``pfc_enable``. If one side
pauses a priority the other does not honour, that side drops when its buffer fills, and RDMA
drops the connection.

Passing::

    NIC:    enabled 0 0 0 1 0 0 0 0
    switch: PORT_QOS_MAP.Ethernet0.pfc_enable = "3"

Failing::

    NIC:    enabled 0 0 0 1 0 0 0 0
    switch: PORT_QOS_MAP.Ethernet0.pfc_enable = "4"
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fabricplan.ops.lint.finding import Finding
from fabricplan.ops.lint.options import from_catalog
from fabricplan.ops.lint.rules._common import (
    CLASSIFICATION_OPTIONS,
    bitmap,
    finding,
    hset,
    interface,
    prio_list,
    roce_priority,
)
from fabricplan.ops.model import Link

ID = "PFC001"
SEVERITY = "error"
SCOPE = "link"
TITLE = "PFC-enabled priorities are equal on both ends of the link"
OPTIONS: dict[str, str] = dict(CLASSIFICATION_OPTIONS)


def defaults(catalog: Any) -> dict[str, Any]:
    """Default options, from the catalog's ``ops_defaults`` (``OPTIONS``)."""
    return from_catalog(OPTIONS, catalog)


def check(link: Link, options: dict[str, Any], catalog: Any) -> Iterator[Finding]:
    nic, port = link.nic, link.switch
    if nic is None or port is None or nic.pfc_enabled == port.pfc_enable:
        return
    only_nic = sorted(nic.pfc_enabled - port.pfc_enable)
    only_switch = sorted(port.pfc_enable - nic.pfc_enabled)
    parts = []
    if only_nic:
        parts.append(f"NIC only: {only_nic}")
    if only_switch:
        parts.append(f"switch only: {only_switch}")
    prio = roce_priority(link, options)
    nic_fix = f"mlnx_qos -i {interface(nic)} --pfc {bitmap(port.pfc_enable)}"
    switch_fix = hset(f"PORT_QOS_MAP|{port.port}", "pfc_enable", prio_list(nic.pfc_enabled))
    if prio in nic.pfc_enabled and prio not in port.pfc_enable:
        fix = f"{switch_fix} (the NIC's set holds RoCE priority {prio})"
    elif prio in port.pfc_enable and prio not in nic.pfc_enabled:
        fix = f"{nic_fix} (the switch's set holds RoCE priority {prio})"
    else:
        fix = f"make both ends equal: {nic_fix} or {switch_fix}"
    yield finding(
        ID, link,
        f"PFC priorities differ (NIC {sorted(nic.pfc_enabled)}, switch {sorted(port.pfc_enable)}; {', '.join(parts)})",
        fix,
        {"nic": {"pfc_enabled": sorted(nic.pfc_enabled)}, "switch": {"pfc_enable": sorted(port.pfc_enable)}},
        port.where("pfc_enable"),
    )
