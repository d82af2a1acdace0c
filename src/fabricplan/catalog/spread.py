"""Every number of the catalog with its range (:class:`fabricplan.catalog.models.Spread`).

:func:`numbers` walks a catalog's entries and documents and yields each number (ints and floats;
not booleans, texts or dates) with its ``low``/``high`` and how the range was set: ``"source"`` (a
:class:`Range` with low and high, or a ``spread.ranges`` item: the sources' values), ``"confidence"``
(``spread.relative``: a stated confidence), ``"exact"`` (``spread.exact``) or ``"none"`` (not
covered: the bundled catalog has none, ``tests/catalog/test_spread.py``). The nearest enclosing
block with a ``spread`` covers a number. :func:`bounds` gives the range of one dotted path.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from pydantic import BaseModel, RootModel

from fabricplan.catalog.models import Range, Spread

KINDS = ("source", "confidence", "exact", "none")


class Number(NamedTuple):
    path: str
    value: float
    low: float
    high: float
    kind: str


def _walk(node: Any, path: tuple[str, ...], spread: tuple[Spread, int] | None) -> Iterator[Number]:
    if isinstance(node, RootModel):
        yield from _walk(node.root, path, spread)
        return
    if isinstance(node, Range):
        if node.low is not None and node.high is not None:
            yield Number(".".join(path), node.default, node.low, node.high, "source")
        else:
            yield _leaf(node.default, path, spread)
        return
    if isinstance(node, BaseModel):
        own = getattr(node, "spread", None)
        if isinstance(own, Spread):
            spread = (own, len(path))
        for key, value in node.__dict__.items():
            if key != "spread":
                yield from _walk(value, (*path, key), spread)
        return
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _walk(value, (*path, str(key)), spread)
        return
    if isinstance(node, (list, tuple)):
        for index, value in enumerate(node):
            yield from _walk(value, (*path, str(index)), spread)
        return
    if isinstance(node, (int, float)) and not isinstance(node, bool):
        yield _leaf(float(node), path, spread)


def _leaf(value: float, path: tuple[str, ...], spread: tuple[Spread, int] | None) -> Number:
    found = None
    if spread is not None:
        block, depth = spread
        found = block.bounds(".".join(path[depth:]), value)
    if found is None:
        return Number(".".join(path), value, value, value, "none")
    low, high, kind = found
    return Number(".".join(path), value, low, high, kind)


def numbers(catalog) -> Iterator[Number]:
    """Every number of ``catalog`` (entries, then documents) with its range (module docstring)."""
    for section, items in catalog.entries.items():
        for entry_id, entry in items.items():
            yield from _walk(entry, (section, entry_id), None)
    for name, document in catalog.documents.items():
        yield from _walk(document, (name,), None)


def bounds(catalog, path: str) -> tuple[float, float, float]:
    """``(low, value, high)`` of the number at a dotted path (a :class:`Range` path gives its default's
    range); a number without a range gives ``(value, value, value)``."""
    prefix = path.split(".")
    section = prefix[0]
    root = catalog.entries.get(section)
    if root is not None:
        start = catalog.get(section, prefix[1])
        walked = _walk(start, tuple(prefix[:2]), None)
    else:
        walked = _walk(catalog.documents[section], (section,), None)
    for number in walked:
        if number.path == path or (path.endswith(".default") and number.path == path[: -len(".default")]):
            return number.low, number.value, number.high
    raise KeyError(path)


def field_bounds(block, name: str) -> tuple[float, float, float]:
    """``(low, value, high)`` of the number ``name`` of one block (an entry, a perf parameter's
    ``value``) from the block's own ``spread``; ``(value, value, value)`` without one. The fast path
    the Monte Carlo uses (no walk)."""
    value = float(getattr(block, name))
    spread = getattr(block, "spread", None)
    found = spread.bounds(name, value) if isinstance(spread, Spread) else None
    return (value, value, value) if found is None else (found[0], value, found[1])


def without_spreads(catalog):
    """``catalog`` with the ``spread`` of every entry and ``perf_defaults`` parameter removed: their
    numbers become zero-width (what the Monte Carlo reads; nested blocks keep theirs)."""
    from dataclasses import replace

    from fabricplan.catalog.catalog import derived_revision

    entries = {section: {key: entry.model_copy(update={"spread": None}) for key, entry in items.items()}
               for section, items in catalog.entries.items()}
    documents = dict(catalog.documents)
    perf = catalog.perf_defaults
    parameters = {key: item.model_copy(update={"spread": None}) for key, item in perf.parameters.items()}
    documents["perf_defaults"] = perf.model_copy(update={"parameters": parameters})
    return replace(catalog, entries=entries, documents=documents,
                   revision=derived_revision(catalog.revision, "without_spreads"))
