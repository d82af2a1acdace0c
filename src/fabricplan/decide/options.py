"""What a fabric option that is off (SHARP, adaptive routing) would change: the same chain with the
option on for that fabric (issue 26). Every number comes from ``Plan.evaluate``."""

from __future__ import annotations

from pydantic import BaseModel, Field

from fabricplan.catalog import Catalog
from fabricplan.plan import Plan
from fabricplan.plan.outcome import FabricOutcome
from fabricplan.spec import ClusterSpec


class OptionUplift(BaseModel):
    """One option, off as the spec builds the fabric, turned on through the same chain."""

    fabric: str
    option: str = Field(description="sharp or adaptive_routing")
    requires: str = Field(description="The option's prerequisites (catalog)")
    step_time_change: dict[str, float] = Field(description="Per job: step time with the option / without - 1")
    cost_per_useful_gpu_hour_change: float = Field(description="With the option / without - 1")
    cost_per_useful_gpu_hour_usd: float = Field(description="With the option on")


def _with_option(spec: ClusterSpec, profile: str, option: str) -> ClusterSpec:
    choices = []
    for choice in spec.fabric_choices():
        if choice.profile == profile:
            choice = choice.model_copy(update={option: True})
        choices.append(choice)
    return spec.model_copy(update={"fabrics": choices})


def option_uplifts(spec: ClusterSpec, catalog: Catalog, plan: Plan,
                   outcomes: dict[str, FabricOutcome]) -> list[OptionUplift]:
    """For every fabric of the spec and each of its catalog options that is off as built, the chain's
    point outcome with the option on, against the outcome without it."""
    uplifts = []
    for choice in spec.fabric_choices():
        profile = catalog.fabric(choice.profile)
        base = outcomes.get(choice.profile)
        if base is None:
            continue
        for name, option in profile.options.items():
            if profile.option_on(name, choice.options().get(name)):
                continue
            on = plan.evaluate(_with_option(spec, choice.profile, name), catalog,
                               fabrics=[choice.profile]).outcomes[choice.profile]
            steps = {job.job: float(job.step_time_s) for job in base.jobs}
            uplifts.append(OptionUplift(
                fabric=choice.profile, option=name, requires=option.requires,
                step_time_change={job.job: float(job.step_time_s) / steps[job.job] - 1.0
                                  for job in on.jobs if steps.get(job.job)},
                cost_per_useful_gpu_hour_change=float(on.cost_per_useful_gpu_hour_usd)
                / float(base.cost_per_useful_gpu_hour_usd) - 1.0,
                cost_per_useful_gpu_hour_usd=float(on.cost_per_useful_gpu_hour_usd)))
    return uplifts
