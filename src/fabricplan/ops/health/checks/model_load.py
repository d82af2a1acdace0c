"""MODEL001 — PFC pauses and CNPs against what the design should give at this load.

With ``--spec`` (the design) and a load (``--load``, or the port's byte counters:
``ops.health.expected``), each Ethernet/RDMA port is compared with the fluid model of the design
at that load (``sim/load.py``, through ``api.expected_under_load``): the window-mean paused
fraction of each priority (Δ``rx_prioN_pause_duration`` µs / Δt µs) against the model's
host-uplink paused fraction, and ``np_cnp_sent`` per second against the model's CNPs per
receiving host. A port is flagged above ``max(ratio x expected, floor)``; the ratios and floors
are heuristics (catalog ``ops_defaults.health.model_*``). Fabrics without PFC (TCP, InfiniBand)
have no pause expectation; only RoCE with DCQCN has a CNP expectation (InfiniBand BECNs are reported, not compared).

Passing::

    paused 0.4 % at 30 % load where the design gives 0.3 %

Failing::

    paused 8 % of the time where this design at 60 % load should pause < 0.5 %
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fabricplan.ops.health.checks._common import (
    counter_window,
    health_finding,
    is_ethernet,
    is_rdma,
    measured,
    num,
    pct,
    rounded,
    unavailable,
)
from fabricplan.ops.lint.options import from_catalog
from fabricplan.ops.telemetry import PortTelemetry

ID = "MODEL001"
SEVERITY = "warning"
SCOPE = "port"
TITLE = "PFC pauses and CNPs against what the design should give at this load"
OPTIONS: dict[str, str] = {"pause_max_ratio": "health.model_pause_max_ratio",
                           "pause_floor": "health.model_pause_fraction_floor",
                           "cnp_max_ratio": "health.model_cnp_max_ratio",
                           "cnp_floor_per_s": "health.model_cnp_floor_per_s"}
#: What the engine sets as a port's expectation when a model is given but the port's load is unknown.
NO_LOAD = "no load"


def defaults(catalog: Any) -> dict[str, Any]:
    return from_catalog(OPTIONS, catalog)


def _should(expected: float, floor: float, what: str) -> str:
    return f"< {what(floor)}" if expected < floor else what(expected)


def check(port: PortTelemetry, options: dict[str, Any], catalog: Any) -> Iterator[Any]:
    e = port.expected
    if e is None:  # no design given (--spec): nothing to compare with
        return
    ethernet, rdma = is_ethernet(port), is_rdma(port)
    if not (ethernet or rdma):
        return
    if e == NO_LOAD:
        yield unavailable(ID, port.name, ["tx_bytes_phy", "rx_bytes_phy"],
                          "no load for this port: give --load, or capture its byte counters (tx/rx_bytes_phy, "
                          "port_xmit_data)")
        return
    load = port.load
    base = {"load": load.value, "load_from": load.source, "load_bucket": e.bucket}
    checked = False
    prios = port.priorities("rx_pause_duration") if ethernet else []
    if prios and e.pause_fraction is not None:
        checked = True
        limit = max(options["pause_max_ratio"] * e.pause_fraction, options["pause_floor"])
        worst = 0.0
        for prio in prios:
            series = port.get("rx_pause_duration", prio)
            w = counter_window(series)
            observed = w["mean_per_s"] / 1e6
            if observed != observed:
                continue
            worst = max(worst, observed)
            if observed > limit:
                ev = {**base, "priority": prio, "paused_fraction_mean": observed,
                      "model_pause_fraction": e.pause_fraction, "limit": limit}
                yield health_finding(
                    ID, port.name, f"priority {prio}: paused {pct(observed)} of the time where this design at "
                    f"{pct(load.value)} load should pause {_should(e.pause_fraction, options['pause_floor'], pct)} "
                    f"(limit {num(options['pause_max_ratio'])}x the model, at least {pct(options['pause_floor'])})",
                    "the fabric pauses far more than its design at this load: look for an incast or a slow receiver "
                    "behind this port, ECN thresholds above XOFF (fabricplan lint), or DCQCN off on some senders",
                    rounded(ev), observed / limit, [series])
        yield measured(ID, port.name, "paused_fraction_vs_model", worst / limit, "x", 1.0)
    cnp = port.get("np_cnp_sent") if rdma else None
    if cnp is not None and e.cnp_per_s is not None:
        checked = True
        limit = max(options["cnp_max_ratio"] * e.cnp_per_s, options["cnp_floor_per_s"])
        observed = counter_window(cnp)["mean_per_s"]
        if observed == observed:
            if observed > limit:
                ev = {**base, "cnp_per_s_mean": observed, "model_cnp_per_s": e.cnp_per_s, "limit_per_s": limit}
                yield health_finding(
                    ID, port.name, f"sends {num(observed)} CNPs/s where this design at {pct(load.value)} load gives "
                    f"{_should(e.cnp_per_s, options['cnp_floor_per_s'], num)} "
                    f"(limit {num(options['cnp_max_ratio'])}x the model, at least {num(options['cnp_floor_per_s'])}/s)",
                    "congestion at this receiver is far above what the load explains: an incast onto this host, "
                    "or ECN marking thresholds set lower than the design's", rounded(ev), observed / limit, [cnp])
            yield measured(ID, port.name, "cnp_vs_model", observed / limit, "x", 1.0)
    if not checked:
        yield unavailable(ID, port.name, ["rx_prioN_pause_duration", "np_cnp_sent"],
                          "no pause-duration or CNP counter to compare with the model (or the fabric has neither: "
                          f"{'no PFC' if e.pause_fraction is None else 'PFC'}, "
                          f"{'no CNPs' if e.cnp_per_s is None else 'CNPs'})")
