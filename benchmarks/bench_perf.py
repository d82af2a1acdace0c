"""Benchmark the perf models: a 30-size all-reduce sweep for 3 fabrics at 16,384 GPUs, and step
times for 5 jobs x 3 fabrics. Run: ``python benchmarks/bench_perf.py``; prints timings and numbers.
"""

from __future__ import annotations

import time

from fabricplan.perf.collectives import collective_time, default_catalog
from fabricplan.perf.step import ClusterShape, step_time
from fabricplan.spec import JobSpec

FABRICS = ("infiniband-ndr", "roce-v2", "ethernet-tcp")
JOBS = [
    JobSpec(name="gpt3-175b", model="gpt3-175b", gpus=1024, tp=8, pp=16, global_batch_sequences=1536, seq_len_tokens=2048),
    JobSpec(name="llama3-8b", model="llama3-8b", gpus=2048, tp=1, pp=1, global_batch_sequences=4096,
            seq_len_tokens=8192, zero_stage=3),
    JobSpec(name="llama3-70b", model="llama3-70b", gpus=4096, tp=8, pp=4, global_batch_sequences=2048, seq_len_tokens=8192),
    JobSpec(name="llama3-405b", model="llama3-405b", tp=8, pp=16, global_batch_sequences=2048,
            seq_len_tokens=8192),
    JobSpec(name="mixtral-8x7b", model="mixtral-8x7b", gpus=1024, tp=2, pp=4, ep=8, global_batch_sequences=2048,
            seq_len_tokens=4096),
]


def main() -> None:
    catalog = default_catalog()
    gpu = catalog.gpu("h100-sxm")
    sizes = [8 * 2**i for i in range(30)]  # 8 B .. 4 GiB
    print("## all_reduce sweep, 16,384 H100 (2,048 nodes x 8), 30 sizes")
    for fabric in FABRICS:
        start = time.perf_counter()
        results = [collective_time("all_reduce", s, 16384, 8, fabric, gpu, catalog=catalog) for s in sizes]
        elapsed = time.perf_counter() - start
        small, big = results[0], results[-1]
        print(f"{fabric:16s} {elapsed * 1000:7.1f} ms | 8 B {small.time_us:8.1f} us ({small.algorithm}/"
              f"{small.protocol}) | 4 GiB busbw {big.busbw_gbytes_per_s:6.1f} GB/s ({big.algorithm}/{big.protocol})")
    cluster = ClusterShape(gpu=gpu, gpus=16384, gpus_per_node=8, scale_up_domain=8, nics_per_node=8)
    print("\n## step time, 5 jobs x 3 fabrics on a 16,384-H100 cluster (job sizes in the job list)")
    start = time.perf_counter()
    rows = [(job, fabric, step_time(job, cluster, fabric, catalog=catalog)) for job in JOBS for fabric in FABRICS]
    elapsed = time.perf_counter() - start
    for job, fabric, r in rows:
        exposed = sum(r.exposed_comm_s.values())
        print(f"{job.name:13s} {fabric:16s} step {r.step_time_s:8.3f} s  compute {r.compute_s:8.3f} s  "
              f"exposed comm {exposed:7.3f} s  MFU {r.mfu:5.1%}")
    print(f"15 step computations: {elapsed * 1000:.1f} ms")


if __name__ == "__main__":
    main()
