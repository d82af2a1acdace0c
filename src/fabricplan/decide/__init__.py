"""The decision: numbers per fabric, cited rules, ranking with reasons, crossovers and sensitivity."""

from fabricplan.decide.compare import compare
from fabricplan.decide.evaluate import Decision, Scenario, decide, evaluate, fabric_outcomes
from fabricplan.decide.models import CompareReport

__all__ = ["CompareReport", "Decision", "Scenario", "compare", "decide", "evaluate", "fabric_outcomes"]
