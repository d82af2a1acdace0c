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
from fabricplan.spec import ClusterSpec, FabricChoice, check_references, load_spec

if TYPE_CHECKING:  # heavy modules load when a function runs, not at `import fabricplan`
    from fabricplan.catalog import FabricProfile, Gpu
    from fabricplan.cost import CostReport
    from fabricplan.decide.models import CompareReport
    from fabricplan.design import FabricDesign
    from fabricplan.ops.headroom import HeadroomResult
    from fabricplan.ops.lint import LintResult
    from fabricplan.perf.collectives import CollectiveResult
    from fabricplan.perf.efficiency import EfficiencyModel
    from fabricplan.perf.step import StepResult
    from fabricplan.plan import Plan
    from fabricplan.spec.models import GpuInline
    from fabricplan.topology import FabricSize

SpecLike = ClusterSpec | str | Path

__all__ = ["collective_time", "compare", "cost", "design", "headroom", "lint", "load_spec", "size_topology",
           "step_time"]


def _catalog(catalog: Catalog | Sequence[str | Path] | None) -> Catalog:
    """A catalog object as given, or the bundled one with these overlay files (None: bundled)."""
    if isinstance(catalog, Catalog):
        return catalog
    return load_catalog(list(catalog or []))


def _spec(spec: SpecLike, catalog: Catalog) -> ClusterSpec:
    if isinstance(spec, ClusterSpec):
        check_references(spec, catalog)
        return spec
    return load_spec(spec, catalog)


def _plan(plan: Plan | None, efficiency_model: str | EfficiencyModel | None) -> Plan:
    from fabricplan.plan import DEFAULT_PLAN

    plan = plan or DEFAULT_PLAN
    return plan.replace(efficiency_model=efficiency_model) if efficiency_model is not None else plan


def design(spec: SpecLike, fabric: str | FabricChoice, catalog: Catalog | Sequence[str | Path] | None = None
           ) -> FabricDesign:
    """The design of one fabric for the spec: hardware, sized topology, network view, job placements."""
    from fabricplan.design import resolve

    cat = _catalog(catalog)
    return resolve(_spec(spec, cat), cat, fabric)


def size_topology(spec: SpecLike, fabric: str | FabricChoice,
                  catalog: Catalog | Sequence[str | Path] | None = None) -> FabricSize:
    """Size the spec's topology for one fabric profile (e.g. ``"infiniband-ndr"``)."""
    return design(spec, fabric, catalog).size


def cost(spec: SpecLike, catalog: Catalog | Sequence[str | Path] | None = None, **kwargs: Any) -> CostReport:
    """Bill of materials, power, opex and TCO for every fabric in the spec.

    ``kwargs``: ``price_multipliers`` (category -> factor), ``energy_multiplier``.
    """
    from fabricplan.cost.tco import cost as cost_spec

    cat = _catalog(catalog)
    return cost_spec(_spec(spec, cat), cat, **kwargs)


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
    fabric as the spec builds it (hardware overrides, port speed, topology)."""
    from fabricplan.design import resolve
    from fabricplan.errors import InputError
    from fabricplan.perf.step import step_time as step_model
    from fabricplan.spec.load import located

    cat = _catalog(catalog)
    cluster_spec = _spec(spec, cat)
    jobs = [j for j in cluster_spec.jobs if job is None or j.name == job]
    if not jobs:
        known = ", ".join(j.name for j in cluster_spec.jobs) or "none"
        raise InputError(f"no job named '{job}' in the spec; jobs: {known}" if job else
                         "the spec has no jobs; add a `jobs:` section", location="jobs")
    choices = [fabric] if fabric is not None else cluster_spec.fabric_choices()
    results = []
    with located(cluster_spec):  # errors found by the models name the spec's file
        for choice in choices:
            network = resolve(cluster_spec, cat, choice).network
            results.extend(step_model(j, network, catalog=cat, nccl_version=nccl_version,
                                      efficiency_model=efficiency_model) for j in jobs)
    return results


def collective_time(operation: str, size: int | str, *, gpus: int, gpus_per_node: int = 8,
                    fabric: str | FabricProfile = "infiniband-ndr", gpu: str | Gpu | GpuInline = "h100-sxm",
                    nics_per_node: int | None = None, algorithm: str | None = None, protocol: str | None = None,
                    nccl_version: str | None = None, catalog: Catalog | Sequence[str | Path] | None = None,
                    efficiency_model: str | EfficiencyModel | None = None) -> CollectiveResult:
    """Time, algbw and busbw of one collective (nccl-tests definitions) with NCCL's choice of
    algorithm and protocol, on a bare fabric sized for ``gpus`` (non-blocking rail-optimised).
    ``size`` in bytes or as text (``"8GiB"``, ``"16MiB"``)."""
    from fabricplan.perf.collectives import collective_time as collective_model
    from fabricplan.perf.collectives import parse_size

    cat = _catalog(catalog)
    gpu_entry = cat.gpu(gpu, field="gpu") if isinstance(gpu, str) else gpu
    size_bytes = parse_size(size) if isinstance(size, str) else size
    return collective_model(operation, size_bytes, gpus, gpus_per_node, fabric, gpu_entry,
                            nics_per_node=nics_per_node, algorithm=algorithm, protocol=protocol,
                            nccl_version=nccl_version, catalog=cat, efficiency_model=efficiency_model)


def lint(nic: Sequence[str | Path] = (), switch: Sequence[str | Path] = (), *, cabling: str | Path | None = None,
         config: str | Path | None = None, catalog: Catalog | Sequence[str | Path] | None = None) -> LintResult:
    """Lossless-Ethernet configuration findings for NIC captures and SONiC config_db files; the
    rules' default thresholds come from the catalog's ``ops_defaults`` (overlays apply)."""
    from fabricplan.ops.lint import lint_paths

    return lint_paths(list(nic), list(switch), cabling, config, catalog=_catalog(catalog))


def headroom(speed: str | int, cable: str | float, mtu: int, *, model: str = "generic",
             catalog: Catalog | Sequence[str | Path] | None = None, **options: Any) -> HeadroomResult:
    """PFC headroom (XOFF, XON, size and every term) for a link speed (``"400G"`` or Mb/s), a cable
    length (``"30m"`` or metres) and an MTU [bytes], with the constants of ``catalog``. ``options``
    are the model's own (see ``fabricplan headroom --help``)."""
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
    if model == "sonic":  # a SKU with a bundled vendor table: its row beside the model, warned if larger
        result = models.with_vendor_check(result, options.get("sku"), speed_mbps, cable_m, cat, taken)
    return result
