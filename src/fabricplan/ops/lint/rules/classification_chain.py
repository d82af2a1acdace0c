"""CLS001 — the RoCE classification chain DSCP -> priority -> TC -> PG -> queue is lossless.

Follows the RoCE DSCP (default 26) through the NIC's dscp2prio (priority P) and the switch's
DSCP_TO_TC_MAP (TC T), TC_TO_PRIORITY_GROUP_MAP (PG) and TC_TO_QUEUE_MAP (queue Q), and
requires: P PFC-enabled (on at least one side; a one-sided set is PFC001),
MAP_PFC_PRIORITY_TO_QUEUE[P] == Q, BUFFER_PG|port|PG a profile with xoff (lossless), and
BUFFER_QUEUE|port|Q a lossless egress profile.

Passing::

    NIC dscp 26 -> prio 3 (PFC on 3); switch DSCP_TO_TC_MAP 26 -> TC 3 -> PG 3 -> queue 3,
    BUFFER_PG|Ethernet0|3 -> pg_lossless_100000_5m_profile (xoff 81920),
    BUFFER_QUEUE|Ethernet0|3 -> egress_lossless_profile

A switch port without QoS (no own ``PORT_QOS_MAP`` row, no PFC, no lossless PG, no NIC facing
it) is not checked: SONiC renders QoS only for ports with a neighbour. With the traditional buffer
model a missing ``BUFFER_PG`` entry of a PFC-enabled priority is not a finding (buffermgrd adds it).

Failing::

    DSCP_TO_TC_MAP "26": "0"   -> RoCE in TC 0, PG 0 (ingress_lossy_profile), queue 0 (lossy)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fabricplan.ops.lint.finding import Finding
from fabricplan.ops.lint.options import from_catalog
from fabricplan.ops.lint.rules._common import (
    CLASSIFICATION_OPTIONS,
    finding,
    hset,
    no_qos,
    roce_priority,
    switch_tc_of_roce,
)
from fabricplan.ops.model import BufferProfile, Link

ID = "CLS001"
SEVERITY = "error"
SCOPE = "link"
TITLE = "RoCE classification chain DSCP -> priority -> TC -> PG -> queue is lossless end to end"
OPTIONS: dict[str, str] = dict(CLASSIFICATION_OPTIONS)


def defaults(catalog: Any) -> dict[str, Any]:
    """Default options, from the catalog's ``ops_defaults`` (``OPTIONS``)."""
    return from_catalog(OPTIONS, catalog)


def _lossless_egress(profile: BufferProfile) -> bool:
    pool = profile.pool
    return profile.computed or (pool is not None and "lossless" in pool.name and pool.type != "ingress")


def _buffermgrd_fills(port: Any, prio: int) -> bool:
    """SONiC's traditional buffer model leaves lossless PGs out of CONFIG_DB: buffermgrd creates
    them for PFC-enabled priorities of ports with a CABLE_LENGTH (sonic-swss cfgmgr/buffermgr.cpp)."""
    return port.buffer_model == "traditional" and prio in port.pfc_enable and port.cable_length_m is not None


def check(link: Link, options: dict[str, Any], catalog: Any) -> Iterator[Finding]:
    nic, port = link.nic, link.switch
    if no_qos(link):
        return
    prio = roce_priority(link, options)
    chain: dict[str, Any] = {"dscp": options["roce_dscp"], "priority": prio}
    problems: list[str] = []
    fixes: list[str] = []
    location = None
    nic_set = nic.pfc_enabled if nic is not None else frozenset()
    sw_set = port.pfc_enable if port is not None else frozenset()
    if (nic is not None or port is not None) and prio not in nic_set and prio not in sw_set:
        problems.append(f"RoCE priority {prio} is not PFC-enabled")
        fixes.append(f"enable PFC on priority {prio} on both ends")
        location = nic.where("pfc_enabled") if nic is not None else port.where("pfc_enable")
    if port is not None:
        tc = switch_tc_of_roce(port, prio, options)
        if tc is not None:
            pg = port.tc_to_pg.get(tc, 0) if port.tc_to_pg is not None else None
            queue = port.tc_to_queue.get(tc, tc) if port.tc_to_queue is not None else tc
            chain.update({"switch_tc": tc, "pg": pg, "queue": queue})
            pfc_queue = port.queue_of_priority(prio)
            if pfc_queue != queue:
                problems.append(f"TC {tc} goes to queue {queue} but PFC priority {prio} pauses queue {pfc_queue}")
                fixes.append(f"map DSCP {options['roce_dscp']} to the TC whose queue is {pfc_queue} "
                             f"({hset('DSCP_TO_TC_MAP|<map>', options['roce_dscp'], prio)})")
                location = location or (port.map_entry("dscp_to_tc", options["roce_dscp"])
                                         if port.dscp_to_tc is not None else port.map_entry("dot1p_to_tc", prio))
            if pg is None:
                problems.append("port has no tc_to_pg_map")
                fixes.append(f"set PORT_QOS_MAP|{port.port} tc_to_pg_map")
                location = location or port.where("pfc_enable")
            elif port.buffer_pg or port.buffer_model != "dynamic":
                profile = port.buffer_pg.get(pg)
                if profile is None and _buffermgrd_fills(port, prio):
                    pass  # traditional model: buffermgrd adds the lossless PG from pg_profile_lookup.ini
                elif profile is None or not profile.lossless:
                    name = profile.name if profile else "none"
                    chain["pg_profile"] = name
                    problems.append(f"PG {pg} has no lossless (xoff) buffer profile ({name})")
                    fixes.append(f"map TC {tc} to the lossless PG, or point BUFFER_PG|{port.port}|{pg} "
                                 "to a pg_lossless_* profile")
                    if location is None:
                        other_lossless = any(p.lossless for p in port.buffer_pg.values())
                        location = (port.map_entry("tc_to_pg", tc) if other_lossless
                                    else port.locations.get(f"pg{pg}", port.source))
            if port.buffer_queue:
                profile = port.buffer_queue.get(queue)
                if profile is None or not _lossless_egress(profile):
                    name = profile.name if profile else "none"
                    chain["queue_profile"] = name
                    problems.append(f"queue {queue} has no lossless egress buffer profile ({name})")
                    fixes.append(f"point BUFFER_QUEUE|{port.port}|{queue} to egress_lossless_profile")
                    location = location or port.where(f"bq{queue}")
    if problems:
        yield finding(ID, link, "RoCE is not lossless end to end: " + "; ".join(problems),
                      "; ".join(fixes), {"chain": chain}, location)
