"""Shared CLI helpers: consoles, JSON output and error reporting."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Console

if TYPE_CHECKING:
    from fabricplan.catalog import Catalog

# Tables and reports go to stdout; progress and errors go to stderr so that `--json`
# leaves stdout holding one JSON document and nothing else. No console markup: spec, job and
# fabric names are user text, and "[/]" in one must print as-is, not raise rich's MarkupError.
class _Console(Console):
    """A console whose plain-text arguments are printed with control characters escaped
    (:func:`fabricplan.errors.printable`; newlines and tabs kept): names read from the user's files
    (hosts, jobs, specs) never reach the terminal as escape sequences. Styled ``Text`` is the
    program's own and prints as it is."""

    def print(self, *objects: Any, **kwargs: Any) -> None:  # type: ignore[override]
        from fabricplan.errors import printable

        super().print(*(printable(o, keep_newlines=True) if isinstance(o, str) else o for o in objects), **kwargs)


stdout = _Console(markup=False)
stderr = _Console(stderr=True, markup=False)


def emit_json(value: Any, *, catalog: Catalog | str | None) -> None:
    """Print one JSON document: ``value`` stamped with the tool's version and the hash of ``catalog``,
    the catalog the command used (None: it used none); :mod:`fabricplan.report.json_document`."""
    from fabricplan.report.json_document import document_text

    print(document_text(value, catalog_digest(catalog)))


def catalog_digest(catalog: Catalog | str | None) -> str | None:
    """The ``catalog_sha256`` of a document: the catalog's content hash, a hash recorded with the
    results (``sweep report``), or None when the command used no catalog."""
    if catalog is None or isinstance(catalog, str):
        return catalog
    return catalog.content_sha256()
