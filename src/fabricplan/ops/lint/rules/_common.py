"""Helpers shared by the rules: the RoCE priority/queue of a link, fix-text builders."""

from __future__ import annotations

from typing import Any

from fabricplan.ops import defaults as ops_defaults
from fabricplan.ops.lint.finding import Finding
from fabricplan.ops.model import Link, NicQos, SwitchPortQos

# Options every classification-aware rule has (overridable in the lint config ``settings:``):
# option -> dotted path of its default in ``ops_defaults``.
CLASSIFICATION_OPTIONS = {
    "roce_dscp": "lint.roce_dscp",
    "roce_pcp": "lint.roce_pcp",
    "dscp_to_prio_shift_bits": "lint.dscp_to_prio_shift_bits",
}


def roce_priority(link: Link, options: dict[str, Any]) -> int:
    """The priority RoCE data travels on: the NIC's dscp2prio of the RoCE DSCP (default
    ``dscp >> 3``) with DSCP trust, else the configured RoCE PCP."""
    nic = link.nic
    if nic is not None and nic.trust == "dscp":
        dscp = options["roce_dscp"]
        return nic.dscp2prio.get(dscp, dscp >> options["dscp_to_prio_shift_bits"])
    return options["roce_pcp"]


def lossless_roce_queue(link: Link, options: dict[str, Any]) -> tuple[SwitchPortQos, int, Any] | None:
    """(switch port, queue, queue config or None) of the RoCE traffic on a link whose switch port
    has PFC enabled; None when there is no switch side or the port is not lossless."""
    port = link.switch
    if port is None or not port.pfc_enable:
        return None
    queue = port.queue_of_priority(roce_priority(link, options))
    return port, queue, port.queues.get(queue)


def nic_dscp_priority(nic: NicQos, dscp: int, options: dict[str, Any]) -> int:
    return nic.dscp2prio.get(dscp, dscp >> options["dscp_to_prio_shift_bits"])


def interface(nic: NicQos) -> str:
    """``"gpu01:eth2"`` -> ``"eth2"``."""
    return nic.name.rsplit(":", 1)[-1]


def bitmap(priorities: frozenset[int] | set[int]) -> str:
    """{3} -> ``"0,0,0,1,0,0,0,0"`` (the mlnx_qos --pfc form)."""
    return ",".join("1" if p in priorities else "0" for p in range(8))


def prio_list(priorities: frozenset[int] | set[int]) -> str:
    """{3, 4} -> ``"3,4"`` (the SONiC pfc_enable form)."""
    return ",".join(str(p) for p in sorted(priorities))


def hset(table_key: str, field: str, value: Any, **more: Any) -> str:
    """A CONFIG_DB change as one command (persist with ``config save -y``)."""
    pairs = " ".join(f'{name} "{val}"' for name, val in ((field, value), *more.items()))
    return f'sonic-db-cli CONFIG_DB HSET "{table_key}" {pairs}'


def switch_tc_of_roce(port: SwitchPortQos, priority: int, options: dict[str, Any]) -> int | None:
    """TC the switch classifies RoCE into (DSCP map first, then dot1p), unmapped = TC 0 (SAI default)."""
    if port.dscp_to_tc is not None:
        return port.dscp_to_tc.get(options["roce_dscp"], 0)
    if port.dot1p_to_tc is not None:
        return port.dot1p_to_tc.get(priority, 0)
    return None


def finding(rule_id: str, link: Link | str, message: str, fix: str,
            evidence: dict[str, Any] | None = None, location: str | None = None) -> Finding:
    name = link if isinstance(link, str) else link.name
    return Finding(rule_id=rule_id, message=message, link=name, fix=fix,
                   evidence=evidence or {}, location=location)


def dualtor_design(port: SwitchPortQos | None, catalog: Any) -> str | None:
    """The reason, when a port follows SONiC's documented dual-ToR design (subtype DualToR and
    ``pfc_enable`` = ``lint.sonic_dualtor_pfc_enable``); else None."""
    if port is None or (port.subtype or "").lower() != "dualtor":
        return None
    if sorted(port.pfc_enable) != list(ops_defaults.value("lint.sonic_dualtor_pfc_enable", catalog)):
        return None
    return ("SONiC dual-ToR design: uplinks carry tunnelled lossless traffic on priorities 2 and 6 "
            "(pfc_enable 2,3,4,6; " + ops_defaults.source("lint.sonic_dualtor_pfc_enable", catalog) + ")")


def no_qos(link: Link) -> bool:
    """A switch-only link whose port carries no QoS at all (no own PORT_QOS_MAP row, no PFC, no
    lossless PG): SONiC renders QoS only for ports with a neighbour, so there is nothing to check."""
    port = link.switch
    return (link.nic is None and port is not None and not port.has_qos_row and not port.pfc_enable
            and not any(p.lossless for p in port.buffer_pg.values()))
