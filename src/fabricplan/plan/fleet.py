"""The fleet in the chain: how much slower each job's network traffic runs beside the other jobs.

``compare`` prices each job on its own placement. When the spec's jobs share the cluster (some job
asks for fewer GPUs than the cluster has), the fleet (:func:`fabricplan.fleet.run_fleet`: arrivals
at the jobs' shares, the spec's scheduler policy, every running job on the chosen design's cabled
fabric at the sampled instants) gives each job's pace alone and shared. The chain takes from it
one number per job, the **interference** ``i = mean(pace alone / pace shared) >= 1``, and applies it
to the data-parallel and expert-parallel communication the step model leaves exposed (the traffic
the fleet routes across nodes)::

    step' = step + (exposed_dp + exposed_ep) x (i - 1)

The job's own placement (packed or scattered, ECMP collisions of its own flows) is already in the
step model; the fleet adds only what the other jobs take. A spec whose jobs each take the whole
cluster has nothing sharing the fabric: no fleet is run and nothing changes. Results are cached by
what the fleet reads (the catalog's ``perf_defaults``, the spec's cluster, jobs and scheduler
policy, the sized design, its routing and port speed), so the same scenario is simulated once:
what-ifs on prices, staffing or failures reuse it.
"""

from __future__ import annotations

from dataclasses import replace

from fabricplan.perf.step import StepResult

#: Exposed communication kinds the fleet's traffic stands for (its rings and all-to-alls across nodes).
FLEET_KINDS = ("dp", "ep")
_CACHE: dict[tuple, tuple[dict[str, float], str]] = {}
_CACHE_LIMIT = 64


def shares_the_cluster(spec) -> bool:
    """Whether any job asks for fewer GPUs than the cluster has (so jobs can run side by side)."""
    return any(job.gpus is not None and job.gpus < spec.cluster.gpus for job in spec.jobs)


def interference(spec, catalog, design) -> tuple[dict[str, float], str]:
    """(job name -> interference ``i``, a note saying how it was obtained); empty when nothing shares
    the fabric (module docstring). With phases, each phase's jobs run their own fleet (only they run side
    by side)."""
    if spec.phases:
        factors, notes = {}, []
        for phase in spec.phases:
            values, note = interference(spec.phase_spec(phase.name), catalog, design)
            factors.update(values)
            if note:
                notes.append(f"{phase.name}: {note}")
        return factors, "; ".join(notes)
    if not shares_the_cluster(spec) or design.size.tiers < 1:
        return {}, ""
    from fabricplan.fleet import run_fleet
    from fabricplan.fleet.run import spec_policy
    from fabricplan.topology.sizing import size_key

    key = (_perf_defaults_key(catalog), spec.model_dump_json(include={"cluster", "jobs"}), spec_policy(spec),
           size_key(design.size), design.network.profile.routing, design.hardware.port_speed_gbps)
    if key not in _CACHE:
        result = run_fleet(design, spec, catalog, alternatives=False, with_failures=False)
        factors: dict[str, list[float]] = {}
        for sample in result.samples:
            for job in sample.jobs:
                factors.setdefault(job.kind, []).append(job.pace_alone / max(job.pace_shared, 1e-12))
        values = {kind: sum(v) / len(v) for kind, v in factors.items()}
        worst = max(values.items(), key=lambda kv: kv[1], default=None)
        note = (f"fleet of {result.horizon_days:g} days, {len(result.samples)} instants, policy {result.policy}, "
                f"routing {result.routing}: " + (f"the most slowed job, {worst[0]}, moves its data-parallel "
                                                 f"traffic x{worst[1]:.2f} slower beside the others"
                                                 if worst else "no job ran at the sampled instants"))
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = (values, note)
    return _CACHE[key]


_PERF_KEYS: dict[str, str] = {}


def _perf_defaults_key(catalog) -> str:
    """A content key of what the fleet reads from a catalog (its ``perf_defaults``: the simulator's
    and the fleet's parameters), so a what-if on prices or staffing finds the fleet it already ran."""
    import hashlib

    revision = catalog.revision
    if revision not in _PERF_KEYS:
        if len(_PERF_KEYS) >= _CACHE_LIMIT:
            _PERF_KEYS.pop(next(iter(_PERF_KEYS)))
        _PERF_KEYS[revision] = hashlib.sha256(catalog.perf_defaults.model_dump_json().encode()).hexdigest()
    return _PERF_KEYS[revision]


def shared_fabric_step(result: StepResult, factor: float) -> StepResult:
    """``result`` with its exposed data- and expert-parallel time ``factor`` x longer (module docstring);
    MFU, HFU, tokens/s and the GPU-hours for the budget follow the step time."""
    extra = sum(result.exposed_comm_s.get(kind, 0.0) for kind in FLEET_KINDS) * (factor - 1.0)
    if extra <= 0:
        return result
    exposed = {kind: value * factor if kind in FLEET_KINDS else value for kind, value in result.exposed_comm_s.items()}
    return replace(result.at_step_time(result.step_time_s + extra, result.compute_s), exposed_comm_s=exposed,
                   notes=[*result.notes, f"beside the fleet's other jobs: data-parallel traffic x{factor:.2f}"])


def with_interference(performance, factors: dict[str, float]):
    """The performance step ``performance`` with each job's result through :func:`shared_fabric_step`."""

    def run(spec, catalog, design, levers, efficiency) -> list[StepResult]:
        return [shared_fabric_step(r, factors.get(r.job, 1.0)) for r in performance(spec, catalog, design, levers,
                                                                                  efficiency)]

    return run
