"""Typed results of `fabricplan compare`: numbers per fabric, rules, recommendation, what-ifs.

These models are the contract between `decide` (which computes them) and `report` (which renders
them as terminal tables, JSON, Markdown and HTML). JSON keys carry their units.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from fabricplan.decide.options import OptionUplift
from fabricplan.decide.phases import PhaseOutcome
from fabricplan.decide.uncertainty import Uncertainty
from fabricplan.plan.outcome import (  # noqa: F401 (re-exported: the result types decide ranks)
    DesignSummary,
    FabricOutcome,
    JobOutcome,
)


class RuleResult(BaseModel):
    """One decision rule: what it says, where it comes from, its thresholds and whether it fired."""

    id: str
    title: str
    citation: str
    kind: Literal["scale", "workload", "sla", "estate", "operations", "scheduling", "check"]
    thresholds: dict[str, float] = Field(default_factory=dict)
    fired: bool
    favours: list[str] = Field(default_factory=list, description="Fabric ids the rule points to")
    disfavours: list[str] = Field(default_factory=list)
    excludes: list[str] = Field(default_factory=list, description="Fabrics the rule rules out")
    message: str
    role: Literal["constraint", "advice", "check"] = Field(
        default="advice", description="constraint: rules fabrics out (a hard requirement such as the latency SLA); "
                                      "advice: the seeds' claim, shown beside the numbers with its citation, never "
                                      "a vote; check: a misjudgement the seeds warn about, asked of the result")
    mechanism: str = Field(default="", description="Where the rule's subject acts in the numbers (the chain's "
                                                   "number it is about), or why it is not modelled")


class CitedSource(BaseModel):
    """A publication the rules cite, as the catalog's ``sources`` holds it: the title as published
    and, for a title not in English, its English translation (shown beside it)."""

    id: str
    title: str
    title_en: str | None = Field(default=None, description="English translation of a title not in English")
    language: str = Field(default="en", description="The title's language (BCP 47)")
    publisher: str
    date: str
    url: str | None = None
    quotes: dict[str, str] = Field(default_factory=dict, description="Each passage its citations quote in the "
                                                                     "original -> its English translation")

    def display(self) -> str:
        """The title with its translation after it, as the terminal and Markdown print it."""
        return f"{self.title} ({self.title_en})" if self.title_en else self.title


class RuleAdvice(BaseModel):
    """A fired rule beside the numbers: what it favours, whether the numbers agree, and where (if
    anywhere) its subject acts in the chain. It never changes the ranking."""

    rule: str
    title: str
    favours: list[str] = Field(default_factory=list)
    disfavours: list[str] = Field(default_factory=list)
    agrees_with_numbers: bool = Field(description="The rule favours (or does not disfavour) the numbers' leader")
    mechanism: str = Field(default="", description="Where its subject acts in the numbers, or why it is not modelled")
    citation: str = ""


class Recommendation(BaseModel):
    ranking: list[str]
    recommended: str
    reasons: list[str]
    why_not: dict[str, str]
    disagreements: list[str] = Field(description="Where the rules' advice and the numbers point different ways")
    close_call: bool = Field(description="No fabric is best with probability >= decision_best_probability over "
                                         "the Monte Carlo draws (without draws: top two within the close-call band); "
                                         "the numbers still rank (probability of being best, then cost)")
    decided_by: Literal["numbers", "exclusions"] = Field(
        default="numbers", description="What chose the recommended fabric: the numbers (always, among the fabrics "
                                       "no constraint rules out), or exclusions (one fabric left)")
    numbers_leader: str = Field(default="", description="The eligible fabric the numbers put first")
    probability_best: dict[str, float] | None = Field(
        default=None, description="Share of Monte Carlo draws in which each fabric is the cheapest eligible one")
    advice: list[RuleAdvice] = Field(
        default_factory=list, description="Fired advice rules beside the numbers (the seeds' claims, not votes)")
    feasible: bool = Field(
        default=True,
        description="False when the rules rule out every fabric (e.g. none meets the latency SLA): "
                    "`recommended` is then only the best by the numbers, not a recommendation")
    infeasible_reason: str | None = Field(
        default=None, description="Why no fabric is feasible, e.g. 'no fabric meets the 0.5 us latency SLA; "
                                  "the closest is infiniband-ndr at 2.1 us'")


class Crossover(BaseModel):
    fabric_a: str
    fabric_b: str
    gpus: int | None = Field(description="Smallest searched GPU count from which the leader changes; None = no change "
                                         "or no clear leader")
    leader_below: str
    leader_above: str | None
    note: str
    kind: Literal["crossover", "no_change", "no_clear_leader"] = Field(
        default="crossover", description="crossover: a clear leader hands over to another clear leader; "
                                         "no_clear_leader: the pair is inside the uncertainty over a GPU range")
    from_gpus: int | None = Field(default=None, description="no_clear_leader: first searched size without a clear leader")
    to_gpus: int | None = Field(default=None, description="no_clear_leader: last searched size without a clear leader")


class ScalePoint(BaseModel):
    gpus: int
    cost_per_useful_gpu_hour_usd: dict[str, float]
    probability_lower: dict[str, float] = Field(
        default_factory=dict, description="'a|b' -> share of Monte Carlo draws in which a costs less per useful "
                                          "GPU-hour than b at this size (empty without draws)")
    cost_band_usd: dict[str, list[float]] = Field(
        default_factory=dict, description="fabric -> [p10, p90] of its cost per useful GPU-hour over the Monte "
                                          "Carlo's draws at this size (empty without draws)")
    excess_band: dict[str, list[float]] = Field(
        default_factory=dict, description="fabric -> [p10, p90] over the Monte Carlo's draws of how much dearer "
                                          "per useful GPU-hour it is than the cheapest fabric of the same draw "
                                          "(cost / cheapest - 1; empty without draws)")
    tiers: dict[str, int] = Field(default_factory=dict, description="Tiers of each fabric's chosen design here")
    tier_capacity_gpus: dict[str, int] = Field(
        default_factory=dict, description="Most GPUs each fabric's chosen design holds with its tiers here")


class TierBoundary(BaseModel):
    """A GPU count above which a fabric's design needs another switch tier."""

    fabric: str
    switch: str
    radix: int
    tiers_above: int = Field(description="Tiers needed just above this size")
    gpus: int = Field(description="Largest GPU count the lower tier count holds")


class SensitivityRow(BaseModel):
    factor: str
    low_label: str
    high_label: str
    winner_low: str
    winner_high: str
    flips: bool
    metric_change_low: dict[str, float] = Field(description="Relative change of each fabric's metric, low case")
    metric_change_high: dict[str, float]
    excluded_low: list[str] = Field(default_factory=list, description="Fabrics a fired rule rules out, low case")
    excluded_high: list[str] = Field(default_factory=list, description="Fabrics a fired rule rules out, high case")


class OpenSearch(BaseModel):
    """Where the spec pins ``topology.style``: what the open design search (every style) chooses
    for each fabric, and whether the recommendation would change."""

    pinned_style: str
    designs: dict[str, DesignSummary] = Field(description="Per fabric: the design the open search chooses")
    cost_per_useful_gpu_hour_usd: dict[str, float] = Field(description="Per fabric, with the open search's design")
    pinned_cost_per_useful_gpu_hour_usd: dict[str, float] = Field(description="Per fabric, with the pinned style")
    leader: str = Field(description="The fabric cheapest per useful GPU-hour under the open search")
    pinned_leader: str

    @property
    def changes_leader(self) -> bool:
        return self.leader != self.pinned_leader


class Flip(BaseModel):
    """The smallest change of one assumption found to flip the numbers' leader, and what it costs."""

    candidate: str = Field(description="The assumption changed (a registry entry of fabricplan.decide.flips)")
    fabric: str | None = Field(default=None, description="The fabric it applies to (None: every fabric)")
    unit: Literal["multiplier", "gpus", "toggle"]
    base_value: float = Field(description="The assumption as the spec and catalog have it (1 for a multiplier)")
    value: float = Field(description="The value at which the leader flips (for a toggle: 1 on, 0 off)")
    size: float = Field(description="Relative size of the change: |value / base - 1| (a toggle counts 1)")
    change: str = Field(description="The change in words, e.g. 'roce-v2 network prices x1.23'")
    new_leader: str
    regret_usd: float = Field(description="Cost per useful GPU-hour of the chosen fabric minus the new leader's, "
                                          "at the flip (>= 0)")
    regret: float = Field(description="regret_usd relative to the new leader's cost per useful GPU-hour")
    regret_at_limit: float = Field(description="The same at the end of the searched range (the change carried "
                                               "as far as searched)")
    limit_value: float = Field(description="The end of the searched range in this direction")


class WhatWouldChange(BaseModel):
    """For the numbers' leader, the smallest single change of each assumption that flips it."""

    leader: str = Field(description="The numbers' leader at the point (catalog defaults) the flips are against")
    flips: list[Flip] = Field(default_factory=list, description="One per assumption that flips, smallest first")
    no_flip: list[str] = Field(default_factory=list, description="Assumptions searched without a flip, with ranges")
    method: str = ("each assumption of the registry moved alone from its value, each way over its search range; "
                   "where the range's end flips the leader (point numbers, constraints applied), bisection finds "
                   "the smallest change that flips it; GPU counts are searched on the scale grid, then bisected in "
                   "whole job-mix layouts; a toggle counts as size 1 (100 %)")

    @property
    def smallest(self) -> Flip | None:
        return self.flips[0] if self.flips else None


class CompareReport(BaseModel):
    spec_name: str
    gpus: int
    horizon_years: float
    deciding_metric: str = "cost_per_useful_gpu_hour_usd"
    fabrics: list[FabricOutcome]
    rules: list[RuleResult]
    recommendation: Recommendation
    crossovers: list[Crossover]
    scale_curve: list[ScalePoint]
    tier_boundaries: list[TierBoundary] = Field(
        default_factory=list, description="Where each fabric's chosen design changes tier count, in the searched range")
    sensitivity: list[SensitivityRow]
    notes: list[str] = Field(default_factory=list)
    efficiency_model: str = Field(default="auto",
                                  description="The model of each collective's share of the NIC bandwidth")
    open_search: OpenSearch | None = Field(
        default=None, description="With a pinned topology style: what the open design search would choose")
    options: list[OptionUplift] = Field(
        default_factory=list, description="Each fabric option (SHARP, adaptive routing) switched from how the spec "
                                          "builds it (on where off, off where on) and what that changes, through "
                                          "the same chain")
    phases: list[PhaseOutcome] = Field(
        default_factory=list, description="With spec.phases: each fabric's cost per useful GPU-hour as if the horizon "
                                          "were that phase, and each phase's share of the lead")
    deciding_phase: str | None = Field(default=None, description="The phase whose hours carry the recommendation")
    uncertainty: Uncertainty | None = Field(
        default=None, description="Monte Carlo over the catalog's ranges: per fabric p10/p50/p90 of cost per useful "
                                  "GPU-hour and the probability of being best (None with --draws 0)")
    what_would_change: WhatWouldChange | None = Field(
        default=None, description="The smallest single change of each assumption that flips the numbers' leader, "
                                  "with its regret (None with --quick)")
    sources: list[CitedSource] = Field(
        default_factory=list, description="The publications the rules' citations name ([S1], [S2]), with each "
                                          "title's English translation")
