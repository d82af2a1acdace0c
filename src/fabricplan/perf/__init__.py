"""Performance models: point-to-point latency, NCCL-style collectives and training step time.

Public entry points: :func:`fabricplan.perf.latency.point_to_point_latency`,
:func:`fabricplan.perf.collectives.collective_time`, :func:`fabricplan.perf.nccl_tuner.select_algorithm`,
:func:`fabricplan.perf.step.step_time`. See docs/performance.md.
"""

from fabricplan.perf.collectives import collective_time
from fabricplan.perf.latency import point_to_point_latency
from fabricplan.perf.step import ClusterShape, StepResult, achievable_fraction, cluster_shape, step_time

__all__ = ["ClusterShape", "StepResult", "achievable_fraction", "cluster_shape", "collective_time",
           "point_to_point_latency", "step_time"]
