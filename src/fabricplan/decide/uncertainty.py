"""The Monte Carlo's summary: per fabric, the distribution of cost per useful GPU-hour over the
draws and the probability that it is the best.

The draws themselves come from the model chain (:meth:`fabricplan.plan.Plan.evaluate`): the same
cost, performance and outcome steps as the point estimate, run on drawn inputs
(:mod:`fabricplan.catalog.inputs`: every ranged catalog number drawn from its triangular
distribution; :mod:`fabricplan.plan.drawn`: the step times on a small grid). All fabrics share the
same draws of shared quantities (common random numbers), so the probability that one is best is
not blurred by independent noise on parts they share. This module only summarises them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from fabricplan.catalog.inputs import Draws

if TYPE_CHECKING:
    import numpy as np


class FabricDistribution(BaseModel):
    """One fabric's cost per useful GPU-hour over the draws."""

    p10_usd: float
    p50_usd: float
    p90_usd: float
    mean_usd: float
    probability_best: float = Field(description="Share of draws in which this fabric is the cheapest eligible one")


class Uncertainty(BaseModel):
    """The Monte Carlo of one decision (module docstring)."""

    draws: int
    seed: int
    method: str = ("triangular(low, default, high) per ranged catalog number (its Range or spread), through the "
                   "same cost and outcome steps as the point estimate; step times interpolated on a low/default/high "
                   "grid of compute speed and per-NIC bandwidth (drawn from each fabric's own figures), plus a "
                   "first-order term per drawn perf number (adaptive-routing residual, DP overlap efficiency)")
    threshold: float = Field(description="A fabric with at least this probability of being best is a clear winner")
    fabrics: dict[str, FabricDistribution]
    leader: str = Field(description="The eligible fabric most often best")
    leader_probability: float
    clear: bool = Field(description="The leader is best with probability >= threshold")
    ranged_inputs: list[str] = Field(description="The ranged quantities drawn (catalog ids), widths > 0")


def summarise(metrics: dict[str, np.ndarray], eligible: list[str], draws: Draws, threshold: float,
              tie_relative: float = 0.0) -> Uncertainty:
    """Percentiles per fabric and the probability that each eligible fabric is the cheapest. Fabrics
    within ``tie_relative`` of a draw's cheapest tie there and share its win equally."""
    import numpy as np

    names = [f for f in metrics if f in eligible] or list(metrics)
    stack = np.vstack([metrics[f] for f in names])
    lowest = stack.min(axis=0)
    progress = np.isfinite(lowest)  # a draw in which no fabric makes progress has no winner
    with np.errstate(invalid="ignore"):
        tied = (stack <= lowest * (1.0 + tie_relative)) & progress
    share = np.divide(tied, np.maximum(tied.sum(axis=0), 1))
    wins = {f: float(np.mean(share[i])) for i, f in enumerate(names)}
    fabrics = {}
    for fabric, values in metrics.items():
        p10, p50, p90 = np.percentile(values, [10, 50, 90])
        fabrics[fabric] = FabricDistribution(p10_usd=float(p10), p50_usd=float(p50), p90_usd=float(p90),
                                             mean_usd=float(np.mean(values)),
                                             probability_best=wins.get(fabric, 0.0))
    leader = max(names, key=lambda f: (wins[f], -float(np.median(metrics[f]))))
    return Uncertainty(draws=draws.n, seed=draws.seed, threshold=threshold, fabrics=fabrics, leader=leader,
                       leader_probability=wins[leader], clear=wins[leader] >= threshold,
                       ranged_inputs=sorted(draws.ranged))
