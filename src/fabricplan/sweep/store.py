"""The results of a sweep: one Parquet dataset (a folder of part files), one row per point.

    <out>/part-<first point index>-<batch hash>.parquet   one file per finished batch
    <out>/_sweep.json                                     the sweep's name, axes, columns, outputs
    <out>/.sweep.lock                                     flock'ed by the run writing (one at a time)
    <out>/<file>.corrupt                                  a part or manifest that could not be read, set aside

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
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fabricplan.errors import InputError
from fabricplan.io import atomic_output, write_bytes_atomic
from fabricplan.sweep.adapter import FABRIC_OUTPUTS, POINT_OUTPUTS, REQUIRED_OUTPUTS, fabric_column

if TYPE_CHECKING:
    import pyarrow as pa

    from fabricplan.sweep.points import Sweep

MANIFEST = "_sweep.json"
#: The lock file a running writer holds (``flock``); readers do not take it.
LOCK = ".sweep.lock"
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

    Opening takes the folder's lock (:data:`LOCK`, an exclusive ``flock`` held until :meth:`close`):
    one run writes to a folder at a time, and a second run into the same folder waits until the
    first ends (``on_wait(folder)`` is told first), then reads what is done, so a point already stored
    is never computed or stored again. Holding the lock, the temporary files left in the folder are
    those of a run that died (no live writer owns them) and are removed. A part file that cannot be
    read is set aside as ``<name>.corrupt`` (``on_note`` says so) and its points are computed again;
    a manifest that cannot be read is set aside the same way and written again when every part
    that can be read has this sweep's columns."""

    def __init__(self, folder: str | Path, sweep: Sweep, *, on_wait: Callable[[str], None] | None = None,
                 on_note: Callable[[str], None] | None = None) -> None:
        self.folder = Path(folder)
        self.types = column_types(sweep)
        self.manifest = manifest(sweep)
        self.on_note = on_note
        self._lock_fd: int | None = None
        _pyarrow()
        self.schema = arrow_schema(self.types, {"fabricplan.sweep": json.dumps(self.manifest)})
        _make_folder(self.folder)
        self._lock_fd = _take_lock(self.folder, on_wait)
        try:
            self._open_manifest()
        except BaseException:
            self.close()
            raise

    def _open_manifest(self) -> None:
        where = str(self.folder)
        existing = self.folder / MANIFEST
        for pattern in (".part-*.tmp", f".{MANIFEST}.*.tmp"):  # what a run that died had in flight
            for stale in self.folder.glob(pattern):
                try:
                    stale.unlink(missing_ok=True)
                except OSError:  # not ours to remove (a folder of that name): left as it is
                    pass
        if existing.exists() or existing.is_symlink():
            try:
                old = read_manifest(self.folder)
            except InputError as exc:
                self._replace_corrupt_manifest(exc)
                return
            if old.get("columns") != self.manifest["columns"]:
                raise InputError(f"this folder holds a sweep with other columns (axes {list(old.get('axes', {}))}, "
                                 f"fabrics {old.get('fabrics')}); give another --out or keep the same axes, "
                                 "fabrics and outputs to append", location=where)
            if old.get("catalog_sha256") is not None and old["catalog_sha256"] != self.manifest["catalog_sha256"]:
                # points of another catalog join these: the folder's results come from no one catalog
                write_bytes_atomic(existing, (json.dumps({**old, "catalog_sha256": None}, indent=2) + "\n").encode(),
                                   what="sweep manifest")
        else:
            write_bytes_atomic(existing, (json.dumps(self.manifest, indent=2) + "\n").encode(), what="sweep manifest")

    def _replace_corrupt_manifest(self, exc: InputError) -> None:
        """The manifest cannot be read: set it aside and write this sweep's, unless a readable part
        has other columns (then the folder is another sweep's and is left as it is)."""
        import pyarrow.parquet as pq

        names = list(self.types)
        for part in sorted(self.folder.glob(PART_GLOB)):
            try:
                found = pq.read_schema(part).names if part.is_file() else names
            except _READ_ERRORS:
                continue  # a broken part: set aside when the done points are read
            if found != names:
                raise InputError(f"{exc.message}; its parts have other columns than this sweep's, so it is not "
                                 "written again: give another --out", location=exc.location) from None
        existing = self.folder / MANIFEST
        aside = _set_aside(existing)
        write_bytes_atomic(existing, (json.dumps(self.manifest, indent=2) + "\n").encode(), what="sweep manifest")
        self._note(f"{existing}: {exc.message}; set aside as {aside.name} and written again")

    def _note(self, text: str) -> None:
        if self.on_note is not None:
            self.on_note(text)

    def close(self) -> None:
        """Release the folder's lock (the end of the run)."""
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing the only descriptor releases the flock
            self._lock_fd = None

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - at interpreter exit the lock goes with the process anyway
            pass

    def done_ids(self) -> set[str]:
        """Point ids already in the folder (only the id column of each part is read). A part that
        cannot be read, or has other columns, is set aside as ``.corrupt``: its points are not done."""
        import pyarrow.parquet as pq

        done: set[str] = set()
        for part in sorted(self.folder.glob(PART_GLOB)):
            try:
                done.update(_read_part(part, self.schema, pq, columns=["point_id"]).column("point_id").to_pylist())
            except InputError as exc:
                aside = _set_aside(part)
                self._note(f"{exc}; set aside as {aside.name}, its points are computed again")
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


def _reason(exc: BaseException) -> str:
    text = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return " ".join(str(text).split())[:200].rstrip(".")


def _make_folder(folder: Path) -> None:
    """The results folder, created when it is not there (its parent must be); one line for a file,
    a dangling link or a link loop there, or a folder that cannot be created."""
    where = str(folder)
    try:
        info = folder.stat()
    except FileNotFoundError:
        if folder.is_symlink():
            raise InputError("the results path is a symbolic link to nothing; give a folder", location=where) from None
        if not folder.parent.is_dir():
            raise InputError(f"folder {str(folder.parent)!r} does not exist", location=where) from None
        try:
            folder.mkdir()
        except FileExistsError:
            return  # another run made it a moment ago
        except OSError as exc:
            raise InputError(f"cannot create the results folder: {_reason(exc)}", location=where) from None
        return
    except OSError as exc:  # a symbolic link loop (ELOOP), a path through a file (ENOTDIR), no permission
        raise InputError(f"cannot use the results path: {_reason(exc)}", location=where) from None
    if not stat.S_ISDIR(info.st_mode):
        raise InputError("the results path is a file; give a folder", location=where)


def _take_lock(folder: Path, on_wait: Callable[[str], None] | None) -> int | None:
    """Open and ``flock`` the folder's lock file; when another run holds it, tell ``on_wait`` and wait.
    The descriptor is not inherited by child processes (``O_CLOEXEC``), so the lock ends with this
    process. None where ``fcntl`` is missing (Windows: no lock)."""
    try:
        import fcntl
    except ImportError:
        return None
    path = folder / LOCK
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        raise InputError(f"cannot open the results folder's lock file: {_reason(exc)}", location=str(path)) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if on_wait is not None:
                on_wait(str(folder))
            fcntl.flock(fd, fcntl.LOCK_EX)  # until the other run ends (Ctrl-C stops waiting)
    except OSError as exc:
        os.close(fd)
        raise InputError(f"cannot lock the results folder: {_reason(exc)}", location=str(path)) from None
    except BaseException:
        os.close(fd)
        raise
    return fd


def _set_aside(path: Path) -> Path:
    """Rename a file (or folder) that cannot be read to ``<name>.corrupt`` (``.corrupt-2``, ... when taken)."""
    aside = path.with_name(path.name + ".corrupt")
    k = 1
    while aside.exists() or aside.is_symlink():
        k += 1
        aside = path.with_name(f"{path.name}.corrupt-{k}")
    try:
        os.rename(path, aside)
    except OSError as exc:
        raise InputError(f"cannot read this file and cannot set it aside: {_reason(exc)}", location=str(path)) from None
    return aside


def _read_part(part: Path, schema: pa.Schema, pq: Any, columns: list[str] | None = None) -> pa.Table:
    """A part file's rows (``columns`` only), or one line naming it: not a regular file, not Parquet
    (truncated, empty), or other columns than the manifest's."""
    where = str(part)
    if not part.is_file():
        raise InputError("not a part file (a folder or a special file)", location=where)
    try:
        found = pq.read_schema(part)
        if found.names != schema.names or any(a.type != b.type for a, b in zip(found, schema, strict=True)):
            raise InputError("this part's columns are not the manifest's", location=where)
        return pq.read_table(part, columns=columns, schema=schema)
    except InputError:
        raise
    except _READ_ERRORS as exc:  # pyarrow's ArrowInvalid is a ValueError, its ArrowIOError an OSError
        raise InputError(f"cannot read this part file: {_reason(exc)}", location=where) from None


#: What reading a damaged Parquet file raises (pyarrow's errors derive from these builtins).
_READ_ERRORS = (OSError, ValueError, TypeError, LookupError, ArithmeticError, NotImplementedError)

#: The manifest's keys and their JSON types (what `sweep report` reads).
_MANIFEST_KEYS = {"axes": dict, "fabrics": list, "outputs": list, "columns": dict}
_COLUMN_TYPES = ("string", "int64", "float64", "bool")
#: Columns every results row has (the report reads them).
_ROW_COLUMNS = ("point_id", "point_index", "recommended", "error")


def read_manifest(folder: Path) -> dict[str, Any]:
    """The folder's manifest, checked (an object with axes, fabrics, outputs, columns of known
    types), or one line naming it."""
    path = folder / MANIFEST
    where = str(path)
    if path.is_symlink() or not path.is_file():
        raise InputError("the sweep manifest is not a regular file", location=where)
    try:
        meta = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read the sweep manifest: {_reason(exc)}", location=where) from None
    if not isinstance(meta, dict):
        raise InputError(f"the sweep manifest is a JSON {type(meta).__name__}, not an object", location=where)
    for key, kind in _MANIFEST_KEYS.items():
        if not isinstance(meta.get(key), kind):
            raise InputError(f"the sweep manifest has no {key!r} {kind.__name__}", location=where)
    bad = [str(name) for name, kind in meta["columns"].items() if kind not in _COLUMN_TYPES]
    if bad:
        raise InputError(f"the sweep manifest's columns have unknown types ({', '.join(bad[:5])})", location=where)
    names = [*meta["axes"].values(), *meta["fabrics"], *meta["outputs"]]
    if not all(isinstance(name, str) for name in names):
        raise InputError("the sweep manifest's axes, fabrics and outputs are not all names", location=where)
    needed = [*_ROW_COLUMNS, *meta["axes"].values(),
              *(fabric_column(f, o) for f in meta["fabrics"] for o in REQUIRED_OUTPUTS)]
    missing = [name for name in needed if name not in meta["columns"]]
    if missing:
        raise InputError(f"the sweep manifest lacks the column(s) {', '.join(missing[:5])}", location=where)
    return meta


def read_results(folder: str | Path) -> tuple[pa.Table, dict[str, Any]]:
    """All rows of a results folder (one table, one row per point id: a point stored twice, as
    folders written before the lock may hold, counts once) and its manifest. A manifest or part that
    cannot be read is one line naming it."""
    _pyarrow()
    import pyarrow.parquet as pq

    folder = Path(folder)
    where = str(folder)
    try:
        is_folder = folder.is_dir()
    except OSError:
        is_folder = False
    if not is_folder or not ((folder / MANIFEST).exists() or (folder / MANIFEST).is_symlink()):
        raise InputError(f"not a sweep results folder (no {MANIFEST}); run `fabricplan sweep run` first",
                         location=where)
    meta = read_manifest(folder)
    parts = sorted(folder.glob(PART_GLOB))
    schema = arrow_schema(meta["columns"])
    if not parts:
        return schema.empty_table(), meta
    import pyarrow as pa

    tables = []
    for part in parts:
        try:
            tables.append(_read_part(part, schema, pq))
        except InputError as exc:
            raise InputError(f"{exc.message}; run `fabricplan sweep run` again to set it aside and compute its "
                             "points again", location=exc.location) from None
    return unique_points(pa.concat_tables(tables)), meta


def unique_points(table: pa.Table) -> pa.Table:
    """The table's rows with the first of each point id."""
    seen: set[str] = set()
    keep = [i for i, point_id in enumerate(table.column("point_id").to_pylist())
            if not (point_id in seen or seen.add(point_id))]
    return table if len(keep) == table.num_rows else table.take(keep)
