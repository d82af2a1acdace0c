"""The system a set of logs was measured on: GPU, node shape, NICs, fabric profile, NCCL release.

Taken from a spec when one is given (``--spec``; the spec's first fabric unless ``--fabric``),
otherwise inferred from the logs, each inference with a note saying where it came from:

* GPU: the ``Using devices`` names matched against the catalog's GPU ids (``A100-SXM4-80GB`` ->
  ``a100-sxm-80gb``);
* fabric: ``NCCL INFO Using network Socket`` -> the kernel-TCP profile, ``NET/IB ... /RoCE`` -> RoCE,
  ``NET/IB ... /IB`` -> the InfiniBand profile whose link rate the perftest bandwidth reaches
  (``ib_write_bw`` average / pass fraction, to the nearest catalog rate); NDR when nothing says;
* NICs per node: the devices ``NET/IB : Using [0]... [1]...`` lists, else one per GPU;
* SHARP/CollNet: modelled only when the log shows it (a CollNet plugin or collnet channels);
* NCCL release: the bundled tuner release nearest the log's ``NCCL version`` (the older one on a tie).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from fabricplan.errors import InputError
from fabricplan.measure.records import MeasurementLog, NcclRun

#: The catalog profile a transport seen in the log means (NCCL INFO "Using network ...").
TRANSPORT_PROFILE = {"Socket": "ethernet-tcp", "RoCE": "roce-v2", "Libfabric": "aws-efa", "AWS": "aws-efa"}


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text)[:3])


def tuner_release(logged: str | None, catalog) -> tuple[str, str]:
    """The bundled NCCL tuner release for a logged version, and a note."""
    tuner = catalog.nccl_tuner
    versions = sorted(tuner.versions, key=_version_tuple)
    if not logged:
        return tuner.default_version, f"NCCL version not in the logs: the default tuner release {tuner.default_version}"
    def distance(version: str) -> tuple[int, int]:
        a, b = (_version_tuple(version) + (0, 0, 0))[:3], (_version_tuple(logged) + (0, 0, 0))[:3]
        return abs((a[0] * 1000 + a[1]) - (b[0] * 1000 + b[1])), int(a > b)  # ties: the older release

    chosen = min(versions, key=distance)
    return chosen, f"NCCL {logged} (log): tuner constants of {chosen}, the nearest bundled release"


def gpu_from_device_name(name: str, catalog) -> str | None:
    """The catalog GPU id whose model and memory best match an nvidia-smi style device name."""
    lowered = name.lower().replace("-", " ")
    best, best_score = None, 0
    for gpu_id in catalog.section("gpus"):
        tokens = gpu_id.split("-")
        if tokens[0] not in lowered:
            continue
        score = 10 + sum(1 for t in tokens[1:] if t in lowered)
        if score > best_score:
            best, best_score = gpu_id, score
    return best


@dataclass(frozen=True)
class MeasuredSystem:
    """What the model needs to predict a log's rows, and how each part was found."""

    gpu_id: str
    fabric_id: str
    nccl_version: str
    logged_nccl_version: str | None
    nics_per_node: int
    cpu_vendor: str
    collnet: bool  # SHARP/CollNet engaged in the measured runs
    spec: Any = None  # ClusterSpec when given
    fabric_choice: Any = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    def profile(self, catalog):
        """The fabric profile from ``catalog`` (overlays and fitted values apply), with in-network
        reduction only when the logs showed it."""
        profile = catalog.fabric(self.fabric_id, field="--fabric")
        if profile.in_network_reduction and not self.collnet:
            profile = profile.model_copy(update={"in_network_reduction": False})
        return profile

    def network(self, catalog):
        """The design's network view when a spec was given, else None."""
        if self.spec is None:
            return None
        from fabricplan.design import resolve

        design = resolve(self.spec, catalog, self.fabric_choice)
        network = design.network
        if network.profile.in_network_reduction and not self.collnet:
            network = replace(network, profile=network.profile.model_copy(update={"in_network_reduction": False}))
        return network

    def collective(self, catalog, operation: str, size_bytes: int, n_gpus: int, ranks_per_node: int, *,
                   algorithm: str | None = None, protocol: str | None = None, network=None):
        """The model's :class:`~fabricplan.perf.collectives.CollectiveResult` for one measured row."""
        from fabricplan.perf.collectives import collective_time

        common = dict(algorithm=algorithm, protocol=protocol, nccl_version=self.nccl_version,
                      cpu_vendor=self.cpu_vendor, catalog=catalog)
        if network is None and self.spec is not None:
            network = self.network(catalog)
        if network is not None:
            return collective_time(operation, size_bytes, n_gpus, ranks_per_node, network=network, **common)
        gpu = catalog.gpu(self.gpu_id, field="--gpu")
        nics_per_gpu = max(self.nics_per_node // max(ranks_per_node, 1), 1)
        return collective_time(operation, size_bytes, n_gpus, ranks_per_node, self.profile(catalog), gpu,
                               nics_per_node=self.nics_per_node, nics_per_gpu=nics_per_gpu, **common)

    def describe(self) -> dict:
        return {"gpu": self.gpu_id, "fabric": self.fabric_id, "nccl_tuner_release": self.nccl_version,
                "nccl_version_logged": self.logged_nccl_version, "nics_per_node": self.nics_per_node,
                "cpu_vendor": self.cpu_vendor, "sharp_collnet": self.collnet, "notes": list(self.notes)}


def _gpus_of_runs(runs: list[NcclRun], catalog) -> dict[str, str]:
    """The catalog GPU ids the runs' device names name, each with the first run (``FILE:LINE``) that
    shows it, in the order seen (device names no catalog GPU matches are left out)."""
    seen: dict[str, str] = {}
    for run in runs:
        for name in run.devices:
            gpu_id = gpu_from_device_name(name, catalog)
            if gpu_id is not None:
                seen.setdefault(gpu_id, run.where)
    return seen


def _not_the_gpu(logged: dict[str, str], gpu_id: str, given: str) -> list[str]:
    """A warning when the logs' devices are another GPU than the one the run is judged as."""
    return [f"WARNING: the log shows {other} ({where}), not {given} {gpu_id}: judged as {gpu_id} as asked"
            for other, where in logged.items() if other != gpu_id]


def _first(values):
    return next((v for v in values if v is not None), None)


def infer_system(logs: list[MeasurementLog], catalog, *, spec=None, fabric: str | None = None, gpu: str | None = None,
                 nics_per_node: int | None = None, cpu_vendor: str = "intel") -> MeasuredSystem:
    """The system of ``logs`` (see the module docstring); InputError when the GPU cannot be told."""
    notes: list[str] = []
    runs: list[NcclRun] = [run for log in logs for run in log.nccl_runs]
    for log in logs:  # perftest results, for the report (the fabric inference below reads them too)
        for prun in log.perftest_runs:
            if prun.kind == "bw":
                row = max(prun.rows, key=lambda r: r.bw_average_gbits_per_s or 0.0)
                notes.append(f"{prun.tool} ({prun.where}): {row.bw_average_gbits_per_s:.1f} Gb/s average at "
                             f"{row.size_bytes} B")
            else:
                row = min(prun.rows, key=lambda r: r.size_bytes)
                value = row.t_typical_us if row.t_typical_us is not None else row.t_avg_us
                notes.append(f"{prun.tool} ({prun.where}): {value:.2f} us typical one-way at {row.size_bytes} B")
    logged_gpus = _gpus_of_runs(runs, catalog)
    if len(logged_gpus) > 1:
        shown = " and ".join(f"{gpu_id} ({where})" for gpu_id, where in list(logged_gpus.items())[:3])
        raise InputError(f"the logs mix systems: {shown}; a fit or a check is of one system, so give each "
                         "system's logs separately", location=logs[0].file if logs else None)
    debug = [run.debug for run in runs]
    logged = _first(d.nccl_version for d in debug)
    version, note = tuner_release(logged, catalog)
    notes.append(note)
    collnet = any(d.collnet for d in debug)
    notes.append("SHARP/CollNet: seen in the logs, modelled" if collnet else
                 "SHARP/CollNet: not seen in the logs, modelled without in-network reduction")
    choice = None
    if spec is not None:
        choices = {c.profile: c for c in spec.fabric_choices()}
        name = fabric or next(iter(choices))
        choice = choices.get(name, name)
        fabric_id = name
        catalog.fabric(fabric_id, field="--fabric")
        cluster = spec.cluster
        gpu_id = cluster.gpu if isinstance(cluster.gpu, str) else getattr(cluster.gpu, "id", "gpu")
        nics = cluster.nics_per_node
        notes.extend(_not_the_gpu(logged_gpus, gpu_id, "the spec's GPU"))
        notes.append(f"system from the spec: {gpu_id}, {cluster.gpus_per_node} GPUs and {nics} NICs per node, "
                     f"fabric {fabric_id}")
        return MeasuredSystem(gpu_id=gpu_id, fabric_id=fabric_id, nccl_version=version, logged_nccl_version=logged,
                              nics_per_node=nics, cpu_vendor=cpu_vendor, collnet=collnet, spec=spec,
                              fabric_choice=choice, notes=tuple(notes))
    # GPU
    if gpu:
        catalog.gpu(gpu, field="--gpu")
        gpu_id = gpu
        notes.extend(_not_the_gpu(logged_gpus, gpu_id, "--gpu"))
    else:
        names = [name for run in runs for name in run.devices]
        gpu_id = _first(gpu_from_device_name(n, catalog) for n in names)
        if gpu_id is None:
            shown = names[0] if names else "no 'Using devices' lines"
            raise InputError(f"cannot tell the GPU from {shown!r}; pass --gpu (a catalog GPU id) or --spec",
                             location=logs[0].file if logs else None)
        notes.append(f"GPU {gpu_id} from the device name {names[0]!r}")
    # fabric
    if fabric:
        catalog.fabric(fabric, field="--fabric")
        fabric_id = fabric
    else:
        transport = _first(d.transport for d in debug)
        layer = _first(d.link_layer for d in debug)
        perftest_bw = [row.bw_average_gbits_per_s for log in logs for run in log.perftest_runs if run.kind == "bw"
                       for row in run.rows if row.bw_average_gbits_per_s]
        perftest_layer = _first(run.settings.get("Link type") for log in logs for run in log.perftest_runs)
        if transport == "Socket":
            fabric_id = TRANSPORT_PROFILE["Socket"]
            notes.append("fabric ethernet-tcp: NCCL used its Socket transport (log)")
        elif layer == "RoCE" or (transport is None and perftest_layer == "Ethernet"):
            fabric_id = TRANSPORT_PROFILE["RoCE"]
            notes.append("fabric roce-v2: RoCE devices in the NET/IB line or perftest 'Link type: Ethernet'")
        elif transport and transport not in ("IB",) and transport in TRANSPORT_PROFILE:
            fabric_id = TRANSPORT_PROFILE[transport]
            notes.append(f"fabric {fabric_id}: NCCL network {transport} (log)")
        else:
            fabric_id = "infiniband-ndr"
            if perftest_bw:
                from fabricplan.perf.params import perf_parameter

                rates = {c.link_rate_gbps: c.id for c in catalog.section("fabrics").values()
                         if c.family == "infiniband"}
                line = max(perftest_bw) / perf_parameter("measured_pass_fraction", catalog)
                rate = min(rates, key=lambda r: abs(r - line))
                fabric_id = rates[rate]
                notes.append(f"fabric {fabric_id}: ib_write_bw reaches {max(perftest_bw):.0f} Gb/s, "
                             f"nearest catalog InfiniBand rate {rate}G")
            else:
                notes.append("fabric infiniband-ndr: assumed (no link rate in the logs); pass --fabric or --spec")
    if nics_per_node is None:
        nics_per_node = _first(d.net_devices for d in debug)
        if nics_per_node:
            notes.append(f"{nics_per_node} NICs per node from the NET/IB line")
        else:
            nics_per_node = max((run.ranks_per_node or 1) for run in runs) if runs else 1
            notes.append(f"{nics_per_node} NICs per node assumed (one per GPU; no NET line in the logs)")
    return MeasuredSystem(gpu_id=gpu_id, fabric_id=fabric_id, nccl_version=version, logged_nccl_version=logged,
                          nics_per_node=int(nics_per_node), cpu_vendor=cpu_vendor, collnet=collnet, notes=tuple(notes))
