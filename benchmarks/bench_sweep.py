"""Benchmark: a 10,000-point sweep of analytic compares in-process, on the local process pool and on
a local Ray, and what each executor costs per point.

    python benchmarks/bench_sweep.py [--skip-ray] [--draws N]

The sweep: the bundled 1,024-GPU Llama-3 70B example over 5 cluster sizes x 10 InfiniBand switch
prices x 10 Ethernet switch prices x 4 oversubscriptions x 5 energy prices = 10,000 points, each a
quick compare of three fabrics (analytic model), with the catalog's Monte Carlo draws as `compare`
runs them (``--draws 0``: none, the point estimates only).

* Throughput: wall time of the whole run (start-up included), 2 workers for the pool and Ray.
* CPU per point: CPU seconds of this process and every process under it (pool workers; Ray's
  GCS, raylet and workers), read from /proc after the last batch, per point. The machine is
  shared, so wall times move with other people's load; CPU seconds much less. Overhead per point
  of an executor = its CPU per point minus in-process CPU per point, with the start-up (a 2-point
  run: spawning the pool, starting and stopping a local Ray) taken out.
* Driver cost per point (what bounds a cluster): enumerating and hashing a point, writing its row.
* Ray's cost per task: 300 one-point tasks on one worker against the same points in-process.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import yaml

from fabricplan.sweep import load_sweep
from fabricplan.sweep.run import run_sweep
from fabricplan.sweep.store import ResultStore

ROOT = Path(__file__).resolve().parents[1]
AXES = {"cluster.gpus": [512, 1024, 2048, 4096, 8192],
        "catalog.switches.sw_ib_qm9700.price_usd": {"low": 30000, "high": 75000, "steps": 10},
        "catalog.switches.sw_eth_th5.price_usd": {"low": 40000, "high": 175000, "steps": 10},
        "topology.oversubscription": [[1.0, 1.0], [1.5, 1.0], [2.0, 1.0], [3.0, 1.0]],
        "economics.energy_usd_per_kwh": {"low": 0.05, "high": 0.25, "steps": 5}}


def write(folder: Path, name: str, axes: dict, draws: int | None = None) -> Path:
    path = folder / f"{name}.yaml"
    extra = {} if draws is None else {"draws": draws}
    path.write_text(yaml.safe_dump({"name": name, "base": str(ROOT / "examples" / "llama70b-1024-h100.yaml"),
                                    "axes": axes, **extra}, sort_keys=False))
    return path


TICKS_PER_S = os.sysconf("SC_CLK_TCK")


def _processes() -> dict[int, tuple[int, float]]:
    """pid -> (parent pid, CPU seconds) of every process (Linux /proc)."""
    table = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as handle:
                text = handle.read()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        table[int(entry.name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / TICKS_PER_S)
    return table


class CpuMeter:
    """CPU seconds of this process and its live descendants, sampled; each pid's last sample counts."""

    def __init__(self) -> None:
        self.seen: dict[int, float] = {}
        self.base = self._tree()

    def _tree(self) -> dict[int, float]:
        table = _processes()
        children: dict[int, list[int]] = {}
        for pid, (parent, _cpu) in table.items():
            children.setdefault(parent, []).append(pid)
        found, stack = {}, [os.getpid()]
        while stack:
            pid = stack.pop()
            if pid in table:
                found[pid] = table[pid][1]
                stack.extend(children.get(pid, []))
        return found

    def sample(self, *_args) -> None:
        self.seen.update(self._tree())

    def total(self) -> float:
        self.sample()
        return sum(cpu - self.base.get(pid, 0.0) for pid, cpu in self.seen.items())


def timed(sweep, out: Path, **options) -> tuple[float, float, object]:
    """(wall s, CPU s of every process involved, summary)."""
    shutil.rmtree(out, ignore_errors=True)
    meter = CpuMeter()
    begin = time.perf_counter()
    summary = run_sweep(sweep, out, progress=meter.sample, **options)
    wall = time.perf_counter() - begin
    return wall, meter.total(), summary


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--skip-ray", action="store_true")
    parser.add_argument("--draws", type=int, default=None,
                        help="Monte Carlo draws of each point (default: the catalog's, as compare; 0: none)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="fpbench-", dir="/tmp"))
    ray_dir = str(work / "ray")
    results: dict[str, float] = {}
    sweep = load_sweep(write(work, "bench10k", AXES, args.draws))
    tiny = load_sweep(write(work, "tiny", {"cluster.gpus": [512, 1024]}, args.draws))
    n = sweep.total
    print(f"{n:,} points; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")

    # Driver side: enumeration + hashing, and writing rows.
    begin = time.perf_counter()
    ids = [sweep.point_id(values) for _index, values in sweep.points()]
    results["driver_enumerate_hash_us_per_point"] = (time.perf_counter() - begin) / len(ids) * 1e6

    wall, cpu_in, summary = timed(sweep, work / "inprocess", executor="inprocess")
    results |= {"inprocess_points_per_s": n / wall, "inprocess_cpu_ms_per_point": cpu_in / n * 1e3}
    print(f"in-process: {wall:.1f} s wall, {cpu_in:.1f} CPU s, {n / wall:,.0f} points/s")

    from fabricplan.sweep.store import read_results

    table, _ = read_results(work / "inprocess")
    rows = table.to_pylist()
    store = ResultStore(work / "rewrite", sweep)
    begin = time.perf_counter()
    for i in range(0, len(rows), 200):
        store.write(rows[i:i + 200])
    results["driver_write_us_per_point"] = (time.perf_counter() - begin) / len(rows) * 1e6

    executors = [("pool", "process")] + ([] if args.skip_ray else [("ray", "ray")])
    for label, executor in executors:
        options = {"executor": executor, "workers": 2}
        if executor == "ray":
            options["ray_temp_dir"] = ray_dir
        wall, cpu, summary = timed(sweep, work / label, **options)
        start_wall, start_cpu, _ = timed(tiny, work / f"tiny-{label}", **options)
        overhead = ((cpu - start_cpu) - cpu_in) / n
        results |= {f"{label}2_points_per_s": n / wall, f"{label}_startup_wall_s": start_wall,
                    f"{label}_startup_cpu_s": start_cpu, f"{label}_cpu_ms_per_point": cpu / n * 1e3,
                    f"{label}_overhead_cpu_ms_per_point": overhead * 1e3}
        print(f"{label}, 2 workers: {wall:.1f} s wall, {cpu:.1f} CPU s, {n / wall:,.0f} points/s, "
              f"{summary.batch_size} per batch; start-up {start_wall:.1f} s wall / {start_cpu:.1f} CPU s; "
              f"overhead {overhead * 1e3:.2f} CPU ms per point")
    if not args.skip_ray:
        k = 300
        _wall, cpu_k, _ = timed(sweep, work / "in-k", executor="inprocess", limit=k)
        _wall, start_cpu, _ = timed(tiny, work / "tiny-ray1", executor="ray", workers=1, ray_temp_dir=ray_dir)
        wall_tasks, cpu_tasks, _ = timed(sweep, work / "ray-tasks", executor="ray", workers=1, limit=k, batch_size=1,
                                         ray_temp_dir=ray_dir)
        per_task = (cpu_tasks - start_cpu - cpu_k) / k
        results["ray_overhead_cpu_ms_per_task"] = per_task * 1e3
        print(f"{k} one-point tasks on 1 Ray worker: {wall_tasks:.1f} s wall -> {per_task * 1e3:.2f} CPU ms per task "
              "beyond the point itself")
    results["load_average_end"] = os.getloadavg()[0]
    print(json.dumps({k: round(v, 3) for k, v in results.items()}, indent=2))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
