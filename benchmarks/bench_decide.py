"""Benchmark: `fabricplan compare` on the 16,384-GPU example with the Monte Carlo (1,000 draws by
default) over the catalog's ranges, the design search and the crossover search, whole process.

    python benchmarks/bench_decide.py [--runs N]

Times the command as a user runs it (a new Python process: imports, catalog, spec, numbers, Monte
Carlo, scale curve with its per-size draws, crossovers, sensitivity, JSON output), median and max of
N runs (default 5); then, in-process, the Monte Carlo of the decision alone and the whole compare.
The issue-13 goal is under 2 s whole-process on the 2-core machine.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "llama405b-16k-h100.yaml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        begin = time.perf_counter()
        subprocess.run([sys.executable, "-m", "fabricplan.cli.app", "compare", str(EXAMPLE), "--json", "--quiet"],
                       check=True, stdout=subprocess.DEVNULL)
        walls.append(time.perf_counter() - begin)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    # CPU time (user + system) is what the process needs on an idle core; wall time also counts
    # waiting for a core on a shared machine.
    print(f"CLI `fabricplan compare {EXAMPLE.name} --json` (new process, 1,000 draws, crossovers, sensitivity): "
          f"wall median {statistics.median(walls):.2f} s (max {max(walls):.2f} s), CPU median "
          f"{statistics.median(cpus):.2f} s (max {max(cpus):.2f} s) over {runs} runs; load average "
          f"{__import__('os').getloadavg()[0]:.1f} on {__import__('os').cpu_count()} cores")

    from fabricplan.catalog import load_catalog
    from fabricplan.decide import compare, evaluate
    from fabricplan.spec import load_spec

    catalog = load_catalog()
    spec = load_spec(EXAMPLE, catalog)
    evaluate(spec, catalog, draws=1000)  # warm-up
    times = []
    for _ in range(runs):
        begin = time.perf_counter()
        decision = evaluate(spec, catalog, draws=1000)
        times.append(time.perf_counter() - begin)
    print(f"in-process evaluate with 1,000 draws: median {statistics.median(times):.3f} s "
          f"({len(decision.uncertainty.ranged_inputs)} ranged inputs drawn)")
    times = []
    for _ in range(runs):
        begin = time.perf_counter()
        report = compare(spec, catalog)
        times.append(time.perf_counter() - begin)
    print(f"in-process compare (all sections): median {statistics.median(times):.2f} s "
          f"({len(report.scale_curve)} scale points, {len(report.crossovers)} crossover rows, "
          f"{len(report.sensitivity)} sensitivity rows) -> {report.recommendation.recommended} "
          f"({report.recommendation.decided_by})")


if __name__ == "__main__":
    main()
