"""The one time-series model of fabric telemetry: counters (and RTT samples) per host/device/port/priority.

Every telemetry reader (``ops/readers/telemetry.py``, ``prom_text.py``, ``prometheus_api.py``)
fills :class:`Series`; the health checks (``ops/health``) read only these. Counter names are
canonical: the mlx5/sysfs names (``ethtool -S``, ``hw_counters``, ``counters/``) with the priority
moved to a label (``rx_prio3_pause`` -> counter ``rx_pause``, priority 3). Exporter and perfquery
names are mapped onto them by the readers (reference/ops_formats.md section 4). Host, device and
port names come from captures and servers, so a :class:`Series` keeps them printable
(``errors.printable``: an ESC or NUL in a host name is shown as ``\x1b``, never sent raw to a terminal).

Counter arithmetic (pure functions on numpy arrays):

* increase over an interval = ``v[i] - v[i-1]``; a value below the previous one is a **reset**
  (driver reload, ``perfquery -R``): the counter restarted from zero, so the increase is ``v[i]``
  (as Prometheus's ``rate()`` counts it);
* a counter with a known field width ``w`` (non-extended InfiniBand PortCounters) **saturates**:
  it stops at ``2^w - 1`` (IBA Vol. 1, PortCounters), so from the first sample at that value on
  its increases are unknown (NaN), never zero - a stuck counter must not read as healthy.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fabricplan.errors import InputError, printable

COUNTER = "counter"  # monotone counter (may reset or saturate)
SAMPLE = "sample"  # one measurement per time (RTT samples)


@dataclass(slots=True)
class Series:
    """One counter (or sample stream) of one host/device/port/priority over time.

    ``t_s`` is sorted seconds since the epoch; ``values`` the counter readings. ``from_rate``: the
    values were integrated from PromQL ``rate()`` (resets already handled by Prometheus).
    ``width_bits``: the counter saturates at ``2^width_bits - 1``.
    """

    counter: str
    host: str
    device: str
    port: str
    priority: int | None
    t_s: np.ndarray
    values: np.ndarray
    source: str
    kind: str = COUNTER
    width_bits: int | None = None
    from_rate: bool = False
    # Hygiene a live Prometheus reports (the rate() values hide it): resets() in the range, and the
    # time the raw counter first read its saturation value.
    resets_seen: int = 0
    saturated_from_s: float | None = None
    # increases() of this series, computed once (not copied by dataclasses.replace)
    _increases: Any = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # names read from untrusted text: control characters escaped once, here (the fast path:
        # str.isprintable is true for every ordinary name)
        for name in ("host", "device", "port"):
            text = getattr(self, name)
            if not text.isprintable():
                setattr(self, name, printable(text))

    @property
    def entity(self) -> str:
        return entity_name(self.host, self.device, self.port)

    @property
    def label(self) -> str:
        return self.counter if self.priority is None else f"{self.counter}[prio{self.priority}]"


def entity_name(host: str, device: str, port: str) -> str:
    """``node01:mlx5_0/1``; a port-less device is ``node01:eth2``; an RTT pair ``a -> b``."""
    if device == "rtt":
        return f"{host} -> {port}"
    if not port:
        return f"{host}:{device}"
    return f"{host}:{device}/{port}"


@dataclass
class PortTelemetry:
    """Every counter of one host/device/port (the unit the port checks run on)."""

    host: str
    device: str
    port: str
    counters: dict[tuple[str, int | None], Series] = field(default_factory=dict)
    start_s: float = 0.0
    end_s: float = 0.0
    _names: set[str] | None = field(default=None, repr=False, compare=False)
    # against the model (ops.health.expected): the port's load and what the design gives there
    load: Any = field(default=None, repr=False, compare=False)
    expected: Any = field(default=None, repr=False, compare=False)

    @property
    def name(self) -> str:
        return entity_name(self.host, self.device, self.port)

    def get(self, counter: str, priority: int | None = None) -> Series | None:
        return self.counters.get((counter, priority))

    def priorities(self, counter: str) -> list[int]:
        return sorted(p for (c, p) in self.counters if c == counter and p is not None)

    def has_any(self, names: Iterable[str]) -> bool:
        if self._names is None or len(self._names) != len(self.counters):
            self._names = {c for (c, _p) in self.counters}
        return not self._names.isdisjoint(names)


@dataclass
class RttPair:
    """RTT samples of one source -> destination pair, with the baseline it is judged against."""

    src: str
    dst: str
    series: Series
    baseline_us: float | None = None
    baseline_source: str | None = None
    start_s: float = 0.0
    end_s: float = 0.0
    load: Any = field(default=None, repr=False, compare=False)
    expected: Any = field(default=None, repr=False, compare=False)

    @property
    def name(self) -> str:
        return entity_name(self.src, "rtt", self.dst)


@dataclass
class Telemetry:
    """Everything read: counter series and RTT samples, plus where they came from."""

    series: list[Series] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    # what a reader set aside and why (readings it could not use), each naming its source
    notes: list[str] = field(default_factory=list)

    def extend(self, other: Telemetry) -> None:
        self.series.extend(other.series)
        self.sources.extend(other.sources)
        self.notes.extend(other.notes)

    def span(self) -> tuple[float, float]:
        starts = [float(s.t_s[0]) for s in self.series if len(s.t_s)]
        ends = [float(s.t_s[-1]) for s in self.series if len(s.t_s)]
        return (min(starts), max(ends)) if starts else (0.0, 0.0)

    def ports(self) -> list[PortTelemetry]:
        """Counter series grouped by host/device/port (RTT samples excluded), in first-seen order."""
        out: dict[tuple[str, str, str], PortTelemetry] = {}
        for s in self.series:
            if s.kind != COUNTER:
                continue
            key = (s.host, s.device, s.port)
            port = out.get(key)
            if port is None:
                port = out[key] = PortTelemetry(s.host, s.device, s.port)
            port.counters[(s.counter, s.priority)] = s
        for port in out.values():
            port.start_s = min(float(s.t_s[0]) for s in port.counters.values())
            port.end_s = max(float(s.t_s[-1]) for s in port.counters.values())
        return list(out.values())

    def rtt_pairs(self) -> list[RttPair]:
        pairs = []
        for s in self.series:
            if s.kind == SAMPLE and s.counter == "rtt_us":
                pairs.append(RttPair(s.host, s.port, s, start_s=float(s.t_s[0]), end_s=float(s.t_s[-1])))
        return pairs


class SeriesBuilder:
    """Collects (time, value) points per series key from many snapshots, then builds sorted arrays.

    A repeated timestamp keeps the first reading (the same snapshot given twice). With ``where``
    (the reading's ``file:line``), a reading older than the previous one of the same counter is an
    InputError: a capture's clock ran backwards, so its intervals (and every rate) are unknown.
    """

    def __init__(self) -> None:
        self._points: dict[tuple, tuple[list[float], list[float], str, dict[str, Any]]] = {}

    def add(self, counter: str, host: str, device: str, port: str, priority: int | None, t_s: float, value: float,
            source: str, *, where: str | None = None, **extra: Any) -> None:
        key = (counter, host, device, port, priority)
        slot = self._points.get(key)
        if slot is None:
            slot = self._points[key] = ([], [], source, extra)
        elif where is not None and t_s < slot[0][-1]:
            raise InputError(f"snapshot time {t_s:.0f} (epoch s) is before the previous snapshot of "
                             f"{entity_name(host, device, port)} ({slot[0][-1]:.0f}): timestamps run backwards, so "
                             "no interval (no rate) is known; capture in time order (or fix the clock)",
                             location=where)
        slot[0].append(t_s)
        slot[1].append(value)

    def build(self, kind: str = COUNTER) -> list[Series]:
        out = []
        for (counter, host, device, port, priority), (ts, vs, source, extra) in self._points.items():
            t = np.asarray(ts, dtype=float)
            v = np.asarray(vs, dtype=float)
            order = np.argsort(t, kind="stable")
            t, v = t[order], v[order]
            if len(t) > 1:
                keep = np.concatenate(([True], np.diff(t) > 0))
                t, v = t[keep], v[keep]
            out.append(Series(counter, host, device, port, priority, t, v, source, kind=kind, **extra))
        return out


# --- counter arithmetic --------------------------------------------------------------------------

@dataclass(slots=True)
class Increases:
    """Per-interval increases of one counter: ``dv[i]`` over ``(t[i], t[i+1]]`` lasting ``dt[i]``.

    ``resets`` are the sample indices where the counter went backwards; ``saturated_at`` the first
    index at the counter's maximum (its increases from there on are NaN: unknown).
    """

    dv: np.ndarray
    dt: np.ndarray
    t_end: np.ndarray
    resets: np.ndarray
    saturated_at: int | None
    _stats: tuple[float, float, float, float] | None = None  # total, known seconds, peak rate, its time

    def _window(self) -> tuple[float, float, float, float]:
        if self._stats is None:
            nan = float("nan")
            dv, dt = self.dv, self.dt
            if not len(dv):
                self._stats = (nan, 0.0, nan, nan)
                return self._stats
            missing = np.isnan(dv)
            rates = dv / dt
            if missing.any():
                if missing.all():
                    self._stats = (nan, 0.0, nan, nan)
                    return self._stats
                known = ~missing
                total, seconds = float(dv[known].sum()), float(dt[known].sum())
                i = int(np.nanargmax(rates))
            else:
                total, seconds = float(dv.sum()), float(dt.sum())
                i = int(rates.argmax())
            self._stats = (total, seconds, float(rates[i]), float(self.t_end[i]))
        return self._stats

    @property
    def known(self) -> bool:
        return self._window()[1] > 0 or (len(self.dv) > 0 and not math.isnan(self._window()[0]))

    def total(self) -> float:
        """Sum of the known increases (NaN if none is known)."""
        return self._window()[0]

    def known_seconds(self) -> float:
        return self._window()[1]

    def mean_rate(self) -> float:
        """Known increase per known second [1/s] (NaN if nothing is known)."""
        total, seconds, _p, _t = self._window()
        return total / seconds if seconds > 0 else float("nan")

    def rates(self) -> np.ndarray:
        return self.dv / self.dt

    def peak_rate(self) -> tuple[float, float]:
        """The highest interval rate [1/s] and the time its interval ends (NaN, NaN if none)."""
        _total, _seconds, peak, at = self._window()
        return peak, at


def saturation_value(width_bits: int | None) -> float | None:
    """The value a counter of ``width_bits`` sticks at (``2^w - 1``), None for 64-bit/unknown."""
    if width_bits is None or width_bits >= 64:
        return None
    return float(2**width_bits - 1)


def increases(series: Series) -> Increases:
    """Per-interval increases of a counter, resets counted from zero and saturation as unknown.

    ``dv[i] = v[i+1] - v[i]``, or ``v[i+1]`` where the counter went backwards (a reset: it
    restarted from 0); once the counter reads its saturation value ``2^w - 1`` every later increase
    is NaN (the counter no longer counts).
    """
    if series._increases is None:
        series._increases = _increases(series)
    return series._increases


_DT_CACHE: dict[int, tuple[np.ndarray, np.ndarray]] = {}


def _diff_of_times(t: np.ndarray) -> np.ndarray:
    """``np.diff(t)``, computed once per time array (series read together share one)."""
    slot = _DT_CACHE.get(id(t))
    if slot is not None and slot[0] is t:
        return slot[1]
    if len(_DT_CACHE) > 64:
        _DT_CACHE.clear()
    dt = np.diff(t)
    _DT_CACHE[id(t)] = (t, dt)
    return dt


def _increases(series: Series) -> Increases:
    t, v = series.t_s, series.values
    if len(t) < 2:
        empty = np.zeros(0)
        return Increases(empty, empty, empty, np.zeros(0, dtype=int), None)
    dv = np.diff(v)
    back = dv < 0
    resets = np.flatnonzero(back) + 1
    if back.any() and not series.from_rate:
        dv = np.where(back, v[1:], dv)
    dt = _diff_of_times(t)
    saturated_at = None
    top = saturation_value(series.width_bits)
    if top is not None:
        hit = np.flatnonzero(v == top)
        if len(hit):
            saturated_at = int(hit[0])
            dv = dv.astype(float, copy=True)
            dv[saturated_at:] = np.nan  # from the saturated reading on, increases are unknown
    dv = dv.astype(float, copy=False)
    if series.saturated_from_s is not None:
        late = t[1:] > series.saturated_from_s
        if late.any():
            dv = dv.copy()
            dv[late] = np.nan
            saturated_at = int(np.flatnonzero(late)[0]) if saturated_at is None else saturated_at
    return Increases(dv, dt, t[1:], resets, saturated_at)


def prefill(series: list[Series], t: np.ndarray, matrix: np.ndarray) -> None:
    """Compute :func:`increases` (and their window statistics) of many counters sampled at the same
    times ``t`` (``matrix``: one row each, in the order of ``series``) in a few vectorised numpy
    operations instead of one set per counter. Counters with a field width or from rates are
    left to :func:`increases` (saturation needs the per-counter rule)."""
    if len(t) < 2 or not len(series):
        return
    dt = _diff_of_times(t)
    seconds = float(dt.sum())
    t_end = t[1:]
    no_resets = np.zeros(0, dtype=int)
    rows = 64  # a block of rows stays in cache across the passes below
    for first in range(0, len(series), rows):
        block = matrix[first:first + rows]
        dv = np.diff(block, axis=1)
        back = dv < 0
        rows_back = back.any(axis=1)
        if rows_back.any():
            dv = np.where(back, block[:, 1:], dv)
        rates = dv / dt
        finite = ~np.isnan(rates).any(axis=1)
        totals = dv.sum(axis=1)
        peaks = rates.argmax(axis=1)
        for offset, s in enumerate(series[first:first + rows]):
            if s.width_bits is not None or s.from_rate or s.saturated_from_s is not None or s._increases is not None:
                continue
            resets = np.flatnonzero(back[offset]) + 1 if rows_back[offset] else no_resets
            inc = Increases(dv[offset], dt, t_end, resets, None)
            if finite[offset]:
                i = int(peaks[offset])
                inc._stats = (float(totals[offset]), seconds, float(rates[offset, i]), float(t_end[i]))
            s._increases = inc


def summed_increases(parts: list[Series]) -> Increases | None:
    """Increases of a sum of counters sampled at the same times (e.g. the retransmit proxy's four
    counters): the per-interval sum, NaN where any part is unknown. None if ``parts`` is empty;
    parts sampled at other times are aligned to the first part's times by interpolation of their
    cumulative known increase."""
    if not parts:
        return None
    base = increases(parts[0])
    dv = base.dv.copy()
    for other in parts[1:]:
        inc = increases(other)
        if len(other.t_s) == len(parts[0].t_s) and np.array_equal(other.t_s, parts[0].t_s):
            dv = dv + inc.dv
        else:
            dv = dv + align(inc, other.t_s, parts[0].t_s)
    return Increases(dv, base.dt, base.t_end, base.resets, base.saturated_at)


def align(inc: Increases, t_from: np.ndarray, t_to: np.ndarray) -> np.ndarray:
    """Increases of one counter re-cut to the intervals of ``t_to`` (linear in its cumulative sum;
    NaN outside the counter's own time range)."""
    if len(t_from) < 2 or len(t_to) < 2:
        return np.full(max(len(t_to) - 1, 0), np.nan)
    cumulative = np.concatenate(([0.0], np.cumsum(np.nan_to_num(inc.dv))))
    at = np.interp(t_to, t_from, cumulative, left=np.nan, right=np.nan)
    return np.diff(at)


def runs(mask: np.ndarray) -> Iterator[tuple[int, int]]:
    """``(start, stop)`` index ranges of consecutive True values of ``mask``."""
    if not len(mask):
        return
    padded = np.concatenate(([False], mask.astype(bool), [False]))
    edges = np.flatnonzero(np.diff(padded.astype(np.int8)))
    for start, stop in zip(edges[::2], edges[1::2], strict=True):
        yield int(start), int(stop)


def quantile(values: np.ndarray, q: float) -> float:
    """The ``q`` quantile of the samples (numpy's default linear interpolation)."""
    return float(np.quantile(values, q))


# --- saved model (.npz) ----------------------------------------------------------------------------

def save_npz(telemetry: Telemetry, path: str | Path) -> None:
    """Write the model to one ``.npz`` (numpy's zip of arrays): a fast re-read for large captures,
    whole or not at all (:func:`fabricplan.io.atomic_output`; an unwritable path is one InputError).

    Series sampled at the same times are stored as one time array ``t{j}`` and one matrix of
    values ``v{j}`` (a row each); ``meta`` (JSON) names each series' group and row."""
    import json

    groups: dict[bytes, list[int]] = {}
    for i, s in enumerate(telemetry.series):
        groups.setdefault(s.t_s.tobytes(), []).append(i)
    arrays: dict[str, np.ndarray] = {}
    meta: list[list[Any]] = [[] for _ in telemetry.series]
    for j, members in enumerate(groups.values()):
        arrays[f"t{j}"] = telemetry.series[members[0]].t_s
        arrays[f"v{j}"] = np.vstack([telemetry.series[i].values for i in members])
        for row, i in enumerate(members):
            s = telemetry.series[i]
            meta[i] = [s.counter, s.host, s.device, s.port, -1 if s.priority is None else s.priority, s.source,
                       s.kind, -1 if s.width_bits is None else s.width_bits, int(s.from_rate), j, row]
    arrays["meta"] = np.frombuffer(json.dumps({"series": meta, "sources": telemetry.sources}).encode(), dtype=np.uint8)
    from fabricplan.io import atomic_output

    with atomic_output(path, what="telemetry file") as handle:
        np.savez(handle, **arrays)
