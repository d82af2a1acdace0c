"""Access to the dated, sourced default numbers of the catalog's ``ops_defaults`` section.

The numbers live in ``catalog/data/ops_defaults.yaml`` (overlayable with ``--catalog``). Every
accessor takes an optional ``catalog``; ``None`` means the bundled default catalog.
"""

from __future__ import annotations

from typing import Any

from fabricplan.catalog.catalog import default_catalog
from fabricplan.catalog.documents import OpsEntry, OpsGroup
from fabricplan.errors import CatalogError

DEFAULTS_FILE = "ops_defaults.yaml"


def _node(path: str, catalog, what: str) -> Any:
    node: Any = (catalog or default_catalog()).ops_defaults
    for part in path.split("."):
        children = node.root if isinstance(node, OpsGroup) else (
            {name: getattr(node, name) for name in type(node).model_fields} if not isinstance(node, OpsEntry)
            else {})
        if part not in children:
            raise CatalogError(f"no {what} named {path!r}", location=DEFAULTS_FILE)
        node = children[part]
    return node


def _entry(path: str, catalog=None) -> OpsEntry:
    node = _node(path, catalog, "default")
    if not isinstance(node, OpsEntry):
        raise CatalogError(f"{path!r} is not an entry with a value", location=DEFAULTS_FILE)
    return node


def entry(path: str, catalog=None) -> dict[str, Any]:
    """The whole entry (``value``, ``source``, ``date``…) at a dotted path such as ``"lint.roce_dscp"``."""
    return _entry(path, catalog).model_dump(exclude_none=True)


def value(path: str, catalog=None) -> Any:
    """The ``value`` of the entry at a dotted path (treat containers as read-only)."""
    return _entry(path, catalog).value


def source(path: str, catalog=None) -> str:
    """The ``source`` of the entry at a dotted path."""
    return _entry(path, catalog).source


def group(path: str, catalog=None) -> dict[str, dict[str, Any]]:
    """A group of entries (e.g. ``"headroom.sonic.asic"``): name -> entry (as plain mappings)."""
    node = _node(path, catalog, "default group")
    if isinstance(node, OpsEntry):
        raise CatalogError(f"{path!r} is not a group of entries", location=DEFAULTS_FILE)
    return {name: child.model_dump(exclude_none=True) if isinstance(child, OpsEntry) else child.model_dump()
            for name, child in node.root.items()}
