"""Performance commands: `collective` (NCCL-style collective time) and `step` (training step time)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from fabricplan.cli.common import emit_json, stdout
from fabricplan.cli.plan_cmds import CatalogOption
from fabricplan.errors import InputError


def _collective(op: str, size: Optional[str], gpus: int, gpus_per_node: int, fabric: str, gpu: str,
                nics_per_node: Optional[int], algo: Optional[str], protocol: Optional[str],
                nccl_version: Optional[str], cpu_vendor: str, sweep_sizes: Optional[str], as_json: bool,
                catalog_paths: Optional[list[Path]], efficiency_model: Optional[str],
                gpus_per_host: Optional[int] = None, spec_path: Optional[Path] = None,
                span_nodes: Optional[int] = None, nic_speed: Optional[str] = None,
                nics_per_gpu: Optional[int] = None, nodes: Optional[int] = None,
                switch: Optional[str] = None) -> None:
    from fabricplan.catalog import load_catalog
    from fabricplan.perf.collectives import collective_time
    from fabricplan.perf.collectives import sweep_sizes as sizes_of
    from fabricplan.report.perf_tables import collective_document, collective_table
    from fabricplan.units import parse_bytes

    catalog = load_catalog(catalog_paths or [])
    gpu_entry = catalog.gpu(gpu, field="--gpu")
    network = None
    if spec_path is not None:  # the spec's design of --fabric: the network the step runs on
        from fabricplan.api import _no_nic_flags_with_spec, _spec_network
        from fabricplan.spec import load_spec

        catalog.fabric(fabric, field="--fabric")
        _no_nic_flags_with_spec(nic_speed, nics_per_gpu, switch, prefix="--")
        network = _spec_network(load_spec(spec_path, catalog), catalog, fabric)
    if cpu_vendor not in ("intel", "amd"):
        raise InputError(f"--cpu-vendor must be intel or amd, got '{cpu_vendor}'")
    if sweep_sizes:
        start, _, stop = sweep_sizes.partition(":")
        if not stop:
            raise InputError(f"--sweep-sizes needs START:STOP (e.g. 8B:8GiB), got '{sweep_sizes}'")
        sizes = sizes_of(parse_bytes(start, "--sweep-sizes", noun="start"), parse_bytes(stop, "--sweep-sizes", noun="stop"))
    elif size:
        sizes = [parse_bytes(size, "--size")]
    else:
        raise InputError("give --size or --sweep-sizes")
    if network is not None:  # ranks per node of the communicator; the design sets GPU, NICs and hosts
        results = [collective_time(op, s, gpus, gpus_per_node, network=network, nics_per_node=nics_per_node,
                                   algorithm=algo, protocol=protocol, nccl_version=nccl_version,
                                   cpu_vendor=cpu_vendor, catalog=catalog, efficiency_model=efficiency_model,
                                   span_nodes=span_nodes, n_nodes=nodes)
                   for s in sizes]
    else:
        from fabricplan.api import _bare_nics

        # On the command line --gpus-per-node is the server, so NICs beyond one per GPU are the GPUs' own.
        profile, nics_per_node, nics_per_gpu = _bare_nics(catalog, fabric, gpus_per_node, nics_per_node,
                                                          nic_speed, nics_per_gpu, switch, prefix="--")
        results = [collective_time(op, s, gpus, gpus_per_node, profile, gpu_entry, nics_per_node=nics_per_node,
                                   nics_per_gpu=nics_per_gpu, algorithm=algo, protocol=protocol,
                                   nccl_version=nccl_version, cpu_vendor=cpu_vendor, catalog=catalog,
                                   efficiency_model=efficiency_model, gpus_per_host=gpus_per_host,
                                   span_nodes=span_nodes, n_nodes=nodes)
                   for s in sizes]
    if as_json:
        emit_json(collective_document(results, sweep=bool(sweep_sizes)), catalog=catalog)
    else:
        stdout.print(collective_table(results))


def _step(spec_path: Path, fabric: Optional[list[str]], nccl_version: Optional[str], as_json: bool,
          catalog_paths: Optional[list[Path]], efficiency_model: Optional[str]) -> None:
    from fabricplan.api import step_time
    from fabricplan.catalog import load_catalog
    from fabricplan.report.perf_tables import step_document, step_table
    from fabricplan.spec import load_spec

    catalog = load_catalog(catalog_paths or [])
    spec = load_spec(spec_path, catalog)
    if not spec.jobs:
        raise InputError("the spec has no jobs; add a `jobs:` section", location=str(spec_path))
    choices = {choice.profile: choice for choice in spec.fabric_choices()}
    names = fabric or list(choices)
    for name in names:
        catalog.fabric(name, field="--fabric")
    # a fabric of the spec is built as the spec says (overrides, port speed); another by its profile
    per_fabric = {name: step_time(spec, choices.get(name, name), catalog=catalog, nccl_version=nccl_version,
                                  efficiency_model=efficiency_model) for name in names}
    results = [per_fabric[name][index] for index in range(len(spec.jobs)) for name in names]  # job by job
    if as_json:
        emit_json(step_document(spec.name, results), catalog=catalog)
    else:
        stdout.print(step_table(spec.name, results))


EfficiencyOption = Annotated[Optional[str], typer.Option(
    "--efficiency-model", help="Model of each collective's share of the NIC bandwidth: auto (the flow "
                               "simulator within a budget, else analytic; the default of step and of "
                               "collective --spec, as compare), analytic (ECMP collisions x "
                               "oversubscription; the default of a bare collective), ideal (a perfect "
                               "network), or a registered one.")]


def register(app: typer.Typer) -> None:
    """Add `collective` and `step` to the app."""

    @app.command("collective")
    def collective(
        op: str = typer.Option("all_reduce", "--op", help="all_reduce, all_gather, reduce_scatter, all_to_all, "
                                                          "broadcast, reduce, send_recv"),
        size: Optional[str] = typer.Option(None, "--size", help="Message size: 8B, 16MiB, 8G (= 8GiB, as nccl-tests), 1MB (10^6); whole bytes up to 1TiB"),
        gpus: int = typer.Option(16, "--gpus", help="GPUs (ranks)"),
        gpus_per_node: int = typer.Option(8, "--gpus-per-node"),
        gpus_per_host: Optional[int] = typer.Option(
            None, "--gpus-per-host", help="Hosts smaller than the node: --gpus-per-node is then a multi-host "
                                          "NVLink domain (GB200 NVL72: 72 per node, 4 per host)"),
        fabric: str = typer.Option("infiniband-ndr", "--fabric", help="Catalog fabric profile id"),
        gpu: str = typer.Option("h100-sxm", "--gpu", help="Catalog GPU id"),
        nics_per_node: Optional[int] = typer.Option(None, "--nics-per-node",
                                                    help="Default: GPUs per node x --nics-per-gpu"),
        nics_per_gpu: Optional[int] = typer.Option(
            None, "--nics-per-gpu", help="NICs each GPU drives (2 for 16 NICs on 8 GPUs); default --nics-per-node "
                                         "// --gpus-per-node, at least 1"),
        nic_speed: Optional[str] = typer.Option(
            None, "--nic-speed", help="NIC port speed, e.g. 100G, 200G, 400G (as a spec's cluster.nic_speed_gbps: "
                                      "the fabric's link rate and per-NIC bandwidth at its efficiency); default "
                                      "the fabric's own"),
        switch: Optional[str] = typer.Option(
            None, "--switch", help="Catalog switch of the fabric's family to build it on (as a spec's fabric "
                                   "override); default the fabric's, e.g. sw_eth_th4 for 100G RoCE"),
        algo: Optional[str] = typer.Option(None, "--algo", help="Force: ring, tree, collnet_direct, "
                                                                "collnet_chain, nvls, nvls_tree, pat"),
        protocol: Optional[str] = typer.Option(None, "--protocol", help="Force: ll, ll128, simple"),
        nccl_version: Optional[str] = typer.Option(None, "--nccl-version", help="2.30.7 (default), 2.19.3, "
                                                                                "2.17.1, 2.7.5"),
        cpu_vendor: str = typer.Option("intel", "--cpu-vendor", help="intel or amd (NCCL's net overhead)"),
        sweep: Optional[str] = typer.Option(None, "--sweep-sizes", help="START:STOP, x2 steps, e.g. 8B:8GiB"),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON document"),
        catalog: CatalogOption = None,
        efficiency_model: EfficiencyOption = None,
        spec: Optional[Path] = typer.Option(
            None, "--spec", help="Run on this spec's design of --fabric (hardware, sizing, placement, "
                                 "scheduling, SHARP/adaptive routing options): the network `step` uses"),
        span_nodes: Optional[int] = typer.Option(
            None, "--span-nodes", help="Consecutive nodes a strided communicator spans (a step's pipeline "
                                       "pair: (pp-1) x stride + 1); default its own nodes"),
        nodes: Optional[int] = typer.Option(
            None, "--nodes", help="Nodes of a communicator whose nodes hold different numbers of its ranks "
                                  "(a step's group laid out across nodes partly); --gpus-per-node is then the "
                                  "fewest on one node"),
    ) -> None:
        """Time, algbw and busbw of one collective (nccl-tests definitions), with NCCL's algorithm choice."""
        _collective(op, size, gpus, gpus_per_node, fabric, gpu, nics_per_node, algo,
                    protocol.lower() if protocol else None, nccl_version, cpu_vendor, sweep, as_json, catalog,
                    efficiency_model, gpus_per_host, spec, span_nodes, nic_speed, nics_per_gpu, nodes,
                    switch)

    @app.command("step")
    def step(
        spec: Path = typer.Argument(..., help="Cluster spec (YAML/JSON) with jobs; - reads it from stdin", metavar="SPEC"),
        fabric: Optional[list[str]] = typer.Option(None, "--fabric", help="Fabric id (repeatable); default: the spec's"),
        nccl_version: Optional[str] = typer.Option(None, "--nccl-version"),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON document"),
        catalog: CatalogOption = None,
        efficiency_model: EfficiencyOption = None,
    ) -> None:
        """Training step time per job and fabric: compute, bubble, exposed communication, MFU, tokens/s."""
        _step(spec, fabric, nccl_version, as_json, catalog, efficiency_model)
