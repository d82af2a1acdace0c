"""Dotted paths into a spec document (the parsed YAML/JSON, before validation), like the catalog's.

``cluster.gpus``, ``topology.oversubscription``, ``economics.energy_usd_per_kwh``: mapping keys.
List items by index (``jobs.0.tp``) or by name: a job by its ``name`` (``jobs.llama3-70b-pretrain.tp``),
a fabric by its profile id (``fabrics.infiniband-ndr.switch``; a fabric written as a bare id becomes
``{profile: <id>, switch: ...}``). A key the document leaves out (a default) is created, so
``cluster.nic_speed_gbps`` can be set on a spec that does not mention it; whether the field exists is
for the spec's validation (:func:`fabricplan.spec.parse_spec`) to say.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from fabricplan.errors import InputError

#: The fields that name an item of a list in a spec (jobs by name, fabrics by profile).
ITEM_KEYS = ("name", "profile")


def split_path(path: str) -> list[str]:
    if not isinstance(path, str) or not path or any(not part for part in path.split(".")):
        raise InputError(f"a spec path is dot-separated names, e.g. cluster.gpus or jobs.0.tp; got {path!r}")
    return path.split(".")


def _item_index(items: list[Any], segment: str) -> int | None:
    if segment.isdigit():
        return int(segment) if int(segment) < len(items) else None
    for index, item in enumerate(items):
        if item == segment or (isinstance(item, Mapping) and any(item.get(k) == segment for k in ITEM_KEYS)):
            return index
    return None


def get_path(document: Any, path: str) -> Any:
    """The value at a dotted path of a spec document; InputError naming the failing segment."""
    node = document
    segments = split_path(path)
    for i, segment in enumerate(segments):
        where = ".".join(segments[:i]) or "the spec"
        if isinstance(node, Mapping):
            if segment not in node:
                raise InputError(f"no '{segment}' in {where}; it has: {', '.join(map(str, node)) or 'nothing'}",
                                 location=f"spec path {path}")
            node = node[segment]
        elif isinstance(node, list):
            index = _item_index(node, segment)
            if index is None:
                raise InputError(f"'{segment}' is neither an index (0..{len(node) - 1}) nor the name of an item "
                                 f"of {where}", location=f"spec path {path}")
            node = node[index]
        else:
            raise InputError(f"{where} is a value ({node!r}); it has no '{segment}'", location=f"spec path {path}")
    return node


def _set(node: Any, segments: list[str], i: int, value: Any, path: str) -> Any:
    if i == len(segments):
        return copy.deepcopy(value)
    segment = segments[i]
    where = ".".join(segments[:i]) or "the spec"
    if node is None:
        node = {}
    if isinstance(node, str) and segments[0] == "fabrics" and i == 2:
        node = {"profile": node}  # a fabric given as a bare profile id, now with an override
    if isinstance(node, Mapping):
        updated = dict(node)
        updated[segment] = _set(node.get(segment), segments, i + 1, value, path)
        return updated
    if isinstance(node, list):
        index = _item_index(node, segment)
        if index is None:
            raise InputError(f"'{segment}' is neither an index (0..{len(node) - 1}) nor the name of an item of "
                             f"{where}", location=f"spec path {path}")
        items = list(node)
        items[index] = _set(items[index], segments, i + 1, value, path)
        return items
    raise InputError(f"{where} is a value ({node!r}); it has no '{segment}'", location=f"spec path {path}")


def with_values(document: Mapping[str, Any], values: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the spec document with the values at dotted paths set (the input is unchanged).

    Validate the result with :func:`fabricplan.spec.parse_spec`."""
    if not isinstance(document, Mapping):
        raise InputError(f"a spec document is a mapping, got {type(document).__name__}")
    result: Any = dict(document)
    for path, value in values.items():
        result = _set(result, split_path(path), 0, value, path)
    return result
