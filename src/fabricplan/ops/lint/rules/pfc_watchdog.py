"""PFCWD001 — PFC watchdog runs on every lossless port with sane timers.

A stuck receiver that keeps sending PAUSE (a PFC storm) can freeze a whole lossless fabric; the
watchdog detects it and drops or forwards the stuck queue. Every port with ``pfc_enable`` needs a
``PFC_WD`` entry (and, if ``pfcwd_sw_enable`` is set, it must cover the PFC priorities), with
``action`` drop/forward/alert, ``detection_time`` 100..5000 ms, ``restoration_time``
100..60000 ms, ``PFC_WD|GLOBAL POLL_INTERVAL`` 100..1000 ms, and both times >= the poll interval
(ranges from ``sonic-pfcwd.yang``).

Passing::

    PFC_WD|Ethernet0: action drop, detection_time 200, restoration_time 200; GLOBAL POLL_INTERVAL 200

Failing::

    PFC_WD|Ethernet0 detection_time 50     (below 100 ms and below POLL_INTERVAL 200)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fabricplan.ops import defaults as ops_defaults
from fabricplan.ops.lint.finding import Finding
from fabricplan.ops.lint.options import from_catalog
from fabricplan.ops.lint.rules._common import dualtor_design, finding, prio_list
from fabricplan.ops.model import Link

ID = "PFCWD001"
SEVERITY = "warning"
SCOPE = "link"
TITLE = "PFC watchdog enabled on every lossless port with sane timers"
OPTIONS: dict[str, str] = {
    "detection_min_ms": "lint.pfcwd_detection_min_ms",
    "detection_max_ms": "lint.pfcwd_detection_max_ms",
    "restoration_min_ms": "lint.pfcwd_restoration_min_ms",
    "restoration_max_ms": "lint.pfcwd_restoration_max_ms",
    "poll_min_ms": "lint.pfcwd_poll_min_ms",
    "poll_max_ms": "lint.pfcwd_poll_max_ms",
    "default_detection_ms": "lint.pfcwd_default_detection_ms",
    "default_restoration_ms": "lint.pfcwd_default_restoration_ms",
    "default_poll_ms": "lint.pfcwd_default_poll_ms",
    "actions": "lint.pfcwd_actions",
}


def defaults(catalog: Any) -> dict[str, Any]:
    """Default options, from the catalog's ``ops_defaults`` (``OPTIONS``)."""
    return from_catalog(OPTIONS, catalog)


def check(link: Link, options: dict[str, Any], catalog: Any) -> Iterator[Finding]:
    port = link.switch
    if port is None or not port.pfc_enable:
        return
    det_d, res_d = options["default_detection_ms"], options["default_restoration_ms"]
    start = f"sudo pfcwd start --action drop ports {port.port} detection-time {det_d} --restoration-time {res_d}"
    wd = port.pfc_wd
    if wd is None:
        yield finding(ID, link, f"lossless port {port.port} (PFC on {sorted(port.pfc_enable)}) has no PFC watchdog",
                      start, {"switch": {"pfc_enable": sorted(port.pfc_enable), "pfc_wd": None}}, port.where("pfc_enable"))
        return
    where = port.where("pfc_wd")
    evidence = {"switch": {"action": wd.action, "detection_time": wd.detection_ms,
                           "restoration_time": wd.restoration_ms, "poll_interval": port.pfcwd_poll_ms}}
    problems: list[str] = []
    design_only = False
    if port.pfcwd_sw_enable is not None and not port.pfc_enable <= port.pfcwd_sw_enable:
        problems.append(f"pfcwd_sw_enable {sorted(port.pfcwd_sw_enable)} does not cover PFC priorities {sorted(port.pfc_enable)}")
        design_only = (dualtor_design(port, catalog) is not None
                       and sorted(port.pfcwd_sw_enable) == list(ops_defaults.value("lint.sonic_dualtor_pfcwd_sw_enable",
                                                                                   catalog)))
    if wd.action not in options["actions"]:
        problems.append(f"action {wd.action!r} is not one of {options['actions']}")
    ranges = (("detection_time", wd.detection_ms, options["detection_min_ms"], options["detection_max_ms"]),
              ("restoration_time", wd.restoration_ms, options["restoration_min_ms"], options["restoration_max_ms"]))
    for name, value, lo, hi in ranges:
        if value is None:
            problems.append(f"{name} is missing")
        elif not lo <= value <= hi:
            problems.append(f"{name} {value} ms is outside {lo}..{hi} ms")
    poll = port.pfcwd_poll_ms
    if poll is not None:
        if not options["poll_min_ms"] <= poll <= options["poll_max_ms"]:
            problems.append(f"POLL_INTERVAL {poll} ms is outside {options['poll_min_ms']}..{options['poll_max_ms']} ms")
        for name, value, _, _ in ranges:
            if value is not None and value < poll:
                problems.append(f"{name} {value} ms is below POLL_INTERVAL {poll} ms")
    if problems:
        fix = start
        if port.pfcwd_sw_enable is not None:
            fix += f'; set PORT_QOS_MAP|{port.port} pfcwd_sw_enable "{prio_list(port.pfc_enable)}"'
        item = finding(ID, link, "PFC watchdog misconfigured: " + "; ".join(problems), fix, evidence, where)
        if design_only and len(problems) == 1:
            item.max_severity, item.reason = "info", f"{dualtor_design(port, catalog)}; its pfcwd_sw_enable is 3,4"
        yield item
