"""Benchmark: size and cost 3 fabrics at 1k, 16k and 131,072 GPUs (run by hand).

    python benchmarks/bench_cost.py

Prints the median wall time of `fabricplan.cost` (sizing + BOM + TCO for all three fabrics) per
size, after one warm-up call (catalog loading is timed separately). The design's sizing memo is
cleared before every call, so each one sizes the fabrics afresh (a compare sizes each distinct
design once and reuses it; that reuse is not what this measures).
"""

from __future__ import annotations

import statistics
import time

from fabricplan.catalog import load_catalog
from fabricplan.cost import cost
from fabricplan.design import clear_cache
from fabricplan.spec import parse_spec

SIZES = (1024, 16384, 131072)
REPEATS = 20


def main() -> None:
    start = time.perf_counter()
    catalog = load_catalog()
    print(f"catalog load: {1e3 * (time.perf_counter() - start):.1f} ms")
    for gpus in SIZES:
        spec = parse_spec({"cluster": {"gpu": "h100-sxm", "gpus": gpus},
                           "fabrics": ["ethernet-tcp", "roce-v2", "infiniband-ndr"]})
        cost(spec, catalog)  # warm-up
        times = []
        for _ in range(REPEATS):
            clear_cache()
            start = time.perf_counter()
            report = cost(spec, catalog)
            times.append(time.perf_counter() - start)
        tiers = ", ".join(f"{f.fabric} {f.topology.tiers}-tier/{f.topology.total_switches:,} sw"
                          for f in report.fabrics)
        print(f"{gpus:>7,} GPUs x 3 fabrics: median {1e3 * statistics.median(times):.2f} ms, "
              f"max {1e3 * max(times):.2f} ms  ({tiers})")


if __name__ == "__main__":
    main()
