"""One marked section of a generated document (docs/validation.md), replaced in place.

The validation scripts each own the text between their BEGIN and END markers; the rest of the file
is left as it is. A file without the markers gets the section appended."""

from __future__ import annotations

from pathlib import Path

from fabricplan.io import write_text_atomic


def write_section(path: str | Path, begin: str, end: str, section: str) -> None:
    """Replace the text from ``begin`` to ``end`` (both included in ``section``) in ``path``."""
    out = Path(path)
    text = out.read_text(encoding="utf-8") if out.exists() else ""
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        text = head + section.rstrip("\n") + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + section
    write_text_atomic(out, text, what="validation document")
