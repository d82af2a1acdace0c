"""CNP001 — CNPs travel on a strict-priority, non-PFC queue with matching DSCP and priority.

Congestion notification packets (CNPs) carry DCQCN's feedback. The NIC sends them with
``roce_np/cnp_dscp`` (default 48) and ``roce_np/cnp_802p_prio`` (default 6). The CNP priority must
not be PFC-enabled (a paused CNP cannot slow the sender), the NIC must map the CNP DSCP to the CNP
priority, and the switch must put the CNP DSCP in a queue scheduled STRICT that PFC never pauses.

Passing::

    NIC: cnp_dscp 48, cnp_802p_prio 6, dscp2prio 48 -> 6, PFC on 3 only
    switch: DSCP_TO_TC_MAP 48 -> TC 6 -> queue 6, QUEUE|Ethernet0|6 scheduler STRICT

Failing::

    PORT_QOS_MAP.Ethernet0.pfc_enable = "3,6"  (and NIC enabled on 3 and 6) -> CNPs get paused
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fabricplan.ops.lint.finding import Finding
from fabricplan.ops.lint.options import from_catalog
from fabricplan.ops.lint.rules._common import (
    CLASSIFICATION_OPTIONS,
    bitmap,
    dualtor_design,
    finding,
    hset,
    interface,
    nic_dscp_priority,
    prio_list,
)
from fabricplan.ops.model import Link

ID = "CNP001"
SEVERITY = "error"
SCOPE = "link"
TITLE = "CNP path is strict priority, not PFC-enabled, with matching DSCP/priority"
OPTIONS: dict[str, str] = {**CLASSIFICATION_OPTIONS, "cnp_dscp": "dcqcn.cnp_dscp", "cnp_802p_prio": "dcqcn.cnp_802p_prio"}


def defaults(catalog: Any) -> dict[str, Any]:
    """Default options, from the catalog's ``ops_defaults`` (``OPTIONS``)."""
    return from_catalog(OPTIONS, catalog)


def check(link: Link, options: dict[str, Any], catalog: Any) -> Iterator[Finding]:
    nic, port = link.nic, link.switch
    cnp_dscp, cnp_prio = options["cnp_dscp"], options["cnp_802p_prio"]
    if nic is not None and nic.dcqcn is not None:
        cnp_dscp = nic.dcqcn.np.get("cnp_dscp", cnp_dscp)
        cnp_prio = nic.dcqcn.np.get("cnp_802p_prio", cnp_prio)
    cnp = {"cnp_dscp": cnp_dscp, "cnp_802p_prio": cnp_prio}
    if nic is not None:
        if cnp_prio in nic.pfc_enabled:
            yield finding(ID, link, f"CNP priority {cnp_prio} is PFC-enabled on the NIC; paused CNPs cannot slow senders",
                          f"mlnx_qos -i {interface(nic)} --pfc {bitmap(nic.pfc_enabled - {cnp_prio})}",
                          {"nic": {**cnp, "pfc_enabled": sorted(nic.pfc_enabled)}}, nic.where("pfc_enabled"))
        if nic.trust == "dscp":
            mapped = nic_dscp_priority(nic, cnp_dscp, options)
            if mapped != cnp_prio:
                yield finding(ID, link, f"NIC maps CNP DSCP {cnp_dscp} to priority {mapped}, but CNPs use priority {cnp_prio}",
                              f"mlnx_qos -i {interface(nic)} --dscp2prio set,{cnp_dscp},{cnp_prio}",
                              {"nic": {**cnp, "dscp2prio": mapped}}, nic.where("dscp2prio"))
    if port is None:
        return
    if cnp_prio in port.pfc_enable:
        item = finding(ID, link, f"CNP priority {cnp_prio} is PFC-enabled on the switch port",
                       hset(f"PORT_QOS_MAP|{port.port}", "pfc_enable", prio_list(port.pfc_enable - {cnp_prio})),
                       {"switch": {**cnp, "pfc_enable": sorted(port.pfc_enable)}}, port.where("pfc_enable"))
        design = dualtor_design(port, catalog)
        if design and nic is None:
            item.max_severity, item.reason = "info", design + "; no NIC on this link uses it for CNPs"
        yield item
    if port.dscp_to_tc is None:
        return
    tc = port.dscp_to_tc.get(cnp_dscp, 0)
    queue = port.tc_to_queue.get(tc, tc) if port.tc_to_queue is not None else tc
    paused_queues = {port.queue_of_priority(p) for p in port.pfc_enable}
    evidence = {"switch": {**cnp, "tc": tc, "queue": queue}}
    if queue in paused_queues and cnp_prio not in port.pfc_enable:
        yield finding(ID, link, f"CNP DSCP {cnp_dscp} lands in queue {queue}, which PFC pauses",
                      f"map DSCP {cnp_dscp} to a TC with its own strict queue ({hset('DSCP_TO_TC_MAP|<map>', cnp_dscp, cnp_prio)})",
                      evidence, port.where("dscp_to_tc"))
    if port.queues:
        config = port.queues.get(queue)
        scheduler = config.scheduler if config else None
        sched_type = (scheduler.type or "").upper() if scheduler else None
        evidence["switch"]["scheduler"] = scheduler.name if scheduler else None
        evidence["switch"]["scheduler_type"] = sched_type
        if sched_type != "STRICT":
            item = finding(ID, link, f"CNP queue {queue} is scheduled {sched_type or 'by default (no scheduler)'}, not STRICT",
                           f"point QUEUE|{port.port}|{queue} scheduler to a STRICT scheduler "
                           f"({hset(f'QUEUE|{port.port}|{queue}', 'scheduler', 'scheduler.cnp')})",
                           evidence, port.locations.get(f"queue{queue}", port.where("pfc_enable")))
            if nic is None and sched_type in ("DWRR", "WRR") and scheduler is not None and (scheduler.weight or 0) > 0:
                item.max_severity = "info"
                item.reason = ("SONiC's qos_config.j2 schedules every queue DWRR (scheduler.0/scheduler.1); a strict CNP "
                               "queue is NVIDIA's RoCE recommendation, and no NIC on this link shows CNPs in use")
            yield item
