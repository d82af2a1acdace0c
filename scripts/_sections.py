"""One marked section of a generated document (docs/validation.md), replaced in place.

The validation scripts each own the text between their BEGIN and END markers; the rest of the file
is left as it is. A file without the markers gets the section appended."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from fabricplan.io import write_text_atomic

ROOT = Path(__file__).resolve().parents[1]
DOCUMENT = ROOT / "docs" / "validation.md"


def cli_env() -> dict[str, str]:
    """The environment the docs' commands run in: 80 columns, no colour, this checkout's package first."""
    return {**os.environ, "COLUMNS": "80", "NO_COLOR": "1", "TERM": "dumb",
            "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}


def run_fabricplan(args, exit_codes: tuple[int, ...] = (0, 1), stdin: str | None = None) -> str:
    """Run ``fabricplan ARGS`` from the repository root in :func:`cli_env`; its stdout (the exit code
    must be one of ``exit_codes``; ``stdin``: the text on its standard input)."""
    result = subprocess.run([sys.executable, "-m", "fabricplan.cli.app", *args], capture_output=True, text=True,
                            env=cli_env(), cwd=ROOT, check=False, input=stdin)
    if result.returncode not in exit_codes:
        raise RuntimeError(f"fabricplan {' '.join(args)} exited {result.returncode}: {result.stderr.strip()}")
    return result.stdout


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
