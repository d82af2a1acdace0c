"""The one place a JSON document is built for output: plain data, sorted keys, and the stamp every
document carries (issue 30): the tool's version and the SHA-256 of the catalog it was computed from.

``fabricplan_version`` and ``catalog_sha256`` (:meth:`Catalog.content_sha256`: the resolved data,
overlays included; null when the command used no catalog) go at the top level of every document; a
SARIF log (its schema allows no other top-level keys) carries them in its top-level ``properties``
bag. Nothing that depends on the state of a cache goes into a document: two runs of the same
command on the same inputs print the same bytes.
"""

from __future__ import annotations

import json
import math
from typing import Any

VERSION_KEY = "fabricplan_version"
CATALOG_KEY = "catalog_sha256"


def plain(value: Any) -> Any:
    """Models, dataclass-like dicts and numpy scalars as JSON data (non-finite floats become null)."""
    if hasattr(value, "model_dump") and not isinstance(value, type):  # pydantic models (not imported here)
        return plain(value.model_dump(mode="json"))
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return value.item()
    return value


def _is_sarif(document: dict[str, Any]) -> bool:
    return "runs" in document and "sarif" in str(document.get("$schema", "")).lower()


def stamped(value: Any, catalog_sha256: str | None) -> Any:
    """``value`` as plain data with the version and the hash of the catalog it was computed from
    (:meth:`Catalog.content_sha256`, or one recorded when the results were computed; None when the
    command used no catalog)."""
    from fabricplan import __version__

    document = plain(value)
    stamp = {VERSION_KEY: __version__, CATALOG_KEY: catalog_sha256}
    if not isinstance(document, dict):  # every command prints a mapping; a bare list gets wrapped
        return {"items": document, **stamp}
    if _is_sarif(document):
        return {**document, "properties": {**document.get("properties", {}), **stamp}}
    return {**document, **stamp}


def document_text(value: Any, catalog_sha256: str | None, *, indent: int | None = 2) -> str:
    """The stamped document as stable, sorted JSON text."""
    separators = None if indent is not None else (",", ":")
    return json.dumps(stamped(value, catalog_sha256), indent=indent, sort_keys=True, separators=separators)
