"""The results of a sweep: one Parquet dataset (a folder of part files), one row per point.

    <out>/part-<first point index>-<batch hash>.parquet   one file per finished batch
    <out>/_sweep.json                                     the sweep's name, axes, columns, outputs

Each batch is written through the one atomic writer (:func:`fabricplan.io.atomic_output`): a
temporary file in the folder, fsynced, renamed into place (``os.replace``), so a part file is
either whole or absent: a killed run loses at most the batches in flight. Parts and the manifest
are readable by the team (0644 under umask 022), as any file the tool writes. Every part has the same schema (the manifest's). Readers need no fabricplan:
``pandas.read_parquet(out)``, ``polars.read_parquet(f"{out}/*.parquet")``,
``duckdb.sql(f"select * from '{out}/*.parquet'")``. pyarrow's dataset reader skips ``_``-files.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fabricplan.errors import InputError
from fabricplan.io import atomic_output, write_bytes_atomic
from fabricplan.sweep.adapter import FABRIC_OUTPUTS, POINT_OUTPUTS, fabric_column

if TYPE_CHECKING:
    import pyarrow as pa

    from fabricplan.sweep.points import Sweep

MANIFEST = "_sweep.json"
PART_GLOB = "part-*.parquet"
INSTALL_HINT = 'the sweep results need pyarrow: pip install "fabricplan[sweep]"'


def _pyarrow() -> Any:
    try:
        import pyarrow
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise InputError(INSTALL_HINT) from None
    return pyarrow


def column_types(sweep: Sweep) -> dict[str, str]:
    """Column name -> type name, in column order: ids, inputs, point outputs, fabric outputs, error."""
    types = {"point_id": "string", "point_index": "int64"}
    for path, column in sweep.columns.items():
        kind = sweep.arrow_types[path]
        types[column] = "string" if kind == "json" else kind
    for name, (_description, kind) in POINT_OUTPUTS.items():
        types[name] = kind
    for fabric in sweep.context.fabrics:
        for name in sweep.context.outputs:
            types[fabric_column(fabric, name)] = FABRIC_OUTPUTS[name][2]
    types["error"] = "string"
    return types


def arrow_schema(types: dict[str, str], metadata: dict[str, str] | None = None) -> pa.Schema:
    pa = _pyarrow()
    make = {"string": pa.string(), "int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_()}
    return pa.schema([pa.field(name, make[kind]) for name, kind in types.items()],
                     metadata={k.encode(): v.encode() for k, v in (metadata or {}).items()})


def manifest(sweep: Sweep) -> dict[str, Any]:
    return {"name": sweep.name, "axes": {path: sweep.columns[path] for path in sweep.axes},
            "fabrics": sweep.context.fabrics, "outputs": sweep.context.outputs, "columns": column_types(sweep),
            "json_axes": sorted(p for p, kind in sweep.arrow_types.items() if kind == "json"),
            # the catalog the points were computed from (`sweep report --json` carries it)
            "catalog_sha256": sweep.context.catalog.content_sha256()}


class ResultStore:
    """A sweep's results folder: open (create or check against the sweep), list done ids, add batches.

    One run writes to a folder at a time (opening it removes the half-written batch a killed run left)."""

    def __init__(self, folder: str | Path, sweep: Sweep) -> None:
        self.folder = Path(folder)
        self.types = column_types(sweep)
        self.manifest = manifest(sweep)
        _pyarrow()
        where = str(self.folder)
        if self.folder.exists() and not self.folder.is_dir():
            raise InputError("the results path is a file; give a folder", location=where)
        existing = self.folder / MANIFEST
        if existing.exists():
            try:
                old = json.loads(existing.read_text())
            except (OSError, ValueError) as exc:
                raise InputError(f"cannot read the sweep manifest {MANIFEST}: {exc}", location=where) from None
            if old.get("columns") != self.manifest["columns"]:
                raise InputError(f"this folder holds a sweep with other columns (axes {list(old.get('axes', {}))}, "
                                 f"fabrics {old.get('fabrics')}); give another --out or keep the same axes, "
                                 "fabrics and outputs to append", location=where)
            for pattern in (".part-*.tmp", f".{MANIFEST}.*.tmp"):  # what a killed run had in flight
                for stale in self.folder.glob(pattern):
                    stale.unlink(missing_ok=True)
            if old.get("catalog_sha256") is not None and old["catalog_sha256"] != self.manifest["catalog_sha256"]:
                # points of another catalog join these: the folder's results come from no one catalog
                write_bytes_atomic(existing, (json.dumps({**old, "catalog_sha256": None}, indent=2) + "\n").encode(),
                                   what="sweep manifest")
        else:
            if not self.folder.parent.is_dir():
                raise InputError(f"folder {str(self.folder.parent)!r} does not exist", location=where)
            self.folder.mkdir(exist_ok=True)
            write_bytes_atomic(existing, (json.dumps(self.manifest, indent=2) + "\n").encode(), what="sweep manifest")
        self.schema = arrow_schema(self.types, {"fabricplan.sweep": json.dumps(self.manifest)})

    def done_ids(self) -> set[str]:
        """Point ids already in the folder (only the id column of each part is read)."""
        import pyarrow.parquet as pq

        done: set[str] = set()
        for part in sorted(self.folder.glob(PART_GLOB)):
            done.update(pq.read_table(part, columns=["point_id"]).column("point_id").to_pylist())
        return done

    def write(self, rows: list[dict[str, Any]]) -> Path:
        """One batch as one part file, atomically."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pylist(rows, schema=self.schema)
        digest = hashlib.sha256("".join(r["point_id"] for r in rows).encode()).hexdigest()[:12]
        first = min(r["point_index"] for r in rows)
        path = self.folder / f"part-{first:09d}-{digest}.parquet"
        with atomic_output(path, what="sweep part") as handle:  # temporary .part-....tmp, then renamed
            pq.write_table(table, handle, compression="zstd")
        return path


def read_results(folder: str | Path) -> tuple[pa.Table, dict[str, Any]]:
    """All rows of a results folder (one table) and its manifest."""
    _pyarrow()
    import pyarrow.parquet as pq

    folder = Path(folder)
    where = str(folder)
    if not (folder / MANIFEST).is_file():
        raise InputError(f"not a sweep results folder (no {MANIFEST}); run `fabricplan sweep run` first",
                         location=where)
    meta = json.loads((folder / MANIFEST).read_text())
    parts = sorted(folder.glob(PART_GLOB))
    schema = arrow_schema(meta["columns"])
    if not parts:
        return schema.empty_table(), meta
    import pyarrow as pa

    return pa.concat_tables([pq.read_table(p, schema=schema) for p in parts]), meta
