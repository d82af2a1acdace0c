"""The model chain (design -> cost -> performance -> outcome) with swappable steps.

``Plan().run(spec, catalog, choice, assumptions)`` gives one fabric's :class:`FabricOutcome`;
``decide`` ranks the outcomes of every fabric. See :mod:`fabricplan.plan.chain`.
"""

from fabricplan.plan.chain import DEFAULT_PLAN, Levers, Plan, chosen_designs, job_step_times
from fabricplan.plan.outcome import FabricOutcome, JobOutcome, job_outcome, join_outcome

__all__ = ["DEFAULT_PLAN", "FabricOutcome", "JobOutcome", "Levers", "Plan", "chosen_designs", "job_outcome", "job_step_times",
           "join_outcome"]
