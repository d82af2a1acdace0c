"""Step estimates per second: many ``step_time`` calls on a fixed job mix, and the same mix on
another commit in the same run.

Run: ``python benchmarks/bench_step.py [--calls 300] [--repeats 5] [--against REF]``. Each repeat
times ``--calls`` step estimates (the five jobs of ``bench_perf.py`` x three fabrics on a 16,384-H100
cluster, cycled), in a new process per repeat so both sides pay the same imports and caches. With
``--against REF`` (a git commit, e.g. the one a branch started from) the same script runs on that
commit's source tree (``git archive`` into a temporary folder), alternating with the working tree,
and the ratio of the medians is printed (above 1: the working tree is faster).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FABRICS = ("infiniband-ndr", "roce-v2", "ethernet-tcp")


def _jobs():
    from fabricplan.spec import JobSpec

    return [
        JobSpec(name="gpt3-175b", model="gpt3-175b", gpus=1024, tp=8, pp=16, global_batch_sequences=1536,
                seq_len_tokens=2048),
        JobSpec(name="llama3-8b", model="llama3-8b", gpus=2048, tp=1, pp=1, global_batch_sequences=4096,
                seq_len_tokens=8192, zero_stage=3),
        JobSpec(name="llama3-70b", model="llama3-70b", gpus=4096, tp=8, pp=4, global_batch_sequences=2048,
                seq_len_tokens=8192),
        JobSpec(name="llama3-405b", model="llama3-405b", tp=8, pp=16, global_batch_sequences=2048,
                seq_len_tokens=8192),
        JobSpec(name="mixtral-8x7b", model="mixtral-8x7b", gpus=1024, tp=2, pp=4, ep=8, global_batch_sequences=2048,
                seq_len_tokens=4096),
    ]


def measure(calls: int) -> dict:
    """Step estimates per second over ``calls`` calls after one warm-up pass (this process)."""
    from fabricplan.catalog import default_catalog
    from fabricplan.perf.step import ClusterShape, step_time

    catalog = default_catalog()
    cluster = ClusterShape(gpu=catalog.gpu("h100-sxm"), gpus=16384, gpus_per_node=8, scale_up_domain=8,
                           nics_per_node=8)
    cases = [(job, fabric) for job in _jobs() for fabric in FABRICS]
    for job, fabric in cases:  # warm-up: catalog reads, memoised designs
        step_time(job, cluster, fabric, catalog=catalog)
    start = time.perf_counter()
    for i in range(calls):
        job, fabric = cases[i % len(cases)]
        step_time(job, cluster, fabric, catalog=catalog)
    elapsed = time.perf_counter() - start
    return {"calls": calls, "seconds": elapsed, "per_s": calls / elapsed}


def _run(src: Path, calls: int) -> float:
    env = dict(os.environ, PYTHONPATH=f"{src / 'src'}{os.pathsep}{src}")
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_step.py"), "--child", str(calls)],
                         env=env, check=True, capture_output=True, text=True, cwd=src).stdout
    return json.loads(out.strip().splitlines()[-1])["per_s"]


def _export(ref: str, into: Path) -> Path:
    archive = into / "ref.tar"
    subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", "-o", str(archive), ref], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "tree", filter="data")
    return into / "tree"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--against", help="a git commit to time the same mix on, alternating")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args.child)))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        other = _export(args.against, Path(tmp)) if args.against else None
        here, there = [], []
        for _ in range(args.repeats):
            here.append(_run(ROOT, args.calls))
            if other is not None:
                there.append(_run(other, args.calls))
    print(f"working tree: {statistics.median(here):,.0f} step estimates/s (median of {len(here)}; "
          f"{min(here):,.0f}-{max(here):,.0f})")
    if there:
        print(f"{args.against}: {statistics.median(there):,.0f} step estimates/s (median of {len(there)}; "
              f"{min(there):,.0f}-{max(there):,.0f})")
        print(f"ratio working tree / {args.against}: {statistics.median(here) / statistics.median(there):.2f} "
              "(medians; the runs alternate)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
