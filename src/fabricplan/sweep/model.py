"""The sweep file: a base spec, axes as dotted paths, how they combine, filters, outputs to keep.

::

    name: llama70b-space
    base: ../examples/llama70b-1024-h100.yaml     # a spec file (relative to this file) or an inline spec
    catalog: []                                   # catalog overlay files applied before the axes
    axes:                                         # dotted path -> values
      cluster.gpus: [1024, 2048, 4096]
      catalog.switches.sw_ib_qm9700.price_usd: {low: 30000, high: 60000, steps: 5}
      topology.oversubscription: [[1, 1], [2, 1]]
    zip: [[cluster.gpus, jobs.0.global_batch_sequences]]  # axes that move together; the rest: product
    filters: ["cluster.gpus >= 2048", "jobs.0.tp <= cluster.gpus_per_node"]
    outputs: [cost_per_useful_gpu_hour_usd, step_time_s, tco_usd]

A path starting with ``catalog.`` goes to :meth:`fabricplan.catalog.Catalog.with_values` (a number
on a price range pins low = default = high); any other path goes into the spec document
(:mod:`fabricplan.spec.paths`). The JSON Schema of this file is ``schemas/sweep.schema.json``.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

#: Program limits (not physical defaults): points one sweep file may describe, values per axis.
MAX_POINTS = 10_000_000
MAX_VALUES_PER_AXIS = 100_000
#: Monte Carlo draws of a point's compare: the cap of `compare --draws`.
MAX_DRAWS = 1_000_000

FILTER_OPERATORS = ("<=", ">=", "==", "!=", "<", ">")


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class AxisRange(Strict):
    """Evenly spaced values from ``low`` to ``high`` inclusive (``scale: log``: evenly in log space).
    When ``low`` and ``high`` are both integers the values are rounded to integers."""

    low: float | int
    high: float | int
    steps: int = Field(ge=1, le=MAX_VALUES_PER_AXIS, description="Number of values, ends included")
    scale: str = Field(default="linear", pattern="^(linear|log)$")

    @model_validator(mode="after")
    def _ordered(self) -> AxisRange:
        if self.high < self.low:
            raise ValueError(f"high ({self.high}) is below low ({self.low})")
        if self.scale == "log" and self.low <= 0:
            raise ValueError(f"a log scale needs low > 0, got {self.low}")
        if self.steps == 1 and self.low != self.high:
            raise ValueError("one step needs low == high; use steps >= 2 for a range")
        return self

    def values(self) -> list[float | int]:
        if self.steps == 1:
            return [self.low]
        span = self.steps - 1
        if self.scale == "log":
            lo, hi = math.log(self.low), math.log(self.high)
            raw = [math.exp(lo + (hi - lo) * k / span) for k in range(self.steps)]
            raw[0], raw[-1] = float(self.low), float(self.high)
        else:
            raw = [self.low + (self.high - self.low) * k / span for k in range(self.steps)]
        if isinstance(self.low, int) and isinstance(self.high, int):
            return [int(round(v)) for v in raw]
        return [float(v) for v in raw]


AxisValues = list[Any] | AxisRange


class SweepFile(Strict):
    """What a sweep file holds (module docstring)."""

    name: str = Field(default="sweep", min_length=1, max_length=200, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$",
                      description="Names the sweep (and the default results folder <name>.sweep)")
    base: str | dict[str, Any] = Field(description="The base cluster spec: a file path (relative to the sweep "
                                                   "file) or the spec itself, inline")
    catalog: list[str] = Field(default_factory=list, description="Catalog overlay files applied to every point "
                                                                 "(relative to the sweep file)")
    axes: dict[str, AxisValues] = Field(
        min_length=1, description="Dotted path -> its values: a list, or {low, high, steps[, scale: log]}. "
                                  "Paths starting with 'catalog.' set catalog values; others set spec fields")
    zip: list[list[str]] = Field(default_factory=list,
                                 description="Groups of axes that move together (equal lengths); the groups and "
                                             "the other axes combine as a product")
    filters: list[str] = Field(default_factory=list,
                               description="Keep points where every condition holds: '<path> <op> <number, text "
                                           "or path>' with op one of <=, >=, ==, !=, <, >")
    outputs: list[str] | None = Field(default=None, description="Per-fabric outputs to keep (None: all); "
                                                                "see `fabricplan sweep outputs`")
    quick: bool = Field(default=True, description="Each point's compare skips the scale search and the "
                                                  "sensitivity analysis (the analytic decision only)")
    efficiency_model: str = Field(default="analytic", description="Efficiency model of every point's compare")
    draws: int | None = Field(default=None, ge=0, le=MAX_DRAWS,
                              description="Monte Carlo draws of each point's compare (None: the catalog's "
                                          "uncertainty_draws, as `compare` draws; 0: none, several times faster: "
                                          "the cost and time columns stay, the recommended fabric, close call and "
                                          "rank follow the point estimates and the close-call band; at most "
                                          "10^6, as `compare --draws`)")
