"""TRUST001 — NIC trust mode and switch classification agree.

The NIC marks RoCE by DSCP (``--trust dscp``) or by VLAN PCP (``--trust pcp``); the switch port
must classify on the same field: ``dscp_to_tc_map`` for DSCP trust, ``dot1p_to_tc_map`` for PCP.

Passing::

    NIC:    Priority trust state: dscp
    switch: PORT_QOS_MAP.Ethernet0.dscp_to_tc_map = "[DSCP_TO_TC_MAP|ROCE]"

Failing::

    NIC:    Priority trust state: pcp
    switch: PORT_QOS_MAP.Ethernet0 has dscp_to_tc_map only   -> RoCE lands in TC 0 (lossy)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fabricplan.ops.lint.finding import Finding
from fabricplan.ops.lint.rules._common import finding, interface
from fabricplan.ops.model import Link

ID = "TRUST001"
SEVERITY = "error"
SCOPE = "link"
TITLE = "NIC trust mode matches the switch port's classification map"
OPTIONS: dict[str, str] = {}


def defaults(catalog: Any) -> dict[str, Any]:
    """This rule has no options."""
    return {}


def check(link: Link, options: dict[str, Any], catalog: Any) -> Iterator[Finding]:
    nic, port = link.nic, link.switch
    if nic is None or port is None or nic.trust is None:
        return
    evidence = {"nic": {"trust": nic.trust},
                "switch": {"dscp_to_tc_map": port.dscp_to_tc is not None,
                           "dot1p_to_tc_map": port.dot1p_to_tc is not None}}
    if nic.trust == "dscp" and port.dscp_to_tc is None:
        yield finding(ID, link, "NIC trusts DSCP but the switch port has no dscp_to_tc_map",
                      f'set PORT_QOS_MAP|{port.port} dscp_to_tc_map (e.g. "ROCE"), '
                      f"or mlnx_qos -i {interface(nic)} --trust pcp if the fabric classifies on PCP",
                      evidence, port.where("qos_map"))
    elif nic.trust == "pcp" and port.dot1p_to_tc is None:
        yield finding(ID, link, "NIC trusts PCP but the switch port classifies on DSCP only (no dot1p_to_tc_map)",
                      f"mlnx_qos -i {interface(nic)} --trust dscp",
                      evidence, nic.where("trust"))
