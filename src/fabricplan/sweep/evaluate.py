"""One batch of sweep points, as every executor runs it: point values -> spec and catalog -> compare
-> one row per point.

A point whose inputs do not make a valid design (a parallelism that does not lay out on its GPUs, a
price outside its range, ...) is a row with the one-line reason in ``error`` and empty outputs: the
same input always gives the same error, so it counts as done.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fabricplan.errors import FabricplanError
from fabricplan.sweep.adapter import compare_point, outputs_of
from fabricplan.sweep.points import CATALOG_PREFIX, PointContext, canonical

#: (point index, point id, {axis path: value})
Task = tuple[int, str, dict[str, Any]]


def evaluate_point(context: PointContext, values: dict[str, Any]) -> dict[str, Any]:
    """The output columns of one point (raises FabricplanError for inputs that do not apply)."""
    from fabricplan.spec import parse_spec
    from fabricplan.spec.paths import with_values

    catalog_values = {p[len(CATALOG_PREFIX):]: v for p, v in values.items() if p.startswith(CATALOG_PREFIX)}
    spec_values = {p: v for p, v in values.items() if not p.startswith(CATALOG_PREFIX)}
    catalog = context.catalog.with_values(catalog_values) if catalog_values else context.catalog
    document = with_values(context.base_document, spec_values) if spec_values else context.base_document
    spec = parse_spec(document, where="spec")
    report = compare_point(spec, catalog, quick=context.quick, efficiency_model=context.efficiency_model,
                           draws=context.draws)
    return outputs_of(report, context.fabrics, context.outputs)


def run_batch(context: PointContext, tasks: Sequence[Task], columns: dict[str, str],
              json_axes: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """Rows of a batch: ids, inputs (under their column names), outputs or the error."""
    rows = []
    for index, point_id, values in tasks:
        row: dict[str, Any] = {"point_id": point_id, "point_index": index}
        for path, value in values.items():
            row[columns[path]] = canonical(value) if path in json_axes else value
        try:
            row.update(evaluate_point(context, values))
            row["error"] = None
        except FabricplanError as exc:
            row["error"] = str(exc)
        rows.append(row)
    return rows
