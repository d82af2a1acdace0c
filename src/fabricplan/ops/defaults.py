"""Access to the dated, sourced default numbers of the catalog's ``ops_defaults`` section.

The numbers live in ``catalog/data/ops_defaults.yaml`` (overlayable with ``--catalog``). Every
accessor takes the ``catalog`` it reads (the API and the CLI load it once, with the user's overlays);
``None`` is a TypeError, never the bundled catalog.
"""

from __future__ import annotations

import math
from typing import Any

from fabricplan.catalog.catalog import require_catalog
from fabricplan.catalog.documents import OpsEntry, OpsGroup
from fabricplan.errors import CatalogError

DEFAULTS_FILE = "ops_defaults.yaml"


# Look-ups by (ops_defaults section, path). The section is an immutable pydantic model, so what a
# path gives never changes; the model is kept beside its results so its id cannot be reused.
_CACHE: dict[int, tuple[Any, dict[tuple[str, str], Any]]] = {}
_CACHED_SECTIONS = 8


def _cached(section: Any, key: tuple[str, str], compute: Any) -> Any:
    slot = _CACHE.get(id(section))
    if slot is None or slot[0] is not section:
        if len(_CACHE) >= _CACHED_SECTIONS:
            _CACHE.clear()
        slot = _CACHE[id(section)] = (section, {})
    results = slot[1]
    if key not in results:
        results[key] = compute()
    return results[key]


def _node(path: str, catalog, what: str) -> Any:
    section = require_catalog(catalog, "ops_defaults", path).ops_defaults
    return _cached(section, ("node", path), lambda: _walk(section, path, what))


def _walk(node: Any, path: str, what: str) -> Any:
    for part in path.split("."):
        children = node.root if isinstance(node, OpsGroup) else (
            {name: getattr(node, name) for name in type(node).model_fields} if not isinstance(node, OpsEntry)
            else {})
        if part not in children:
            raise CatalogError(f"no {what} named {path!r}", location=DEFAULTS_FILE)
        node = children[part]
    return node


def _entry(path: str, catalog) -> OpsEntry:
    node = _node(path, catalog, "default")
    if not isinstance(node, OpsEntry):
        raise CatalogError(f"{path!r} is not an entry with a value", location=DEFAULTS_FILE)
    return node


def entry(path: str, catalog) -> dict[str, Any]:
    """The whole entry (``value``, ``source``, ``date``…) at a dotted path such as ``"lint.roce_dscp"``."""
    return _entry(path, catalog).model_dump(exclude_none=True)


def value(path: str, catalog) -> Any:
    """The ``value`` of the entry at a dotted path (treat containers as read-only)."""
    return _entry(path, catalog).value


def source(path: str, catalog) -> str:
    """The ``source`` of the entry at a dotted path."""
    return _entry(path, catalog).source


def group(path: str, catalog) -> dict[str, dict[str, Any]]:
    """A group of entries (e.g. ``"headroom.sonic.asic"``): name -> entry (as plain mappings, dumped
    once per catalog and shared: treat as read-only)."""
    node = _node(path, catalog, "default group")
    if isinstance(node, OpsEntry):
        raise CatalogError(f"{path!r} is not a group of entries", location=DEFAULTS_FILE)
    section = catalog.ops_defaults  # not None: _node checked it
    dumped = _cached(section, ("group", path), lambda: {
        name: child.model_dump(exclude_none=True) if isinstance(child, OpsEntry) else child.model_dump()
        for name, child in node.root.items()})
    return dumped  # shared between callers: treat as read-only, as every caller does


def where(path: str, catalog) -> str:
    """Where the entry at a dotted path comes from, for error messages: the overlay file that set
    it (``lint.yaml: ops_defaults.lint.roce_dscp``) or the bundled ``ops_defaults.yaml``."""
    catalog = require_catalog(catalog, "ops_defaults", path)
    try:
        origin = catalog.origin(f"ops_defaults.{path}")
    except Exception:  # noqa: BLE001 - an odd path only loses the overlay's name
        origin = "bundled"
    return f"{DEFAULTS_FILE if origin == 'bundled' else origin}: ops_defaults.{path}.value"


def number(path: str, catalog, lo: float | None = 0, hi: float | None = 1e12, integer: bool = False) -> Any:
    """The ``value`` at a dotted path, checked to be a finite number in ``lo..hi`` (an integer if
    ``integer``); a catalog overlay with anything else is a :class:`CatalogError` naming the file
    and path, never a crash or an infinite result further on."""
    raw = value(path, catalog)
    check_number(raw, where(path, catalog), lo, hi, integer)
    return raw


def check_number(raw: Any, location: str, lo: float | None = 0, hi: float | None = 1e12,
                 integer: bool = False) -> None:
    """Raise CatalogError at ``location`` unless ``raw`` is a finite (integer) number in ``lo..hi``."""
    kind = "an integer" if integer else "a number"
    ok_type = isinstance(raw, int) if integer else isinstance(raw, (int, float))
    if isinstance(raw, bool) or not ok_type or (isinstance(raw, float) and not math.isfinite(raw)):
        raise CatalogError(f"must be {kind}, got {str(raw)[:40]!r}", location=location)
    if (lo is not None and raw < lo) or (hi is not None and raw > hi):
        raise CatalogError(f"must be in {span(lo, hi)}, got {show(raw)}", location=location)


def span(lo: float | None, hi: float | None) -> str:
    """``0..63``; an open end is ``-inf``/``inf``."""
    def text(x: float) -> str:
        return f"{int(x):,}" if float(x).is_integer() and abs(x) < 1e15 else f"{x:g}"

    return f"{'-inf' if lo is None else text(lo)}..{'inf' if hi is None else text(hi)}"


def show(raw: Any) -> str:
    """A number short enough for a one-line error (``a 5,000-digit number`` for absurd ones)."""
    if isinstance(raw, int) and not isinstance(raw, bool) and len(str(abs(raw))) > 15:
        return f"a {len(str(abs(raw))):,}-digit number"
    return f"{raw:g}" if isinstance(raw, float) else str(raw)[:40]
