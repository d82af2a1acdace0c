"""The README's fleet example, from a `fabricplan fleet` run (written between markers).

    python scripts/readme_fleet.py            # rewrite the section in README.md
    python scripts/readme_fleet.py --check    # print it only

The run: the bundled job mix on 16,384 H100 (examples/fleets/mix-16k-h100.yaml), RoCE, a week
sampled at four instants, jobs placed at random (a scheduler that ignores the topology), at 80
columns. tests/report/test_readme_fleet.py renders it again and fails when the README has drifted.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _sections import section_main  # noqa: E402

README = ROOT / "README.md"
BEGIN = "<!-- BEGIN fleet example (scripts/readme_fleet.py) -->"
END = "<!-- END fleet example -->"
COMMAND = ("fleet", "examples/fleets/mix-16k-h100.yaml", "--fabric", "roce-v2", "--policy", "random",
           "--days", "7", "--samples", "4")


def render() -> tuple[str, list[str]]:
    from rich.console import Console

    import fabricplan as fp
    from fabricplan.report.fleet_output import fleet_renderable

    results = fp.fleet(ROOT / COMMAND[1], "roce-v2", policy="random", days=7, samples=4)
    console = Console(width=80, record=True, force_terminal=False, color_system=None)
    console.print(fleet_renderable(results))
    text = "\n".join(line.rstrip() for line in console.export_text().splitlines()).strip("\n")
    section = f"{BEGIN}\n```console\n$ fabricplan {' '.join(COMMAND)}\n{text}\n```\n{END}\n"
    return section, []


if __name__ == "__main__":
    sys.exit(section_main(__doc__.splitlines()[0], BEGIN, END, render, ["--output", str(README), *sys.argv[1:]]))
