"""Performance models: point-to-point latency, NCCL-style collectives and training step time.

Public entry points: :func:`fabricplan.perf.latency.point_to_point_latency`,
:func:`fabricplan.perf.collectives.collective_time`, :func:`fabricplan.perf.nccl_tuner.select_algorithm`,
:func:`fabricplan.perf.step.step_time`. See docs/performance.md.
"""
