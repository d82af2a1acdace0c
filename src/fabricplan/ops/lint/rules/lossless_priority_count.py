"""PFC002 — no more than two lossless (PFC-enabled) priorities per port.

Each lossless priority needs its own PG headroom on the switch and its own buffer on the NIC;
more than two exhausts the headroom pool and multiplies the PFC deadlock surface.

Passing::

    PORT_QOS_MAP.Ethernet0.pfc_enable = "3,4"

Failing::

    PORT_QOS_MAP.Ethernet0.pfc_enable = "3,4,5"    (and NIC enabled 0 0 0 1 1 1 0 0)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fabricplan.ops.lint.finding import Finding
from fabricplan.ops.lint.options import from_catalog
from fabricplan.ops.lint.rules._common import dualtor_design, finding, hset, interface
from fabricplan.ops.model import Link

ID = "PFC002"
SEVERITY = "warning"
SCOPE = "link"
TITLE = "At most two lossless priorities"
OPTIONS: dict[str, str] = {"max_lossless_priorities": "lint.max_lossless_priorities"}


def defaults(catalog: Any) -> dict[str, Any]:
    """Default options, from the catalog's ``ops_defaults`` (``OPTIONS``)."""
    return from_catalog(OPTIONS, catalog)


def check(link: Link, options: dict[str, Any], catalog: Any) -> Iterator[Finding]:
    limit = options["max_lossless_priorities"]
    if link.nic is not None and len(link.nic.pfc_enabled) > limit:
        nic = link.nic
        yield finding(ID, link, f"NIC has {len(nic.pfc_enabled)} lossless priorities {sorted(nic.pfc_enabled)} "
                      f"(limit {limit})",
                      f"mlnx_qos -i {interface(nic)} --pfc <bitmap with at most {limit} ones, e.g. only the RoCE priority>",
                      {"nic": {"pfc_enabled": sorted(nic.pfc_enabled)}, "limit": limit}, nic.where("pfc_enabled"))
    if link.switch is not None and len(link.switch.pfc_enable) > limit:
        port = link.switch
        item = finding(ID, link, f"switch port has {len(port.pfc_enable)} lossless priorities "
                       f"{sorted(port.pfc_enable)} (limit {limit})",
                       hset(f"PORT_QOS_MAP|{port.port}", "pfc_enable", "<at most " + str(limit) + " priorities, e.g. 3>"),
                       {"switch": {"pfc_enable": sorted(port.pfc_enable)}, "limit": limit}, port.where("pfc_enable"))
        design = dualtor_design(port, catalog)
        if design:
            item.max_severity, item.reason = "info", design
        yield item
