"""Render a `fabricplan compare --html` report to a PNG with headless Chromium (for the docs).

Run: ``python scripts/screenshot_report.py report.html [--output docs/img/compare-report.png]
[--width 1400 --height 2600]``. Needs /usr/bin/chromium (or ``--chromium PATH``). The page is
rendered offline: Chromium cannot resolve any host name, so the PNG shows what a reader without
network access sees.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fabricplan.report.headless import CHROMIUM, SCREENSHOT_WINDOW, screenshot

DEFAULT_OUTPUT = Path(__file__).resolve().parents[1] / "docs" / "img" / "compare-report.png"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path, help="HTML file written by fabricplan compare --html")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--width", type=int, default=SCREENSHOT_WINDOW[0])
    parser.add_argument("--height", type=int, default=SCREENSHOT_WINDOW[1])
    parser.add_argument("--chromium", type=Path, default=CHROMIUM)
    args = parser.parse_args(argv)
    if not args.report.is_file():
        print(f"error: no such file: {args.report}", file=sys.stderr)
        return 2
    if not args.chromium.exists():
        print(f"error: Chromium not found at {args.chromium}", file=sys.stderr)
        return 2
    output = screenshot(args.report, args.output, window=(args.width, args.height), chromium=args.chromium)
    print(output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
