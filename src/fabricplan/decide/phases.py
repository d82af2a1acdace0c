"""Which phase of the horizon decides (issue 29): the cost per useful GPU-hour of each fabric if the
whole horizon were one phase, and the phase whose hours carry the recommended fabric's lead.

With phases, the chain's useful GPU-hours are ``Σ_p h_p u_p`` (``h_p`` the phase's hours share,
``u_p = Σ_{jobs of p} share_j x utilisation_j x goodput_j`` within it; ``plan/outcome.py`` weights
each job by ``spec.time_share``). Here, per phase::

    cost_p(f) = TCO(f) / (GPU-hours x u_p(f))          (the phase alone, over the whole horizon)
    lead_p   = h_p x (u_p(R) - u_p(S))                  (R recommended, S the runner-up)

The phase with the largest ``|lead_p|`` in the direction of the result decides; a phase whose best
fabric differs from R is named as favouring another.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class PhaseOutcome(BaseModel):
    phase: str
    hours_share: float
    cost_per_useful_gpu_hour_usd: dict[str, float] = Field(description="Per fabric, as if the horizon were this phase")
    best: str
    lead: float = Field(description="h_p x (u_p(recommended) - u_p(runner-up)): the phase's share of the lead")


def _useful_share(outcome, phase: str, hours: float) -> float:
    """``u_p``: the fabric's useful share of the cluster's time during ``phase``."""
    return sum(float(j.share) / hours * float(j.gpu_utilisation) * float(j.goodput)
               for j in outcome.jobs if j.phase == phase)


def phase_outcomes(spec, outcomes: dict, ranking: list[str]) -> tuple[list[PhaseOutcome], str | None, str]:
    """(per phase, the deciding phase, one sentence); empty without phases."""
    if not spec.phases or len(ranking) < 1:
        return [], None, ""
    best_fabric, runner = ranking[0], (ranking[1] if len(ranking) > 1 else None)
    rows = []
    for phase in spec.phases:
        shares = {f: _useful_share(o, phase.name, phase.hours_share) for f, o in outcomes.items()}
        costs = {f: float(o.tco_usd) / (float(o.gpu_hours_total) * shares[f]) if shares[f] > 0 else float("inf")
                 for f, o in outcomes.items()}
        lead = phase.hours_share * (shares[best_fabric] - shares[runner]) if runner else 0.0
        rows.append(PhaseOutcome(phase=phase.name, hours_share=phase.hours_share, cost_per_useful_gpu_hour_usd=costs,
                                 best=min(costs, key=costs.get), lead=lead))
    deciding = max(rows, key=lambda r: r.lead) if runner else rows[0]
    against = [r for r in rows if r.best != best_fabric]
    if not against:
        text = (f"Every phase favours {best_fabric}; {deciding.phase} ({100 * deciding.hours_share:.0f} % of the "
                f"hours) carries most of its lead.")
    else:
        others = "; ".join(f"{r.phase} ({100 * r.hours_share:.0f} % of the hours) favours {r.best}" for r in against)
        text = (f"The phases disagree: {others}; {deciding.phase} ({100 * deciding.hours_share:.0f} % of the hours) "
                f"decides for {best_fabric}.")
    return rows, deciding.phase, text
