"""The typed Python API for notebooks and scripts: the same functions the CLI calls.

Every function takes catalog ids or objects (a spec path or a :class:`ClusterSpec`, a fabric id or
a :class:`FabricChoice`, a GPU id or a GPU entry), an optional :class:`Catalog` (default: the
bundled one) and returns a typed result. See docs/api.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fabricplan.catalog import Catalog, load_catalog
from fabricplan.errors import InputError
from fabricplan.spec import ClusterSpec, FabricChoice, check_references, read_spec
from fabricplan.spec import load_spec as load_checked_spec

if TYPE_CHECKING:  # heavy modules load when a function runs, not at `import fabricplan`
    from fabricplan.catalog import FabricProfile, Gpu
    from fabricplan.cost import CostReport
    from fabricplan.decide.models import CompareReport
    from fabricplan.design import FabricDesign
    from fabricplan.measure.check import CheckResult
    from fabricplan.measure.fit import CalibrationResult
    from fabricplan.ops.headroom import HeadroomResult
    from fabricplan.ops.health import HealthResult
    from fabricplan.ops.lint import LintResult
    from fabricplan.perf.collectives import CollectiveResult
    from fabricplan.perf.efficiency import EfficiencyModel
    from fabricplan.perf.step import StepResult
    from fabricplan.plan import Plan
    from fabricplan.spec.models import GpuInline
    from fabricplan.topology import FabricSize

SpecLike = ClusterSpec | str | Path

__all__ = ["calibrate", "check_measured", "collective_time", "compare", "cost", "design", "expected_rtt_us",
           "expected_under_load",
           "headroom", "health", "lint", "load_spec", "size_topology", "step_time"]


def _catalog(catalog: Catalog | Sequence[str | Path] | None) -> Catalog:
    """A catalog object as given, or the bundled one with these overlay files (None: bundled).

    Every function here resolves its ``catalog`` argument once, with this, and passes the result
    down: the models below take the catalog as a required argument and never load one themselves."""
    if isinstance(catalog, Catalog):
        return catalog
    return load_catalog(list(catalog or []))


def load_spec(path: str | Path, catalog: Catalog | Sequence[str | Path] | None = None) -> ClusterSpec:
    """Read a cluster spec file, validated against the schema; with a ``catalog`` (a Catalog or overlay
    files) also checked against it (ids, hardware fit, jobs). Without one no catalog is consulted:
    every function here checks the spec against the catalog it is given. Errors name file and field."""
    if catalog is None:
        return read_spec(path)
    return load_checked_spec(path, _catalog(catalog))


def _spec(spec: SpecLike, catalog: Catalog) -> ClusterSpec:
    if isinstance(spec, ClusterSpec):
        check_references(spec, catalog)
        return spec
    return load_checked_spec(spec, catalog)


def _plan(plan: Plan | None, efficiency_model: str | EfficiencyModel | None) -> Plan:
    from fabricplan.plan import DEFAULT_PLAN

    plan = plan or DEFAULT_PLAN
    return plan.replace(efficiency_model=efficiency_model) if efficiency_model is not None else plan


def design(spec: SpecLike, fabric: str | FabricChoice, catalog: Catalog | Sequence[str | Path] | None = None
           ) -> FabricDesign:
    """The design of one fabric for the spec: hardware, sized topology, network view, job placements.
    For a fabric of the spec, the design ``compare`` chooses among those the spec leaves open
    (:func:`fabricplan.plan.chain.chosen_design`); another profile, as the spec's topology builds it."""
    from fabricplan.design import resolve
    from fabricplan.plan.chain import chosen_design
    from fabricplan.spec.load import located

    cat = _catalog(catalog)
    loaded = _spec(spec, cat)
    profile = fabric if isinstance(fabric, str) else fabric.profile
    choices = {c.profile: c for c in loaded.fabric_choices()}
    with located(loaded):
        if profile in choices and (isinstance(fabric, str) or fabric == choices[profile]):
            loaded, fabric = chosen_design(loaded, cat, choices[profile])
        return resolve(loaded, cat, fabric)


def size_topology(spec: SpecLike, fabric: str | FabricChoice,
                  catalog: Catalog | Sequence[str | Path] | None = None) -> FabricSize:
    """Size the spec's topology for one fabric profile (e.g. ``"infiniband-ndr"``)."""
    return design(spec, fabric, catalog).size


def cost(spec: SpecLike, catalog: Catalog | Sequence[str | Path] | None = None, **kwargs: Any) -> CostReport:
    """Bill of materials, power, opex and TCO for every fabric in the spec, each on the design
    ``compare`` chooses (the cheapest per useful GPU-hour of the designs the spec leaves open).

    ``kwargs``: ``price_multipliers`` (category -> factor), ``energy_multiplier``.
    """
    from fabricplan.cost.tco import cost as cost_spec
    from fabricplan.plan import chosen_designs

    cat = _catalog(catalog)
    loaded = _spec(spec, cat)
    return cost_spec(loaded, cat, designs=chosen_designs(loaded, cat), **kwargs)


def compare(spec: SpecLike, catalog: Catalog | Sequence[str | Path] | None = None, *, quick: bool = False,
            efficiency_model: str | EfficiencyModel | None = None, plan: Plan | None = None,
            draws: int | None = None, seed: int | None = None) -> CompareReport:
    """Rank the spec's fabrics, with reasons, rules, crossovers and sensitivity (``quick``: neither).

    ``draws``/``seed``: the Monte Carlo over the catalog's ranges (default: the catalog's
    ``uncertainty_draws`` and ``uncertainty_seed``; 0 draws = none).

    ``efficiency_model`` picks the model of each collective's share of the NIC bandwidth by name
    (``analytic``, ``ideal`` or a registered one); ``plan`` swaps whole steps of the model chain.
    """
    from fabricplan.decide.compare import compare as compare_spec

    cat = _catalog(catalog)
    return compare_spec(_spec(spec, cat), cat, search_scale=not quick, analyse_sensitivity=not quick,
                        plan=_plan(plan, efficiency_model), draws=draws, seed=seed)


def step_time(spec: SpecLike, fabric: str | FabricChoice | None = None, *, job: str | None = None,
              catalog: Catalog | Sequence[str | Path] | None = None,
              efficiency_model: str | EfficiencyModel | None = None,
              nccl_version: str | None = None) -> list[StepResult]:
    """Step time of the spec's jobs (or the one named ``job``) on its fabrics (or ``fabric``), each
    fabric as the spec builds it (hardware overrides, port speed, topology); a serving job's "step"
    is one decode iteration, its serving metrics in ``StepResult.serving``. ``efficiency_model``
    defaults to the model chain's (:attr:`fabricplan.plan.Plan.efficiency_model`, ``auto``), so the
    numbers are those ``compare`` ranks."""
    from fabricplan.errors import InputError
    from fabricplan.perf.serving import serving_time
    from fabricplan.perf.step import step_time as step_model
    from fabricplan.plan import DEFAULT_PLAN
    from fabricplan.spec.load import located

    cat = _catalog(catalog)
    cluster_spec = _spec(spec, cat)
    if efficiency_model is None:  # the chain's model, so `step` gives the step times compare ranks
        efficiency_model = DEFAULT_PLAN.efficiency_model
    jobs = [j for j in cluster_spec.jobs if job is None or j.name == job]
    if not jobs:
        known = ", ".join(j.name for j in cluster_spec.jobs) or "none"
        raise InputError(f"no job named '{job}' in the spec; jobs: {known}" if job else
                         "the spec has no jobs; add a `jobs:` section", location="jobs")
    choices = [fabric] if fabric is not None else cluster_spec.fabric_choices()
    results = []
    with located(cluster_spec):  # errors found by the models name the spec's file
        for choice in choices:
            network = design(cluster_spec, choice, cat).network  # the design compare chooses
            results.extend(serving_time(j, network, catalog=cat, efficiency_model=efficiency_model)
                           if j.kind == "serving" else
                           step_model(j, network, catalog=cat, nccl_version=nccl_version,
                                      efficiency_model=efficiency_model) for j in jobs)
    return results


def collective_time(operation: str, size: int | str, *, gpus: int, gpus_per_node: int = 8,
                    fabric: str | FabricProfile = "infiniband-ndr", gpu: str | Gpu | GpuInline = "h100-sxm",
                    nics_per_node: int | None = None, algorithm: str | None = None, protocol: str | None = None,
                    nccl_version: str | None = None, catalog: Catalog | Sequence[str | Path] | None = None,
                    efficiency_model: str | EfficiencyModel | None = None,
                    gpus_per_host: int | None = None, spec: SpecLike | None = None,
                    span_nodes: int | None = None, nic_speed: str | int | None = None,
                    nics_per_gpu: int | None = None, nodes: int | None = None,
                    switch: str | None = None) -> CollectiveResult:
    """Time, algbw and busbw of one collective (nccl-tests definitions) with NCCL's choice of
    algorithm and protocol, on a bare fabric sized for ``gpus`` (non-blocking rail-optimised).
    ``size`` in bytes or as text (``"8GiB"``, ``"16MiB"``). ``gpus_per_host`` below ``gpus_per_node``
    makes each node a multi-host NVLink domain (GB200 NVL72: 72 per node, 4 per host).

    ``nic_speed`` (``"100G"``, ``"200G"`` or Gb/s): the NICs' port speed, as a spec's
    ``cluster.nic_speed_gbps`` sets it (the profile's link rate and its effective per-NIC bandwidth at
    the profile's efficiency; InputError when the fabric's switch or NIC cannot run it); default the
    fabric's own link rate; ``switch``: a catalog switch of the fabric's family to build it on (default
    the fabric's; e.g. a 100G-capable one when its own has no 100G ports). ``nics_per_gpu``: NICs each GPU drives (default ``nics_per_node //
    gpus_per_node``, at least 1; ``nics_per_node`` defaults to ``gpus_per_node x nics_per_gpu``).
    ``nodes``: nodes of a communicator whose nodes hold different numbers of its ranks
    (``gpus_per_node`` is then the fewest on one node; ``StepResult.collectives``' ``n_nodes``).

    With ``spec``: on that spec's design of ``fabric`` (its hardware, sizing, placement rules,
    scheduling and options such as SHARP), the network the step model runs its collectives on, so a
    step's collective (``StepResult.collectives``: ranks, ranks per node, ``span_nodes``, ``n_nodes``)
    has the same time here (``efficiency_model`` defaults to the chain's, as the step's); ``gpus_per_node``
    is then the communicator's ranks per node, and the spec sets the NIC speed and NICs per GPU."""
    from fabricplan.perf.collectives import collective_time as collective_model
    from fabricplan.units import check_bytes, parse_bytes

    cat = _catalog(catalog)
    size_bytes = parse_bytes(size, "size") if isinstance(size, str) else check_bytes(size, "size")
    if spec is not None:
        from fabricplan.plan import DEFAULT_PLAN

        _no_nic_flags_with_spec(nic_speed, nics_per_gpu, switch)
        network = _spec_network(_spec(spec, cat), cat, fabric)
        if efficiency_model is None:  # as the step on that design (the model chain's default)
            efficiency_model = DEFAULT_PLAN.efficiency_model
        return collective_model(operation, size_bytes, gpus, gpus_per_node, catalog=cat, network=network,
                                nics_per_node=nics_per_node, algorithm=algorithm, protocol=protocol,
                                nccl_version=nccl_version, efficiency_model=efficiency_model,
                                span_nodes=span_nodes, n_nodes=nodes)
    gpu_entry = cat.gpu(gpu, field="gpu") if isinstance(gpu, str) else gpu
    profile, nics_per_node, nics_per_gpu = _bare_nics(cat, fabric, gpus_per_node, nics_per_node, nic_speed,
                                                      nics_per_gpu, switch)
    return collective_model(operation, size_bytes, gpus, gpus_per_node, profile, gpu_entry,
                            nics_per_node=nics_per_node, nics_per_gpu=nics_per_gpu, algorithm=algorithm,
                            protocol=protocol, nccl_version=nccl_version, catalog=cat,
                            efficiency_model=efficiency_model, gpus_per_host=gpus_per_host, span_nodes=span_nodes,
                            n_nodes=nodes)


def _no_nic_flags_with_spec(nic_speed, nics_per_gpu, switch=None, prefix: str = "") -> None:
    """InputError for NIC or switch settings beside a spec (the spec sets them); ``prefix`` "--" on the command line."""
    if nic_speed is not None:
        raise InputError("with a spec the NIC speed is the spec's cluster.nic_speed_gbps; set it there",
                         location=f"{prefix}nic-speed")
    if nics_per_gpu is not None:
        raise InputError("with a spec the NICs per GPU are the spec's cluster.nics_per_node / gpus_per_node; "
                         "set them there", location=f"{prefix}nics-per-gpu")
    if switch is not None:
        raise InputError("with a spec the switch is the spec's fabric choice (fabrics: - profile: ..., switch: ...); "
                         "set it there", location=f"{prefix}switch")


def _bare_nics(catalog: Catalog, fabric: str | FabricProfile, gpus_per_node: int, nics_per_node: int | None,
              nic_speed: str | int | None, nics_per_gpu: int | None, switch: str | None = None, prefix: str = ""):
    """(fabric profile at ``nic_speed``, NICs per node, NICs per GPU) of a collective without a spec,
    where ``gpus_per_node`` is the server's GPUs (so NICs beyond one per GPU are the GPUs' own):
    ``nic_speed`` through :func:`fabricplan.design.fabric_at_nic_speed` (a spec's
    ``cluster.nic_speed_gbps``); ``nics_per_gpu`` defaults to ``nics_per_node // gpus_per_node``
    (at least 1) and ``nics_per_node`` to ``gpus_per_node x nics_per_gpu``. The ``collective``
    command (``prefix`` "--": errors name its flags) and :func:`collective_time` both read their NICs here."""
    from fabricplan.design import fabric_at_nic_speed
    from fabricplan.units import parse_rate

    profile = fabric
    if nic_speed is not None or switch is not None:
        speed = None
        if nic_speed is not None:
            text = (f"{nic_speed}G" if isinstance(nic_speed, int) and not isinstance(nic_speed, bool)
                    else str(nic_speed))
            speed = parse_rate(text, f"{prefix}nic-speed", bare="Gb/s", whole=True, noun="NIC speed")
        profile = fabric_at_nic_speed(catalog, fabric, speed, f"{prefix}nic-speed", switch=switch, prefix=prefix)
    if nics_per_gpu is not None:
        if nics_per_gpu < 1:
            raise InputError(f"NICs per GPU must be >= 1, got {nics_per_gpu}", location=f"{prefix}nics-per-gpu")
        if nics_per_node is not None and nics_per_node != gpus_per_node * nics_per_gpu:
            raise InputError(f"{nics_per_node} NICs per node are not {nics_per_gpu} per GPU on {gpus_per_node} GPUs; "
                             f"give one of {prefix}nics-per-node and {prefix}nics-per-gpu", location=f"{prefix}nics-per-gpu")
        return profile, gpus_per_node * nics_per_gpu, nics_per_gpu
    if nics_per_node and gpus_per_node > 0:
        return profile, nics_per_node, max(nics_per_node // gpus_per_node, 1)
    return profile, nics_per_node, None


def _spec_network(spec, catalog: Catalog, fabric: str | FabricProfile):
    """The network view of ``spec``'s design of ``fabric``: the design ``compare`` chooses for the
    spec's choice of that profile (:func:`design`), else the plain profile as the spec builds it."""
    return design(spec, fabric if isinstance(fabric, str) else fabric.id, catalog).network


def lint(nic: Sequence[str | Path] = (), switch: Sequence[str | Path] = (), *, cabling: str | Path | None = None,
         config: str | Path | None = None, catalog: Catalog | Sequence[str | Path] | None = None) -> LintResult:
    """Lossless-Ethernet configuration findings for NIC captures and SONiC config_db files; the
    rules' default thresholds come from the catalog's ``ops_defaults`` (overlays apply)."""
    from fabricplan.ops.lint import lint_paths

    return lint_paths(list(nic), list(switch), cabling, config, catalog=_catalog(catalog))


def headroom(speed: str | int, cable: str | float, mtu: int, *, model: str = "generic",
             catalog: Catalog | Sequence[str | Path] | None = None, vendor_floor: bool = True,
             **options: Any) -> HeadroomResult:
    """PFC headroom (XOFF, XON, size and every term) for a link speed (``"400G"`` or Mb/s), a cable
    length (``"30m"`` or metres) and an MTU [bytes], with the constants of ``catalog``. ``options``
    are the model's own (see ``fabricplan headroom --help``). ``vendor_floor`` (sonic model,
    Spectrum): never less XOFF than NVIDIA's static table for the ASIC, the dynamic value in
    ``inputs["dynamic_xoff_bytes"]`` (``--no-vendor-floor``: False)."""
    from fabricplan.ops import headroom as models

    speed_mbps = models.parse_speed_mbps(speed if isinstance(speed, str) else str(speed), "speed")
    cable_m = models.parse_length_m(cable if isinstance(cable, str) else str(cable), "cable")
    cat = _catalog(catalog)
    if model == "sonic" and options.get("sku") and not options.get("asic"):
        options["asic"] = models.asic_for(None, options["sku"], location="sku", catalog=cat)
    taken: list[str] = []
    if model == "sonic":  # as the CLI: the inputs that reproduce the SKU's own table, unless given
        options, taken = models.sku_defaults(options.get("sku"), options, cat)
    result = models.compute(model, speed_mbps, cable_m, mtu, catalog=cat, **options)
    if model == "sonic":  # never below the ASIC's static vendor table; a SKU's own row beside the model
        if vendor_floor:
            result = models.with_vendor_floor(result, options.get("sku"), speed_mbps, cable_m, cat)
        result = models.with_vendor_check(result, options.get("sku"), speed_mbps, cable_m, cat, taken)
    return result


def _measured(logs: Sequence[str | Path], operation: str | None) -> list:
    from fabricplan.measure.read import read_log

    if isinstance(logs, (str, Path)):
        logs = [logs]
    read = [read_log(path, operation=operation) for path in logs]
    if not any(log.nccl_runs for log in read):
        from fabricplan.errors import InputError

        raise InputError("perftest tables only: the fit and the check use nccl-tests rows; add an nccl-tests log "
                         "(all_reduce_perf ...)", location=read[0].file if read else None)
    return read


def calibrate(logs: Sequence[str | Path], *, spec: SpecLike | None = None, fabric: str | None = None,
              gpu: str | None = None, nics_per_node: int | None = None, cpu_vendor: str = "intel",
              operation: str | None = None, catalog: Catalog | Sequence[str | Path] | None = None,
              cross_validate: bool = True) -> CalibrationResult:
    """Fit the catalog's calibratable parameters to nccl-tests logs (and perftest logs for the system),
    as ``fabricplan calibrate`` does; :func:`fabricplan.measure.fit.overlay_document` turns the result
    into a ``--catalog`` overlay."""
    from fabricplan.measure.fit import calibrate as fit
    from fabricplan.measure.system import infer_system

    cat = _catalog(catalog)
    read = _measured(logs, operation)
    system = infer_system(read, cat, spec=_spec(spec, cat) if spec is not None else None, fabric=fabric, gpu=gpu,
                          nics_per_node=nics_per_node, cpu_vendor=cpu_vendor)
    return fit(read, cat, system, cross_validate=cross_validate)


def check_measured(logs: Sequence[str | Path], spec: SpecLike, *, fabric: str | None = None,
                   cpu_vendor: str = "intel", operation: str | None = None,
                   bandwidth_threshold: float | None = None, latency_threshold: float | None = None,
                   catalog: Catalog | Sequence[str | Path] | None = None) -> CheckResult:
    """Measured nccl-tests rows against the spec's design: verdicts and causes ranked from the model,
    as ``fabricplan check-measured`` does (``result.passed`` is its exit status)."""
    from dataclasses import replace

    from fabricplan.measure.check import check_measured as check
    from fabricplan.measure.system import infer_system

    cat = _catalog(catalog)
    read = _measured(logs, operation)
    system = replace(infer_system(read, cat, spec=_spec(spec, cat), fabric=fabric, cpu_vendor=cpu_vendor),
                     collnet=True)
    return check(read, cat, system, bandwidth_threshold=bandwidth_threshold, latency_threshold=latency_threshold)


def expected_rtt_us(spec: SpecLike, fabric: str | None = None,
                    catalog: Catalog | Sequence[str | Path] | None = None) -> tuple[float, str]:
    """The RTT the design should give between two NICs across its top tier, unloaded [us], and a
    sentence saying where it comes from: twice the one-way small-message latency of
    :func:`fabricplan.perf.latency.point_to_point_latency` on the spec's fabric (``fabric``: a
    profile id of the spec; may be omitted when the spec lists one fabric)."""
    cat = _catalog(catalog)
    loaded = _spec(spec, cat)
    choice = _fabric_choice(loaded, fabric)
    return _design_rtt_us(design(loaded, choice, cat), choice.profile, cat)


def _design_rtt_us(built: FabricDesign, profile: str, catalog: Catalog) -> tuple[float, str]:
    """:func:`expected_rtt_us` of a design already built."""
    from fabricplan.perf.latency import point_to_point_latency

    one_way = point_to_point_latency(built.network.profile, built.hardware.switch.port_to_port_latency_ns,
                                     built.switches_across, host_links_in_rack=built.size.host_links_in_rack,
                                     catalog=catalog)
    return 2 * one_way.total_us, (f"the design of {profile} ({built.switches_across} switch{'' if built.switches_across == 1 else 'es'} across, "
                                  f"2 x {one_way.total_us:.2f} us one way, unloaded)")


def _fabric_choice(loaded: ClusterSpec, fabric: str | None) -> Any:
    from fabricplan.errors import InputError

    choices = loaded.fabric_choices()
    if fabric is None:
        if len(choices) != 1:
            raise InputError(f"the spec lists {len(choices)} fabrics; choose one with --fabric "
                             f"({', '.join(c.profile for c in choices)})", location="--fabric")
        choice = choices[0]
    else:
        found = [c for c in choices if c.profile == fabric]
        if not found:
            raise InputError(f"the spec has no fabric {fabric!r}; it lists {', '.join(c.profile for c in choices)}",
                             location="--fabric")
        choice = found[0]
    return choice


def fleet(spec: SpecLike, fabric: str | None = None, catalog: Catalog | Sequence[str | Path] | None = None, *,
          policy: Any = None, routing: str | None = None, days: float | None = None, samples: int | None = None,
          seed: int = 0, qps: int | None = None) -> dict[str, Any]:
    """The spec's job mix as a fleet on each fabric's chosen design (or only ``fabric``):
    profile -> :class:`fabricplan.fleet.FleetResult` (:func:`fabricplan.fleet.run_fleet`:
    arrivals, the scheduler ``policy`` (a name or a callable), every running job on the shared
    fabric at sampled instants). Fabrics without a scale-out network (one node) are left out."""
    from fabricplan.fleet import run_fleet
    from fabricplan.spec.load import located

    cat = _catalog(catalog)
    loaded = _spec(spec, cat)
    choices = [_fabric_choice(loaded, fabric)] if fabric is not None else loaded.fabric_choices()
    out: dict[str, Any] = {}
    for choice in choices:
        built = design(loaded, choice, cat)
        if built.size.tiers < 1:
            continue
        with located(loaded):
            out[choice.profile] = run_fleet(built, loaded, cat, policy=policy, routing=routing, days=days,
                                            samples=samples, seed=seed, qps=qps)
    if not out:
        raise InputError("the cluster is one node: no scale-out fabric for jobs to share", location="cluster.gpus")
    return out


def expected_under_load(spec: SpecLike, fabric: str | None = None,
                        catalog: Catalog | Sequence[str | Path] | None = None, load: float | None = None) -> Any:
    """What the spec's design should show at a link utilisation, for ``fabricplan health``: an
    ``ops.health.expected.LoadModel`` whose ``at(load)`` gives the p99.9 RTT (the unloaded RTT of
    :func:`expected_rtt_us` plus the p99.9 probe queueing delay of the fluid model under Poisson
    traffic at that load, :mod:`fabricplan.sim.load`), the paused fraction of a host link (PFC),
    CNPs per second per host and the credit-wait fraction (InfiniBand), each simulated once per
    load bucket (``sim_load_bucket_step``; every bucket in one batched run the first time one is
    needed, or only the stated one) on a small fat tree at the design's link rate, hop count and
    flow/congestion control. ``load`` (0..1) is the stated utilisation (``--load``)."""
    from fabricplan.ops.health.expected import LoadModel, expected_of
    from fabricplan.sim.load import LoadCurve
    from fabricplan.sim.scenarios import MECHANISM_NAMES, profile_cc

    cat = _catalog(catalog)
    loaded = _spec(spec, cat)
    choice = _fabric_choice(loaded, fabric)
    built = design(loaded, choice, cat)  # the design search runs once for both numbers
    unloaded_us, unloaded_source = _design_rtt_us(built, choice.profile, cat)
    cc, pfc = profile_cc(cat.fabric(built.fabric))
    link_gbps = float(built.hardware.port_speed_gbps)
    hops = int(built.switches_across)
    tiers = 2 if hops <= 3 else 3
    curve = LoadCurve(link_gbps=link_gbps, tiers=tiers, hops=min(hops, 2 * tiers - 1), cc=cc, pfc=pfc, catalog=cat,
                      batch=load is None)

    def at(utilisation: float):
        bucket, point = curve.at(utilisation)
        return expected_of(point, load=utilisation, bucket=bucket, unloaded_rtt_us=unloaded_us)

    mechanism = MECHANISM_NAMES.get((cc, pfc), cc)
    return LoadModel(fabric=choice.profile, mechanism=mechanism, link_gbps=link_gbps, unloaded_rtt_us=unloaded_us,
                     source=(f"the design of {choice.profile} ({hops} switch{'' if hops == 1 else 'es'} across, "
                             f"{link_gbps:g} Gb/s links, {mechanism}): unloaded RTT {unloaded_us:.2f} us plus the fluid "
                             "model's p99.9 queueing delay under Poisson traffic at the load (sim/load.py)"),
                     at=at, load=load, unloaded_source=unloaded_source)


Paths = str | Path | Sequence[str | Path]


def health(*, ethtool: Paths = (), hw_counters: Paths = (), perfquery: Paths = (), prom_text: Paths = (),
           rtt: Paths = (), telemetry: Paths = (), pfcwd: Paths = (), rdma_stat: Paths = (),
           prometheus: str | None = None, start: float | str | None = None, end: float | str | None = None,
           step: float | str = 15.0, expected_rtt_us: float | None = None, spec: SpecLike | None = None,
           fabric: str | None = None, load: float | None = None,
           baseline_window: tuple[float | str, float | str] | str | None = None, jobs: str | Path | None = None,
           config: str | Path | None = None, catalog: Catalog | Sequence[str | Path] | None = None,
           now_s: float | None = None, prometheus_deadline: float | str | None = None) -> HealthResult:
    """Read telemetry and evaluate the health checks over it, as ``fabricplan health`` does (one
    evaluation; ``result.findings``, ``result.measurements``, ``result.unavailable``).

    Sources: files of each kind (one path or several: ``ethtool -S`` snapshots, ``hw_counters``
    dumps, ``perfquery`` output, exposition text, RTT CSV, a saved ``.npz``, SONiC ``show pfcwd
    stats``, ``rdma statistic``) and a live ``prometheus`` URL read between ``start`` and ``end``
    (default: the 15 minutes before ``now_s``) at ``step``; without it, ``start``/``end`` clip the
    files' readings. Times are epoch seconds or text (``now-15m``, ISO 8601), relative ones counted
    from ``now_s`` (default: the time of the call); ``step`` is seconds or text (``15s``);
    ``prometheus_deadline`` (seconds or text) bounds each request to the server, retries included
    (default: ``ops_defaults`` ``health.prometheus_request_deadline_s``).

    RTT baseline, one at most: ``expected_rtt_us``, the design of ``spec`` (its ``fabric``; each
    port and pair judged against what the design gives at its load, or at ``load``, 0..1:
    :func:`expected_under_load`) or a quiet ``baseline_window`` (start, end, or ``"START..END"``).
    ``jobs`` (a ``jobs:`` YAML file) names the jobs on each unhealthy port; ``config`` is a health
    config (lint config format). Raises InputError when nothing was read or no check could run.
    """
    from fabricplan.ops.health.run import (
        check_expectations,
        check_health,
        health_inputs,
        require_telemetry,
        telemetry_files,
    )

    files = telemetry_files(ethtool=ethtool, hw_counters=hw_counters, perfquery=perfquery, prom_text=prom_text,
                            rtt=rtt, telemetry=telemetry, pfcwd=pfcwd, rdma_stat=rdma_stat)
    require_telemetry(files, prometheus)
    check_expectations(expected_rtt_us, spec, baseline_window, fabric, load)
    cat = _catalog(catalog)
    checks, job_hosts = health_inputs(config, jobs, cat)
    load_model = expected_under_load(spec, fabric, cat, load=load) if spec is not None else None
    return check_health(files, checks, cat, prometheus=prometheus, start=start, end=end, step=step, now_s=now_s,
                        expected_rtt_us=expected_rtt_us, baseline_window=baseline_window, jobs=job_hosts,
                        load_model=load_model, prometheus_deadline=prometheus_deadline)
