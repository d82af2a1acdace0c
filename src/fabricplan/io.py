"""Reading user documents (YAML or JSON) with one-line errors that say where the problem is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from fabricplan.errors import InputError

# Input documents (specs, catalog overlays) are a few KB; anything this large is a mistake, and
# refusing it early keeps a stray dump from eating memory.
MAX_DOCUMENT_BYTES = 10 * 1024 * 1024


def read_document(path: str | Path) -> Any:
    """Parse a YAML or JSON file (JSON is chosen by the `.json` suffix; YAML otherwise)."""
    path = Path(path)
    where = str(path)
    if not path.exists():
        raise InputError("file not found", location=where)
    if path.is_dir():
        raise InputError("expected a file, got a directory", location=where)
    size = path.stat().st_size
    if size > MAX_DOCUMENT_BYTES:
        raise InputError(
            f"file is {size / 1e6:.1f} MB; a spec or catalog file is expected to be a few KB "
            f"(limit {MAX_DOCUMENT_BYTES // (1024 * 1024)} MiB)", location=where)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte {exc.start})", location=where) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", location=where) from None
    if not text.strip():
        raise InputError("file is empty; expected a YAML or JSON mapping", location=where)
    return parse_text(text, where, as_json=path.suffix.lower() == ".json")


def parse_text(text: str, where: str, *, as_json: bool = False) -> Any:
    """Parse YAML or JSON text, turning syntax errors into InputError with line and column."""
    if as_json:
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON: {exc.msg}", location=f"{where}:{exc.lineno}:{exc.colno}") from None
    try:
        return yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        problem = exc.problem or "syntax error"
        raise InputError(f"invalid YAML: {problem}", location=f"{where}{line}") from None
    except yaml.YAMLError as exc:
        raise InputError(f"invalid YAML: {exc}", location=where) from None


def _path_text(loc: tuple[Any, ...]) -> str:
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text or "(top level)"


_TYPE_TAGS = {"str", "int", "float", "bool", "list", "dict"}


def _is_union_tag(part: Any) -> bool:
    """Pydantic puts the union branch (a type or CamelCase model name) into error paths; our
    field names are snake_case, so these tags can be dropped to leave the user's own path."""
    if not isinstance(part, str):
        return False
    return part in _TYPE_TAGS or part.startswith("function-") or (part[:1].isupper() and part.isalnum())


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def format_validation_error(exc: ValidationError, max_errors: int = 3) -> str:
    """One line per pydantic error, joined with '; ': field path, what was expected, what was given."""
    errors = exc.errors()
    paths = [tuple(p for p in e["loc"] if not _is_union_tag(p)) for e in errors]
    # A union such as `gpu: str | GpuInline` reports the failed `str` branch too; when another
    # error sits below the same path, that branch was not what the user meant.
    keep = [i for i, (e, loc) in enumerate(zip(errors, paths))
            if not (e["type"].endswith("_type") and isinstance(e.get("input"), dict)
                    and any(len(o) > len(loc) and o[: len(loc)] == loc for o in paths))]
    parts = []
    for i in keep[:max_errors]:
        error, loc = errors[i], paths[i]
        message = error["msg"]
        given = f" (got {_short(error.get('input'))})"
        if error["type"] == "extra_forbidden":
            message = "unknown field (check the spelling; `fabricplan schema` lists the fields)"
            given = ""
        elif error["type"] == "missing":
            message, given = "required field is missing", ""
        elif error["type"] == "value_error":
            message, given = message.removeprefix("Value error, "), ""
        parts.append(f"{_path_text(loc)}: {message}{given}")
    errors = [errors[i] for i in keep]
    more = len(errors) - max_errors
    if more > 0:
        parts.append(f"and {more} more error(s)")
    return "; ".join(parts)
