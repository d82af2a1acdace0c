"""Lint rule options: their defaults come from the catalog (``ops_defaults``, overlayable with
``--catalog``), the lint config file may override them, and both are checked here against the
option's type (that of the bundled default) and its valid range.

A rule declares ``OPTIONS = {option: "dotted.path"}`` (paths into ``ops_defaults``) and its
``defaults(catalog)`` returns :func:`from_catalog` of them.
"""

from __future__ import annotations

import math
from typing import Any

from fabricplan.errors import CatalogError, InputError
from fabricplan.ops import defaults
from fabricplan.ops.limits import CABLE_RANGE_M, DSCP_RANGE, MTU_RANGE_BYTES, PRIORITY_RANGE, U32_MAX

# Valid range of each numeric option (field widths and percentages); others: 0..U32_MAX.
RANGES: dict[str, tuple[float, float]] = {
    "roce_dscp": DSCP_RANGE,
    "cnp_dscp": DSCP_RANGE,
    "roce_pcp": PRIORITY_RANGE,
    "cnp_802p_prio": PRIORITY_RANGE,
    "dscp_to_prio_shift_bits": (3, 6),  # a 6-bit DSCP shifted right by 3..6 bits is a priority 0..7
    "max_lossless_priorities": (0, 8),
    "ets_total_percent": (1, 100),
    "probability_min_percent": (0, 100),
    "probability_max_percent": (0, 100),
    "recommended_probability_percent": (0, 100),
    "default_cable_len_m": CABLE_RANGE_M,
    "max_mtu_bytes": MTU_RANGE_BYTES,
    "cell_size_bytes": (1, 1_000_000),
    # health checks (ops/health/checks): fractions, quantiles, sample counts
    "quantile": (0.5, 1.0),
    "max_ratio": (1.0, 1e6),
    "min_samples": (1, 1e9),
    "pause_fraction_max": (0.0, 1.0),
    "storm_pause_fraction": (0.0, 1.0),
    "detection_ms": (1, 60_000),
    "retransmit_ratio_max": (0.0, 1.0),
    "outlier_ratio": (1.0, 1e6),
}
DEFAULT_RANGE: tuple[float, float] = (0, U32_MAX)
# Text options with a fixed set of values.
CHOICES: dict[str, tuple[str, ...]] = {"headroom_model": ("generic", "sonic")}


def from_catalog(paths: dict[str, str], catalog: Any) -> dict[str, Any]:
    """Option values read from ``ops_defaults`` of ``catalog`` at ``paths`` (option -> dotted path),
    each checked; a bad overlay value is a :class:`CatalogError` naming the overlay file and the path.

    The bundled catalog is read here only as the reference an overlay's value is checked against
    (its type, :func:`check`), never as a value."""
    from fabricplan.catalog.catalog import default_catalog

    bundled = default_catalog()
    out: dict[str, Any] = {}
    for name, path in paths.items():
        value = defaults.value(path, catalog)
        if catalog is not bundled:
            check(name, value, defaults.value(path, bundled), defaults.where(path, catalog), CatalogError)
        out[name] = list(value) if isinstance(value, (list, tuple)) else value
    return out


def check(name: str, value: Any, like: Any, location: str, error: type[InputError] = InputError) -> None:
    """Raise ``error`` at ``location`` unless ``value`` has the type of ``like`` (the bundled
    default) and lies in the option's range (:data:`RANGES`, :data:`CHOICES`)."""
    if isinstance(like, bool):
        ok = isinstance(value, bool)
    elif isinstance(like, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(like, float):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif isinstance(like, (list, tuple)):
        item_types = {type(item) for item in like}
        ok = isinstance(value, list) and all(type(item) in item_types for item in value) if item_types else isinstance(value, list)
    else:
        ok = isinstance(value, type(like))
    if not ok:
        raise error(f"option {name} must be like {_short(like)}, got {_short(value)}", location=location)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        lo, hi = RANGES.get(name, DEFAULT_RANGE)
        if not (math.isfinite(value) and lo <= value <= hi):
            raise error(f"option {name} must be in {defaults.span(lo, hi)}, got {defaults.show(value)}",
                        location=location)
    if name in CHOICES and value not in CHOICES[name]:
        raise error(f"option {name} must be one of {', '.join(CHOICES[name])}, got {_short(value)}", location=location)


def _short(value: Any) -> str:
    text = defaults.show(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
