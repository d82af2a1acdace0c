"""What each fabric option (SHARP, adaptive routing) changes: the same chain with the option switched
from how the spec builds the fabric, on where it is off (SHARP on InfiniBand) and off where it is on
(adaptive routing on Spectrum-X) (issue 26). Every number comes from ``Plan.evaluate``; where the
step does not move, ``note`` says why from the collectives the step ran (``StepResult.collectives``)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from fabricplan.catalog import Catalog
from fabricplan.plan import Plan
from fabricplan.plan.outcome import FabricOutcome
from fabricplan.spec import ClusterSpec

_COLLNET = ("collnet_direct", "collnet_chain", "nvls", "nvls_tree")


class OptionUplift(BaseModel):
    """One option switched from how the spec builds the fabric, through the same chain."""

    fabric: str
    option: str = Field(description="sharp or adaptive_routing")
    enabled: bool = Field(default=True, description="The option's state in this run: True turned on (off as "
                                                    "built), False turned off (on as built)")
    requires: str = Field(description="The option's prerequisites (catalog)")
    step_time_change: dict[str, float] = Field(description="Per job: step time in this run / as built - 1")
    cost_per_useful_gpu_hour_change: float = Field(description="This run / as built - 1")
    cost_per_useful_gpu_hour_usd: float = Field(description="In this run")
    note: str = Field(default="", description="Why the step does not move, where it does not (the collectives "
                                              "the step ran)")


def with_option(spec: ClusterSpec, profile: str, option: str, on: bool) -> ClusterSpec:
    choices = []
    for choice in spec.fabric_choices():
        if choice.profile == profile:
            choice = choice.model_copy(update={option: on})
        choices.append(choice)
    return spec.model_copy(update={"fabrics": choices})


def _inter_node(steps) -> list:
    """The collectives of the steps whose ranks span more than one node (those the network carries)."""
    return [c for step in steps for c in step.collectives if c.n_gpus > c.gpus_per_node]


def _ops(collectives) -> str:
    names = sorted({c.operation.replace("_", "-") for c in collectives})
    return ", ".join(names) if names else "none"


def sharp_note(steps) -> str:
    """Why SHARP leaves the step where it is, from the collectives the step ran with it on."""
    crossing = _inter_node(steps)
    if not crossing:
        return "no collective of these jobs crosses the network, so there is nothing for the switches to reduce"
    if any(c.algorithm in _COLLNET for c in crossing):
        return ("NCCL's tuner picks CollNet for some collectives, but they are too small a part of the step to "
                "show")
    reduce_all = sorted({c.gpus_per_node for c in crossing if c.operation == "all_reduce"})
    text = f"NCCL keeps Ring/Tree for all these jobs run across nodes ({_ops(crossing)}): "
    if reduce_all:
        per_node = "/".join(str(n) for n in reduce_all)
        text += (f"SHARP halves an all-reduce's bytes, but NCCL's tuner rates CollNet no faster for these "
                 f"all-reduces ({per_node} GPU(s) per node)")
    else:
        text += "SHARP halves the bytes of an all-reduce and these run none (a sharded optimizer's data parallelism)"
    if any(c.operation in ("reduce_scatter", "all_gather") for c in crossing):
        text += (", and CollNet's reduce-scatter/all-gather (NCCL 2.20+) sends each rank's share through its NIC as "
                 "a ring does")
    return text


def routing_note(steps) -> str:
    """Why switching adaptive routing leaves the step where it is."""
    crossing = _inter_node(steps)
    if not crossing:
        return "no collective of these jobs crosses the network"
    if all(c.routing_efficiency >= 1.0 for c in crossing):
        return (f"the collectives that cross nodes ({_ops(crossing)}) stay under one leaf or hash without "
                "collisions on this design")
    return "the collectives that lose bandwidth to ECMP are too small a part of the step to show"


def option_uplifts(spec: ClusterSpec, catalog: Catalog, plan: Plan,
                   outcomes: dict[str, FabricOutcome]) -> list[OptionUplift]:
    """For every fabric of the spec and each of its catalog options, the chain's point outcome with the
    option switched (on where the spec builds it off, off where it is on), against the outcome as built."""
    unchanged = catalog.parameter("option_step_unchanged_relative").value.at("default")
    uplifts = []
    for choice in spec.fabric_choices():
        profile = catalog.fabric(choice.profile)
        base = outcomes.get(choice.profile)
        if base is None:
            continue
        for name, option in profile.options.items():
            enabled = not profile.option_on(name, choice.options().get(name))
            run = plan.evaluate(with_option(spec, choice.profile, name, enabled), catalog,
                                fabrics=[choice.profile]).runs[choice.profile]
            on = run.outcome
            steps = {job.job: float(job.step_time_s) for job in base.jobs}
            change = {job.job: float(job.step_time_s) / steps[job.job] - 1.0 for job in on.jobs if steps.get(job.job)}
            note = ""
            if all(abs(value) < unchanged for value in change.values()):
                note = sharp_note(run.steps) if name == "sharp" else routing_note(run.steps)
            uplifts.append(OptionUplift(
                fabric=choice.profile, option=name, enabled=enabled, requires=option.requires,
                step_time_change=change,
                cost_per_useful_gpu_hour_change=float(on.cost_per_useful_gpu_hour_usd)
                / float(base.cost_per_useful_gpu_hour_usd) - 1.0,
                cost_per_useful_gpu_hour_usd=float(on.cost_per_useful_gpu_hour_usd), note=note))
    return uplifts
