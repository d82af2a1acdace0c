"""Benchmark: `fabricplan compare` on every bundled example, with crossovers and sensitivity.

    python benchmarks/bench_compare.py

Times the whole command in-process (spec load, catalog, numbers, rules, crossover search over
scale, sensitivity), median of 5 runs after a warm-up, and the cold first run separately.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

from fabricplan.catalog import load_catalog
from fabricplan.decide import compare
from fabricplan.spec import load_spec

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
REPEATS = 5


def main() -> None:
    start = time.perf_counter()
    catalog = load_catalog()
    first = None
    for path in sorted(EXAMPLES.glob("*.yaml")):
        spec = load_spec(path, catalog)
        begin = time.perf_counter()
        report = compare(spec, catalog)
        cold = time.perf_counter() - begin
        if first is None:
            first = time.perf_counter() - start
        times = []
        for _ in range(REPEATS):
            begin = time.perf_counter()
            compare(spec, catalog)
            times.append(time.perf_counter() - begin)
        print(f"{path.name:<42} {spec.cluster.gpus:>7,} GPUs: first {cold:.2f} s, median {statistics.median(times):.2f} s "
              f"({len(report.scale_curve)} scale points, {len(report.crossovers)} crossovers, "
              f"{len(report.sensitivity)} sensitivity rows) -> {report.recommendation.recommended}")
    print(f"first compare including catalog load: {first:.2f} s")
    # The command as a user runs it: a fresh process, imports and all, no warm caches.
    for name in ("llama405b-16k-h100.yaml", "mid-128-h100-existing-ethernet.yaml"):
        walls = []
        for _ in range(3):
            begin = time.perf_counter()
            subprocess.run([sys.executable, "-m", "fabricplan.cli.app", "compare", str(EXAMPLES / name), "--json"],
                           check=True, stdout=subprocess.DEVNULL)
            walls.append(time.perf_counter() - begin)
        print(f"CLI `fabricplan compare {name} --json` (new process): median {statistics.median(walls):.2f} s, "
              f"max {max(walls):.2f} s")


if __name__ == "__main__":
    main()
