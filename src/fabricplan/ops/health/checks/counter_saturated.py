"""CNT002 — a counter saturated (stuck at 2^w - 1): its rates from then on are unknown.

Non-extended InfiniBand PortCounters stop at their field's maximum (``symbol_error`` 16 bits,
``port_xmit_wait`` 32 bits, ...; IBA Vol. 1 PortCounters; node_exporter reads the 32-bit sysfs
files). A saturated counter no longer counts, so it would read as "no errors": every check that
uses it treats the time after saturation as not measured.

Passing::

    port_xmit_wait 22,730,501 (perfquery -x, 64-bit)

Failing::

    port_xmit_wait 4,294,967,295 (non-extended, 32-bit)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fabricplan.ops.health.checks._common import health_finding, rounded, stamp
from fabricplan.ops.telemetry import PortTelemetry, increases

ID = "CNT002"
SEVERITY = "warning"
SCOPE = "port"
TITLE = "Counter saturated (stuck at its maximum)"
OPTIONS: dict[str, str] = {}


def defaults(catalog: Any) -> dict[str, Any]:
    return {}


def check(port: PortTelemetry, options: dict[str, Any], catalog: Any) -> Iterator[Any]:
    for series in port.counters.values():
        if series.width_bits is None and series.saturated_from_s is None:
            continue
        inc = increases(series)
        if inc.saturated_at is None and series.saturated_from_s is None:
            continue
        at = series.saturated_from_s if series.saturated_from_s is not None else float(series.t_s[inc.saturated_at])
        yield health_finding(
            ID, port.name, f"{series.label} is saturated at 2^{series.width_bits or 32}-1 since {stamp(at)}: "
            "its increases from then on are unknown (not counted as zero)",
            "read the 64-bit extended counters (perfquery -x, sysfs counters_ext, or a recent kernel) and clear the "
            "saturated ones (perfquery -R LID PORT)", rounded({"counter": series.label, "saturated_at": at,
                                                                "width_bits": series.width_bits}), 1.0, [series])
