"""Typed results of `fabricplan compare`: numbers per fabric, rules, recommendation, what-ifs.

These models are the contract between `decide` (which computes them) and `report` (which renders
them as terminal tables, JSON, Markdown and HTML). JSON keys carry their units.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from fabricplan.decide.options import OptionUplift
from fabricplan.decide.uncertainty import Uncertainty
from fabricplan.plan.outcome import FabricOutcome, JobOutcome  # noqa: F401 (re-exported: the result types decide ranks)


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


class RuleVote(BaseModel):
    """A fired rule's vote and its weight (catalog ``rule_weight_<ID>``); rules break ties only."""

    rule: str
    weight: float
    favours: list[str] = Field(default_factory=list)
    disfavours: list[str] = Field(default_factory=list)
    agrees_with_numbers: bool = Field(description="The rule favours (or does not disfavour) the numbers' leader")
    decided: bool = Field(description="The weighted votes decided the recommendation (a close call) and this rule "
                                      "voted for the recommended fabric")


class Recommendation(BaseModel):
    ranking: list[str]
    recommended: str
    reasons: list[str]
    why_not: dict[str, str]
    disagreements: list[str] = Field(description="Where the rules and the numbers point different ways")
    close_call: bool = Field(description="No fabric is best with probability >= decision_best_probability over "
                                         "the Monte Carlo draws (without draws: top two within the close-call band)")
    decided_by: Literal["numbers", "rules", "exclusions"] = Field(
        default="numbers", description="What chose the recommended fabric: the numbers (a clear or undisputed "
                                       "leader), the weighted rule votes (a close call), or exclusions (one left)")
    numbers_leader: str = Field(default="", description="The eligible fabric the numbers put first")
    probability_best: dict[str, float] | None = Field(
        default=None, description="Share of Monte Carlo draws in which each fabric is the cheapest eligible one")
    rule_votes: list[RuleVote] = Field(default_factory=list)
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
    options: list[OptionUplift] = Field(
        default_factory=list, description="Each fabric option (SHARP, adaptive routing) switched from how the spec "
                                          "builds it (on where off, off where on) and what that changes, through "
                                          "the same chain")
    uncertainty: Uncertainty | None = Field(
        default=None, description="Monte Carlo over the catalog's ranges: per fabric p10/p50/p90 of cost per useful "
                                  "GPU-hour and the probability of being best (None with --draws 0)")
