"""RTT001 — p99.9 RTT within 150 % of the expected RTT.

Per source -> destination pair with at least ``rtt_min_samples`` samples: the ``rtt_quantile``
(p99.9) of the RTT samples against the pair's baseline. The baseline is, in order: the RTT the user
states (``--expected-rtt-us``), the RTT the design model gives for the spec's fabric
(``--spec``: the p99.9 the design should give at the pair's load, the unloaded RTT plus the
fluid model's p99.9 queueing delay, ``ops.health.expected``; twice the one-way small-message
latency across its top tier, unloaded, when the load is unknown), or the same
quantile learned from a quiet window (``--baseline-window``). The 150 % is the seed's checklist
(a heuristic).

Passing::

    p99.9 = 5.1 µs, expected 4.0 µs (1.28x)

Failing::

    p99.9 = 12.4 µs, expected 4.0 µs (3.1x)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fabricplan.ops.health.checks._common import health_finding, measured, num, pct, rounded, unavailable
from fabricplan.ops.lint.options import from_catalog
from fabricplan.ops.telemetry import RttPair, quantile

ID = "RTT001"
SEVERITY = "warning"
SCOPE = "rtt"
TITLE = "p99.9 RTT within 150 % of the expected RTT"
OPTIONS: dict[str, str] = {"max_ratio": "health.rtt_p999_max_ratio", "quantile": "health.rtt_quantile",
                           "min_samples": "health.rtt_min_samples"}


def defaults(catalog: Any) -> dict[str, Any]:
    return from_catalog(OPTIONS, catalog)


def check(pair: RttPair, options: dict[str, Any], catalog: Any) -> Iterator[Any]:
    values = pair.series.values
    label = f"p{options['quantile'] * 100:g}"
    if len(values) < options["min_samples"]:
        yield unavailable(ID, pair.name, ["rtt_us"], f"{len(values)} RTT samples; a {label} needs at least "
                          f"{options['min_samples']}")
        return
    tail = quantile(values, options["quantile"])
    if pair.baseline_us is None or not pair.baseline_us > 0:
        yield unavailable(ID, pair.name, ["baseline"], "no expected RTT: give --expected-rtt-us, --spec or "
                          "--baseline-window")
        yield measured(ID, pair.name, "rtt_tail_us", tail, "us")
        return
    ratio = tail / pair.baseline_us
    if ratio > options["max_ratio"]:
        ev = {"tail_us": tail, "quantile": options["quantile"], "baseline_us": pair.baseline_us,
              "baseline_from": pair.baseline_source, "ratio": ratio, "samples": len(values),
              "median_us": quantile(values, 0.5)}
        if pair.expected is not None:  # against the model: the design's p99.9 at this pair's load
            ev.update(load=pair.load.value, load_from=pair.load.source, load_bucket=pair.expected.bucket,
                      unloaded_rtt_us=pair.expected.unloaded_rtt_us)
            message = (f"{label} RTT {num(tail)} µs is {num(ratio)}x the {num(pair.baseline_us)} µs this design should "
                       f"give at {pct(pair.load.value)} load (limit {num(options['max_ratio'])}x; {pair.baseline_source})")
        else:
            message = (f"{label} RTT {num(tail)} µs is {num(ratio)}x the expected {num(pair.baseline_us)} µs "
                       f"({pair.baseline_source}; limit {num(options['max_ratio'])}x)")
        yield health_finding(
            ID, pair.name, message,
            "find where the tail comes from: PFC pauses and CNPs on the ports of this path (PFC001, CC002), a "
            "congested uplink (compare pairs that share it), or a host-side stall at either end", rounded(ev),
            ratio / options["max_ratio"], [pair.series],
            limits=[(pair.series, options["max_ratio"] * pair.baseline_us,
                     f"{label} limit: {num(options['max_ratio'])}x the expected {num(pair.baseline_us)} µs")])
    yield measured(ID, pair.name, "rtt_tail_ratio", ratio, "x", options["max_ratio"])
