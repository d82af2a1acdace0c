"""The model chain (design -> cost -> performance -> outcome) with swappable steps.

``Plan().evaluate(spec, catalog, scenario, draws)`` gives every fabric's :class:`FabricOutcome` at
the point and under the draws (:class:`Evaluation`); ``decide`` ranks them. See
:mod:`fabricplan.plan.chain`.
"""

from fabricplan.catalog.inputs import Draws, Inputs
from fabricplan.plan.chain import (
    DEFAULT_PLAN,
    Evaluation,
    Plan,
    Run,
    chosen_designs,
    fabric_outcomes,
    job_step_times,
)
from fabricplan.plan.outcome import FabricOutcome, JobOutcome, job_outcome, join_outcome
from fabricplan.plan.scenario import Levers, Scenario

__all__ = ["DEFAULT_PLAN", "Draws", "Evaluation", "FabricOutcome", "Inputs", "JobOutcome", "Levers", "Plan", "Run",
           "Scenario", "chosen_designs", "fabric_outcomes", "job_outcome", "job_step_times", "join_outcome"]
