"""LINK001 — at least one NIC-switch link is paired, so the cross-link rules ran at all.

With a cabling file, every row names a NIC (``host:interface``, as in the NIC capture) and a switch
port (``hostname:port``, the hostname from ``DEVICE_METADATA.localhost.hostname`` or the config_db
folder name). When not one row matches both a captured NIC and a port read from a config_db, no
cross-link rule (PFC001, TRUST001, MTU001, cable lengths) checked anything: that is never a pass.
The finding names the cabling file, the switches and NICs it expects and the ones that were read.

Passing::

    cabling.yaml: nic gpu01:eth2, switch leaf01:Ethernet0; config_db hostname leaf01 -> paired

Failing::

    cabling.yaml: switch spine-a:Ethernet0 ...; config_db hostname leaf01 -> 0 of 3 rows paired
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fabricplan.ops.lint.finding import Finding
from fabricplan.ops.lint.rules._common import finding
from fabricplan.ops.model import Fabric

ID = "LINK001"
SEVERITY = "error"
SCOPE = "fabric"
TITLE = "The cabling file pairs at least one captured NIC with a switch port"
OPTIONS: dict[str, str] = {}


def defaults(catalog: Any) -> dict[str, Any]:
    """This rule has no options."""
    return {}


def _listed(names: set[str] | list[str], limit: int = 4) -> str:
    ordered = sorted(names)
    shown = ", ".join(ordered[:limit])
    return (shown + f" and {len(ordered) - limit} more") if len(ordered) > limit else (shown or "none")


def check(fabric: Fabric, options: dict[str, Any], catalog: Any) -> Iterator[Finding]:
    if fabric.cabling is None or any(link.nic is not None and link.switch is not None for link in fabric.links):
        return
    source = fabric.cabling_source or "cabling file"
    location = fabric.cabling[0].location if fabric.cabling else source
    nic_names = {nic.name for nic in fabric.nics}
    port_names = {port.name for port in fabric.switch_ports}
    switches_read = {port.switch for port in fabric.switch_ports}
    cabled_switches = {entry.switch_port.split(":", 1)[0] for entry in fabric.cabling}
    cabled_nics = {entry.nic for entry in fabric.cabling}
    if not fabric.cabling:
        reason = "the cabling file lists no links"
        fix = "list each NIC port and the switch port it faces under links: (see docs/network-engineers.md)"
    elif not fabric.nics or not fabric.switch_ports:
        missing = "--nic captures" if not fabric.nics else "--switch config_db files"
        reason = f"no {missing} were given, so none of its {len(fabric.cabling)} rows can be paired"
        fix = f"give the {missing} of the cabled hosts"
    else:
        unknown_switches = cabled_switches - switches_read
        unknown_nics = cabled_nics - nic_names
        unknown_ports = {e.switch_port for e in fabric.cabling} - port_names
        parts = []
        if unknown_switches:
            parts.append(f"switches {_listed(unknown_switches)} are not among the config_db hostnames read "
                         f"({_listed(switches_read)})")
        elif unknown_ports:
            parts.append(f"ports {_listed(unknown_ports)} are not in the config_db PORT/PORT_QOS_MAP tables")
        if unknown_nics:
            parts.append(f"NICs {_listed(unknown_nics)} were not captured (captured: {_listed(nic_names)})")
        reason = "; ".join(parts) or "no row names both a captured NIC and a switch port read"
        fix = ("make the cabling file use the config_db hostnames (DEVICE_METADATA.localhost.hostname) and the "
               "NIC names of the captures ('### nic host:interface'), or capture the hosts it names")
    yield finding(ID, "fabric", f"no link checked: 0 of {len(fabric.cabling)} cabling rows pair a captured NIC "
                  f"with a switch port; {reason}", fix,
                  {"cabling": {"rows": len(fabric.cabling), "switches": sorted(cabled_switches)[:20],
                               "nics": sorted(cabled_nics)[:20]},
                   "read": {"switches": sorted(switches_read)[:20], "nics": sorted(nic_names)[:20]}},
                  location)
