"""Memory gates the comparison: a job whose layout does not fit in GPU memory on a design is re-laid
before the chain prices its step time, and the outcome says so.

The step-time model estimates each job's memory per GPU (``StepResult.memory_per_gpu_bytes``, the
fullest pipeline stage; :mod:`fabricplan.perf.memory`). A job over the GPU's memory at its own
``recompute`` setting is re-laid with the next heavier activation recomputation that fits
(``none`` -> ``selective`` -> ``full``), so its step time includes the recomputed FLOPs; the
layout's parallelism is the user's and is kept. A job that does not fit even with full
recomputation is refused by the step model (an error naming the job), so it never reaches a ranking.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricplan.perf.memory import GIB
from fabricplan.perf.step import StepResult
from fabricplan.spec import ClusterSpec

#: Activation recomputation settings from the least to the most recomputed (spec/job.py ``recompute``).
RECOMPUTE_ORDER = ("none", "selective", "full")


@dataclass(frozen=True)
class Relayout:
    """How one job was re-laid to fit: the spec's recompute setting and memory, and the fitting one."""

    job: str
    recompute_from: str
    recompute_to: str
    needed_gib: float
    fitted_gib: float
    capacity_gib: float

    @property
    def note(self) -> str:
        return (f"re-laid: needs {self.needed_gib:,.1f} GiB per GPU with recompute {self.recompute_from} on a "
                f"{self.capacity_gib:,.1f} GiB GPU, so run with recompute {self.recompute_to} "
                f"({self.fitted_gib:,.1f} GiB; the step time includes the recomputation)")


def over_memory(steps: list[StepResult]) -> list[int]:
    """Indices of the jobs whose estimate is over the GPU's memory."""
    return [index for index, result in enumerate(steps) if not result.memory_fits]


def heavier_recompute(setting: str) -> list[str]:
    """The recompute settings heavier than ``setting``, lightest first."""
    return list(RECOMPUTE_ORDER[RECOMPUTE_ORDER.index(setting) + 1:]) if setting in RECOMPUTE_ORDER else []


def with_recompute(spec: ClusterSpec, index: int, setting: str) -> ClusterSpec:
    """The spec with job ``index`` at another recompute setting."""
    jobs = list(spec.jobs)
    jobs[index] = jobs[index].model_copy(update={"recompute": setting})
    return spec.model_copy(update={"jobs": jobs})


def relayout(spec: ClusterSpec, steps: list[StepResult], run_steps) -> tuple[ClusterSpec, list[StepResult],
                                                                             list[Relayout]]:
    """The spec with every job over memory re-laid to the lightest recompute setting that fits on
    the design (``run_steps(spec) -> steps`` is the chain's performance step on it), its step
    results and what was changed. A job no heavier setting fits is left as the spec has it (its
    outcome is flagged ``fits_memory = False``)."""
    changes: list[Relayout] = []
    for index in over_memory(steps):
        job, before = spec.jobs[index], steps[index]
        for setting in heavier_recompute(job.recompute):
            trial_spec = with_recompute(spec, index, setting)
            trial = run_steps(trial_spec)
            if trial[index].memory_fits:
                changes.append(Relayout(job=job.name, recompute_from=job.recompute, recompute_to=setting,
                                        needed_gib=before.memory_per_gpu_bytes / GIB,
                                        fitted_gib=trial[index].memory_per_gpu_bytes / GIB,
                                        capacity_gib=before.memory_capacity_bytes / GIB))
                spec, steps = trial_spec, trial
                break
    return spec, steps, changes
