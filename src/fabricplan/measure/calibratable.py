"""The catalog parameters ``fabricplan calibrate`` may fit, with their dotted paths and bounds.

Only numbers the collective model already reads are calibratable, each where it lives:

=====================  ====================================================================  ===========================
name                   catalog path                                                          model that reads it
=====================  ====================================================================  ===========================
nic_bandwidth          ``fabrics.<fabric>.effective_bandwidth_gbytes_per_s``                 per-NIC bandwidth of every
                                                                                             graph (perf/collectives.py)
host_stack_latency     ``fabrics.<fabric>.host_stack_latency_us``                            point-to-point latency ->
                                                                                             NCCL's latencyInter
                                                                                             (perf/latency.py)
tree_efficiency        ``nccl_tuner.versions.<release>.tree_factor``                         Tree busbw factor
                                                                                             (perf/nccl_tuner.py)
pat_efficiency         ``nccl_tuner.versions.<release>.pat_factor``                          PAT busbw factor
collnet_chain_eff.     ``nccl_tuner.versions.<release>.collnet_chain_factor``                CollNet chain factor
nvls_efficiency        ``nccl_tuner.versions.<default>.nvls_efficiency.<architecture>``      NVLS data path
=====================  ====================================================================  ===========================

Ring has no factor of its own in NCCL's model: its large-message bandwidth *is* the per-NIC
bandwidth, so ``nic_bandwidth`` is Ring's efficiency. The latency parameter is the fabric's
host-stack latency; NCCL's latency constants describe the reference fabric
(``perf_defaults.nccl_latency_reference_fabric``), and the model adds the fabric's extra
point-to-point latency over it. Calibrating the reference fabric itself therefore first pins a copy
of the bundled reference (:data:`PINNED_REFERENCE_ID`), so the fitted value moves this fabric only.

Bounds are sanity limits of the fit (program limits, not defaults): a NIC reaches at most its
line rate and at least 1 % of it; a host stack is at least the reference's (NCCL's constants
already hold it) and at most 1 ms; an efficiency lies in 5 %..100 %.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Id of the copy of the bundled latency reference fabric that an overlay calibrating that fabric adds.
PINNED_REFERENCE_ID = "nccl-latency-reference"
MIN_NIC_SHARE_OF_LINE = 0.01
MAX_HOST_STACK_US = 1000.0
EFFICIENCY_BOUNDS = (0.05, 1.0)


@dataclass(frozen=True)
class Calibratable:
    """One fittable number: a name, its catalog path in this system, unit, bounds and initial value."""

    name: str
    path: str
    unit: str
    lower: float
    upper: float
    initial: float
    algorithm: str | None = None  # the NCCL algorithm whose rows inform it (None: all rows)
    description: str = ""


#: Per-algorithm efficiency factors: algorithm -> (parameter name, key in the release's constants).
ALGORITHM_FACTORS = {"tree": ("tree_efficiency", "tree_factor"), "pat": ("pat_efficiency", "pat_factor"),
                     "collnet_chain": ("collnet_chain_efficiency", "collnet_chain_factor")}


def calibratable_parameters(system, catalog, algorithms: set[str]) -> list[Calibratable]:
    """The parameters of ``system`` to fit: the per-NIC bandwidth and host-stack latency of its fabric,
    and the efficiency factor of each algorithm in ``algorithms`` (those the rows run) that its NCCL
    release defines."""
    from fabricplan.perf.collectives import gpu_compute_capability
    from fabricplan.perf.latency import perf_value
    from fabricplan.perf.nccl_tuner import architecture

    profile = catalog.fabric(system.fabric_id)
    reference_id = str(perf_value("nccl_latency_reference_fabric", catalog))
    reference = catalog.fabric(reference_id)
    line = profile.link_rate_gbps / 8.0
    params = [
        Calibratable("nic_bandwidth", f"fabrics.{system.fabric_id}.effective_bandwidth_gbytes_per_s", "GB/s",
                     MIN_NIC_SHARE_OF_LINE * line, line, profile.effective_bandwidth_gbytes_per_s,
                     description="per-NIC achievable bandwidth (Ring's efficiency)"),
        Calibratable("host_stack_latency", f"fabrics.{system.fabric_id}.host_stack_latency_us", "us",
                     reference.host_stack_latency_us, MAX_HOST_STACK_US,
                     max(profile.host_stack_latency_us, reference.host_stack_latency_us),
                     description="end-host latency per message (NIC, PCIe, driver); enters latencyInter"),
    ]
    constants = catalog.nccl_tuner.versions[system.nccl_version]
    for algorithm in sorted(algorithms):
        if algorithm in ALGORITHM_FACTORS:
            name, key = ALGORITHM_FACTORS[algorithm]
            value = getattr(constants, key, None)
            if isinstance(value, (int, float)) and value > 0:
                params.append(Calibratable(name, f"nccl_tuner.versions.{system.nccl_version}.{key}", "share",
                                           *EFFICIENCY_BOUNDS, min(float(value), EFFICIENCY_BOUNDS[1]),
                                           algorithm=algorithm, description=f"{algorithm} bandwidth factor"))
        elif algorithm in ("nvls", "nvls_tree"):
            tuner = catalog.nccl_tuner
            gpu = catalog.gpu(system.gpu_id) if system.spec is None else system.network(catalog).gpu
            arch = architecture(gpu_compute_capability(gpu, catalog))
            table = tuner.versions[tuner.default_version].nvls_efficiency or {}
            value = table.get(arch)
            if value and not any(p.name == "nvls_efficiency" for p in params):
                params.append(Calibratable("nvls_efficiency",
                                           f"nccl_tuner.versions.{tuner.default_version}.nvls_efficiency.{arch}",
                                           "share", *EFFICIENCY_BOUNDS, float(value), algorithm="nvls",
                                           description="NVLS data-path efficiency of the NVSwitch generation"))
    return params


def pinned_reference(system, catalog) -> dict:
    """Catalog values that keep the latency reference fixed while ``system``'s fabric is calibrated
    (empty unless the fabric is the reference itself)."""
    from fabricplan.perf.latency import perf_value

    reference_id = str(perf_value("nccl_latency_reference_fabric", catalog))
    if system.fabric_id != reference_id:
        return {}
    return {"reference_id": reference_id,
            "entry": {**catalog.fabric(reference_id).model_dump(mode="json", exclude_none=True),
                      "id": PINNED_REFERENCE_ID}}


def with_reference_pinned(catalog, pin: dict):
    """``catalog`` with the pinned reference fabric added (a no-op for an empty ``pin``)."""
    if not pin:
        return catalog
    from fabricplan.catalog.catalog import Catalog
    from fabricplan.catalog.models import FabricProfile

    entries = {name: dict(items) for name, items in catalog.entries.items()}
    entries["fabrics"][PINNED_REFERENCE_ID] = FabricProfile.model_validate(pin["entry"])
    origins = {name: dict(items) for name, items in catalog.origins.items()}
    origins["fabrics"][PINNED_REFERENCE_ID] = "calibrate"
    pinned = Catalog(entries=entries, origins=origins, documents=catalog.documents)
    return pinned.with_values({"perf_defaults.parameters.nccl_latency_reference_fabric.value": PINNED_REFERENCE_ID})
