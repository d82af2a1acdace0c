"""The spec at another cluster size: the same job mix weak-scaled, as the chain evaluates it there.

The scale search, the crossovers and the sweep ask the chain what each size costs; these functions
say what "the same workload at N GPUs" is (model parallelism kept, data parallelism and the global
batch grown with the GPUs) and whether it lays out and fits in GPU memory there.
"""

from __future__ import annotations

import math

from pydantic import ValidationError

from fabricplan.catalog import Catalog
from fabricplan.spec import ClusterSpec, JobSpec


def _scaled_serving(job, gpus: int, cluster_gpus: int):
    """A serving job at another cluster size: its replicas (tp x ep) kept, their number, the prefill
    replicas' share and the request rate grown or shrunk with its GPUs (weak scaling: the same load
    per GPU); a job given a fixed GPU count keeps it when it fits. None if no replica fits or a
    disaggregated job would lose its prefill or decode pool."""
    from fabricplan.spec.serving import ServingJobSpec

    replica = job.replica_gpus
    original = job.gpus or cluster_gpus
    job_gpus = min(job.gpus, gpus) if job.gpus is not None else gpus
    job_gpus -= job_gpus % replica
    if job_gpus < replica:
        return None
    update = {"gpus": None if job.gpus is None else job_gpus,
              "request_rate_per_s": job.request_rate_per_s * job_gpus / original}
    if job.disaggregated:
        prefill = round(job.prefill_gpus * job_gpus / original / replica) * replica
        if prefill < replica or prefill >= job_gpus:
            return None
        update["prefill_gpus"] = prefill
    try:
        return ServingJobSpec.model_validate({**job.model_dump(), **update})
    except ValidationError:
        return None


def _scaled_job(job: JobSpec, gpus: int, cluster_gpus: int) -> JobSpec | None:
    """The same job at another cluster size (weak scaling), or None if its parallelism cannot fit.

    Model parallelism (tp, pp, cp, ep) stays; data parallelism grows or shrinks with the GPUs, and
    so does the global batch, keeping the sequences per data-parallel replica (and so the number of
    micro-batches per pipeline) as in the spec. A job given a fixed GPU count keeps it when it fits;
    a job sized by `dp` alone keeps its fraction of the cluster. A serving job: :func:`_scaled_serving`.
    """
    if job.kind == "serving":
        return _scaled_serving(job, gpus, cluster_gpus)
    model_parallel = job.tp * job.pp * job.cp
    if job.gpus is not None:
        original_gpus, job_gpus = job.gpus, min(job.gpus, gpus)
    elif job.dp is not None:
        original_gpus = job.dp * model_parallel
        job_gpus = original_gpus * gpus // cluster_gpus // model_parallel * model_parallel
    else:
        original_gpus, job_gpus = cluster_gpus, gpus
    if job_gpus < model_parallel or job_gpus % model_parallel:
        return None
    dp = job_gpus // model_parallel
    if (dp * job.cp) % job.ep:
        return None
    original_dp = max(original_gpus // model_parallel, 1)
    per_replica = max(job.global_batch_sequences // original_dp, job.micro_batch_sequences)
    per_replica -= per_replica % job.micro_batch_sequences
    try:  # validated again: a weak-scaled batch may leave the spec's bounds (e.g. over 10^9 sequences)
        return JobSpec.model_validate({**job.model_dump(), "gpus": None if job.gpus is None else job_gpus,
                                       "dp": None if job.dp is None else dp,
                                       "global_batch_sequences": per_replica * dp})
    except ValidationError:
        return None


def jobs_left_out(spec: ClusterSpec, gpus: int) -> list[str]:
    """Jobs of the spec whose parallelism cannot be laid out on `gpus` GPUs."""
    return [job.name for job in spec.jobs if _scaled_job(job, gpus, spec.cluster.gpus) is None]


def jobs_out_of_memory(spec: ClusterSpec, catalog: Catalog, gpus: int) -> list[str]:
    """Jobs of the spec that lay out on `gpus` GPUs but cannot fit in GPU memory there, even with
    full activation recomputation (fewer data-parallel ranks shard less of the optimizer state;
    fabricplan.perf.memory.least_memory)."""
    return [job.name for job in spec.jobs
            if (scaled := _scaled_job(job, gpus, spec.cluster.gpus)) is not None
            and not _fits_memory(scaled, gpus, spec, catalog)]


def _fits_memory(job: JobSpec, gpus: int, spec: ClusterSpec, catalog: Catalog) -> bool:
    from fabricplan.design import cluster_gpu
    from fabricplan.perf.flops import model_dims
    from fabricplan.perf.memory import least_memory

    if job.kind == "serving":
        from fabricplan.perf.serving import replica_holds

        return replica_holds(job, model_dims(job.model, catalog), cluster_gpu(spec, catalog), catalog)
    return least_memory(job, model_dims(job.model, catalog), cluster_gpu(spec, catalog), gpus=job.gpus or gpus,
                        catalog=catalog).fits


def scaled_spec(spec: ClusterSpec, gpus: int, catalog: Catalog) -> ClusterSpec | None:
    """The spec at another GPU count (jobs scaled with it); None if no job fits at that size. A job
    that cannot fit in GPU memory at that size (the catalog's GPU and model) is left out too."""
    cluster = spec.cluster
    if gpus % cluster.domain_gpus:
        return None
    domain = cluster.scale_up_domain
    if domain is not None and domain > gpus:
        domain = None
    jobs = [scaled for job in spec.jobs if (scaled := _scaled_job(job, gpus, cluster.gpus)) is not None
            and _fits_memory(scaled, gpus, spec, catalog)]
    if spec.jobs and not jobs:
        return None
    data = spec.model_dump(exclude_unset=True)  # fields the user left open stay open (design search)
    data["cluster"].update(gpus=gpus, scale_up_domain=domain)
    data["cluster"].pop("grow_to_gpus", None)  # the curve asks what each size costs built for itself
    data["jobs"] = [job.model_dump() for job in jobs]
    try:
        return ClusterSpec.model_validate(data)
    except ValidationError:  # this size breaks a bound of the spec: it is not evaluated
        return None


def full_mix_spec(spec: ClusterSpec, gpus: int, catalog: Catalog) -> ClusterSpec | None:
    """The spec at ``gpus`` GPUs if every job of the mix lays out (and fits in memory) there, with
    data parallelism re-laid for the size (:func:`_scaled_job`); else None. Sizes where part of the
    mix is left out would compare a different workload, so the scale curve skips them."""
    scaled = scaled_spec(spec, gpus, catalog)
    if scaled is None or len(scaled.jobs) != len(spec.jobs):
        return None
    return scaled


def layout_unit(spec: ClusterSpec) -> int:
    """GPUs between two sizes where the whole job mix can lay out: whole nodes and whole model
    replicas (tp x pp x cp) of every job whose data parallelism grows with the cluster."""
    unit = spec.cluster.domain_gpus
    for job in spec.jobs:
        if job.gpus is None:
            unit = math.lcm(unit, job.replica_gpus if job.kind == "serving" else job.tp * job.pp * job.cp)
    return unit


def tier_capacities_gpus(spec: ClusterSpec, radix: int, style: str) -> dict[int, int]:
    """GPUs each tier count of a design (its switch radix and style) holds at most, for the spec's
    nodes, oversubscription and reserved leaf ports (:func:`fabricplan.topology.tier_capacities`)."""
    from fabricplan.topology import tier_capacities

    cluster = spec.cluster
    nodes = tier_capacities(nics_per_node=cluster.domain_nics, radix=radix, style=style,
                            oversubscription=tuple(spec.topology.oversubscription),
                            reserved_leaf_ports=spec.topology.reserved_leaf_ports, nics_per_host=cluster.nics_per_node)
    return {tiers: count * cluster.domain_gpus for tiers, count in nodes.items()}
