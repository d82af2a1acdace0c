"""Access to the dated, sourced default numbers in ``catalog/data/ops_defaults.yaml``."""

from __future__ import annotations

from typing import Any

from fabricplan.catalog.files import load_data_file
from fabricplan.errors import CatalogError

DEFAULTS_FILE = "ops_defaults.yaml"


def entry(path: str) -> dict[str, Any]:
    """The whole entry (``value``, ``source``, ``date``…) at a dotted path such as ``"lint.roce_dscp"``."""
    node: Any = load_data_file(DEFAULTS_FILE)
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            raise CatalogError(f"no default named {path!r}", location=DEFAULTS_FILE)
        node = node[part]
    if not isinstance(node, dict) or "value" not in node:
        raise CatalogError(f"{path!r} is not an entry with a value", location=DEFAULTS_FILE)
    return node


def value(path: str) -> Any:
    """The ``value`` of the entry at a dotted path (treat containers as read-only)."""
    return entry(path)["value"]


def source(path: str) -> str:
    """The ``source`` of the entry at a dotted path."""
    return str(entry(path).get("source", ""))


def group(path: str) -> dict[str, dict[str, Any]]:
    """A group of entries (e.g. ``"headroom.sonic.asic"``): name -> entry."""
    node: Any = load_data_file(DEFAULTS_FILE)
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            raise CatalogError(f"no default group named {path!r}", location=DEFAULTS_FILE)
        node = node[part]
    if not isinstance(node, dict) or "value" in node:
        raise CatalogError(f"{path!r} is not a group of entries", location=DEFAULTS_FILE)
    return node
