"""One evaluation of a spec: numbers for every fabric, rules, ranking and checks."""

from __future__ import annotations

from dataclasses import dataclass

from fabricplan.catalog import Catalog
from fabricplan.cost import resolve_assumptions
from fabricplan.decide.models import FabricOutcome, Recommendation, RuleResult
from fabricplan.decide.recommend import recommend
from fabricplan.decide.rules import RuleContext, evaluate_rules
from fabricplan.decide.uncertainty import Uncertainty, monte_carlo
from fabricplan.plan import DEFAULT_PLAN, Levers, Plan
from fabricplan.spec import ClusterSpec


@dataclass(frozen=True)
class Scenario:
    """What-if adjustments: category price multipliers, energy price multiplier, efficiency; and
    fabric-specific ones (fabric id -> multiplier) so a factor can move one fabric against another:
    its network hardware prices (all categories), its per-NIC bandwidth, its operations staff."""

    price_multipliers: tuple[tuple[str, float], ...] = ()
    energy_multiplier: float = 1.0
    levers: Levers = Levers()
    fabric_price_multipliers: tuple[tuple[str, float], ...] = ()
    fabric_bandwidth_multipliers: tuple[tuple[str, float], ...] = ()
    fabric_staff_multipliers: tuple[tuple[str, float], ...] = ()


def _fabric_case(spec: ClusterSpec, catalog: Catalog, scenario: Scenario, fabric: str, assumptions):
    """The assumptions and levers of one fabric under the scenario's fabric-specific factors."""
    from dataclasses import replace

    from fabricplan.cost.bom import CATEGORIES

    levers = scenario.levers
    price = dict(scenario.fabric_price_multipliers).get(fabric)
    if price is not None:
        base = dict(scenario.price_multipliers)
        assumptions = resolve_assumptions(spec, catalog, {c: base.get(c, 1.0) * price for c in CATEGORIES},
                                          scenario.energy_multiplier)
    staff = dict(scenario.fabric_staff_multipliers).get(fabric)
    if staff is not None:
        assumptions = assumptions.model_copy(update={
            "maturity_fte_multiplier": assumptions.maturity_fte_multiplier * staff})
    bandwidth = dict(scenario.fabric_bandwidth_multipliers).get(fabric)
    if bandwidth is not None:
        levers = replace(levers, bandwidth_multiplier=levers.bandwidth_multiplier * bandwidth)
    return assumptions, levers


def fabric_outcomes(spec: ClusterSpec, catalog: Catalog, scenario: Scenario = Scenario(),
                    fabrics: list[str] | None = None, plan: Plan = DEFAULT_PLAN) -> dict[str, FabricOutcome]:
    """Numbers for each fabric of the spec (or the named subset), by the model chain ``plan``."""
    assumptions = resolve_assumptions(spec, catalog, dict(scenario.price_multipliers), scenario.energy_multiplier)
    outcomes = {}
    for choice in spec.fabric_choices():
        if fabrics is not None and choice.profile not in fabrics:
            continue
        case_assumptions, levers = _fabric_case(spec, catalog, scenario, choice.profile, assumptions)
        outcomes[choice.profile] = plan.run(spec, catalog, choice, case_assumptions, levers)
    return outcomes


@dataclass(frozen=True)
class Decision:
    outcomes: dict[str, FabricOutcome]
    rules: list[RuleResult]
    recommendation: Recommendation
    uncertainty: Uncertainty | None = None


def decide(spec: ClusterSpec, catalog: Catalog, outcomes: dict[str, FabricOutcome], *, draws: int = 0,
           seed: int | None = None, plan: Plan = DEFAULT_PLAN) -> Decision:
    """Rules on the numbers, the Monte Carlo over the catalog's ranges (``draws`` > 0), then the
    ranking and the misjudgement checks."""
    rules = evaluate_rules(spec, catalog, outcomes)
    band = catalog.parameter("decision_close_call_band").value.at("default")
    context = RuleContext(spec=spec, catalog=catalog, outcomes=outcomes)
    uncertainty = None
    if draws > 0:
        excluded = {f for r in rules if r.fired for f in r.excludes if f in outcomes}
        eligible = [f for f in outcomes if f not in excluded] or list(outcomes)
        if seed is None:
            seed = int(catalog.parameter("uncertainty_seed").value.at("default"))
        uncertainty = monte_carlo(spec, catalog, outcomes, eligible, draws, seed, plan)
    recommendation, checks = recommend(context, rules, band, uncertainty)
    ranked = {fabric: outcomes[fabric].model_copy(update={"rank": index + 1})
              for index, fabric in enumerate(recommendation.ranking)}
    return Decision(outcomes=ranked, rules=rules + checks, recommendation=recommendation, uncertainty=uncertainty)


def evaluate(spec: ClusterSpec, catalog: Catalog, scenario: Scenario = Scenario(),
             plan: Plan = DEFAULT_PLAN, *, draws: int = 0, seed: int | None = None) -> Decision:
    """The numbers of every fabric (by ``plan``), then the rules and the ranking (with a Monte
    Carlo of ``draws`` draws when > 0)."""
    return decide(spec, catalog, fabric_outcomes(spec, catalog, scenario, plan=plan), draws=draws, seed=seed,
                  plan=plan)
