"""Loading a spec from YAML/JSON and checking its catalog references."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from fabricplan.catalog import Catalog, require_catalog
from fabricplan.errors import InputError
from fabricplan.io import STDIN, STDIN_NAME, format_validation_error, read_document_text
from fabricplan.spec.job import job_layout
from fabricplan.spec.models import ClusterSpec, FabricChoice


def parse_spec(document: Any, where: str = "spec", text: str | None = None) -> ClusterSpec:
    """Validate an already-parsed document into a ClusterSpec (one-line error naming the field; with
    the ``text`` it was parsed from, the location is ``where:line:column`` of the first error's value)."""
    if not isinstance(document, Mapping):
        kind = type(document).__name__
        raise InputError(f"expected a mapping with a 'cluster' section at the top level, got {kind}",
                         location=where)
    try:
        return ClusterSpec.model_validate(document)
    except ValidationError as exc:
        location = where
        if text is not None:
            from fabricplan.io import document_position, first_error_path

            position = document_position(text, first_error_path(exc))
            location = f"{where}:{position[0]}:{position[1]}" if position else where
        raise InputError(format_validation_error(exc, model=ClusterSpec), location=location) from None


#: Which kind of optic each hardware override of a fabric takes (the catalog's OPTIC_SLOTS).
OPTIC_OVERRIDES = ("switch_optic", "nic_optic", "interswitch_optic")


def check_references(spec: ClusterSpec, catalog: Catalog) -> None:
    """The one validation of a spec against a catalog, shared by every command (topology, cost,
    step, compare) and the API, so that the same bad spec gives the same error everywhere.

    * every catalog id the spec names exists (the catalog may include user overlays);
    * the cluster's server is built around the cluster's GPU;
    * each fabric's hardware fits it (:func:`check_fabric_choice`);
    * each job names a known model and lays out on the cluster (:func:`check_jobs`).
    """
    gpu = catalog.gpu(spec.cluster.gpu, field="cluster.gpu") if isinstance(spec.cluster.gpu, str) else spec.cluster.gpu
    if spec.cluster.server is not None:
        server = catalog.server(spec.cluster.server, field="cluster.server")
        if isinstance(spec.cluster.gpu, str) and server.gpu != spec.cluster.gpu:
            raise InputError(f"server '{server.id}' is built around GPU '{server.gpu}', but cluster.gpu is "
                             f"'{spec.cluster.gpu}'; choose a server for {spec.cluster.gpu} or leave "
                             "cluster.server out", location="cluster.server")
    for index, choice in enumerate(spec.fabric_choices()):
        catalog.fabric(choice.profile, field=f"fabrics[{index}]")
    check_estate(spec, catalog)
    lookups = {"switch": catalog.switch, "nic": catalog.nic, "switch_optic": catalog.optic,
               "nic_optic": catalog.optic, "interswitch_optic": catalog.optic}
    for index, choice in enumerate(spec.fabric_choices()):
        catalog.fabric(choice.profile, field=f"fabrics[{index}]")
        for name, lookup in lookups.items():
            value = getattr(choice, name)
            if value is not None:
                lookup(value, field=f"fabrics[{index}].{name}")
        check_fabric_choice(spec, catalog, choice)
    listed = {choice.profile for choice in spec.fabric_choices()}
    for fabric in spec.economics.optics_basis_by_fabric:
        if fabric not in listed:
            raise InputError(f"economics.optics_basis_by_fabric names fabric '{fabric}', which the spec does not "
                             f"compare; its fabrics are {', '.join(sorted(listed))}",
                             location=f"economics.optics_basis_by_fabric.{fabric}")
    check_jobs(spec, catalog, gpu)


def check_estate(spec: ClusterSpec, catalog: Catalog) -> None:
    """Each owned switch is a catalog switch with ports at its speed and no more free ports than it has;
    a fabric that reuses one names an entry of its family. InputError at ``estate.switches[i]``."""
    owned = spec.estate.switches if spec.estate else []
    for index, entry in enumerate(owned):
        where = f"estate.switches[{index}]"
        switch = catalog.switch(entry.model, field=f"{where}.model")
        radix = switch.radix_at(entry.speed_gbps)
        if radix is None:
            speeds = ", ".join(f"{s}G" for s in sorted(switch.ports_by_speed_gbps))
            raise InputError(f"switch '{switch.id}' has no {entry.speed_gbps}G ports (it offers {speeds})",
                             location=f"{where}.speed_gbps")
        if entry.ports_free is not None and entry.ports_free > radix:
            raise InputError(f"{entry.ports_free} free ports, but '{switch.id}' has {radix} at {entry.speed_gbps}G",
                             location=f"{where}.ports_free")
    for index, choice in enumerate(spec.fabric_choices()):
        if choice.reuse_estate is None:
            continue
        if choice.reuse_estate >= len(owned):
            raise InputError(f"estate.switches has {len(owned)} entries; there is no entry {choice.reuse_estate}",
                             location=f"fabrics[{index}].reuse_estate")
        entry = owned[choice.reuse_estate]
        family = catalog.fabric(choice.profile).family
        if catalog.switch(entry.model).family != family:
            raise InputError(f"the owned '{entry.model}' is not {family}", location=f"fabrics[{index}].reuse_estate")


def owned_entry(spec: ClusterSpec, choice: FabricChoice):
    """The estate entry ``choice`` reuses, or None."""
    if choice.reuse_estate is None or spec.estate is None:
        return None
    return spec.estate.switches[choice.reuse_estate]


def port_speeds(spec: ClusterSpec, catalog: Catalog, choice: FabricChoice) -> tuple[int, int]:
    """``(NIC speed, switch port speed)`` of a fabric: ``cluster.nic_speed_gbps`` or the profile's link
    rate, and on a multi-plane design each NIC's port on one plane (the NIC speed / ``topology.planes``)."""
    owned = owned_entry(spec, choice)
    speed = owned.speed_gbps if owned is not None else (
        spec.cluster.nic_speed_gbps or catalog.fabric(choice.profile).link_rate_gbps)
    return speed, speed // spec.topology.plane_count


def chosen_part(catalog: Catalog, choice: FabricChoice, name: str, spec: ClusterSpec | None = None) -> str:
    """The catalog id of one part of a fabric (``switch``, ``nic``, ``switch_optic``, ...): the
    spec's override, else the profile's default. With ``spec``, a switch or NIC the spec leaves open
    follows its speed when the default does not (a team on 100G buys 100G NICs and switches with
    100G ports): the default switch if it has ports at the port speed, else the cheapest switch of
    the fabric's family that does; the default NIC if it runs at the NIC speed, else the cheapest NIC
    of the family at that speed (with RDMA unless the fabric is kernel TCP). The design search
    (``design/candidates.py``) then tries every other switch with those ports."""
    value = getattr(choice, name)
    if value is not None:
        return value
    owned = owned_entry(spec, choice) if spec is not None else None
    if owned is not None and name == "switch":
        return owned.model
    profile = catalog.fabric(choice.profile)
    if spec is None or name not in ("switch", "nic"):
        return getattr(profile.hardware, name)
    return part_at_speed(catalog, profile, name, *port_speeds(spec, catalog, choice))


def part_at_speed(catalog: Catalog, profile, name: str, nic_speed: int, port: int) -> str:
    """The switch or NIC of ``profile`` for NICs at ``nic_speed`` on switch ports at ``port`` G when
    nothing names it (:func:`chosen_part`'s rule)."""
    default = getattr(profile.hardware, name)
    if name == "switch":
        if catalog.switch(default).radix_at(port):
            return default
        fits = [s for s in catalog.section("switches").values()
                if getattr(s, "family", None) == profile.family and s.radix_at(port)]
    else:
        if catalog.nic(default).speed_gbps == nic_speed:
            return default
        fits = [n for n in catalog.section("nics").values()
                if profile.family in getattr(n, "families", ()) and n.speed_gbps == nic_speed
                and n.sold_separately and (n.rdma or profile.socket is not None)]
    return min(fits, key=lambda part: (part.price_usd.default, part.id)).id if fits else default


def check_fabric_choice(spec: ClusterSpec, catalog: Catalog, choice: FabricChoice) -> None:
    """The parts of one fabric fit together: the switch and NIC are of the profile's family, the
    switch has ports and the NIC its speed at the port speed, and each optic override is a
    transceiver (not a cable or fibre). InputError at ``fabrics[<profile>].<part>``."""
    profile = catalog.fabric(choice.profile)
    where = f"fabrics[{choice.profile}]"

    def pick(name: str) -> str:
        return chosen_part(catalog, choice, name, spec)

    switch = catalog.switch(pick("switch"), field=f"{where}.switch")
    nic = catalog.nic(pick("nic"), field=f"{where}.nic")
    speed, port = port_speeds(spec, catalog, choice)
    planes = spec.topology.plane_count
    if owned_entry(spec, choice) is not None and spec.cluster.nic_speed_gbps not in (None, speed):
        raise InputError(f"fabric '{choice.profile}' reuses owned switches at {speed}G, but cluster.nic_speed_gbps "
                         f"is {spec.cluster.nic_speed_gbps}", location=f"{where}.reuse_estate")
    if speed % planes:
        raise InputError(f"a {speed}G NIC does not split evenly over {planes} planes", location="topology.planes")
    if switch.radix_at(port) is None:
        speeds = ", ".join(f"{s}G" for s in sorted(switch.ports_by_speed_gbps))
        plane = f" (a {speed}G NIC over {planes} planes)" if planes > 1 else ""
        raise InputError(
            f"switch '{switch.id}' has no {port}G ports{plane} (it offers {speeds}); set "
            f"cluster.nic_speed_gbps to one of those or choose another switch", location=where)
    if switch.family != profile.family:
        raise InputError(f"switch '{switch.id}' is {switch.family}, but fabric '{profile.id}' is "
                         f"{profile.family}", location=f"{where}.switch")
    if profile.family not in nic.families:
        raise InputError(f"NIC '{nic.id}' does not support {profile.family}", location=f"{where}.nic")
    if nic.speed_gbps < speed:
        raise InputError(f"NIC '{nic.id}' runs at {nic.speed_gbps}G, below the {speed}G port speed",
                         location=f"{where}.nic")
    for name in OPTIC_OVERRIDES:
        optic = catalog.optic(pick(name), field=f"{where}.{name}")
        if optic.kind != "transceiver":
            raise InputError(f"'{optic.id}' is a {optic.kind}, but {name} takes a transceiver (optical "
                             "module); cables and fibre come from the fabric profile", location=f"{where}.{name}")


def check_jobs(spec: ClusterSpec, catalog: Catalog, gpu: object | None = None) -> None:
    """Each job names a known model preset (or valid inline dimensions) and lays out on the cluster:
    tp x pp x cp divides its GPUs and matches dp, tp divides the scale-up domain, ep divides dp x cp
    and needs a mixture-of-experts model, the global batch splits into micro-batches per replica,
    pp x virtual_pipeline_stages <= layers, and the GPU has a peak at the job's precision.
    InputError at ``jobs[<index>].<field>``. (The step model checks the same for its own callers;
    whether the model fits in GPU memory is a result of the step model, see fabricplan.perf.memory.)"""
    from fabricplan.spec.serving import serving_layout

    cluster = spec.cluster
    for index, job in enumerate(spec.jobs):
        where = f"jobs[{index}]"
        dims = (catalog.model_preset(job.model, field=f"{where}.model") if isinstance(job.model, str)
                else job.model)
        gpus = job.gpus or cluster.gpus
        if job.kind == "serving":
            serving_layout(job, gpus, cluster.scale_up_gpus, dims.experts or 1, where)
        else:
            job_layout(job, gpus, cluster.scale_up_gpus, dims.layers, dims.experts or 1, where)
        peaks = getattr(gpu, "peak_dense_tflops", None)
        if peaks is not None and not peaks.get(job.precision):
            raise InputError(f"GPU '{getattr(gpu, 'id', 'gpu')}' has no {job.precision} peak",
                             location=f"{where}.precision")


def read_spec(path: str | Path) -> ClusterSpec:
    """Read a cluster spec file and validate it against the schema only (no catalog: ids and
    hardware fit are not checked). Every error names the file and field."""
    where = STDIN_NAME if str(path) == STDIN else str(path)  # "-": the spec piped in on standard input
    document, text = read_document_text(path)
    spec = parse_spec(document, where=where, text=text)
    spec._source = where
    return spec


def load_spec(path: str | Path, catalog: Catalog) -> ClusterSpec:
    """Read a cluster spec file and check it against ``catalog`` (:func:`check_references`: ids,
    hardware fit, jobs). Every error names the file and field."""
    catalog = require_catalog(catalog, "load_spec")
    spec = read_spec(path)
    with located(spec):
        check_references(spec, catalog)
    return spec


@contextmanager
def located(spec: ClusterSpec) -> Iterator[None]:
    """Errors about a spec read from a file name that file before the field path: an InputError
    raised inside (by the models, e.g. a job that does not fit in GPU memory) is raised again with
    ``<file>: <field path>`` as its location. Catalog errors that already name their overlay
    file, and specs built in code (no file), pass through unchanged."""
    try:
        yield
    except InputError as exc:
        source = spec._source
        if source is None or (exc.location or "").startswith(source) or _names_a_file(exc.location):
            raise
        location = f"{source}: {exc.location}" if exc.location else source
        raise type(exc)(exc.message, location=location) from None


def _names_a_file(location: str | None) -> bool:
    """A location such as "overlay.yaml: servers[id=x].gpu" already names its file."""
    head = (location or "").split(": ", 1)[0]
    return head.endswith((".yaml", ".yml", ".json")) or head in ("bundled", STDIN_NAME)
