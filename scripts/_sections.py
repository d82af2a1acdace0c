"""One marked section of a generated document (docs/validation.md), replaced in place.

The validation scripts each own the text between their BEGIN and END markers; the rest of the file
is left as it is. A file without the markers gets the section appended."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from fabricplan.io import write_text_atomic

DOCUMENT = Path(__file__).resolve().parents[1] / "docs" / "validation.md"


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


def section_main(description: str, begin: str, end: str, render: Callable[[], tuple[str, list[str]]],
                 argv: list[str] | None = None) -> int:
    """The command line every section script shares: ``--output`` (default docs/validation.md) and
    ``--check`` (print, do not write); ``render()`` gives the section and the rows past tolerance,
    each printed on stderr. Exit 1 when any row is past tolerance, else 0."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--output", default=str(DOCUMENT))
    parser.add_argument("--check", action="store_true", help="compare and print only; do not write")
    args = parser.parse_args(argv)
    section, failures = render()
    if args.check:
        print(section)
    else:
        write_section(args.output, begin, end, section)
    for failure in failures:
        print(f"past tolerance: {failure}", file=sys.stderr)
    return 1 if failures else 0
