"""What a sweep's rows say: Pareto fronts per fabric, the recommended fabric over two axes, and
where the cheaper of two fabrics changes (the crossover surface).

* **Pareto front** of a fabric: its points that no other point of the same fabric beats on both
  step time and cost per useful GPU-hour (lower is better on both). Sort by step time, keep each
  point cheaper than every faster one. The overall front does the same over every (point, fabric).
* **Recommended fabric map** over axes x and y: per (x, y) cell, the fabric the points there
  recommend most often and the share of them that do (the other axes vary inside a cell); when two
  or more fabrics are recommended equally often, the cell is a tie between them.
* **Crossover surface** of fabrics a and b: the gap g = cost_a / cost_b - 1, per (x, y) cell the
  median over the other axes; along x, for each y, the x where g changes sign, linearly
  interpolated between the two neighbouring x values (on log x when every x is positive and
  they span more than 10x, e.g. GPU counts). Those (x, y) are the surface where a and b cost the same.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from fabricplan.errors import InputError
from fabricplan.sweep.adapter import fabric_column

COST = "cost_per_useful_gpu_hour_usd"
STEP = "step_time_s"


@dataclass
class FrontPoint:
    fabric: str
    step_time_s: float
    cost_per_useful_gpu_hour_usd: float
    inputs: dict[str, Any]
    point_id: str


@dataclass
class MapCell:
    x: Any
    y: Any
    recommended: str
    share: float
    points: int
    #: The fabrics the most points recommend when two or more do equally often (a tie), else empty;
    #: `recommended` is then the first of them in the sweep's fabric order.
    tied: list[str] = field(default_factory=list)


@dataclass
class CrossoverPoint:
    fabric_a: str
    fabric_b: str
    y: Any
    x: float
    leader_below: str
    leader_above: str


@dataclass
class SweepAnalysis:
    name: str
    points: int
    failed: int
    fabrics: list[str]
    axes: dict[str, str]
    x: str | None
    y: str | None
    fronts: dict[str, list[FrontPoint]]
    overall_front: list[FrontPoint]
    all_points: dict[str, tuple[list[float], list[float]]] = field(repr=False)
    recommended_map: list[MapCell]
    crossovers: list[CrossoverPoint]
    gap: dict[str, dict[tuple[Any, Any], float]] = field(repr=False)
    recommended_counts: dict[str, int]


def pareto_indices(steps: list[float], costs: list[float]) -> list[int]:
    """Indices of the non-dominated points (minimise both), ordered by step time."""
    order = sorted((i for i in range(len(steps)) if _finite(steps[i]) and _finite(costs[i])),
                   key=lambda i: (steps[i], costs[i]))
    front, best = [], math.inf
    for i in order:
        if costs[i] < best:
            front.append(i)
            best = costs[i]
    return front


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)


def _axis_column(name: str | None, axes: dict[str, str], what: str) -> str | None:
    if name is None:
        return None
    if name in axes:
        return axes[name]
    if name in axes.values():
        return name
    raise InputError(f"'{name}' is not an axis of this sweep; axes: {', '.join(axes)}", location=what)


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _sort_key(value: Any) -> tuple[int, Any]:
    return (0, value) if isinstance(value, (int, float)) else (1, str(value))


def analyse(columns: dict[str, list[Any]], manifest: dict[str, Any], x: str | None = None,
            y: str | None = None) -> SweepAnalysis:
    """The analysis of a results table given as {column: values} (module docstring)."""
    axes: dict[str, str] = manifest["axes"]
    fabrics: list[str] = manifest["fabrics"]
    n = len(columns.get("point_id", []))
    ok = [i for i in range(n) if columns["error"][i] is None]
    input_names = list(axes.values())
    if x is None and y is None:  # the two axes with the most values
        varied = sorted((c for c in input_names if len(set(columns[c])) > 1),
                        key=lambda c: -len(set(columns[c])))
        x = varied[0] if varied else (input_names[0] if input_names else None)
        y = varied[1] if len(varied) > 1 else None
    else:
        x = _axis_column(x, axes, "--x")
        y = _axis_column(y, axes, "--y")
    if x is not None and x == y:
        raise InputError("choose two different axes", location="--y")

    fronts: dict[str, list[FrontPoint]] = {}
    all_points: dict[str, tuple[list[float], list[float]]] = {}
    pool: list[FrontPoint] = []
    for fabric in fabrics:
        steps_col, costs_col = columns[fabric_column(fabric, STEP)], columns[fabric_column(fabric, COST)]
        rows = [i for i in ok if _finite(steps_col[i]) and _finite(costs_col[i])]
        steps, costs = [steps_col[i] for i in rows], [costs_col[i] for i in rows]
        all_points[fabric] = (steps, costs)
        fronts[fabric] = [FrontPoint(fabric, steps[k], costs[k], {c: columns[c][rows[k]] for c in input_names},
                                     columns["point_id"][rows[k]]) for k in pareto_indices(steps, costs)]
        pool.extend(fronts[fabric])
    overall = [pool[k] for k in pareto_indices([p.step_time_s for p in pool],
                                               [p.cost_per_useful_gpu_hour_usd for p in pool])]

    cells: dict[tuple[Any, Any], Counter[str]] = defaultdict(Counter)
    counts: Counter[str] = Counter()
    for i in ok:
        key = (columns[x][i] if x else None, columns[y][i] if y else None)
        cells[key][columns["recommended"][i]] += 1
        counts[columns["recommended"][i]] += 1
    recommended_map = []
    for (cx, cy), counter in sorted(cells.items(), key=lambda kv: (_sort_key(kv[0][1]), _sort_key(kv[0][0]))):
        fabric, hits = max(counter.items(), key=lambda kv: (kv[1], -fabrics.index(kv[0]) if kv[0] in fabrics else 0))
        tied = sorted((f for f, n in counter.items() if n == hits),
                      key=lambda f: (fabrics.index(f) if f in fabrics else len(fabrics), f))
        recommended_map.append(MapCell(cx, cy, fabric, hits / sum(counter.values()), sum(counter.values()),
                                       tied if len(tied) > 1 else []))

    gap: dict[str, dict[tuple[Any, Any], float]] = {}
    crossings: list[CrossoverPoint] = []
    for a, b in combinations(fabrics, 2):
        ca, cb = columns[fabric_column(a, COST)], columns[fabric_column(b, COST)]
        by_cell: dict[tuple[Any, Any], list[float]] = defaultdict(list)
        for i in ok:
            if _finite(ca[i]) and _finite(cb[i]) and cb[i] > 0:
                by_cell[(columns[x][i] if x else None, columns[y][i] if y else None)].append(ca[i] / cb[i] - 1.0)
        medians = {cell: _median(values) for cell, values in by_cell.items()}
        gap[f"{a}|{b}"] = medians
        if x is None:
            continue
        for cy in sorted({cell[1] for cell in medians}, key=_sort_key):
            line = sorted(((cx, g) for (cx, yy), g in medians.items() if yy == cy and _finite(cx)),
                          key=lambda t: t[0])
            crossings.extend(_crossings(line, a, b, cy))
    return SweepAnalysis(name=manifest.get("name", "sweep"), points=n, failed=n - len(ok), fabrics=fabrics, axes=axes,
                         x=x, y=y, fronts=fronts, overall_front=overall, all_points=all_points,
                         recommended_map=recommended_map, crossovers=crossings, gap=gap,
                         recommended_counts=dict(counts))


def _crossings(line: list[tuple[float, float]], a: str, b: str, y: Any) -> list[CrossoverPoint]:
    """Sign changes of the gap along x (module docstring), interpolated."""
    found = []
    xs = [p[0] for p in line]
    use_log = bool(xs) and min(xs) > 0 and max(xs) / min(xs) > 10
    for (x0, g0), (x1, g1) in zip(line, line[1:]):
        if g0 == 0 or (g0 < 0) == (g1 < 0):
            continue
        t = g0 / (g0 - g1)
        if use_log:
            x_cross = math.exp(math.log(x0) + t * (math.log(x1) - math.log(x0)))
        else:
            x_cross = x0 + t * (x1 - x0)
        below, above = (a, b) if g0 < 0 else (b, a)
        found.append(CrossoverPoint(a, b, y, x_cross, below, above))
    return found
