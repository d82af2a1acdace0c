"""Benchmark: `compare` with the Monte Carlo on one spec (default: the 16,384-GPU example).

    python benchmarks/bench_compare_draws.py [SPEC] [--draws N] [--repeats N]

Runs ``compare(spec, catalog, draws=N)`` once to warm the caches, then ``repeats`` times, and
prints the mean seconds per compare. Pair it against another checkout (the same script with that
checkout's ``src`` on PYTHONPATH, alternated) to compare two versions on a noisy machine.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from fabricplan.catalog import load_catalog
from fabricplan.decide import compare
from fabricplan.spec import load_spec

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "llama405b-16k-h100.yaml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("spec", nargs="?", default=str(EXAMPLE))
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    catalog = load_catalog()
    spec = load_spec(args.spec, catalog)
    compare(spec, catalog, draws=args.draws)
    start = time.perf_counter()
    for _ in range(args.repeats):
        compare(spec, catalog, draws=args.draws)
    print(f"{(time.perf_counter() - start) / args.repeats:.3f} s per compare ({args.draws} draws)")


if __name__ == "__main__":
    main()
