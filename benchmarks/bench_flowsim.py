"""Benchmark the flow-level simulator: a random permutation on k-ary 3-tier fat trees (k = 8 .. 20,
128 .. 2,000 hosts; k = 16 is the 1,024-host case), per routing: routing, one max-min allocation,
and completion times with max-min recomputed at every completion. Run:
``PYTHONPATH=src python benchmarks/bench_flowsim.py``; prints the median of 3 runs (wall seconds),
then the cold case (a fresh network: its path tables built by the first route) per size under ECMP,
build + route + completion times in one go, the figure issue 28's 100x goal is about.
"""

from __future__ import annotations

import statistics
import time

from fabricplan.catalog import default_catalog
from fabricplan.sim import traffic
from fabricplan.sim.maxmin import completion_times, max_min_rates
from fabricplan.sim.network import fat_tree
from fabricplan.sim.routing import route


def _median(fn, repeat: int = 3):
    times, value = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), value


def main() -> None:
    print("| hosts (k) | routing | route s | max-min s | completion times s | mean rate / line |")
    print("|---|---|---|---|---|---|")
    for k in (8, 12, 16, 20):
        network = fat_tree(k, 3, catalog=default_catalog())
        src, dst = traffic.permutation(network.n_hosts, seed=1)
        n = len(src)
        for routing in ("ecmp", "adaptive", "spray"):
            t_route, routed = _median(lambda: route(network, src, dst, routing=routing, seed=1))
            args = (routed.entry_flow, routed.entry_link)
            t_rates, rate = _median(lambda: max_min_rates(n, *args, network.capacity_gbps, routed.entry_weight))
            t_fct, _ = _median(lambda: completion_times([1e6] * n, *args, network.capacity_gbps, routed.entry_weight))
            print(f"| {network.n_hosts} ({k}) | {routing} | {t_route:.3f} | {t_rates:.4f} | {t_fct:.3f} | "
                  f"{rate.mean() / 100:.3f} |")
    print()
    print("| hosts (k) | cold: build + route + completion times s (ECMP, median of 3 fresh networks) |")
    print("|---|---|")
    for k in (16, 32):
        def cold(k=k):
            network = fat_tree(k, 3, catalog=default_catalog())
            src, dst = traffic.permutation(network.n_hosts, seed=1)
            routed = route(network, src, dst, routing="ecmp", seed=1)
            return completion_times([1e6] * len(src), routed.entry_flow, routed.entry_link, network.capacity_gbps,
                                    routed.entry_weight)
        t_cold, _ = _median(cold)
        print(f"| {k ** 3 // 4} ({k}) | {t_cold:.3f} |")


if __name__ == "__main__":
    main()
