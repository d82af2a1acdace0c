"""A sweep file read and checked, its points enumerated, filtered and hashed.

Points are the product of the axis groups (a ``zip`` group moves its axes together; every other axis
is a group of one), in the order the axes are written, first axis slowest. A point's id is the
SHA-256 of its inputs: the base spec document, the catalog overlays' contents, the model options and
the point's axis values (canonical JSON), so a re-run recognises points already computed and a
changed base spec or overlay computes them again.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from fabricplan.errors import FabricplanError, InputError
from fabricplan.io import format_validation_error, parse_text, read_document
from fabricplan.sweep.adapter import FABRIC_OUTPUTS, REQUIRED_OUTPUTS
from fabricplan.sweep.model import FILTER_OPERATORS, MAX_POINTS, AxisRange, SweepFile

if TYPE_CHECKING:
    from fabricplan.catalog import Catalog

CATALOG_PREFIX = "catalog."
_FILTER = re.compile(r"^\s*(\S+)\s*(" + "|".join(re.escape(op) for op in FILTER_OPERATORS) + r")\s*(.+?)\s*$")
_COMPARE = {"<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b, "==": lambda a, b: a == b,
            "!=": lambda a, b: a != b, "<": lambda a, b: a < b, ">": lambda a, b: a > b}


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def input_column(path: str) -> str:
    """The Parquet column of an axis: the path with every character outside [A-Za-z0-9_] as ``_``
    (``catalog.switches.sw_ib_qm9700.price_usd`` -> ``catalog_switches_sw_ib_qm9700_price_usd``),
    so SQL reads it unquoted; the path's last name carries the unit."""
    return re.sub(r"[^0-9A-Za-z_]", "_", path)


@dataclass(frozen=True)
class Condition:
    text: str
    left: str
    op: str
    right: Any
    right_is_path: bool


@dataclass(frozen=True)
class PointContext:
    """What every point needs, shipped once per worker: base spec document, catalog (with the
    sweep's overlays), fabrics and outputs to keep, model options."""

    base_document: dict[str, Any]
    catalog: Catalog
    fabrics: list[str]
    outputs: list[str]
    quick: bool
    efficiency_model: str
    draws: int | None = None


@dataclass
class Sweep:
    """A checked sweep file (module docstring)."""

    name: str
    source: str
    axes: dict[str, list[Any]]
    groups: list[list[str]]
    conditions: list[Condition]
    context: PointContext
    inputs_hash: str
    columns: dict[str, str] = field(default_factory=dict)  # axis path -> column name
    arrow_types: dict[str, str] = field(default_factory=dict)  # axis path -> arrow type name

    @property
    def total(self) -> int:
        """Points before filters."""
        size = 1
        for group in self.groups:
            size *= len(self.axes[group[0]])
        return size

    def points(self) -> Iterator[tuple[int, dict[str, Any]]]:
        """(index, {axis path: value}) of every point the filters keep; index counts all points."""
        columns = [list(zip(*(self.axes[path] for path in group), strict=True)) for group in self.groups]
        for index, combo in enumerate(itertools.product(*columns)):
            values = {path: value for group, chosen in zip(self.groups, combo, strict=True)
                      for path, value in zip(group, chosen, strict=True)}
            values = {path: values[path] for path in self.axes}  # the file's order
            if all(self._holds(c, values) for c in self.conditions):
                yield index, values

    def point_id(self, values: Mapping[str, Any]) -> str:
        return hashlib.sha256(f"{self.inputs_hash}|{canonical(dict(values))}".encode()).hexdigest()

    def _value(self, path: str, values: Mapping[str, Any]) -> Any:
        if path in values:
            return values[path]
        return self._constant(path)

    def _constant(self, path: str) -> Any:
        from fabricplan.spec.paths import get_path

        if path.startswith(CATALOG_PREFIX):
            return self.context.catalog.get_path(path[len(CATALOG_PREFIX):])
        return get_path(self.context.base_document, path)

    def _holds(self, condition: Condition, values: Mapping[str, Any]) -> bool:
        left = self._value(condition.left, values)
        right = self._value(condition.right, values) if condition.right_is_path else condition.right
        try:
            return bool(_COMPARE[condition.op](left, right))
        except TypeError:
            raise InputError(f"cannot compare {left!r} {condition.op} {right!r}",
                             location=f"{self.source}: filters '{condition.text}'") from None


def _arrow_type(values: list[Any]) -> str:
    if all(isinstance(v, bool) for v in values):
        return "bool"
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return "int64"
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return "float64"
    if all(isinstance(v, str) for v in values):
        return "string"
    return "json"  # lists, mappings or mixed: stored as canonical JSON text


def _parse_condition(text: str, axes: Mapping[str, list[Any]], where: str, probe: Any) -> Condition:
    match = _FILTER.match(text)
    if not match:
        raise InputError(f"a filter is '<path> <op> <value or path>' with op one of {', '.join(FILTER_OPERATORS)}; "
                         f"got {text!r}", location=where)
    left, op, right_text = match.groups()
    try:
        probe(left)
    except FabricplanError as exc:
        raise InputError(f"{left!r} is neither an axis nor a value of the base spec or catalog ({exc.message})",
                         location=where) from None
    if right_text in axes:
        return Condition(text, left, op, right_text, True)
    try:
        probe(right_text)
        return Condition(text, left, op, right_text, True)
    except FabricplanError:
        pass
    try:  # the bounded reader: no alias bomb, nesting or huge integer gets past a filter either
        right = parse_text(right_text, where)
    except InputError as exc:
        if not exc.message.startswith("invalid YAML"):
            raise
        right = right_text  # not YAML: the text as it is
    return Condition(text, left, op, right, False)


def load_sweep(path: str | Path) -> Sweep:
    """Read and check a sweep file: the base spec against the catalog, every axis value alone on
    the base (so a typo fails here in one line, not in every point), zip groups, filters, outputs."""
    from fabricplan.catalog import load_catalog
    from fabricplan.spec import check_references, parse_spec
    from fabricplan.spec.load import located
    from fabricplan.spec.paths import with_values

    path = Path(path)
    where = str(path)
    document = read_document(path)
    if not isinstance(document, Mapping):
        raise InputError(f"expected a mapping with 'base' and 'axes', got {type(document).__name__}", location=where)
    try:
        sweep_file = SweepFile.model_validate(document)
    except ValidationError as exc:
        message = format_validation_error(exc, model=SweepFile, schema_command="fabricplan sweep schema")
        raise InputError(message, location=where) from None
    folder = path.parent
    overlays = [str(folder / overlay) for overlay in sweep_file.catalog]
    catalog = load_catalog(overlays)
    if isinstance(sweep_file.base, str):
        base_path = folder / sweep_file.base
        base_document = read_document(base_path)
        base_where = str(base_path)
    else:
        base_document, base_where = sweep_file.base, f"{where}: base"
    base_spec = parse_spec(base_document, where=base_where)
    base_spec._source = base_where
    with located(base_spec):
        check_references(base_spec, catalog)

    axes: dict[str, list[Any]] = {}
    for axis, spec_values in sweep_file.axes.items():
        values = spec_values.values() if isinstance(spec_values, AxisRange) else list(spec_values)
        if not values:
            raise InputError("an axis needs at least one value", location=f"{where}: axes.{axis}")
        axes[axis] = values
        seen: set[str] = set()
        for k, value in enumerate(values):
            key = canonical(value)
            if key in seen:
                raise InputError(f"value {value!r} is listed twice", location=f"{where}: axes.{axis}[{k}]")
            seen.add(key)
            try:
                if axis.startswith(CATALOG_PREFIX):
                    catalog.with_values({axis[len(CATALOG_PREFIX):]: value})
                else:
                    parse_spec(with_values(base_document, {axis: value}), where="spec")
            except FabricplanError as exc:
                raise InputError(f"{value!r} does not apply: {exc}", location=f"{where}: axes.{axis}[{k}]") from None

    grouped: list[list[str]] = []
    in_zip: set[str] = set()
    for g, group in enumerate(sweep_file.zip):
        for axis in group:
            if axis not in axes:
                raise InputError(f"'{axis}' is not an axis; axes: {', '.join(axes)}", location=f"{where}: zip[{g}]")
            if axis in in_zip:
                raise InputError(f"axis '{axis}' is in more than one zip group", location=f"{where}: zip[{g}]")
            in_zip.add(axis)
        lengths = {axis: len(axes[axis]) for axis in group}
        if len(set(lengths.values())) > 1:
            raise InputError(f"zipped axes need equal lengths; got {lengths}", location=f"{where}: zip[{g}]")
        if group:
            grouped.append(list(group))
    groups: list[list[str]] = []
    for axis in axes:  # groups in the order their first axis is written
        if axis in in_zip:
            group = next(g for g in grouped if axis in g)
            if group not in groups:
                groups.append(group)
        else:
            groups.append([axis])

    columns = {axis: input_column(axis) for axis in axes}
    outputs = list(sweep_file.outputs) if sweep_file.outputs is not None else list(FABRIC_OUTPUTS)
    for k, name in enumerate(outputs):
        if name not in FABRIC_OUTPUTS:
            raise InputError(f"unknown output '{name}'; known: {', '.join(FABRIC_OUTPUTS)}",
                             location=f"{where}: outputs[{k}]")
    outputs = [*(o for o in REQUIRED_OUTPUTS if o not in outputs), *outputs]
    fabrics = _fabrics(base_spec, axes)
    from fabricplan.sweep.adapter import POINT_OUTPUTS, fabric_column

    names = [*columns.values(), *POINT_OUTPUTS, *(fabric_column(f, o) for f in fabrics for o in outputs)]
    clash = sorted({n for n in names if names.count(n) > 1} | {n for n in columns.values() if n in RESERVED_COLUMNS})
    if clash:
        raise InputError(f"two axes or outputs share the column name(s) {', '.join(clash)}", location=f"{where}: axes")

    from fabricplan.perf.efficiency import efficiency_model

    try:
        efficiency_model(sweep_file.efficiency_model)  # an unknown name fails here
    except InputError as exc:
        raise InputError(exc.message, location=f"{where}: efficiency_model") from None
    context = PointContext(base_document=dict(base_document), catalog=catalog, fabrics=fabrics, outputs=outputs,
                           quick=sweep_file.quick, efficiency_model=sweep_file.efficiency_model,
                           draws=sweep_file.draws)
    overlay_text = [Path(o).read_bytes().decode("utf-8", "replace") for o in overlays]
    options = {"quick": sweep_file.quick, "efficiency_model": sweep_file.efficiency_model}
    if sweep_file.draws is not None:  # only when set, so the ids of files without it stay as they were
        options["draws"] = sweep_file.draws
    inputs_hash = hashlib.sha256(canonical({
        "base": base_document, "catalog_overlays": overlay_text, "bundled_data": bundled_data_hash(),
        **options}).encode()).hexdigest()
    sweep = Sweep(name=sweep_file.name, source=where, axes=axes, groups=groups, conditions=[], context=context,
                  inputs_hash=inputs_hash, columns=columns,
                  arrow_types={axis: _arrow_type(values) for axis, values in axes.items()})
    if sweep.total > MAX_POINTS:
        raise InputError(f"the axes make {sweep.total:,} points; at most {MAX_POINTS:,} per sweep file",
                         location=f"{where}: axes")
    sweep.conditions = [_parse_condition(text, axes, f"{where}: filters[{k}]",
                                         lambda p: p in axes or sweep._constant(p))
                        for k, text in enumerate(sweep_file.filters)]
    first = {path: values[0] for path, values in axes.items()}
    for condition in sweep.conditions:  # values of types that do not compare fail here, not mid-run
        sweep._holds(condition, first)
    return sweep


def bundled_data_hash() -> str:
    """SHA-256 of the bundled catalog data files and the fabricplan version: an upgrade that changes
    a price or parameter changes every point id, so old rows are not taken for new ones."""
    import fabricplan

    digest = hashlib.sha256(fabricplan.__version__.encode())
    folder = Path(fabricplan.__file__).parent / "catalog" / "data"
    for data_file in sorted(folder.iterdir()):
        if data_file.suffix in (".yaml", ".csv", ".json"):
            digest.update(data_file.name.encode() + b"\0" + data_file.read_bytes())
    return digest.hexdigest()


#: Columns every results row has besides the axes and outputs.
RESERVED_COLUMNS = ("point_id", "point_index", "error")


def _fabrics(base_spec: Any, axes: Mapping[str, list[Any]]) -> list[str]:
    """Every fabric profile a point may compare: the base spec's and those of a ``fabrics`` axis."""
    names = [choice.profile for choice in base_spec.fabric_choices()]
    for value in axes.get("fabrics", []):
        for item in value if isinstance(value, list) else []:
            profile = item if isinstance(item, str) else item.get("profile") if isinstance(item, Mapping) else None
            if isinstance(profile, str) and profile not in names:
                names.append(profile)
    return names
