"""ECN002 — ECN starts marking before PFC can pause (ECN fires before PFC).

DCQCN needs marks before the ingress PG reaches its pause threshold; otherwise PFC does all the
work and spreads congestion. The pause threshold of a lossless PG is at most ``static_th``, or for
a dynamic profile ``pool_size * a / (1 + a)`` with ``a = 2 ** dynamic_th`` (the best case, an
otherwise empty pool). The RoCE queue's ``green_min_threshold`` must be below it.

Passing::

    green_min_threshold 153600 < pause threshold 5437536
    (ingress_lossless_pool 10875072, pg_lossless profile dynamic_th 0)

Failing::

    green_min_threshold 6000000 >= 5437536   -> PFC pauses before ECN ever marks
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fabricplan.ops.lint.finding import Finding
from fabricplan.ops.lint.options import from_catalog
from fabricplan.ops.lint.rules._common import CLASSIFICATION_OPTIONS, finding, hset, lossless_roce_queue
from fabricplan.ops.model import BufferProfile, Link
from fabricplan.ops.readers._common import json_path

ID = "ECN002"
SEVERITY = "warning"
SCOPE = "link"
TITLE = "ECN marks before PFC pauses (min threshold below the PG pause threshold)"
OPTIONS: dict[str, str] = {**CLASSIFICATION_OPTIONS, "recommended_min_bytes": "lint.ecn_min_threshold_bytes"}


def defaults(catalog: Any) -> dict[str, Any]:
    """Default options, from the catalog's ``ops_defaults`` (``OPTIONS``)."""
    return from_catalog(OPTIONS, catalog)


def pause_threshold_bytes(profile: BufferProfile) -> float | None:
    """Best-case pause threshold [bytes] of a lossless PG profile, or None if unknown."""
    if profile.static_th is not None:
        return float(profile.static_th)
    if profile.dynamic_th is not None and profile.pool is not None and profile.pool.size_bytes:
        alpha = 2.0 ** profile.dynamic_th
        return profile.pool.size_bytes * alpha / (1 + alpha)
    return None


def check(link: Link, options: dict[str, Any], catalog: Any) -> Iterator[Finding]:
    found = lossless_roce_queue(link, options)
    if found is None:
        return
    port, queue, config = found
    if config is None or config.wred is None or config.wred.green_min_bytes is None:
        return
    thresholds = [(p.name, t) for p in port.buffer_pg.values() if p.lossless and not p.computed
                  if (t := pause_threshold_bytes(p)) is not None]
    if not thresholds:
        return
    name, threshold = min(thresholds, key=lambda item: item[1])
    ecn_min = config.wred.green_min_bytes
    if ecn_min >= threshold:
        yield finding(ID, link,
                      f"ECN min threshold {ecn_min} B is not below the lossless PG pause threshold "
                      f"{threshold:.0f} B ({name}): PFC pauses before ECN marks",
                      hset(f"WRED_PROFILE|{config.wred.name}", "green_min_threshold", options["recommended_min_bytes"])
                      + " (and keep green_max_threshold below the pause threshold)",
                      {"switch": {"queue": queue, "wred_profile": config.wred.name, "green_min_threshold": ecn_min,
                                  "pg_profile": name, "pause_threshold_bytes": round(threshold)}},
                      f"{port.source}:{json_path('WRED_PROFILE', config.wred.name, 'green_min_threshold')}")
