"""A live Prometheus server over its HTTP API into ``ops.telemetry`` (rates computed with PromQL).

For every exporter metric fabricplan maps (``prom_text.map_metric``) that the server holds in the
range, one ``query_range`` of ``rate(METRIC[W])`` (``W`` = ``rate_window_steps`` x step) gives
per-second rates at each step; they are integrated back into a counter-like series
(``c[i] = c[i-1] + rate[i] * (t[i] - t[i-1])``, ``from_rate``) so that every check reads the same
model as from files. Counter hygiene comes from PromQL too: ``resets(METRIC[range])`` and, for
counters with a saturating field width, ``max_over_time`` (then the raw series, to find when).

Errors (server down, an HTTP or PromQL error, a range with no data) are InputErrors naming the
URL; nothing is reported as healthy when nothing was read.
"""

from __future__ import annotations

import json
import math
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

import numpy as np

from fabricplan.errors import InputError
from fabricplan.ops import defaults
from fabricplan.ops.readers.prom_text import map_metric
from fabricplan.ops.telemetry import Series, Telemetry, entity_name, saturation_value

#: Prometheus refuses range queries of more than 11,000 points per series (its API docs).
MAX_POINTS = 11_000
#: Program limit: seconds to wait for one HTTP answer.
TIMEOUT_S = 30.0
_PREFIXES = ("node_infiniband_", "node_ethtool_", "infiniband_hca_port_", "infiniband_switch_port_")


class PrometheusClient:
    """The few HTTP API calls health needs (``/api/v1/label/__name__/values``, ``query``, ``query_range``)."""

    def __init__(self, url: str, timeout_s: float = TIMEOUT_S) -> None:
        parsed = urllib.parse.urlparse(url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise InputError(f"expected an http(s) URL such as http://prometheus:9090, got {url[:60]!r}",
                             location="--prometheus")
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s

    def get(self, path: str, params: dict[str, Any]) -> Any:
        query = urllib.parse.urlencode(params, doseq=True)
        address = f"{self.url}{path}?{query}"
        try:
            with urllib.request.urlopen(address, timeout=self.timeout_s) as response:  # noqa: S310 - user's URL
                body = response.read(64 * 1024 * 1024 + 1)
        except urllib.error.HTTPError as exc:
            body = exc.read(64 * 1024)
            raise InputError(f"Prometheus answered HTTP {exc.code}: {_error_text(body)}", location=self.url) from None
        except urllib.error.URLError as exc:
            raise InputError(f"cannot reach Prometheus: {exc.reason}", location=self.url) from None
        except (OSError, ValueError) as exc:  # timeouts, resets, bad URLs
            raise InputError(f"cannot reach Prometheus: {exc}", location=self.url) from None
        if len(body) > 64 * 1024 * 1024:
            raise InputError("answer larger than 64 MiB: narrow the range or raise --step", location=self.url)
        try:
            data = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            raise InputError(f"answer to {path} is not JSON (is this a Prometheus server?)", location=self.url) from None
        if not isinstance(data, dict) or data.get("status") != "success":
            raise InputError(f"Prometheus error: {_error_text(body)}", location=self.url)
        return data.get("data")

    def metric_names(self, start_s: float, end_s: float) -> list[str]:
        match = '{__name__=~"' + "|".join(p + ".+" for p in _PREFIXES) + '"}'
        names = self.get("/api/v1/label/__name__/values", {"match[]": match, "start": start_s, "end": end_s})
        if not isinstance(names, list):
            raise InputError("label values answer is not a list", location=self.url)
        return [str(n) for n in names]

    def query_range(self, promql: str, start_s: float, end_s: float, step_s: float) -> list[dict[str, Any]]:
        data = self.get("/api/v1/query_range", {"query": promql, "start": start_s, "end": end_s, "step": step_s})
        return _result(data, "matrix", self.url)

    def query(self, promql: str, at_s: float) -> list[dict[str, Any]]:
        return _result(self.get("/api/v1/query", {"query": promql, "time": at_s}), "vector", self.url)


def _result(data: Any, kind: str, url: str) -> list[dict[str, Any]]:
    if not isinstance(data, dict) or data.get("resultType") != kind or not isinstance(data.get("result"), list):
        raise InputError(f"expected a {kind} result", location=url)
    return data["result"]


def _error_text(body: bytes) -> str:
    try:
        data = json.loads(body)
        return f"{data.get('errorType', 'error')}: {str(data.get('error', ''))[:200]}"
    except (ValueError, UnicodeDecodeError, AttributeError):
        return body[:120].decode("utf-8", "replace").strip() or "(empty answer)"


def read_prometheus(url: str, start_s: float, end_s: float, step_s: float, catalog: Any,
                    client: PrometheusClient | None = None) -> Telemetry:
    """Rates of every mapped metric between ``start_s`` and ``end_s`` at ``step_s`` (see module doc)."""
    if not (math.isfinite(start_s) and math.isfinite(end_s)) or end_s <= start_s:
        raise InputError("--end must be after --start", location="--end")
    if not math.isfinite(step_s) or step_s <= 0:
        raise InputError(f"--step must be > 0 s, got {step_s:g}", location="--step")
    if (end_s - start_s) / step_s > MAX_POINTS:
        raise InputError(f"{(end_s - start_s) / step_s:,.0f} steps: Prometheus answers at most {MAX_POINTS:,} points "
                         "per series; raise --step or narrow the range", location="--step")
    client = client or PrometheusClient(url)
    steps = defaults.number("health.rate_window_steps", catalog, lo=1, hi=1000)
    window_s = max(step_s * steps, 1.0)
    window = f"{int(math.ceil(window_s))}s"
    from fabricplan.ops.health.checks._common import USED_COUNTERS

    names = [n for n in client.metric_names(start_s, end_s)
             if (m := map_metric(n, {}, "?", catalog)) is not None and m[0] in USED_COUNTERS]
    if not names:
        raise InputError(f"no node_infiniband_*, node_ethtool_* or infiniband_*_port_* metric between "
                         f"{start_s:.0f} and {end_s:.0f} (a time range with no data?)", location=url)
    series: list[Series] = []
    set_aside: list[str] = []  # what was not used, and why (each naming the query)
    unknown: dict[str, int] = {}  # query -> rates that were NaN, infinite or negative
    empty: dict[str, list[str]] = {}  # query -> ports on which no rate was usable
    span = f"{int(math.ceil(end_s - start_s))}s"
    for name in names:
        results = client.query_range(f"rate({name}[{window}])", start_s, end_s, step_s)
        resets = {_key(r["metric"]): _float(r["value"][1]) for r in client.query(f"resets({name}[{span}])", end_s)}
        tops: dict[tuple, float] = {}
        sample_map = map_metric(name, {}, "?", catalog)
        top = saturation_value(sample_map[5]) if sample_map else None
        if top is not None:
            tops = {_key(r["metric"]): _float(r["value"][1])
                    for r in client.query(f"max_over_time({name}[{span}])", end_s)}
        for r in results:
            labels = {k: str(v) for k, v in r.get("metric", {}).items()}
            mapped = map_metric(name, labels, labels.get("instance", "?"), catalog)
            values = r.get("values") or []
            if mapped is None or len(values) < 2:
                continue
            t = np.array([_float(v[0]) for v in values])
            rate = np.array([_float(v[1]) for v in values])
            counter, host, device, port, prio, width = mapped
            where = f"{url} rate({name}[{window}])"
            entity = entity_name(host, device, port)
            if not np.isfinite(t).all() or (np.diff(t) <= 0).any():
                set_aside.append(f"{where} on {entity}: timestamps run backwards (or repeat), so no interval is "
                                 "known; the series is not judged")
                continue
            bad = ~np.isfinite(rate) | (rate < 0)
            if bad[1:].any():
                unknown[where] = unknown.get(where, 0) + int(bad[1:].sum())
            rate = np.where(bad, np.nan, rate)
            if np.count_nonzero(~bad[1:]) == 0:
                empty.setdefault(where, []).append(entity)
                continue
            # an unknown rate leaves its interval unknown (NaN), not the rest of the series
            dt = np.diff(t)
            steps = rate[1:] * dt
            cumulative = np.concatenate(([0.0], np.cumsum(np.nan_to_num(steps, nan=0.0))))
            cumulative[1:][np.isnan(steps)] = np.nan
            s = Series(counter, host, device, port, prio, t, cumulative, where, width_bits=width, from_rate=True)
            s.resets_seen = int(resets.get(_key(labels), 0) or 0)
            if top is not None and tops.get(_key(labels)) == top:
                s.saturated_from_s = _saturated_since(client, name, labels, top, start_s, end_s, step_s)
            series.append(s)
    for where, count in unknown.items():
        set_aside.append(f"{where}: {count:,} rate{'s' if count != 1 else ''} NaN, infinite or negative, "
                         "read as unknown (not as zero)")
    for where, entities in empty.items():
        shown = ", ".join(entities[:3]) + (f" and {len(entities) - 3} more" if len(entities) > 3 else "")
        set_aside.append(f"{where}: no usable rate on {shown}; not judged")
    if not series:
        if set_aside:
            raise InputError("could not judge: no usable reading (" + "; ".join(set_aside[:3]) + ")", location=url)
        raise InputError(f"no samples between {start_s:.0f} and {end_s:.0f} at step {step_s:g} s "
                         "(a time range with no data?)", location=url)
    return Telemetry(series, [url], set_aside)


def _saturated_since(client: PrometheusClient, name: str, labels: dict[str, str], top: float, start_s: float,
                     end_s: float, step_s: float) -> float:
    selector = ",".join(f'{k}="{_escape(v)}"' for k, v in sorted(labels.items()) if k != "__name__")
    raw = client.query_range(f"{name}{{{selector}}}", start_s, end_s, step_s)
    for r in raw:
        for t, v in r.get("values") or []:
            if _float(v) == top:
                return _float(t)
    return start_s


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _key(labels: dict[str, Any]) -> tuple:
    return tuple(sorted((k, str(v)) for k, v in labels.items() if k != "__name__"))


def _float(text: Any) -> float:
    try:
        return float(text)
    except (TypeError, ValueError):
        return float("nan")
