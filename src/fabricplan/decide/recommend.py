"""Rank the fabrics: the numbers decide, constraints exclude, the seeds' rules of thumb are shown
beside the numbers as advice, and the three misjudgements the seeds warn about are checked on the
result.

1. Fabrics a fired constraint rules out (latency SLA, operations maturity) drop to the bottom.
2. The rest are ranked by the numbers: with a Monte Carlo over the catalog's ranges, by the
   probability of being the cheapest per useful GPU-hour (then by the point cost); without one, by
   cost per useful GPU-hour (lower is better).
3. A close call (no fabric best with probability >= ``decision_best_probability``; without draws:
   fabrics within ``decision_close_call_band`` of the cheapest) is said, and still ranked by the
   numbers: no rule votes. A rule with a mechanism acts through the number it is about (its
   ``mechanism``: staffing, placement, step time); one without is advice with its citation.
4. Advice that favours a fabric the numbers put behind is reported as a disagreement.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricplan.decide.models import FabricOutcome, Recommendation, RuleAdvice, RuleResult
from fabricplan.decide.rules import RuleContext


def _metric(outcome: FabricOutcome) -> float:
    return outcome.cost_per_useful_gpu_hour_usd


def _relative(a: float, b: float) -> float:
    return a / b - 1.0


@dataclass(frozen=True)
class Ranking:
    """The order of the fabrics and what shaped it."""

    order: list[str]
    excluded: set[str]  # fabrics a fired rule rules out (empty when it would rule out all)
    contenders: list[str]  # fabrics the numbers cannot separate from the leader (close call)
    all_excluded: bool  # the rules ruled out every fabric, so the numbers alone rank them
    numbers_leader: str = ""  # the eligible fabric the numbers put first (always the first of ``order``)
    decided_by: str = "numbers"  # numbers | exclusions

    @property
    def close_call(self) -> bool:
        return len(self.contenders) > 1

    @property
    def eligible(self) -> list[str]:
        return [f for f in self.order if f not in self.excluded]


def rank_fabrics(outcomes: dict[str, FabricOutcome], rules: list[RuleResult], band: float,
                 uncertainty=None) -> Ranking:
    """Rank by the numbers, exclusions last; the contenders of a close call are only reported.

    With a Monte Carlo (``uncertainty``), the order is by probability of being best (then the point
    cost), and the contenders are the fabrics best with probability at least ``1 − threshold`` when
    no fabric reaches ``threshold`` (catalog ``decision_best_probability``). Without one, the order
    is by cost and the contenders are the fabrics within the close-call ``band`` of the cheapest
    (catalog ``decision_close_call_band``)."""
    excluded = {f for r in rules if r.fired for f in r.excludes if f in outcomes}
    all_excluded = excluded == set(outcomes)
    if all_excluded:  # nothing left: report all, but keep the numbers' order
        excluded = set()
    if uncertainty is not None:
        def win(f: str) -> float:
            dist = uncertainty.fabrics.get(f)
            return dist.probability_best if dist else 0.0
        by_metric = sorted((f for f in outcomes if f not in excluded), key=lambda f: (-win(f), _metric(outcomes[f])))
        leader = by_metric[0]
        if win(leader) >= uncertainty.threshold:
            contenders = [leader]
        else:
            contenders = [f for f in by_metric if f == leader or win(f) >= 1 - uncertainty.threshold]
    else:
        by_metric = sorted((f for f in outcomes if f not in excluded), key=lambda f: _metric(outcomes[f]))
        leader = by_metric[0]
        contenders = [f for f in by_metric if _metric(outcomes[f]) <= _metric(outcomes[leader]) * (1 + band)]
    dropped = sorted(excluded, key=lambda f: _metric(outcomes[f]))
    return Ranking(order=by_metric + dropped, excluded=excluded, contenders=contenders,
                   all_excluded=all_excluded, numbers_leader=leader)


def misjudgement_checks(ctx: RuleContext, recommended: str, eligible: list[str], rules: list[RuleResult],
                        band: float, uncertainty=None) -> list[RuleResult]:
    """CHECK001-003: the seeds' three misjudgements, asked of the result. Only `eligible` fabrics
    (not ruled out by a rule) are compared with the choice: a fabric the latency SLA or the team's
    skills rule out is no cheaper alternative."""
    outcomes = {f: ctx.outcomes[f] for f in eligible}
    chosen = outcomes[recommended]
    cheapest = min(outcomes, key=lambda f: outcomes[f].tco_usd)
    premium = chosen.tco_usd / outcomes[cheapest].tco_usd - 1.0
    gain = chosen.weighted_gpu_utilisation / outcomes[cheapest].weighted_gpu_utilisation - 1.0
    # A material TCO premium that the job mix does not earn back in GPU utilisation.
    min_premium = ctx.threshold("check_bandwidth_only_min_tco_premium")
    gain_share = ctx.threshold("check_bandwidth_only_min_gain_share")
    bandwidth_only = premium > min_premium and gain < premium * gain_share
    checks = [RuleResult(
        id="CHECK001", title="Misjudgement 1: bandwidth-only thinking", kind="check", role="check",
        citation=f"{ctx.cite('S2')}, 误判一: 只看理论带宽，不看实际瓶颈", fired=bandwidth_only,
        thresholds={"min_tco_premium": min_premium, "min_gain_share_of_premium": gain_share},
        message=(f"{recommended} costs {100 * premium:.1f} % more to own than {cheapest} but raises GPU utilisation "
                 f"by only {100 * gain:.1f} %: make sure the choice is not about bandwidth alone"
                 if bandwidth_only else
                 f"{recommended} is the cheapest fabric to own" if recommended == cheapest else
                 f"{recommended}'s TCO premium over the cheapest fabric ({100 * max(premium, 0):.1f} %) is matched by "
                 f"its utilisation gain ({100 * gain:+.1f} %)"))]
    estate_rule = next((r for r in rules if r.id == "EST001"), None)
    numbers_leader = min(outcomes, key=lambda f: _metric(outcomes[f]))
    compatibility_only = (estate_rule is not None and ctx.spec.operations.existing_ethernet
                          and chosen.family == "ethernet" and outcomes[numbers_leader].family == "infiniband"
                          and recommended != numbers_leader)
    checks.append(RuleResult(
        id="CHECK002", title="Misjudgement 2: compatibility-only thinking", kind="check", role="check",
        citation=f"{ctx.cite('S2')}, 误判二: 把'现网兼容'当成唯一优势", fired=compatibility_only,
        message=(f"{recommended} was chosen over {numbers_leader}, which the numbers favour; make sure the "
                 "existing estate, not the workload, is not the only reason" if compatibility_only
                 else "the choice does not rest on Ethernet compatibility alone")))
    if uncertainty is not None:  # an Ethernet fabric the numbers cannot separate from the choice
        ib_default = (chosen.family == "infiniband" and not uncertainty.clear and any(
            o.family != "infiniband" and f in uncertainty.fabrics
            and uncertainty.fabrics[f].probability_best >= 1 - uncertainty.threshold for f, o in outcomes.items()))
    else:
        ib_default = (chosen.family == "infiniband" and any(
            o.family != "infiniband" and _metric(o) <= _metric(chosen) * (1 + band) for o in outcomes.values()))
    checks.append(RuleResult(
        id="CHECK003", title="Misjudgement 3: InfiniBand as the default answer", kind="check", role="check",
        citation=f"{ctx.cite('S2')}, 误判三: 把 InfiniBand 当成默认标准答案", fired=ib_default,
        thresholds={"close_call_band": band},
        message=("InfiniBand is recommended although an Ethernet fabric is within the close-call band on cost "
                 "per useful GPU-hour; confirm the scale and skills justify it" if ib_default
                 else "InfiniBand is not chosen by default here")))
    return checks


def _money(value: float) -> str:
    return f"${value:,.2f}"


COMM_KINDS = {"tp": "tensor-parallel", "pp": "pipeline", "dp": "data-parallel", "ep": "expert-parallel",
              "cp": "context-parallel", "kv": "KV-cache transfer"}


def _duration(seconds: float) -> str:
    """A step's extra time: in s from one second, else in ms."""
    return f"{seconds:.2f} s" if seconds >= 1 else f"{seconds * 1e3:.1f} ms"


def main_exposed_gap(outcome: FabricOutcome, best: FabricOutcome) -> tuple[str, str, float] | None:
    """(job, communication kind, extra seconds a step) of the exposed communication that costs ``outcome``
    the most GPU utilisation against ``best``: the largest ``share x extra exposed seconds / step time``
    over the jobs both ran and the kinds of ``JobOutcome.exposed_comm_s``; None when nothing grew."""
    reference = {job.job: job for job in best.jobs}
    top = None
    for job in outcome.jobs:
        other = reference.get(job.job)
        if other is None or job.step_time_s <= 0:
            continue
        for kind, seconds in job.exposed_comm_s.items():
            extra = seconds - other.exposed_comm_s.get(kind, 0.0)
            weight = job.share * extra / job.step_time_s
            if extra > 0 and (top is None or weight > top[0]):
                top = (weight, job.job, kind, extra)
    return None if top is None else top[1:]


def _win_text(uncertainty, fabric: str) -> str:
    if uncertainty is None or fabric not in uncertainty.fabrics:
        return ""
    return f"best in {100 * uncertainty.fabrics[fabric].probability_best:.0f} % of {uncertainty.draws:,} draws"


def _lead_reasons(ranked: Ranking, outcomes: dict[str, FabricOutcome], band: float, uncertainty,
                  tie: float = 0.0) -> list[str]:
    """Why the chosen fabric leads: the numbers (its gap to the runner-up, its probability of being
    best), and in a close call that it is close, ranked by the numbers all the same."""
    chosen = ranked.order[0]
    best = outcomes[chosen]
    others = ranked.eligible[1:]
    cheapest = min(ranked.eligible, key=lambda f: _metric(outcomes[f]))
    if not others:
        return [f"{chosen} is the only fabric left after the constraints' exclusions."]
    reasons = []
    runner = min(others, key=lambda f: _metric(outcomes[f]))
    gap = _relative(_metric(outcomes[runner]), _metric(best))
    tied = [f for f in others if _relative(_metric(outcomes[f]), _metric(best)) <= tie]
    if len(tied) == len(others) and chosen == cheapest:
        return [f"Every fabric gives the same numbers ({_money(_metric(best))} per useful GPU-hour): the fabric "
                "changes neither the cost nor the step times of this cluster, so the choice is free; listed in "
                f"the spec's order, {chosen} first."]
    if chosen == cheapest:
        reasons.append(f"{chosen} has the lowest cost per useful GPU-hour: {_money(_metric(best))}; the next, "
                       f"{runner}, costs {100 * gap:.1f} % more ({_money(_metric(outcomes[runner]))}).")
    else:  # most often best over the draws, though not the cheapest at the catalog defaults
        reasons.append(f"{chosen} costs {_money(_metric(best))} per useful GPU-hour at the catalog defaults, "
                       f"{100 * _relative(_metric(best), _metric(outcomes[cheapest])):+.1f} % against "
                       f"{cheapest}, but is the cheapest in more of the draws over the catalog's ranges.")
    if uncertainty is not None:
        threshold = uncertainty.threshold
        verdict = ("a clear numeric winner" if uncertainty.clear else
                   f"a close call with {', '.join(f for f in ranked.contenders if f != chosen)}, ranked by the "
                   "numbers (probability of being best)")
        reasons.append(f"Over the catalog's ranges it is {_win_text(uncertainty, chosen)} (clear at "
                       f"{100 * threshold:.0f} %): {verdict}.")
    elif ranked.close_call:
        reasons.append(f"A close call: {', '.join(f for f in ranked.contenders if f != chosen)} within the "
                       f"{100 * band:.0f} % band on cost per useful GPU-hour; ranked by the numbers.")
    return reasons


def _why_not(ranked: Ranking, outcomes: dict[str, FabricOutcome], rules: list[RuleResult], band: float,
             uncertainty) -> dict[str, str]:
    """Per fabric behind the chosen one: what it costs against the choice and why, or the constraint
    that rules it out."""
    chosen = ranked.order[0]
    best = outcomes[chosen]
    fired = [r for r in rules if r.fired]
    why_not: dict[str, str] = {}
    for fabric in ranked.order[1:]:
        outcome = outcomes[fabric]
        if fabric in ranked.excluded:
            why_not[fabric] = " ".join(f"{r.id}: {r.message}." for r in fired if fabric in r.excludes)
            continue
        gap = _relative(_metric(outcome), _metric(best))
        tco_gap = _relative(outcome.tco_usd, best.tco_usd)
        util_gap = outcome.weighted_gpu_utilisation - best.weighted_gpu_utilisation
        points = round(100 * util_gap, 1)  # as printed: a cause only for a loss the line shows
        text = (f"{100 * gap:+.1f} % cost per useful GPU-hour ({_money(_metric(outcome))}): TCO {100 * tco_gap:+.1f} %, "
                f"GPU utilisation {100 * util_gap:+.1f} points")
        cause = main_exposed_gap(outcome, best) if points < 0 else None
        if cause:
            job, kind, extra = cause
            unit = ("decode iteration" if any(j.job == job and j.kind == "serving" for j in outcome.jobs)
                    else "step")
            text += f", mostly exposed {COMM_KINDS.get(kind, kind)} communication (+{_duration(extra)} a {unit} of {job})"
        text += "."
        if uncertainty is not None and fabric in uncertainty.fabrics:
            text += f" It is {_win_text(uncertainty, fabric)}."
        if fabric in ranked.contenders:
            where = "inside the uncertainty" if uncertainty is not None else f"within the {100 * band:.0f} % band"
            place = ranked.order.index(fabric) + 1
            ordinal = {2: "second", 3: "third", 4: "fourth"}.get(place, f"#{place}")
            text += f" A close call ({where}); the numbers rank it {ordinal}."
        favoured = [r.id for r in fired if r.role == "advice" and fabric in r.favours]
        if favoured:
            text += f" The seeds' advice ({', '.join(favoured)}) favours it; advice does not rank."
        why_not[fabric] = text
    return why_not


def _advice(ranked: Ranking, outcomes: dict[str, FabricOutcome], rules: list[RuleResult],
            uncertainty) -> tuple[list[RuleAdvice], list[str]]:
    """Each fired advice rule beside the numbers, and where one points away from the numbers' choice."""
    chosen = ranked.order[0]
    best = outcomes[chosen]
    disagreements: list[str] = []
    advice: list[RuleAdvice] = []
    for rule in rules:
        if not rule.fired or rule.role != "advice":
            continue
        favoured = [f for f in rule.favours if f not in ranked.excluded]
        advice.append(RuleAdvice(rule=rule.id, title=rule.title, favours=favoured, disfavours=list(rule.disfavours),
                                 agrees_with_numbers=(chosen in favoured or (not favoured
                                                                             and chosen not in rule.disfavours)),
                                 mechanism=rule.mechanism, citation=rule.citation))
        if favoured and chosen not in rule.favours:
            fabric = min(favoured, key=lambda f: _metric(outcomes[f]))
            gap = _relative(_metric(outcomes[fabric]), _metric(best))
            win = f" ({chosen} {_win_text(uncertainty, chosen)})" if uncertainty is not None else ""
            disagreements.append(f"{rule.id} ({rule.title}) favours {fabric}, which the numbers put "
                                 f"{100 * gap:+.1f} % on cost per useful GPU-hour against {chosen}{win}; "
                                 f"the seeds' claim is advice ({rule.mechanism}).")
        if chosen in rule.disfavours:
            disagreements.append(f"{rule.id} ({rule.title}) disfavours {chosen}, which the numbers rank first; "
                                 f"the seeds' claim is advice ({rule.mechanism}).")
    return advice, disagreements


def recommend(ctx: RuleContext, rules: list[RuleResult], band: float,
              uncertainty=None) -> tuple[Recommendation, list[RuleResult]]:
    """Rank, explain, and check the result; returns the recommendation and the check results."""
    outcomes = ctx.outcomes
    ranked = rank_fabrics(outcomes, rules, band, uncertainty)
    ranking, excluded = ranked.order, ranked.excluded
    chosen = ranking[0]
    best = outcomes[chosen]
    fired = [r for r in rules if r.fired]
    reasons = _lead_reasons(ranked, outcomes, band, uncertainty,
                            ctx.catalog.parameter("decision_tie_relative").value.at("default"))
    infeasible_reason = _infeasible_reason(outcomes, fired) if ranked.all_excluded else None
    if ranked.all_excluded:
        reasons.insert(0, f"No feasible fabric: {infeasible_reason}. {chosen} ranks first on the numbers alone; "
                          "it is not a recommendation.")
        reasons.append("Every fabric is ruled out by " + ", ".join(sorted({r.id for r in fired if r.excludes}))
                       + ", so the numbers alone rank them.")
    mix = next((r for r in fired if r.id == "MIX001"), None)
    if mix is not None:
        reasons.append(f"The network barely matters for this job mix ({mix.message}), so cost decided.")
    reasons.append(f"Its TCO over {best.cost.horizon_years:g} years is ${best.tco_usd / 1e6:,.2f}M "
                   f"({best.tco_basis}) at a weighted GPU utilisation of {100 * best.weighted_gpu_utilisation:.1f} %.")
    supporting = [r for r in fired if r.role == "advice" and chosen in r.favours]
    if supporting:
        reasons.append("The seeds' advice agrees: " + "; ".join(f"{r.id} ({r.title})" for r in supporting) + ".")
    if excluded:
        reasons.append("Ruled out: " + "; ".join(
            f"{f} by {', '.join(r.id for r in fired if f in r.excludes)}" for f in sorted(excluded)) + ".")
    why_not = _why_not(ranked, outcomes, rules, band, uncertainty)
    advice, disagreements = _advice(ranked, outcomes, rules, uncertainty)
    checks = misjudgement_checks(ctx, chosen, ranked.eligible, rules, band, uncertainty)
    probability = ({f: d.probability_best for f, d in uncertainty.fabrics.items()} if uncertainty is not None
                   else None)
    return Recommendation(ranking=ranking, recommended=chosen, reasons=reasons, why_not=why_not,
                          disagreements=disagreements, close_call=ranked.close_call if uncertainty is None
                          else not uncertainty.clear,
                          feasible=not ranked.all_excluded, infeasible_reason=infeasible_reason,
                          decided_by="exclusions" if not ranked.eligible[1:] else "numbers",
                          numbers_leader=ranked.numbers_leader, probability_best=probability,
                          advice=advice), checks


def _infeasible_reason(outcomes: dict[str, FabricOutcome], fired: list[RuleResult]) -> str:
    """Why every fabric is ruled out: for the latency SLA, the SLA and the closest fabric; else the
    rules that exclude them."""
    sla = next((r for r in fired if r.id == "SLA001" and set(r.excludes) >= set(outcomes)), None)
    if sla is not None:
        limit = sla.thresholds["latency_sla_us"]
        closest = min(outcomes, key=lambda f: outcomes[f].small_message_latency_us)
        return (f"no fabric meets the {limit:g} us latency SLA; the closest is {closest} at "
                f"{outcomes[closest].small_message_latency_us:.2f} us")
    rules = [r for r in fired if r.excludes]
    return "every fabric is ruled out (" + "; ".join(
        f"{r.id}: {', '.join(r.excludes)}" for r in rules) + ")"
