"""One evaluation of a spec: the chain's numbers for every fabric, then rules, ranking and checks."""

from __future__ import annotations

from dataclasses import dataclass

from fabricplan.catalog import Catalog
from fabricplan.decide.models import FabricOutcome, Recommendation, RuleResult
from fabricplan.decide.recommend import recommend
from fabricplan.decide.rules import RuleContext, evaluate_rules
from fabricplan.decide.uncertainty import Uncertainty, summarise
from fabricplan.plan import DEFAULT_PLAN, Evaluation, Plan, Scenario, fabric_outcomes
from fabricplan.spec import ClusterSpec

__all__ = ["Decision", "Scenario", "decide", "evaluate", "fabric_outcomes"]


@dataclass(frozen=True)
class Decision:
    outcomes: dict[str, FabricOutcome]
    rules: list[RuleResult]
    recommendation: Recommendation
    uncertainty: Uncertainty | None = None


def decide(spec: ClusterSpec, catalog: Catalog, numbers: dict[str, FabricOutcome] | Evaluation) -> Decision:
    """Rules on the numbers, the Monte Carlo's summary (when ``numbers`` is an :class:`Evaluation`
    with draws), then the ranking and the misjudgement checks. Every number comes from the chain."""
    evaluation = numbers if isinstance(numbers, Evaluation) else None
    outcomes = evaluation.outcomes if evaluation is not None else numbers
    rules = evaluate_rules(spec, catalog, outcomes)
    band = catalog.parameter("decision_close_call_band").value.at("default")
    context = RuleContext(spec=spec, catalog=catalog, outcomes=outcomes)
    uncertainty = None
    if evaluation is not None and evaluation.draws is not None:
        excluded = {f for r in rules if r.fired for f in r.excludes if f in outcomes}
        eligible = [f for f in outcomes if f not in excluded] or list(outcomes)
        threshold = catalog.parameter("decision_best_probability").value.at("default")
        uncertainty = summarise(evaluation.metric_draws, eligible, evaluation.draws, threshold,
                                catalog.parameter("decision_tie_relative").value.at("default"))
    recommendation, checks = recommend(context, rules, band, uncertainty)
    ranked = {fabric: outcomes[fabric].model_copy(update={"rank": index + 1})
              for index, fabric in enumerate(recommendation.ranking)}
    return Decision(outcomes=ranked, rules=rules + checks, recommendation=recommendation, uncertainty=uncertainty)


def evaluate(spec: ClusterSpec, catalog: Catalog, scenario: Scenario = Scenario(),
             plan: Plan = DEFAULT_PLAN, *, draws: int = 0, seed: int | None = None) -> Decision:
    """The numbers of every fabric by ``plan`` (:meth:`fabricplan.plan.Plan.evaluate`, with ``draws``
    Monte Carlo draws when > 0), then the rules and the ranking."""
    if seed is None:
        seed = int(catalog.parameter("uncertainty_seed").value.at("default"))
    return decide(spec, catalog, plan.evaluate(spec, catalog, scenario, draws=draws, seed=seed))
