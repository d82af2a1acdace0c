"""Telemetry health checker: counters and RTT samples against SLOs, on the lint engine.

``evaluate(telemetry, config)`` runs the checks of ``checks.CHECKS`` over the one time-series
model (``ops.telemetry``) that the telemetry readers fill.
"""

from fabricplan.ops.health.engine import HealthResult, clip, evaluate
from fabricplan.ops.health.results import Measurement, NotAvailable

__all__ = ["HealthResult", "Measurement", "NotAvailable", "clip", "evaluate"]
