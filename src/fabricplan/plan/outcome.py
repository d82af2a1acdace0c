"""The last step of the model chain: one fabric's cost and its jobs' step times joined.

cost per useful GPU-hour = TCO / (GPUs x 8,760 h x horizon x sum over jobs of share x utilisation x goodput)

where a job's GPU utilisation is the share of its step time the GPUs spend computing
(compute / step time, so exposed communication and the pipeline bubble count as waste), its
goodput the share of its time not lost to interruptions, checkpoints and restarts
(:mod:`fabricplan.plan.goodput`: its parts' failure rates, Daly's checkpoint interval), and the
weights are the jobs' shares of cluster time. Time not given to any job counts as idle. The cost of
one training run is the cluster's TCO per GPU-hour times the GPU-hours the run needs.

:class:`FabricOutcome` and :class:`JobOutcome` are what ``decide`` weighs and ``report`` renders;
JSON keys carry their units.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, Field

from fabricplan.catalog import Catalog
from fabricplan.catalog.inputs import Inputs, Num, divide, is_array
from fabricplan.cost import Assumptions, FabricCost
from fabricplan.cost.opex import HOURS_PER_YEAR
from fabricplan.design import FabricDesign
from fabricplan.errors import InputError
from fabricplan.fleet.failures import parts_that_slow, parts_that_stop, plane_port_pace, reroute_survives
from fabricplan.perf.flops import model_dims
from fabricplan.perf.latency import point_to_point_latency
from fabricplan.perf.memory import GIB
from fabricplan.perf.step import StepResult
from fabricplan.plan.goodput import Goodput, failure_rates_per_hour, job_goodput
from fabricplan.spec import ClusterSpec, JobSpec


class ServingOutcome(BaseModel):
    """A serving job's numbers on one fabric (``fabricplan.perf.serving``); JSON keys carry units."""

    tokens_per_s_per_gpu: Num = Field(description="Output tokens served per second per GPU of the job")
    served_tokens_per_s: Num = Field(description="Output tokens served per second by the job")
    offered_tokens_per_s: float = Field(description="Output tokens per second the requests ask for")
    cost_per_million_tokens_usd: Num | None = Field(
        description="Cluster TCO per GPU-hour x the job's GPUs per million output tokens of requests within both "
                    "SLOs, failures included; None when no request meets them")
    ttft_ms: float = Field(description="Mean time to first token: queueing, prefill and the KV transfer")
    tpot_ms: float = Field(description="Time per output token (one decode iteration, prefill interference "
                                       "included when colocated)")
    ttft_slo_ms: float
    tpot_slo_ms: float
    slo_attainment: float = Field(description="Share of requests served within both SLOs")
    kv_transfer_ms: float = Field(description="One request's KV cache from prefill to decode (0 colocated)")
    kv_bytes_per_request: float = Field(description="A request's KV cache after prefill [bytes]")
    kv_fabric_gbytes_per_s: float = Field(description="KV cache the fabric carries [GB/s]")
    decode_batch: float = Field(description="Sequences a decode replica batches (Little's law)")
    prefill_utilisation: float = Field(description="Busy share of the prefill replicas")
    weight_sync_ms: float = Field(description="One weight update broadcast to the replicas (0 without)")
    weight_pause_share: float = Field(description="Share of replica time paused for weight updates")
    disaggregated: bool
    overloaded: bool = Field(description="The replicas cannot keep up with the request rate")


class JobOutcome(BaseModel):
    """One job of the mix on one fabric."""

    job: str
    share: float = Field(description="Share of the horizon's cluster time (within a phase: times its hours share)")
    phase: str | None = Field(default=None, description="The phase the job runs in (spec.phases)")
    gpus: int
    step_time_s: Num
    compute_s: Num
    bubble_s: float
    exposed_comm_s: dict[str, float] = Field(description="Exposed communication per kind: tp, pp, dp, ep, cp")
    exposed_comm_share: Num = Field(description="Exposed communication / step time")
    comm_s: dict[str, float] = Field(default_factory=dict,
                                     description="All communication per kind, hidden or not [s per step]")
    params_billion: float = Field(default=0.0, description="Model parameters [billions]")
    gpu_utilisation: Num = Field(description="Share of step time the GPUs compute (compute / step)")
    mfu: Num
    tokens_per_s: Num
    token_budget: float | None
    goodput: Num = Field(default=1.0, description="Share of the job's time not lost to interruptions")
    interruptions_per_day: Num = Field(default=0.0, description="Expected interruptions of the job per day")
    checkpoint_interval_min: Num = Field(default=0.0, description="Checkpoint interval used (Daly optimum or spec)")
    run_gpu_hours: Num | None = Field(description="GPU-hours to train the token budget, failures included")
    run_cost_usd: Num | None = Field(description="Cost of one training run at the cluster's hourly TCO")
    memory_per_gpu_gib: float = Field(default=0.0, description="Memory per GPU of the fullest pipeline stage, "
                                                                "as run [GiB] (fabricplan.perf.memory)")
    memory_capacity_gib: float = Field(default=0.0, description="The GPU's memory [GiB]")
    fits_memory: bool = Field(default=True, description="The job as run fits in GPU memory on this design")
    recompute: str = Field(default="", description="Activation recomputation the job ran with")
    memory_note: str = Field(default="", description="Set when the job was re-laid to fit in memory (what changed) "
                                                     "or does not fit")
    kind: str = Field(default="training", description="training or serving")
    serving: ServingOutcome | None = Field(default=None, description="A serving job's tokens, SLOs and cost per "
                                                                     "million tokens (its step is a decode iteration)")


class DesignSummary(BaseModel):
    """One candidate design of a fabric (switch model x topology style) and how it did."""

    switch: str
    style: str
    radix: int | None = None
    tiers: int | None = None
    switches: int | None = Field(default=None, description="Switches in all tiers")
    switches_by_tier: dict[str, int] = Field(default_factory=dict)
    network_capex_usd: float | None = None
    cost_per_useful_gpu_hour_usd: float | None = None
    chosen: bool = False
    reused: bool = Field(default=False, description="Built on the estate's owned switches (estate.switches)")
    note: str = Field(default="", description="Why it was chosen, or why not / why it cannot be built")


class FabricOutcome(BaseModel):
    """Everything the decision weighs for one fabric."""

    fabric: str
    name: str
    family: str
    cost: FabricCost
    jobs: list[JobOutcome]
    weighted_gpu_utilisation: Num = Field(description="Job-share-weighted compute / step time")
    weighted_mfu: Num
    weighted_goodput: Num = Field(default=1.0, description="Job-share-weighted goodput after failures")
    small_message_latency_us: float = Field(description="Point-to-point latency across the fabric's top tier")
    gpu_hours_total: float = Field(description="GPUs x hours over the horizon")
    useful_gpu_hours: Num = Field(description="GPU-hours x job-weighted utilisation x goodput")
    tco_usd: Num = Field(description="Cluster TCO if servers are priced, else network TCO")
    tco_basis: Literal["cluster", "network"]
    cost_per_useful_gpu_hour_usd: Num
    rank: int = 0
    design: DesignSummary | None = Field(default=None, description="The design chosen for this fabric")
    jobs_left_out: dict[str, str] = Field(
        default_factory=dict, description="Jobs of the spec that fit in GPU memory at no recompute setting and "
                                          "no deeper pipeline on this design, with what they need; the comparison "
                                          "runs without them (their GPUs' share does no useful work)")
    fleet_note: str = Field(default="", description="How the fleet's interference was obtained, when jobs share "
                                                   "the fabric (fabricplan.plan.fleet); empty otherwise")
    designs_considered: list[DesignSummary] = Field(
        default_factory=list, description="Every switch model x style the spec left open, cheapest per useful "
                                          "GPU-hour chosen (empty when only one design was possible)")


def job_outcome(job: JobSpec, result: StepResult, hourly_cost_per_gpu_usd: Num, catalog,
                goodput: Goodput | None = None, time_share: float | None = None) -> JobOutcome:
    """One job's numbers on one fabric; the run's GPU-hours include the time lost to failures.
    Floats for a point, arrays for draws (``result``'s times and ``goodput`` drawn)."""
    params_billion = model_dims(job.model, catalog).parameters() / 1e9
    exposed = sum(result.exposed_comm_s.values())
    kept = goodput.goodput if goodput is not None else 1.0
    run_gpu_hours = result.gpu_hours_for_budget
    if run_gpu_hours is not None:
        run_gpu_hours = divide(run_gpu_hours, kept)
    serving = None
    if result.serving is not None:
        serving = serving_outcome(job, result, hourly_cost_per_gpu_usd, kept)
    return JobOutcome(
        job=job.name, share=job.share if time_share is None else time_share, phase=job.phase, gpus=result.gpus,
        step_time_s=result.step_time_s,
        compute_s=result.compute_s, bubble_s=result.bubble_s,
        exposed_comm_s=dict(result.exposed_comm_s), exposed_comm_share=exposed / result.step_time_s,
        comm_s=dict(result.total_comm_s), params_billion=params_billion,
        gpu_utilisation=result.compute_s / result.step_time_s, mfu=result.mfu,
        tokens_per_s=result.tokens_per_s, token_budget=result.token_budget,
        goodput=kept, interruptions_per_day=goodput.interruptions_per_day if goodput else 0.0,
        checkpoint_interval_min=goodput.checkpoint_interval_min if goodput else 0.0,
        run_gpu_hours=run_gpu_hours,
        run_cost_usd=run_gpu_hours * hourly_cost_per_gpu_usd if run_gpu_hours is not None else None,
        memory_per_gpu_gib=result.memory_per_gpu_bytes / GIB, memory_capacity_gib=result.memory_capacity_bytes / GIB,
        fits_memory=result.memory_fits, recompute=getattr(job, "recompute", ""), kind=job.kind, serving=serving,
        memory_note="" if result.memory_fits else (
            f"does not fit: needs {result.memory_per_gpu_bytes / GIB:,.1f} GiB per GPU on a "
            f"{result.memory_capacity_bytes / GIB:,.1f} GiB GPU at every recompute setting"),
    )


def serving_outcome(job, result: StepResult, hourly_cost_per_gpu_usd: Num, goodput: Num) -> ServingOutcome:
    """A serving job's outcome: its metrics (``result.serving``) with the cost per million output
    tokens of requests within both SLOs, ``hourly cost per GPU x GPUs / (good tokens/s x 3,600 x
    goodput) x 10^6``, good tokens = served x P(TTFT within SLO) x (TPOT within SLO) (floats, or
    arrays of draws: the served tokens per second follow the drawn step time)."""
    m = result.serving
    served = result.tokens_per_s
    within = m.ttft_attainment * (1.0 if m.tpot_met else 0.0)
    cost = (divide(hourly_cost_per_gpu_usd * result.gpus * 1e6, served * within * 3600.0 * goodput, math.inf)
            if within > 0 and m.served_tokens_per_s > 0 else None)
    return ServingOutcome(
        tokens_per_s_per_gpu=served / result.gpus, served_tokens_per_s=served,
        offered_tokens_per_s=m.offered_tokens_per_s, cost_per_million_tokens_usd=cost, ttft_ms=m.ttft_s * 1e3,
        tpot_ms=m.tpot_s * 1e3, ttft_slo_ms=m.ttft_slo_s * 1e3, tpot_slo_ms=m.tpot_slo_s * 1e3,
        slo_attainment=m.slo_attainment, kv_transfer_ms=m.kv_transfer_s * 1e3,
        kv_bytes_per_request=m.kv_bytes_per_request, kv_fabric_gbytes_per_s=m.kv_fabric_gbytes_per_s,
        decode_batch=m.decode_batch, prefill_utilisation=m.prefill_utilisation, weight_sync_ms=m.weight_sync_s * 1e3,
        weight_pause_share=m.weight_pause_share, disaggregated=job.disaggregated, overloaded=m.overloaded)


def failure_counts(spec: ClusterSpec, design: FabricDesign, job_gpus: int, catalog: Catalog) -> dict[str, float]:
    """The parts a job on ``job_gpus`` GPUs of the design depends on, per failure class, scaled to the
    job's share of the cluster: its GPUs and hosts, and the network parts whose failure stops it, by
    the fleet's rule (:func:`fabricplan.fleet.failures.parts_that_stop`: NICs, leaves and host links;
    the upper tiers and inter-switch links only when the fabric's reroute does not beat NCCL's
    timeout). Without a fabric (one node, tiers 0) no backend NIC is bought, so none can fail."""
    share = min(job_gpus / max(spec.cluster.gpus, 1), 1.0)
    stops = parts_that_stop(design.size, reroute_survives(catalog, design.hardware.profile))
    return {"gpu": spec.cluster.gpus * share, "host": spec.cluster.nodes * share,
            **{name: count * share for name, count in stops.items()}}


def degraded_counts(design: FabricDesign, job_gpus: int, cluster_gpus: int) -> dict[str, float]:
    """Parts whose failure slows a job instead of stopping it (a multi-plane design's leaves and host
    links: :func:`fabricplan.fleet.failures.parts_that_slow`), scaled to the job's share."""
    share = min(job_gpus / max(cluster_gpus, 1), 1.0)
    return {name: count * share for name, count in parts_that_slow(design.size).items()}


def degraded_slowdown(result: StepResult, planes: int) -> float:
    """How much longer a step runs while one of its NICs has lost a plane: the exposed network
    communication (every kind but tensor parallel, which stays on NVLink) at ``(P - 1) / P`` of the
    bandwidth, ``exposed_net / step x (1 / pace - 1)`` (pace: :func:`fabricplan.fleet.failures.plane_port_pace`)."""
    if planes <= 1:
        return 0.0
    exposed = sum(v for kind, v in result.exposed_comm_s.items() if kind != "tp")
    return divide(exposed, result.step_time_s, 0.0) * (1.0 / float(plane_port_pace(planes)) - 1.0)


def design_goodput(spec: ClusterSpec, catalog: Catalog, design: FabricDesign, job_gpus: int,
                   inputs: Inputs | None = None, slowdown=0.0, stateless: bool = False) -> Goodput:
    """Goodput of a job on ``job_gpus`` GPUs of the design: the design's GPUs, hosts, NICs, switches
    and links scaled to the job's share of the cluster, at the failure rates of ``inputs`` (network
    classes x the fabric's failure multiplier, ``costs:network_failure_multiplier:<fabric>``), the
    checkpoint write and restart times of the spec or ``inputs``, Daly's interval unless the spec
    sets one. Parts that only slow the job (:func:`degraded_counts`) cost ``slowdown`` (the step's
    relative lengthening, :func:`degraded_slowdown`) for their repair time (``fleet_repair_hours_*``).
    ``stateless`` (a serving replica): no checkpoints, a failure costs only the restart."""
    inputs = inputs or Inputs.point()
    ops = spec.operations
    counts = failure_counts(spec, design, job_gpus, catalog)
    profile = design.hardware.profile
    multiplier = 1.0
    if profile.costs is not None:
        value = profile.costs.network_failure_multiplier
        multiplier = inputs.of_range(f"costs:network_failure_multiplier:{profile.id}", value, value.default, "default")
    rates = failure_rates_per_hour(catalog, inputs, multiplier)

    def minutes(value: float | None, name: str):
        if value is not None:
            return value
        default = catalog.parameter(name).value
        return inputs.of_range(f"param:{name}", default, default.default, "default")

    repair_h = {"switch": float(catalog.perf_value("fleet_repair_hours_switch")),
                "link": float(catalog.perf_value("fleet_repair_hours_link"))}
    slowing = degraded_counts(design, job_gpus, spec.cluster.gpus)
    slow_rate = sum(count * rates[name] for name, count in slowing.items())
    slow_repair = divide(sum(count * rates[name] * repair_h[name] for name, count in slowing.items()), slow_rate, 0.0)
    write = 0.0 if stateless else minutes(ops.checkpoint_write_minutes, "checkpoint_write_minutes")
    return job_goodput(counts, rates, write, minutes(ops.restart_minutes, "restart_minutes"),
                       None if stateless else ops.checkpoint_interval_minutes,
                       slow_rate_per_hour=slow_rate, slow_repair_h=slow_repair, slowdown=slowdown)


def _failure_unit_gpus(job, result: StepResult) -> int:
    """GPUs one failure stops: the whole job for training (synchronous), one replica for serving
    (its requests go to the others)."""
    return job.replica_gpus if job.kind == "serving" else result.gpus


def join_outcome(spec: ClusterSpec, catalog: Catalog, design: FabricDesign, fabric_cost: FabricCost,
                 steps: list[StepResult], assumptions: Assumptions, inputs: Inputs | None = None) -> FabricOutcome:
    """Cost, performance and the joined metric for one fabric (the module docstring's formula).

    ``steps`` are the spec's jobs' step times on ``design``, in job order; ``inputs`` the failure
    rates and times (:class:`fabricplan.catalog.inputs.Inputs`): at a point the outcome's numbers
    are floats, drawn they are arrays (a draw whose failures leave no progress costs infinity). The
    small-message latency is the point-to-point latency across the design's top tier.
    """
    inputs = inputs or Inputs.point(assumptions.price_point)
    gpu_hours_total = spec.cluster.gpus * HOURS_PER_YEAR * assumptions.horizon_years
    if fabric_cost.cluster_tco_usd is not None:
        tco, basis = fabric_cost.cluster_tco_usd, "cluster"
    else:
        tco, basis = fabric_cost.network_tco_usd, "network"
    hourly_per_gpu = tco / gpu_hours_total
    planes = design.size.planes
    jobs = [job_outcome(job, result, hourly_per_gpu, catalog,
                        design_goodput(spec, catalog, design, _failure_unit_gpus(job, result), inputs,
                                       slowdown=degraded_slowdown(result, planes), stateless=job.kind == "serving"),
                        time_share=spec.time_share(job))
            for job, result in zip(spec.jobs, steps, strict=True)]
    if jobs:
        utilisation = sum(j.share * j.gpu_utilisation for j in jobs)
        weighted_mfu = sum(j.share * j.mfu for j in jobs)
        kept = sum(j.share * j.gpu_utilisation * j.goodput for j in jobs)
        weighted_goodput = divide(kept, utilisation, 1.0)
    else:  # no workload given: every GPU-hour computes, one cluster-wide job loses what failures take
        weighted_goodput = design_goodput(spec, catalog, design, spec.cluster.gpus, inputs).goodput
        utilisation, weighted_mfu, kept = 1.0, 0.0, weighted_goodput
    profile = design.network.profile
    latency = point_to_point_latency(profile, design.hardware.switch.port_to_port_latency_ns,
                                     design.switches_across, host_links_in_rack=design.size.host_links_in_rack,
                                     catalog=catalog)
    useful = gpu_hours_total * kept
    metric = divide(tco, useful)
    if not is_array(metric) and not (math.isfinite(tco) and math.isfinite(metric)):
        # never rank an infinite or undefined cost
        raise InputError(f"the cost per useful GPU-hour of {profile.id} came out {metric!r} (TCO {tco!r}, useful "
                         f"GPU-hours {useful!r}): a price, power, energy price, FTE number or job number is out "
                         "of range", location=f"fabrics[{profile.id}]")
    return FabricOutcome(
        fabric=profile.id, name=profile.name, family=profile.family, cost=fabric_cost, jobs=jobs,
        weighted_gpu_utilisation=utilisation, weighted_mfu=weighted_mfu, weighted_goodput=weighted_goodput,
        small_message_latency_us=latency.total_us, gpu_hours_total=gpu_hours_total,
        useful_gpu_hours=useful, tco_usd=tco, tco_basis=basis,
        cost_per_useful_gpu_hour_usd=metric,
    )
