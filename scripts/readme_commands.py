"""The README's short command outputs, each from a run of the command it shows (written between markers).

    python scripts/readme_commands.py            # rewrite every block in README.md
    python scripts/readme_commands.py --check    # print them only

Each block is ``<!-- BEGIN command NAME (scripts/readme_commands.py) -->`` ... ``<!-- END command NAME -->``
around a console block of ``$ fabricplan ARGS`` and what the command printed at 80 columns.
tests/report/test_readme_commands.py runs them again and fails when the README has drifted.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"

#: name -> the arguments of ``fabricplan``
COMMANDS = {
    "collective-100g": ("collective", "--op", "all_reduce", "--size", "8GiB", "--gpus", "16", "--gpu",
                        "a100-sxm-80gb", "--fabric", "roce-v2", "--nic-speed", "100G", "--nics-per-gpu", "2"),
    "step-serving": ("step", "examples/inference-512-h100-disaggregated.yaml", "--fabric", "roce-v2", "--fabric",
                     "ethernet-tcp"),
}


def markers(name: str) -> tuple[str, str]:
    return f"<!-- BEGIN command {name} (scripts/readme_commands.py) -->", f"<!-- END command {name} -->"


def run(args: tuple[str, ...]) -> str:
    """What ``fabricplan ARGS`` prints at 80 columns, trailing spaces removed."""
    env = {**os.environ, "COLUMNS": "80", "NO_COLOR": "1", "TERM": "dumb",
           "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-m", "fabricplan.cli.app", *args], capture_output=True, text=True,
                         env=env, cwd=ROOT, check=True).stdout
    return "\n".join(line.rstrip() for line in out.splitlines()).strip("\n")


def shown(args: tuple[str, ...]) -> str:
    """The command line as the README shows it, wrapped under 100 characters with ``\\``."""
    words, lines, line = ["$", "fabricplan", *args], [], ""
    for word in words:
        if line and len(line) + len(word) + 1 > 96:
            lines.append(line + " \\")
            line = "     "
        line = f"{line} {word}" if line.strip() else f"{line}{word}"
    return "\n".join(lines + [line])


def block(name: str) -> str:
    begin, end = markers(name)
    args = COMMANDS[name]
    return f"{begin}\n```\n{shown(args)}\n{run(args)}\n```\n{end}"


def render(text: str) -> str:
    for name in COMMANDS:
        begin, end = markers(name)
        start, stop = text.index(begin), text.index(end) + len(end)
        text = text[:start] + block(name) + text[stop:]
    return text


def main(argv: list[str]) -> int:
    text = README.read_text(encoding="utf-8")
    new = render(text)
    if "--check" in argv:
        print("\n\n".join(block(name) for name in COMMANDS))
        return 0
    if new != text:
        from fabricplan.io import write_text_atomic

        write_text_atomic(README, new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
