"""The job kinds of a spec and their arrivals over the fleet's horizon.

A spec job is a *kind*: its GPUs (``gpus``, the whole cluster when unset), its share of the
cluster's GPU-time (``share``) and its median duration (``duration_hours``, else the catalog's
``fleet_job_duration_hours``). Instances of a kind arrive as a Poisson process whose rate makes
the kind's offered load its share (Little's law: busy GPUs = arrival rate x GPUs x mean duration):

    lambda_k = share_k x N_nodes / (nodes_k x E[D_k])   [per hour],   E[D] = median x exp(sigma^2 / 2)

with lognormal durations of log-spread ``fleet_job_duration_lognormal_sigma`` (a skewed duration
distribution, as cluster traces of LLM development report: Hu et al., NSDI '24, Acme traces;
Kokolis et al., HPCA '25, Meta RSC-1/RSC-2: many short jobs, few long ones holding most GPU-time).
Arrivals start a warm-up before the horizon so the cluster is in its steady state when sampling
starts. Everything is drawn from one seeded generator: the same seed gives the same arrivals.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

PATTERN_OF_EXPERTS = {True: "all_to_all", False: "ring"}


@dataclass(frozen=True)
class JobKind:
    """One job of the spec as the fleet runs it: ``nodes`` per instance, ``share`` of the cluster's
    GPU-time, ``duration_hours`` median duration, ``pattern`` of its traffic across nodes (data-
    parallel rings for dense jobs, all-to-all for expert-parallel ones)."""

    name: str
    nodes: int
    gpus: int
    share: float
    duration_hours: float
    pattern: str


@dataclass(frozen=True)
class Arrivals:
    """Instances in arrival order: kind index, arrival time and duration [hours from the horizon's start]."""

    kind: np.ndarray
    arrive_hours: np.ndarray
    duration_hours: np.ndarray

    def __len__(self) -> int:
        return len(self.kind)


def job_kinds(spec, catalog) -> tuple[JobKind, ...]:
    """The spec's jobs as fleet kinds (module docstring); durations default from the catalog."""
    cluster = spec.cluster
    default_hours = float(catalog.perf_value("fleet_job_duration_hours"))
    kinds = []
    for job in spec.jobs:
        gpus = int(job.gpus or cluster.gpus)
        nodes = max(1, math.ceil(gpus / cluster.gpus_per_node))
        hours = float(job.duration_hours) if job.duration_hours is not None else default_hours
        kinds.append(JobKind(name=job.name, nodes=nodes, gpus=gpus, share=float(job.share), duration_hours=hours,
                             pattern=PATTERN_OF_EXPERTS[job.ep > 1]))
    return tuple(kinds)


def mean_duration_hours(median_hours, sigma):
    """Mean of a lognormal of median ``median_hours`` and log-spread ``sigma``: ``median exp(sigma^2/2)``."""
    return median_hours * np.exp(0.5 * np.asarray(sigma, dtype=float) ** 2)


def arrival_rate_per_hour(share, cluster_nodes, job_nodes, mean_hours):
    """Poisson rate [per hour] that makes a kind's offered load its share (module docstring)."""
    return np.asarray(share, dtype=float) * cluster_nodes / (np.asarray(job_nodes, dtype=float) * mean_hours)


def draw_arrivals(kinds, cluster_nodes: int, *, start_hours: float, end_hours: float, sigma: float,
                  seed: int = 0, limit: int | None = None) -> Arrivals:
    """Seeded Poisson arrivals of every kind over ``[start_hours, end_hours)`` with lognormal durations;
    InputError when more than ``limit`` runs would arrive (expected count, before drawing)."""
    from fabricplan.errors import InputError

    rng = np.random.default_rng(seed)
    span = end_hours - start_hours
    expected = sum(float(arrival_rate_per_hour(k.share, cluster_nodes, k.nodes, mean_duration_hours(k.duration_hours,
                                                                                                      sigma))) * span
                   for k in kinds)
    if limit is not None and expected > limit:
        raise InputError(f"about {expected:,.0f} job runs would arrive over the horizon; a fleet run draws at most "
                         f"{limit:,}: shorten --days or lengthen the jobs' duration_hours", location="--days")
    kind_parts, time_parts, duration_parts = [], [], []
    for index, kind in enumerate(kinds):
        rate = float(arrival_rate_per_hour(kind.share, cluster_nodes, kind.nodes,
                                           mean_duration_hours(kind.duration_hours, sigma)))
        count = int(rng.poisson(rate * span)) if rate > 0 else 0
        times = np.sort(start_hours + rng.random(count) * span)
        durations = kind.duration_hours * np.exp(sigma * rng.standard_normal(count))
        kind_parts.append(np.full(count, index, dtype=np.int64))
        time_parts.append(times)
        duration_parts.append(durations)
    kind_all = np.concatenate(kind_parts) if kind_parts else np.zeros(0, dtype=np.int64)
    times_all = np.concatenate(time_parts) if time_parts else np.zeros(0)
    durations_all = np.concatenate(duration_parts) if duration_parts else np.zeros(0)
    order = np.argsort(times_all, kind="stable")
    return Arrivals(kind=kind_all[order], arrive_hours=times_all[order], duration_hours=durations_all[order])
