"""Memory gates the comparison: a job whose layout does not fit in GPU memory on a design is re-laid
before the chain prices its step time, and the outcome says so.

The step-time model estimates each job's memory per GPU (``StepResult.memory_per_gpu_bytes``, the
fullest pipeline stage; :mod:`fabricplan.perf.memory`). A job over the GPU's memory at its own
``recompute`` setting is re-laid with the next heavier activation recomputation that fits
(``none`` -> ``selective`` -> ``full``), so its step time includes the recomputed FLOPs; the
layout's parallelism is kept. A job that does not fit even with full recomputation (the step
model refuses it, naming the job) is re-laid with more pipeline stages, the fewest that fit (each
stage then holds fewer layers' weights, gradients and optimizer states: Narayanan et al. SC'21,
section 3.1), and where no pipeline depth fits it is left out of the comparison with the memory it
needs (:func:`fit_pipeline`): the other jobs are still compared, and the GPUs of its share do no
useful work on any fabric.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricplan.errors import InputError
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
    """Indices of the training jobs whose estimate is over the GPU's memory (a serving job's batch is
    already bounded by the KV cache its memory holds: ``perf/serving.py``)."""
    return [index for index, result in enumerate(steps) if not result.memory_fits and result.serving is None]


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


def _refused_job(error: InputError, spec: ClusterSpec) -> int | None:
    """The index of the job a "does not fit" refusal of the step model names, else None."""
    location = error.location or ""
    if "does not fit" not in error.message or not location.startswith("jobs["):
        return None
    name = location[len("jobs["):-1]
    return next((i for i, job in enumerate(spec.jobs) if job.name == name), None)


def deeper_pipelines(spec: ClusterSpec, index: int) -> list[ClusterSpec]:
    """The spec with job ``index`` at each deeper pipeline (its ``pp`` doubled while the
    model-parallel group still fits in the job's GPUs, and divides them) that the spec's own validation
    accepts (divisibility, batch), shallowest first."""
    from pydantic import ValidationError

    from fabricplan.errors import FabricplanError

    job = spec.jobs[index]
    gpus = job.gpus or spec.cluster.gpus
    out = []
    pp = job.pp * 2
    while job.tp * job.cp * pp <= gpus:
        if gpus % (job.tp * job.cp * pp):  # the model-parallel group must divide the job's GPUs
            pp *= 2
            continue
        try:
            jobs = [j.model_dump(exclude_unset=True) for j in spec.jobs]
            jobs[index] = {**jobs[index], "pp": pp}
            out.append(type(spec).model_validate({**spec.model_dump(exclude_unset=True), "jobs": jobs}))
        except (ValidationError, FabricplanError):
            pass
        pp *= 2
    return out


def fit_pipeline(spec: ClusterSpec, run_steps) -> tuple[ClusterSpec, list[StepResult], dict[str, str]]:
    """``run_steps(spec)`` with every job the step model refuses for memory re-laid with the
    shallowest deeper pipeline that fits, or left out: the spec run, its step results and per job
    changed what was done. The refusal is raised again when every job is left out."""
    changed: dict[str, str] = {}
    while True:
        try:
            return spec, run_steps(spec), changed
        except InputError as error:
            index = _refused_job(error, spec)
            if index is None:
                raise
            job = spec.jobs[index]
            fitted = None
            for trial in deeper_pipelines(spec, index):
                try:
                    run_steps(trial)
                except InputError:  # still over memory, or a depth the step model cannot lay out
                    continue
                fitted = trial
                break
            if fitted is not None:
                changed[job.name] = (f"re-laid: does not fit with pp {job.pp} at any recompute setting, so run with "
                                     f"pp {fitted.jobs[index].pp} (more pipeline stages, fewer layers per GPU)")
                spec = fitted
                continue
            if len(spec.jobs) == 1:
                raise
            changed[job.name] = f"left out of the comparison: {error.message}"
            spec = spec.model_copy(update={"jobs": [j for i, j in enumerate(spec.jobs) if i != index]})
