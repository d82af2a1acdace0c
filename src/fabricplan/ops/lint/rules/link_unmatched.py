"""LINK002 — every link was checked from both ends: no cabling row, NIC or lossless port left unpaired.

Reported, each at its own location (warnings: the one-sided rules still ran on what was read):

* a cabling row whose NIC was not captured or whose switch port is in no config_db (a typo in
  a hostname or port, or a host not captured);
* a captured NIC the cabling file does not list;
* without a cabling file, several NICs and switch ports that could not be paired (only one NIC
  and one port pair by themselves): cross-link rules did not run;
* a lossless port (PFC on) without a ``PORT`` row: its speed and MTU are unknown, so the
  headroom (HDRM001) and MTU (MTU001) checks could not run.

When no row pairs at all, LINK001 reports that instead.

Passing::

    every cabling row names a captured NIC and a port of a config_db read; PORT|Ethernet0 has speed, mtu

Failing::

    cabling.yaml:10: nic gpu03:eth2, switch leaf1:Ethernet8  (the config_db hostname is leaf01)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fabricplan.ops.lint.finding import Finding
from fabricplan.ops.lint.rules._common import finding
from fabricplan.ops.model import Fabric

ID = "LINK002"
SEVERITY = "warning"
SCOPE = "fabric"
TITLE = "Every cabling row, NIC and lossless port is paired and checked from both ends"
OPTIONS: dict[str, str] = {}


def defaults(catalog: Any) -> dict[str, Any]:
    """This rule has no options."""
    return {}


def check(fabric: Fabric, options: dict[str, Any], catalog: Any) -> Iterator[Finding]:
    paired = any(link.nic is not None and link.switch is not None for link in fabric.links)
    nic_names = {nic.name for nic in fabric.nics}
    ports = {port.name: port for port in fabric.switch_ports}
    switches_read = sorted({port.switch for port in fabric.switch_ports})
    if fabric.cabling is None:
        if len(fabric.nics) > 1 or len(fabric.switch_ports) > 1:
            if fabric.nics and fabric.switch_ports and not paired:
                yield finding(ID, "fabric",
                              f"no --cabling file: {len(fabric.nics)} NIC ports and {len(fabric.switch_ports)} switch "
                              "ports were checked separately; cross-link rules (PFC001, TRUST001, MTU001, cable "
                              "lengths) did not run",
                              "give --cabling FILE listing which NIC port faces which switch port",
                              {"nics": len(fabric.nics), "switch_ports": len(fabric.switch_ports)},
                              fabric.switch_ports[0].source)
    elif paired:
        source = fabric.cabling_source or "cabling file"
        for entry in fabric.cabling:
            nic_ok, port_ok = entry.nic in nic_names, entry.switch_port in ports
            if nic_ok and port_ok:
                continue
            switch, _, port_name = entry.switch_port.partition(":")
            problems = []
            if not nic_ok:
                problems.append(f"NIC {entry.nic} was not captured")
            if not port_ok:
                problems.append(f"switch {switch} was not read (config_db hostnames: {', '.join(switches_read[:4])})"
                                if switch not in switches_read else f"{switch} has no port {port_name}")
            checked = ("nothing was checked" if not nic_ok and not port_ok
                       else f"only {entry.switch_port if port_ok else entry.nic} was checked, alone")
            yield finding(ID, f"{entry.nic} <-> {entry.switch_port}",
                          f"cabling row not paired: {'; '.join(problems)}; {checked}",
                          "fix the name in the cabling file, or capture that host "
                          "(names: '### nic host:interface' in NIC dumps, DEVICE_METADATA hostname in config_db)",
                          {"cabling": {"nic": entry.nic, "switch": entry.switch_port}}, entry.location)
        cabled = {entry.nic for entry in fabric.cabling}
        for nic in fabric.nics:
            if nic.name not in cabled:
                yield finding(ID, f"{nic.name} <-> ?",
                              f"NIC {nic.name} is not in the cabling file {source}; it was checked alone",
                              f"add a row for {nic.name} (nic: {nic.name}, switch: <hostname>:<port>) to {source}",
                              {"nic": {"name": nic.name}}, nic.source)
    by_source: dict[str, list[str]] = {}
    for port in fabric.switch_ports:
        if port.pfc_enable and "speed" not in port.locations:
            by_source.setdefault(port.source, []).append(port.port)
    for source, names in by_source.items():
        shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
        yield finding(ID, f"{ports_switch(fabric, source)}:{names[0]}",
                      f"{len(names)} lossless port(s) ({shown}) have no PORT row: speed and MTU unknown, "
                      "so switch headroom (HDRM001) and MTU (MTU001) were not checked",
                      "include the PORT table in the config_db given (sonic-cfggen -d --print-data, or config save)",
                      {"switch": {"ports_without_port_row": names[:20]}}, f"{source}:$.PORT")


def ports_switch(fabric: Fabric, source: str) -> str:
    return next((p.switch for p in fabric.switch_ports if p.source == source), "?")
