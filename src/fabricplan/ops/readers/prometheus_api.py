"""A live Prometheus server over its HTTP API into ``ops.telemetry`` (rates computed with PromQL).

For every exporter metric fabricplan maps (``prom_text.map_metric``) that the server holds in the
range, one ``query_range`` of ``rate(METRIC[W])`` (``W`` = ``rate_window_steps`` x step) gives
per-second rates at each step; they are integrated back into a counter-like series
(``c[i] = c[i-1] + rate[i] * (t[i] - t[i-1])``, ``from_rate``) so that every check reads the same
model as from files. Counter hygiene comes from PromQL too: ``resets(METRIC[range])`` and, for
counters with a saturating field width, ``max_over_time`` (then the raw series, to find when).

The HTTP client is ``requests`` with urllib3's ``Retry`` (imported when a server is read): a
connection error, a garbled answer, HTTP 429 or a 5xx is retried :data:`RETRIES` times with
exponential backoff (:data:`BACKOFF_S` x 2^(n-1), the first retry at once), never past the
request's deadline. Each request has a connect timeout, a read timeout (the longest silence) and
an overall deadline (``health.prometheus_*`` in ``ops_defaults``; the deadline also
``--prometheus-deadline``), held by a waiting thread: a server that drips a byte now and then
(status line, headers or body) fails at the deadline, not never. The body is read up to :data:`MAX_BODY_BYTES`, uncompressed
(``Accept-Encoding: identity``: no decompression bomb), parsed by the bounded JSON reader of
:mod:`fabricplan.io` (nesting depth, duplicate keys, huge numbers), and its shape checked: every
malformed answer (``metric`` not an object, a vector without ``value``, a short pair, a value that
is not a number) is one InputError naming the URL, the query and the series.

Errors (server down, an HTTP or PromQL error, a range with no data) are InputErrors naming the
URL, with the server's own text shown printable (``errors.printable``); nothing is reported as
healthy when nothing was read.
"""

from __future__ import annotations

import math
import threading
import time
import urllib.parse
from dataclasses import dataclass
from typing import Any

import numpy as np

from fabricplan.errors import InputError, printable
from fabricplan.ops import defaults
from fabricplan.ops.readers.prom_text import map_metric
from fabricplan.ops.telemetry import Series, Telemetry, entity_name, saturation_value

#: Prometheus refuses range queries of more than 11,000 points per series (its API docs).
MAX_POINTS = 11_000
#: Program limit: the largest answer read (a range query over 11,000 steps of a few hundred ports
#: is tens of MB); larger: narrow the range or raise --step.
MAX_BODY_BYTES = 64 * 1024 * 1024
#: Program settings: retries of a failed request (connection error, garbled answer, HTTP 429 or
#: 5xx) and the backoff factor [s] (urllib3 ``Retry``: sleeps 0, 2 x, 4 x ... this, within the deadline).
RETRIES = 3
BACKOFF_S = 0.5
#: HTTP statuses retried (Prometheus answers 503 while starting, 429/502/504 behind a proxy).
RETRY_STATUSES = (429, 500, 502, 503, 504)
#: Bytes read at a time: a read returns what has arrived, so the deadline is checked as bytes drip in.
READ_CHUNK_BYTES = 64 * 1024
_PREFIXES = ("node_infiniband_", "node_ethtool_", "infiniband_hca_port_", "infiniband_switch_port_")


@dataclass(frozen=True)
class Timeouts:
    """Seconds a request may take: to connect, between two bytes of the answer, in all."""

    connect_s: float
    read_s: float
    deadline_s: float

    @classmethod
    def of(cls, catalog: Any, deadline_s: float | None = None) -> Timeouts:
        """The ``health.prometheus_*`` defaults of ``catalog``; ``deadline_s`` (the flag) replaces the deadline."""
        read = {name: defaults.number(f"health.prometheus_{name}", catalog, lo=0.001, hi=86400.0)
                for name in ("connect_timeout_s", "read_timeout_s", "request_deadline_s")}
        if deadline_s is not None and not (math.isfinite(deadline_s) and 0 < deadline_s <= 86400.0):
            raise InputError(f"must be above 0 s and at most a day, got {deadline_s:g} s", location="--prometheus-deadline")
        return cls(read["connect_timeout_s"], read["read_timeout_s"],
                   read["request_deadline_s"] if deadline_s is None else deadline_s)


def _retry_class():
    """urllib3's ``Retry`` that gives up once the request's deadline has passed and never sleeps
    past it (a server's ``Retry-After`` included)."""
    from urllib3.util.retry import Retry

    class DeadlineRetry(Retry):
        deadline = math.inf  # time.monotonic() by which the request must be done

        def new(self, **kw: Any) -> DeadlineRetry:
            retry = super().new(**kw)
            retry.deadline = self.deadline
            return retry

        def _left_s(self) -> float:
            return max(0.0, self.deadline - time.monotonic())

        def is_exhausted(self) -> bool:
            return super().is_exhausted() or self._left_s() <= 0

        def get_backoff_time(self) -> float:
            return min(super().get_backoff_time(), self._left_s())

        def get_retry_after(self, response: Any) -> float | None:
            after = super().get_retry_after(response)
            return None if after is None else min(after, self._left_s())

    return DeadlineRetry


class PrometheusClient:
    """The few HTTP API calls health needs (``/api/v1/label/__name__/values``, ``query``, ``query_range``)."""

    def __init__(self, url: str, timeouts: Timeouts, retries: int = RETRIES, backoff_s: float = BACKOFF_S) -> None:
        parsed = urllib.parse.urlparse(url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise InputError(f"expected an http(s) URL such as http://prometheus:9090, got '{printable(url, 60)}'",
                             location="--prometheus")
        if not printable(url) == url:
            raise InputError(f"the URL holds control characters: '{printable(url, 60)}'", location="--prometheus")
        self.url = url.rstrip("/")
        self.timeouts = timeouts
        self.retries = retries
        self.backoff_s = backoff_s
        self._session, self._adapter = _new_session()

    def get(self, path: str, params: dict[str, Any]) -> Any:
        """The ``data`` of a successful API answer to ``GET path?params`` (module docstring)."""
        deadline = time.monotonic() + self.timeouts.deadline_s
        retry = _retry_class()(total=self.retries, connect=self.retries, read=self.retries, status=self.retries,
                               other=0, redirect=5, status_forcelist=RETRY_STATUSES, backoff_factor=self.backoff_s,
                               allowed_methods=frozenset({"GET"}), raise_on_status=False)
        retry.deadline = deadline
        self._adapter.max_retries = retry
        status, body = self._fetch(path, params, deadline)
        where = f"{self.url}{path}"
        if status != 200:
            raise InputError(f"Prometheus answered HTTP {status}: {_error_text(body)} (asked {path})", location=self.url)
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(f"answer to {path} is not UTF-8 JSON (is this a Prometheus server?)",
                             location=self.url) from None
        from fabricplan.io import parse_text

        try:
            data = parse_text(text, where, as_json=True)
        except InputError as exc:
            hint = "" if text.lstrip().startswith(("{", "[")) else " (is this a Prometheus server?)"
            raise InputError(f"answer to {path} is not JSON{hint}: {exc.message}", location=exc.location) from None
        if not isinstance(data, dict) or data.get("status") != "success":
            raise InputError(f"Prometheus error: {_error_text(body, data)}", location=self.url)
        if "data" not in data:
            raise InputError(f"answer to {path} has no 'data'", location=self.url)
        return data["data"]

    def _fetch(self, path: str, params: dict[str, Any], deadline: float) -> tuple[int, bytes]:
        """(HTTP status, body) of one request (:meth:`_fetch_now`) within the deadline, which a
        waiting thread holds exactly: a server dripping its status line, headers or body a byte at
        a time never resets it. A request past it is abandoned (its session closed, its daemon
        thread ends at the server's next byte or read timeout) and the next one opens a new session."""
        outcome: dict[str, Any] = {}
        done = threading.Event()

        def work() -> None:
            try:
                outcome["value"] = self._fetch_now(path, params, deadline)
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
                outcome["error"] = exc
            finally:
                done.set()

        threading.Thread(target=work, name="fabricplan-prometheus", daemon=True).start()
        if not done.wait(max(0.0, deadline - time.monotonic())):
            stale = self._session
            self._session, self._adapter = _new_session()
            stale.close()
            raise InputError(f"no whole answer to {path} within {self.timeouts.deadline_s:g} s "
                             "(--prometheus-deadline)", location=self.url)
        if "error" in outcome:
            raise outcome["error"]
        return outcome["value"]

    def _fetch_now(self, path: str, params: dict[str, Any], deadline: float) -> tuple[int, bytes]:
        """(HTTP status, body) of one request, retried and bounded (module docstring); every failure
        one InputError naming the URL."""
        import requests
        import urllib3.exceptions

        t = self.timeouts
        timeout = (min(t.connect_s, t.deadline_s), min(t.read_s, t.deadline_s))
        try:
            response = self._session.get(f"{self.url}{path}", params=params, timeout=timeout, stream=True)
        except requests.exceptions.ConnectTimeout:
            raise InputError(f"cannot reach Prometheus: no connection within {timeout[0]:g} s", location=self.url) from None
        except requests.exceptions.ReadTimeout:
            raise InputError(f"Prometheus did not answer {path} within {timeout[1]:g} s", location=self.url) from None
        except (requests.exceptions.RequestException, urllib3.exceptions.HTTPError, OSError, ValueError) as exc:
            raise InputError(f"cannot reach Prometheus: {_reason(exc)}", location=self.url) from None
        with response:
            length = response.headers.get("Content-Length", "")
            if length.isdigit() and int(length) > MAX_BODY_BYTES:
                raise InputError(_too_large(path), location=self.url)
            chunks: list[bytes] = []
            size = 0
            try:
                while True:
                    if time.monotonic() > deadline:
                        raise InputError(f"no whole answer to {path} within {t.deadline_s:g} s "
                                         "(--prometheus-deadline)", location=self.url)
                    chunk = response.raw.read1(READ_CHUNK_BYTES)
                    if not chunk:
                        break
                    chunks.append(chunk)
                    size += len(chunk)
                    if size > MAX_BODY_BYTES:
                        raise InputError(_too_large(path), location=self.url)
            except (urllib3.exceptions.ReadTimeoutError, TimeoutError):
                raise InputError(f"Prometheus stopped answering {path} (silent for {timeout[1]:g} s)",
                                 location=self.url) from None
            except (urllib3.exceptions.HTTPError, requests.exceptions.RequestException, OSError, ValueError) as exc:
                raise InputError(f"broken answer to {path}: {_reason(exc)}", location=self.url) from None
            return response.status_code, b"".join(chunks)

    def metric_names(self, start_s: float, end_s: float) -> list[str]:
        match = '{__name__=~"' + "|".join(p + ".+" for p in _PREFIXES) + '"}'
        path = "/api/v1/label/__name__/values"
        names = self.get(path, {"match[]": match, "start": start_s, "end": end_s})
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise InputError(f"answer to {path}: 'data' must be a list of metric names", location=self.url)
        return names

    def query_range(self, promql: str, start_s: float, end_s: float, step_s: float) -> list[dict[str, Any]]:
        """The series of a range query (``{"metric": labels, "values": [[t, "v"], ...]}``, shape-checked)."""
        data = self.get("/api/v1/query_range", {"query": promql, "start": start_s, "end": end_s, "step": step_s})
        return _series(data, "matrix", promql, self.url)

    def query(self, promql: str, at_s: float) -> list[dict[str, Any]]:
        """The series of an instant query (``{"metric": labels, "value": [t, "v"]}``, shape-checked)."""
        return _series(self.get("/api/v1/query", {"query": promql, "time": at_s}), "vector", promql, self.url)


def _new_session() -> tuple[Any, Any]:
    """A ``requests`` session (and its adapter, whose ``max_retries`` each request sets) asking for
    JSON, uncompressed, following at most 5 redirects."""
    import requests
    from requests.adapters import HTTPAdapter

    session = requests.Session()
    session.max_redirects = 5
    session.headers.update({"Accept": "application/json", "Accept-Encoding": "identity"})
    adapter = HTTPAdapter()
    for scheme in ("http://", "https://"):
        session.mount(scheme, adapter)
    return session, adapter


def _too_large(path: str) -> str:
    from fabricplan.units import format_bytes

    return f"answer to {path} is larger than {format_bytes(MAX_BODY_BYTES)}: narrow the range or raise --step"


def _reason(exc: BaseException) -> str:
    """The innermost cause of a requests/urllib3 failure, on one printable line."""
    import http.client

    for _ in range(8):
        inner = getattr(exc, "reason", None)
        if not isinstance(inner, BaseException):
            inner = next((a for a in exc.args if isinstance(a, BaseException)), None)
        if inner is None:
            break
        exc = inner
    if isinstance(exc, http.client.BadStatusLine):
        return f"not an HTTP answer (status line '{printable(str(exc.args[0] if exc.args else ''), 60)}')"
    if isinstance(exc, http.client.IncompleteRead):
        return "the answer ended before its announced length (truncated)"
    text = str(exc)
    # urllib3's NewConnectionError reads "<HTTPConnection object at 0x..>: Failed to establish ...: [Errno 111] ..."
    if ": " in text and text.startswith("<"):
        text = text.split(": ", 1)[1]
    text = text.split("Failed to establish a new connection: ", 1)[-1]
    return printable(text or type(exc).__name__, 160)


def _series(data: Any, kind: str, promql: str, url: str) -> list[dict[str, Any]]:
    """The series of a ``matrix`` (``values``) or ``vector`` (``value``) result, each checked to be
    ``{"metric": {label: "text"}, "values": [[time, "number"], ...]}`` (or one ``"value"`` pair);
    one InputError naming the query and the series for each malformed case."""
    if not isinstance(data, dict) or data.get("resultType") != kind:
        got = data.get("resultType") if isinstance(data, dict) else type(data).__name__
        raise InputError(f"{promql}: expected a {kind} result, got '{printable(got, 30)}'", location=url)
    result = data.get("result")
    if not isinstance(result, list):
        raise InputError(f"{promql}: 'result' must be a list, got {type(result).__name__}", location=url)
    field = "values" if kind == "matrix" else "value"
    for index, item in enumerate(result):
        where = f"{promql}: series {index + 1}"
        if not isinstance(item, dict):
            raise InputError(f"{where} must be an object, got {type(item).__name__}", location=url)
        labels = item.get("metric")
        if not isinstance(labels, dict):
            shown = "none" if labels is None else f"a {type(labels).__name__}"
            raise InputError(f"{where}: 'metric' must be an object of labels, got {shown}", location=url)
        if not all(isinstance(v, str) for v in labels.values()):
            raise InputError(f"{where}: every label value in 'metric' must be a string", location=url)
        if field not in item:
            raise InputError(f"{where} has no '{field}'", location=url)
        if kind == "matrix":
            if not isinstance(item[field], list):
                raise InputError(f"{where}: 'values' must be a list, got {type(item[field]).__name__}", location=url)
            for pair in item[field]:
                _point(pair, where, url)
        else:
            _point(item[field], where, url)
    return result


def _point(pair: Any, where: str, url: str) -> tuple[float, float]:
    """``[time, "value"]`` -> (time, value); Prometheus writes values as strings ("NaN", "+Inf" included)."""
    if not isinstance(pair, list) or len(pair) != 2:
        shown = f"{len(pair)} items" if isinstance(pair, list) else f"a {type(pair).__name__}"
        raise InputError(f"{where}: each value must be [time, \"number\"], got {shown}", location=url)
    stamp, value = pair
    if isinstance(stamp, bool) or not isinstance(stamp, (int, float)) or not math.isfinite(stamp):
        raise InputError(f"{where}: time must be a number, got {printable(repr(stamp), 30)}", location=url)
    if not isinstance(value, str):
        raise InputError(f"{where}: value must be a string such as \"1.5\", got {printable(repr(value), 30)}",
                         location=url)
    try:
        number = float(value) if len(value) <= 64 else None
    except ValueError:
        number = None
    if number is None:
        raise InputError(f"{where}: value '{printable(value, 30)}' is not a number", location=url)
    return float(stamp), number


def _error_text(body: bytes, data: Any = None) -> str:
    """A server's error on one printable line: ``errorType: error`` of a JSON answer, else its first bytes."""
    if data is None:
        try:
            import json

            data = json.loads(body[:64 * 1024])
        except (ValueError, UnicodeDecodeError, RecursionError):
            data = None
    if isinstance(data, dict) and ("error" in data or "errorType" in data):
        return printable(f"{data.get('errorType', 'error')}: {data.get('error', '')}", 200)
    text = body[:120].decode("utf-8", "replace").strip()
    return printable(text, 120) or "(empty answer)"


def read_prometheus(url: str, start_s: float, end_s: float, step_s: float, catalog: Any,
                    client: PrometheusClient | None = None, deadline_s: float | None = None) -> Telemetry:
    """Rates of every mapped metric between ``start_s`` and ``end_s`` at ``step_s`` (see module doc);
    ``deadline_s``: each request's deadline (default ``health.prometheus_request_deadline_s``)."""
    if not (math.isfinite(start_s) and math.isfinite(end_s)) or end_s <= start_s:
        raise InputError("--end must be after --start", location="--end")
    if not math.isfinite(step_s) or step_s <= 0:
        raise InputError(f"--step must be > 0 s, got {step_s:g}", location="--step")
    if (end_s - start_s) / step_s > MAX_POINTS:
        raise InputError(f"{(end_s - start_s) / step_s:,.0f} steps: Prometheus answers at most {MAX_POINTS:,} points "
                         "per series; raise --step or narrow the range", location="--step")
    client = client or PrometheusClient(url, Timeouts.of(catalog, deadline_s))
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
            entity = printable(entity_name(host, device, port))
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
