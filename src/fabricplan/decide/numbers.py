"""The quantitative half of the decision: performance and cost joined per fabric.

cost per useful GPU-hour = TCO / (GPUs x 8,760 h x horizon x weighted GPU utilisation)

where a job's GPU utilisation is the share of its step time the GPUs spend computing
(compute / step time, so exposed communication and the pipeline bubble count as waste) and the
weights are the jobs' shares of cluster time. Time not given to any job counts as idle. The cost of
one training run is the cluster's TCO per GPU-hour times the GPU-hours the run needs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from fabricplan.catalog import Catalog
from fabricplan.cost import Assumptions, FabricCost, cost_fabric
from fabricplan.cost.hardware import effective_profile
from fabricplan.cost.opex import HOURS_PER_YEAR
from fabricplan.decide.models import FabricOutcome, JobOutcome
from fabricplan.perf.flops import model_dims
from fabricplan.perf.latency import point_to_point_latency
from fabricplan.perf.step import ClusterShape, StepResult, achievable_fraction, step_time
from fabricplan.perf.step import cluster_shape as perf_cluster_shape
from fabricplan.spec import ClusterSpec, FabricChoice, JobSpec


def switches_across(tiers: int) -> int:
    """Switches on the longest shortest path of a folded Clos: up to the top tier and down again
    (1, 3, 5, 7 for 1-4 tiers); a fabric-less single node is quoted as one switch hop."""
    return max(2 * tiers - 1, 1)


@dataclass(frozen=True)
class Levers:
    """What-if adjustments applied on top of the spec and catalog (sensitivity analysis)."""

    efficiency_multiplier: float = 1.0  # scales the GPU's achievable fraction of peak


def cluster_shape(spec: ClusterSpec, catalog: Catalog, levers: Levers) -> ClusterShape:
    """The performance model's view of the cluster, with the efficiency lever applied."""
    shape = perf_cluster_shape(spec, catalog)
    if levers.efficiency_multiplier == 1.0:
        return shape
    gpu = shape.gpu
    base = achievable_fraction(gpu)  # the step model's own value, fallback included
    scaled = gpu.model_copy(update={"achievable_fraction_of_peak": min(1.0, base * levers.efficiency_multiplier)})
    return replace(shape, gpu=scaled)


def job_outcome(job: JobSpec, result: StepResult, hourly_cost_per_gpu_usd: float) -> JobOutcome:
    """One job's numbers on one fabric."""
    params_billion = model_dims(job.model).parameters() / 1e9
    exposed = sum(result.exposed_comm_s.values())
    run_gpu_hours = result.gpu_hours_for_budget
    return JobOutcome(
        job=job.name, share=job.share, gpus=result.gpus, step_time_s=result.step_time_s,
        compute_s=result.compute_s, bubble_s=result.bubble_s,
        exposed_comm_s=dict(result.exposed_comm_s), exposed_comm_share=exposed / result.step_time_s,
        comm_s=dict(result.total_comm_s), params_billion=params_billion,
        gpu_utilisation=result.compute_s / result.step_time_s, mfu=result.mfu,
        tokens_per_s=result.tokens_per_s, token_budget=result.token_budget, run_gpu_hours=run_gpu_hours,
        run_cost_usd=run_gpu_hours * hourly_cost_per_gpu_usd if run_gpu_hours is not None else None,
    )


def fabric_outcome(spec: ClusterSpec, catalog: Catalog, choice: FabricChoice, assumptions: Assumptions,
                   levers: Levers = Levers()) -> FabricOutcome:
    """Cost, performance and the joined metric for one fabric."""
    fabric_cost: FabricCost = cost_fabric(spec, catalog, choice, assumptions)
    profile = effective_profile(catalog, choice, fabric_cost.port_speed_gbps)
    shape = cluster_shape(spec, catalog, levers)
    gpus = spec.cluster.gpus
    gpu_hours_total = gpus * HOURS_PER_YEAR * assumptions.horizon_years
    if fabric_cost.cluster_tco_usd is not None:
        tco, basis = fabric_cost.cluster_tco_usd, "cluster"
    else:
        tco, basis = fabric_cost.network_tco_usd, "network"
    hourly_per_gpu = tco / gpu_hours_total
    jobs = [job_outcome(job, step_time(job, shape, profile, catalog=catalog), hourly_per_gpu) for job in spec.jobs]
    if jobs:
        utilisation = sum(j.share * j.gpu_utilisation for j in jobs)
        weighted_mfu = sum(j.share * j.mfu for j in jobs)
    else:  # no workload given: every GPU-hour counts as useful
        utilisation, weighted_mfu = 1.0, 0.0
    switch = catalog.switch(fabric_cost.switch_id)
    latency = point_to_point_latency(profile, switch.port_to_port_latency_ns,
                                     switches_across(fabric_cost.topology.tiers),
                                     host_links_in_rack=fabric_cost.topology.host_links_in_rack)
    useful = gpu_hours_total * utilisation
    return FabricOutcome(
        fabric=profile.id, name=profile.name, family=profile.family, cost=fabric_cost, jobs=jobs,
        weighted_gpu_utilisation=utilisation, weighted_mfu=weighted_mfu,
        small_message_latency_us=latency.total_us, gpu_hours_total=gpu_hours_total,
        useful_gpu_hours=useful, tco_usd=tco, tco_basis=basis,
        cost_per_useful_gpu_hour_usd=tco / useful if useful > 0 else float("inf"),
    )
