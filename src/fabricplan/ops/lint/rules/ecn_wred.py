"""ECN001 — WRED/ECN marks the RoCE queue, with valid thresholds.

DCQCN only works if the switch marks ECN on the RoCE queue before it fills. The RoCE queue's
``wred_profile`` must exist, mark green traffic (``ecn`` in ecn_green, ecn_green_yellow,
ecn_green_red, ecn_all), have ``wred_green_enable`` true, ``green_min_threshold`` <=
``green_max_threshold`` and a drop/mark probability in 0..100.

Passing::

    QUEUE|Ethernet0|3 wred_profile ROCE_LOSSLESS: ecn_all, wred_green_enable true,
    green_min_threshold 153600, green_max_threshold 1536000, green_drop_probability 5

Failing::

    WRED_PROFILE|ROCE_LOSSLESS ecn = ecn_none      (no marking: DCQCN never reacts)
    green_min_threshold 2000000 > green_max_threshold 1536000
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fabricplan.ops.lint.finding import Finding
from fabricplan.ops.lint.options import from_catalog
from fabricplan.ops.lint.rules._common import CLASSIFICATION_OPTIONS, finding, hset, lossless_roce_queue
from fabricplan.ops.model import Link
from fabricplan.ops.readers._common import json_path

ID = "ECN001"
SEVERITY = "error"
SCOPE = "link"
TITLE = "ECN/WRED enabled on the RoCE queue with min <= max"
OPTIONS: dict[str, str] = {
    **CLASSIFICATION_OPTIONS,
    "ecn_modes_marking_green": "lint.ecn_modes_marking_green",
    "probability_min_percent": "lint.wred_probability_min_percent",
    "probability_max_percent": "lint.wred_probability_max_percent",
    "recommended_min_bytes": "lint.ecn_min_threshold_bytes",
    "recommended_max_bytes": "lint.ecn_max_threshold_bytes",
    "recommended_probability_percent": "lint.ecn_drop_probability_percent",
}


def defaults(catalog: Any) -> dict[str, Any]:
    """Default options, from the catalog's ``ops_defaults`` (``OPTIONS``)."""
    return from_catalog(OPTIONS, catalog)


def check(link: Link, options: dict[str, Any], catalog: Any) -> Iterator[Finding]:
    found = lossless_roce_queue(link, options)
    if found is None:
        return
    port, queue, config = found
    where = port.locations.get(f"queue{queue}", port.source)
    rec_min, rec_max = options["recommended_min_bytes"], options["recommended_max_bytes"]
    if config is None or config.wred is None:
        yield finding(ID, link, f"RoCE queue {queue} has no WRED/ECN profile: the switch never marks ECN, DCQCN cannot react",
                      hset(f"QUEUE|{port.port}|{queue}", "wred_profile", "ROCE_LOSSLESS")
                      + f" (ecn_all, wred_green_enable true, green_min_threshold {rec_min}, green_max_threshold {rec_max})",
                      {"switch": {"queue": queue, "wred_profile": None}}, where)
        return
    wred = config.wred
    table = f"WRED_PROFILE|{wred.name}"
    wred_where = f"{port.source}:{json_path('WRED_PROFILE', wred.name)}"
    evidence = {"switch": {"queue": queue, "wred_profile": wred.name, "ecn": wred.ecn,
                           "wred_green_enable": wred.green_enable, "green_min_threshold": wred.green_min_bytes,
                           "green_max_threshold": wred.green_max_bytes,
                           "green_drop_probability": wred.green_drop_probability}}
    if wred.ecn not in options["ecn_modes_marking_green"]:
        yield finding(ID, link, f"WRED profile {wred.name} on RoCE queue {queue} does not mark green traffic (ecn = {wred.ecn})",
                      hset(table, "ecn", "ecn_all"), evidence, f"{wred_where}.ecn")
    if not wred.green_enable:
        yield finding(ID, link, f"WRED profile {wred.name} has wred_green_enable false",
                      hset(table, "wred_green_enable", "true"), evidence, f"{wred_where}.wred_green_enable")
    lo, hi = wred.green_min_bytes, wred.green_max_bytes
    if lo is None or hi is None:
        yield finding(ID, link, f"WRED profile {wred.name} lacks green_min_threshold/green_max_threshold",
                      f"{hset(table, 'green_min_threshold', rec_min)}; {hset(table, 'green_max_threshold', rec_max)}",
                      evidence, wred_where)
    elif lo > hi:
        yield finding(ID, link, f"WRED profile {wred.name}: green_min_threshold {lo} > green_max_threshold {hi}",
                      f"{hset(table, 'green_min_threshold', rec_min)}; {hset(table, 'green_max_threshold', rec_max)}",
                      evidence, f"{wred_where}.green_min_threshold")
    prob = wred.green_drop_probability
    p_lo, p_hi = options["probability_min_percent"], options["probability_max_percent"]
    if prob is not None and not p_lo <= prob <= p_hi:
        yield finding(ID, link, f"WRED profile {wred.name}: green_drop_probability {prob} is outside {p_lo}..{p_hi}",
                      hset(table, "green_drop_probability", options["recommended_probability_percent"]),
                      evidence, f"{wred_where}.green_drop_probability")
