"""Benchmark: start-up cost of the `fabricplan` command, as a ratio to a bare-imports baseline.

    python benchmarks/bench_startup.py [--runs N]

Measures, in new processes, the wall time of
  (a) ``fabricplan --help`` and
  (b) ``fabricplan step examples/llama70b-1024-h100.yaml`` (the 1,024-GPU example)
against the baseline ``python -c "import numpy, pydantic, yaml, rich"`` (the libraries any command
needs). Each case runs in A/B pairs with the baseline, alternating which goes first, N pairs after
one warm-up pair; the report gives the medians and the median of the per-pair ratios (pairing
cancels slow drifts of a shared machine). The command is run as ``python -m fabricplan.cli.app``
with ``PYTHONPATH`` set to this checkout's ``src``, so it measures the code next to this script.
Python's bytecode cache is on, as on an installed package (pip compiles it at install time): a
``PYTHONDONTWRITEBYTECODE`` in the environment would make every run recompile every module, which
no user sees; the warm-up run writes the cache.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = [sys.executable, "-c", "import numpy, pydantic, yaml, rich"]
CASES = {
    "--help": [sys.executable, "-m", "fabricplan.cli.app", "--help"],
    "step (1,024 GPUs)": [sys.executable, "-m", "fabricplan.cli.app", "step",
                          str(ROOT / "examples" / "llama70b-1024-h100.yaml")],
}
TARGETS = {"--help": 1.5, "step (1,024 GPUs)": 2.5}  # the start-up issue's goals [x baseline]


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), *filter(None, [env.get("PYTHONPATH")])])
    return env


def _time(command: list[str], env: dict[str, str]) -> float:
    """Wall time [s] of one run; the command must succeed."""
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=ROOT)
    return time.perf_counter() - start


def measure(command: list[str], runs: int, env: dict[str, str]) -> tuple[list[float], list[float]]:
    """(command times, baseline times) [s] over `runs` alternating pairs after one warm-up pair."""
    _time(command, env)
    _time(BASELINE, env)
    ours, base = [], []
    for i in range(runs):
        if i % 2:
            base.append(_time(BASELINE, env))
            ours.append(_time(command, env))
        else:
            ours.append(_time(command, env))
            base.append(_time(BASELINE, env))
    return ours, base


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="measured pairs per case (default 15)")
    args = parser.parse_args()
    env = _environment()
    print(f"{'case':<20} {'median (s)':>10} {'baseline (s)':>12} {'ratio':>6} {'target':>7}")
    for name, command in CASES.items():
        ours, base = measure(command, args.runs, env)
        ratio = statistics.median(o / b for o, b in zip(ours, base))
        print(f"{name:<20} {statistics.median(ours):>10.3f} {statistics.median(base):>12.3f} "
              f"{ratio:>5.2f}x {TARGETS[name]:>6.1f}x")
    print(f"({args.runs} pairs per case after a warm-up; ratio = median of per-pair ratios)")


if __name__ == "__main__":
    main()
