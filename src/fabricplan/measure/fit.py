"""Fit the calibratable catalog parameters to measured nccl-tests rows (numpy least squares).

The model is the planning side's own collective model (:func:`fabricplan.perf.collectives.collective_time`)
on the measured system (:mod:`fabricplan.measure.system`), evaluated on a catalog whose calibratable
values (:mod:`fabricplan.measure.calibratable`) are set by dotted path. For parameters
``theta`` the residual of row ``i`` is the log ratio ``r_i = ln(t_model_i(theta) / t_measured_i)``,
so an 8-byte latency and an 8-GiB bandwidth row weigh alike. The fit minimises ``sum r_i^2`` with
Levenberg-Marquardt steps on ``u = ln theta`` (Jacobian by forward differences, each step solved
with ``numpy.linalg.lstsq``), projected onto the bounds. Uncertainty: ``cov(u) = s^2 (J^T J)^-1``
with ``s^2 = SSR / (m - p)`` at the solution (parameters at a bound are held there and get none),
``sd(theta) = theta x sd(u)`` (Bates & Watts, *Nonlinear Regression Analysis*, 1988, ch. 2).

Rows left out, each with its reason: wrong values (``#wrong > 0``), an unknown collective or rank
count, a row the model cannot run, and after a first fit outliers with ``|r| > max(OUTLIER_FLOOR,
OUTLIER_MADS x median |r|)``.

Cross-validation: fit on every other size and predict the rest; fit on the smaller node counts
and predict the largest when the logs hold several (extrapolation to scale).
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field, replace

from fabricplan.errors import InputError
from fabricplan.measure.calibratable import (
    PINNED_REFERENCE_ID,
    Calibratable,
    calibratable_parameters,
    pinned_reference,
    with_reference_pinned,
)
from fabricplan.measure.records import MeasurementLog

#: Program settings of the fit (not physical defaults): iterations, finite-difference step in ln theta,
#: and the outlier rule (a row whose model/measured ratio is off by more than e^0.5 = 1.65x and
#: 5 median deviations after a first fit is left out).
MAX_ITERATIONS = 40
DIFF_STEP = 1e-3
OUTLIER_FLOOR = 0.5
OUTLIER_MADS = 5.0


@dataclass(frozen=True)
class FitRow:
    """One measured row as the fit sees it."""

    file: str
    line: int
    operation: str
    size_bytes: int
    n_gpus: int
    ranks_per_node: int
    measured_us: float
    algorithm: str | None = None  # forced (NCCL_ALGO, TUNING line) or None = the model's choice
    protocol: str | None = None
    model_us: float | None = None
    model_algorithm: str | None = None
    reason: str | None = None  # why the row is left out (None: used)

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    @property
    def nodes(self) -> int:
        return self.n_gpus // max(self.ranks_per_node, 1)

    @property
    def error(self) -> float | None:
        """model / measured - 1."""
        return None if self.model_us is None else self.model_us / self.measured_us - 1.0


@dataclass(frozen=True)
class FittedParameter:
    name: str
    path: str
    unit: str
    initial: float
    value: float
    stddev: float | None
    lower: float
    upper: float
    status: str  # "fitted", "at lower bound", "at upper bound", "not fitted: ..."
    description: str = ""

    @property
    def fitted(self) -> bool:
        return not self.status.startswith("not fitted")


@dataclass(frozen=True)
class CrossValidation:
    name: str  # "every other size", "smaller node counts -> largest"
    fit_rows: int
    held_out_rows: int
    median_abs_error: float
    max_abs_error: float
    detail: str = ""


@dataclass(frozen=True)
class CalibrationResult:
    system: object
    parameters: tuple[FittedParameter, ...]
    rows: tuple[FitRow, ...]
    rms_log_error_before: float
    rms_log_error_after: float
    cross_validation: tuple[CrossValidation, ...]
    files: tuple[str, ...]
    pin: dict = field(default_factory=dict)
    #: Why the fit should not be trusted as it is (:func:`fit_warnings`); empty for a good fit.
    warnings: tuple[str, ...] = ()

    @property
    def used(self) -> list[FitRow]:
        return [r for r in self.rows if r.reason is None]

    @property
    def left_out(self) -> list[FitRow]:
        return [r for r in self.rows if r.reason is not None]

    def values(self) -> dict[str, float]:
        return {p.path: p.value for p in self.parameters if p.fitted}


def measured_rows(logs: list[MeasurementLog]) -> list[FitRow]:
    """Every nccl-tests row of ``logs`` as a FitRow, with the reason when it cannot be used."""
    rows: list[FitRow] = []
    for log in logs:
        for run in log.nccl_runs:
            forced_algo = run.debug.forced_algorithm
            forced_proto = run.debug.forced_protocol
            for row in run.rows:
                algo, proto = run.debug.algorithm_by_size.get(row.size_bytes, (forced_algo, forced_proto))
                reason = None
                if run.operation is None:
                    reason = (f"the collective of the run at line {run.line} is unknown (no *_perf command line, "
                              "file name or NCCL INFO line); pass --op")
                elif not run.ranks or not run.ranks_per_node:
                    reason = f"the run at line {run.line} lists no ranks ('Using devices')"
                elif row.time_us is None:
                    reason = "no time in the row"
                elif row.wrong > 0:
                    reason = f"{row.wrong:g} wrong values: the result failed nccl-tests' check"
                elif run.ranks < 2:
                    reason = "a collective needs at least 2 ranks"
                rows.append(FitRow(log.file, row.line, run.operation or "?", row.size_bytes, run.ranks or 0,
                                   run.ranks_per_node or 1, float(row.time_us or 0.0), algo, proto, reason=reason))
    return rows


class _Model:
    """Model times of a list of rows for given values of the calibratable paths."""

    def __init__(self, system, catalog) -> None:
        self.system, self.base = system, catalog
        self.evaluations = 0

    def catalog(self, values: dict[str, float]):
        return self.base.with_values(values) if values else self.base

    def results(self, rows: list[FitRow], values: dict[str, float]) -> list:
        catalog = self.catalog(values)
        network = self.system.network(catalog)
        out = []
        for row in rows:
            self.evaluations += 1
            out.append(self.system.collective(catalog, row.operation, row.size_bytes, row.n_gpus, row.ranks_per_node,
                                              algorithm=row.algorithm, protocol=row.protocol, network=network))
        return out

    def times(self, rows: list[FitRow], values: dict[str, float]):
        import numpy as np

        return np.array([r.time_us for r in self.results(rows, values)])


def _prepare(rows: list[FitRow], model: _Model) -> list[FitRow]:
    """Run the model once per row at the bundled values: forced algorithms it cannot run fall back to
    its own choice, rows it cannot run at all are left out."""
    prepared = []
    for row in rows:
        if row.reason is not None:
            prepared.append(row)
            continue
        try:
            (result,) = model.results([row], {})
        except InputError as exc:
            if row.algorithm is None:
                prepared.append(replace(row, reason=f"the model cannot run it: {exc.message}"))
                continue
            row = replace(row, algorithm=None, protocol=None)
            try:
                (result,) = model.results([row], {})
            except InputError as exc2:
                prepared.append(replace(row, reason=f"the model cannot run it: {exc2.message}"))
                continue
        prepared.append(replace(row, model_us=result.time_us, model_algorithm=result.algorithm))
    return prepared


#: Extra starting points of the fit (multiples of each GB/s parameter's bundled value), tried when the
#: first solution leaves a parameter on a bound or flat: the model is piecewise (NCCL's algorithm
#: choice, NVLink and NIC bounds), so a start on the wrong side of a kink can stall there.
RESTART_BANDWIDTH_FACTORS = (0.5, 0.25)


def _solve(model: _Model, rows: list[FitRow], params: list[Calibratable]):
    """Levenberg-Marquardt on ln(theta) within bounds, restarted from lower bandwidths when the first
    solution ends on a bound or flat, and from the solution with the efficiency shares reset when a
    share ends on a bound. Returns (theta, sd or None per parameter, status, rms)."""
    best = _solve_from(model, rows, params, [p.initial for p in params])
    if any(status != "fitted" for p, status in zip(params, best[2]) if p.unit == "GB/s"):
        for factor in RESTART_BANDWIDTH_FACTORS:
            start = [p.initial * factor if p.unit == "GB/s" else p.initial for p in params]
            trial = _solve_from(model, rows, params, start)
            if trial[3] < best[3] - 1e-9:
                best = trial
    if any(status.startswith("at ") for p, status in zip(params, best[2]) if p.unit == "share"):
        # A share (efficiency factor) that ran onto a bound from the bundled start may have crossed one of
        # NCCL's choice kinks while the other parameters moved; restart from the solution with the shares
        # back at their bundled values.
        start = [p.initial if p.unit == "share" else value for p, value in zip(params, best[0])]
        trial = _solve_from(model, rows, params, start)
        if trial[3] < best[3] - 1e-9:
            best = trial
    return best


def _solve_from(model: _Model, rows: list[FitRow], params: list[Calibratable], start: list[float]):
    import numpy as np

    measured = np.log(np.array([r.measured_us for r in rows]))
    lower = np.log([p.lower for p in params])
    upper = np.log([p.upper for p in params])
    u = np.clip(np.log(start), lower, upper)

    def residuals(vector) -> np.ndarray:
        values = {p.path: float(math.exp(x)) for p, x in zip(params, vector)}
        return np.log(model.times(rows, values)) - measured

    def jacobian(vector, base) -> np.ndarray:
        # Backward differences where the bound allows: a capacity sitting exactly where another limit
        # takes over (NVLink, a bandwidth cap) moves the model downward only.
        columns = []
        for j in range(len(params)):
            step = -DIFF_STEP if vector[j] - DIFF_STEP >= lower[j] else DIFF_STEP
            moved = vector.copy()
            moved[j] += step
            columns.append((residuals(moved) - base) / step)
        return np.column_stack(columns) if columns else np.zeros((len(rows), 0))

    r = residuals(u)
    cost = float(r @ r)
    damping = 1e-2
    free = np.ones(len(params), dtype=bool)
    sensitive = np.ones(len(params), dtype=bool)
    for _ in range(MAX_ITERATIONS):
        J = jacobian(u, r)
        sensitive = np.linalg.norm(J, axis=0) > 1e-6
        at_lower = (u <= lower + 1e-9) & (J.T @ r > 0)
        at_upper = (u >= upper - 1e-9) & (J.T @ r < 0)
        free = sensitive & ~at_lower & ~at_upper
        if not free.any():
            break
        Jf = J[:, free]
        improved = False
        for _attempt in range(8):
            A = np.vstack([Jf, math.sqrt(damping) * np.diag(np.linalg.norm(Jf, axis=0) + 1e-12)])
            b = np.concatenate([-r, np.zeros(int(free.sum()))])
            delta, *_ = np.linalg.lstsq(A, b, rcond=None)
            trial = u.copy()
            trial[free] = np.clip(u[free] + delta, lower[free], upper[free])
            r_trial = residuals(trial)
            cost_trial = float(r_trial @ r_trial)
            if cost_trial < cost:
                improved = True
                converged = cost - cost_trial < 1e-10 * max(cost, 1e-12)
                u, r, cost = trial, r_trial, cost_trial
                damping = max(damping / 3.0, 1e-7)
                break
            damping *= 4.0
        if not improved or converged:
            break
    J = jacobian(u, r)
    sensitive = np.linalg.norm(J, axis=0) > 1e-6
    inside = (u > lower + 1e-6) & (u < upper - 1e-6)
    estimable = sensitive & inside
    sd = [None] * len(params)
    m, p = len(rows), int(estimable.sum())
    if p and m > p:
        s2 = cost / (m - p)
        Je = J[:, estimable]
        covariance = s2 * np.linalg.pinv(Je.T @ Je)
        for k, j in enumerate(np.flatnonzero(estimable)):
            sd[j] = float(math.exp(u[j]) * math.sqrt(max(covariance[k, k], 0.0)))
    statuses = []
    for j in range(len(params)):
        if not sensitive[j]:
            statuses.append("not fitted: no measured row depends on it")
        elif u[j] <= lower[j] + 1e-6:
            statuses.append("at lower bound")
        elif u[j] >= upper[j] - 1e-6:
            statuses.append("at upper bound")
        else:
            statuses.append("fitted")
    return [float(math.exp(x)) for x in u], sd, statuses, math.sqrt(cost / max(m, 1))


def _fit(model: _Model, rows: list[FitRow], params: list[Calibratable]) -> tuple[list[FittedParameter], float]:
    theta, sd, statuses, rms = _solve(model, rows, params)
    fitted = []
    for p, value, s, status in zip(params, theta, sd, statuses):
        if status.startswith("not fitted"):
            value, s = p.initial, None
        fitted.append(FittedParameter(p.name, p.path, p.unit, p.initial, value, s, p.lower, p.upper, status,
                                      p.description))
    return fitted, rms


def _errors(model: _Model, rows: list[FitRow], values: dict[str, float]) -> list[float]:
    times = model.times(rows, values)
    return [float(t / r.measured_us - 1.0) for t, r in zip(times, rows)]


def _cross_validation(model: _Model, rows: list[FitRow], params: list[Calibratable]) -> list[CrossValidation]:
    results = []
    sizes = sorted({r.size_bytes for r in rows})
    if len(sizes) >= 4:
        keep = set(sizes[::2])
        train = [r for r in rows if r.size_bytes in keep]
        test = [r for r in rows if r.size_bytes not in keep]
        fitted, _ = _fit(model, train, params)
        errors = [abs(e) for e in _errors(model, test, {p.path: p.value for p in fitted if p.fitted})]
        results.append(CrossValidation("every other size", len(train), len(test), _median(errors), max(errors),
                                       f"fit on {len(keep)} sizes, predicted {len(sizes) - len(keep)}"))
    nodes = sorted({r.nodes for r in rows})
    if len(nodes) >= 2:
        train = [r for r in rows if r.nodes < nodes[-1]]
        test = [r for r in rows if r.nodes == nodes[-1]]
        fitted, _ = _fit(model, train, params)
        errors = [abs(e) for e in _errors(model, test, {p.path: p.value for p in fitted if p.fitted})]
        results.append(CrossValidation("smaller node counts -> largest", len(train), len(test), _median(errors),
                                        max(errors), f"fit on {', '.join(map(str, nodes[:-1]))} node(s), "
                                                     f"predicted {nodes[-1]} nodes"))
    return results


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def calibrate(logs: list[MeasurementLog], catalog, system, *, cross_validate: bool = True) -> CalibrationResult:
    """Fit ``system``'s calibratable parameters to the nccl-tests rows of ``logs`` (see the module docstring)."""
    pin = pinned_reference(system, catalog)
    base = with_reference_pinned(catalog, pin)
    model = _Model(system, base)
    rows = _prepare(measured_rows(logs), model)
    used = [r for r in rows if r.reason is None]
    if not used:
        reasons = sorted({r.reason for r in rows if r.reason}) or ["the logs hold no nccl-tests rows"]
        raise InputError(f"no row to fit: {reasons[0]}", location=logs[0].file if logs else None)
    algorithms = {r.algorithm or r.model_algorithm for r in used} - {None}
    params = calibratable_parameters(system, base, algorithms)
    before = math.sqrt(sum(math.log(r.model_us / r.measured_us) ** 2 for r in used) / len(used))
    fitted, _rms = _fit(model, used, params)
    values = {p.path: p.value for p in fitted if p.fitted}
    errors = _errors(model, used, values)
    logs_err = [abs(math.log1p(e)) for e in errors]
    limit = max(OUTLIER_FLOOR, OUTLIER_MADS * _median(logs_err))
    outliers = {id(r) for r, e in zip(used, logs_err) if e > limit}
    if outliers and len(outliers) < len(used) // 2:
        rows = [replace(r, reason=f"outlier: model/measured {1 + errors[used.index(r)]:.2f} after a first fit "
                                  f"(limit e^{limit:.2f})") if id(r) in outliers else r for r in rows]
        used = [r for r in rows if r.reason is None]
        fitted, _rms = _fit(model, used, params)
        values = {p.path: p.value for p in fitted if p.fitted}
    final = model.results(used, values)
    by_id = {id(r): res for r, res in zip(used, final)}
    rows = [replace(r, model_us=by_id[id(r)].time_us, model_algorithm=by_id[id(r)].algorithm) if id(r) in by_id
            else r for r in rows]
    used = [r for r in rows if r.reason is None]
    after = math.sqrt(sum(math.log(r.model_us / r.measured_us) ** 2 for r in used) / len(used))
    cv = _cross_validation(model, used, params) if cross_validate else []
    result = CalibrationResult(system=system, parameters=tuple(fitted), rows=tuple(rows),
                               rms_log_error_before=before, rms_log_error_after=after, cross_validation=tuple(cv),
                               files=tuple(dict.fromkeys(log.file for log in logs)), pin=pin)
    return replace(result, warnings=fit_warnings(result, catalog))


def fit_warnings(result: CalibrationResult, catalog) -> tuple[str, ...]:
    """A poor fit, said in one sentence per reason: a held-out row the cross-validation missed by
    more than ``calibrate_warn_cross_validation_max_error`` (perf_defaults), a fitted parameter whose
    standard deviation is above ``calibrate_warn_relative_stddev`` of its value. Each names the
    parameters the fit moved (before -> after) so the reader sees what the warning is about."""
    from fabricplan.perf.params import perf_parameter

    max_error = perf_parameter("calibrate_warn_cross_validation_max_error", catalog)
    max_sd = perf_parameter("calibrate_warn_relative_stddev", catalog)
    fitted = [p for p in result.parameters if p.fitted]
    moved = "; ".join(f"{p.name} {p.initial:.3g} -> {p.value:.3g} {p.unit}"
                      + (f" ± {p.stddev:.2g}" if p.stddev is not None else "")
                      for p in fitted if abs(p.value - p.initial) > 0.01 * abs(p.initial)) or "unchanged"
    out = []
    for cv in result.cross_validation:
        if cv.max_abs_error > max_error:
            out.append(f"poor fit: cross-validation ({cv.name}) misses a held-out row by {cv.max_abs_error:.0%} "
                       f"(median {cv.median_abs_error:.0%}; warned above {max_error:.0%}, perf_defaults."
                       f"calibrate_warn_cross_validation_max_error); the fitted values ({moved}) do not predict "
                       "what they were not fitted on: check --fabric, --nics-per-node and that the logs come "
                       "from one system before using the overlay")
    for p in fitted:
        if p.stddev is not None and p.value > 0 and p.stddev / p.value > max_sd:
            out.append(f"{p.name} is poorly determined: {p.value:.3g} ± {p.stddev:.2g} {p.unit} "
                       f"({p.stddev / p.value:.0%} of its value; warned above {max_sd:.0%}, perf_defaults."
                       f"calibrate_warn_relative_stddev), was {p.initial:.3g}: the logs hold too few sizes "
                       "where it matters")
    return tuple(out)


def overlay_document(result: CalibrationResult, catalog, date: dt.date | None = None) -> dict:
    """The ``--catalog`` overlay of a calibration: each fitted value at its path, ``source: calibrated
    from <files> on <date>`` and the date."""
    date = date or dt.date.today()
    files = ", ".join(result.files)
    when = date.isoformat()
    system = result.system
    fitted = [p for p in result.parameters if p.fitted]
    note = "; ".join(f"{p.name} {p.value:.4g} {p.unit}" + (f" ± {p.stddev:.2g}" if p.stddev is not None else "")
                     for p in fitted)
    source = f"calibrated from {files} on {when} (fabricplan calibrate: {note})"
    document: dict = {}
    fabric_fields = {p.path.rsplit(".", 1)[1]: round(p.value, 6) for p in fitted if p.path.startswith("fabrics.")}
    if fabric_fields:
        original = catalog.fabric(system.fabric_id).source
        entries = [{"id": system.fabric_id, **fabric_fields, "source": f"{source}. Before: {original}", "date": when}]
        if result.pin:
            entries.append({**result.pin["entry"],
                            "source": (f"copy of the bundled {result.pin['reference_id']} profile, pinned by "
                                       f"fabricplan calibrate on {when} as the fabric NCCL's latency constants "
                                       f"describe, so that the calibrated {system.fabric_id} moves alone. "
                                       f"{result.pin['entry'].get('source', '')}"),
                            "date": when})
            document["perf_defaults"] = {"parameters": {"nccl_latency_reference_fabric": {
                "value": PINNED_REFERENCE_ID, "unit": "catalog fabric id",
                "source": f"pinned by fabricplan calibrate on {when} (copy of {result.pin['reference_id']})",
                "date": when}}}
        document["fabrics"] = entries
    versions: dict = {}
    for p in fitted:
        if p.path.startswith("nccl_tuner.versions."):
            rest = p.path[len("nccl_tuner.versions."):]
            version = next(v for v in catalog.nccl_tuner.versions if rest.startswith(v + "."))
            keys = rest[len(version) + 1:].split(".")
            entry = versions.setdefault(version, {})
            node = entry
            for key in keys[:-1]:
                node = node.setdefault(key, {})
            node[keys[-1]] = round(p.value, 6)
    for version, entry in versions.items():
        original = catalog.nccl_tuner.versions[version].source
        entry["source"] = f"{original}; {', '.join(k for k in entry)} {source}"
        entry["date"] = when
    if versions:
        document["nccl_tuner"] = {"versions": versions}
    return document


def write_overlay(document: dict, path, result: CalibrationResult) -> None:
    """Write the overlay as YAML with a header comment (atomic: a failure leaves no partial file)."""
    from pathlib import Path

    import yaml

    header = ["# fabricplan catalog overlay written by `fabricplan calibrate`.",
              f"# Measured: {', '.join(result.files)}.",
              f"# Rows used {len(result.used)}, left out {len(result.left_out)}; rms |ln(model/measured)| "
              f"{result.rms_log_error_before:.3f} before, {result.rms_log_error_after:.3f} after.",
              "# Use it with: fabricplan <command> --catalog THIS_FILE", ""]
    text = "\n".join(header) + yaml.safe_dump(document, sort_keys=False, width=100, allow_unicode=True)
    from fabricplan.io import write_text_atomic

    write_text_atomic(Path(path), text, what="catalog overlay")
