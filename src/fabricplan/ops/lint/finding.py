"""A finding: one problem a rule found on one link (or NIC / switch port)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Ordered from least to most severe.
SEVERITIES = ("info", "warning", "error")


def severity_rank(severity: str) -> int:
    return SEVERITIES.index(severity)


@dataclass(slots=True)
class Finding:
    """What a rule reports.

    ``evidence`` holds the values seen on each side (``{"nic": {...}, "switch": {...}}``),
    ``fix`` the command or config change, ``location`` where the offending value sits
    (``file:line`` or ``file:$.TABLE.key.field``).
    """

    rule_id: str
    message: str
    link: str
    fix: str
    evidence: dict[str, Any] = field(default_factory=dict)
    location: str | None = None
    severity: str = "error"
    # A rule may cap its own severity for one finding (e.g. a documented SONiC design it disagrees
    # with): the configured severity is lowered to this, never raised. ``reason`` says why.
    max_severity: str | None = None
    reason: str | None = None
    # Health checks: how far past its threshold the finding is (value / threshold, for ranking
    # worst first) and the telemetry series it rests on (entity, counter label) for charts.
    score: float | None = None
    series: list[tuple[str, str]] | None = None
    # Health checks: the threshold a series was held to, in the unit it is charted in (a counter's
    # per-second rate, a duration counter's us/s, RTT samples' us): (entity, label, value, what it is).
    # Not in the JSON (the message and evidence state the limit); the HTML draws it on the chart.
    limits: list[tuple[str, str, float, str]] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule_id,
            "severity": self.severity,
            "link": self.link,
            "message": self.message,
            "evidence": self.evidence,
            "fix": self.fix,
            "location": self.location,
            **({"reason": self.reason} if self.reason else {}),
            **({"score": self.score} if self.score is not None else {}),
        }
