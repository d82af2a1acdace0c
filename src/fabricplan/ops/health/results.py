"""What health checks yield besides findings: a measured value, or "not available"."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class Measurement:
    """One number a check measured on one port (or RTT pair): e.g. the peak paused fraction."""

    check_id: str
    entity: str
    metric: str
    value: float
    unit: str
    threshold: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"check": self.check_id, "entity": self.entity, "metric": self.metric, "value": self.value,
                "unit": self.unit, "threshold": self.threshold}


@dataclass(slots=True)
class NotAvailable:
    """A check that could not be evaluated on one port: the counters it needs were not read.

    Reported as such (never as healthy)."""

    check_id: str
    entity: str
    missing: list[str] = field(default_factory=list)
    reason: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"check": self.check_id, "entity": self.entity, "missing": self.missing, "reason": self.reason}
