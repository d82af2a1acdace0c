"""Performance commands: `collective` (NCCL-style collective time) and `step` (training step time)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from fabricplan.cli.common import emit_json, stdout
from fabricplan.errors import InputError


def _collective(op: str, size: Optional[str], gpus: int, gpus_per_node: int, fabric: str, gpu: str,
                nics_per_node: Optional[int], algo: Optional[str], protocol: Optional[str],
                nccl_version: Optional[str], cpu_vendor: str, sweep_sizes: Optional[str], as_json: bool) -> None:
    from fabricplan.perf.collectives import collective_time, default_catalog, parse_size, sweep_sizes as sizes_of

    catalog = default_catalog()
    gpu_entry = catalog.gpu(gpu, field="--gpu")
    if cpu_vendor not in ("intel", "amd"):
        raise InputError(f"--cpu-vendor must be intel or amd, got '{cpu_vendor}'")
    if sweep_sizes:
        start, _, stop = sweep_sizes.partition(":")
        if not stop:
            raise InputError(f"--sweep-sizes needs START:STOP (e.g. 8B:8GiB), got '{sweep_sizes}'")
        sizes = sizes_of(parse_size(start), parse_size(stop))
    elif size:
        sizes = [parse_size(size)]
    else:
        raise InputError("give --size or --sweep-sizes")
    results = [collective_time(op, s, gpus, gpus_per_node, fabric, gpu_entry, nics_per_node=nics_per_node,
                               algorithm=algo, protocol=protocol, nccl_version=nccl_version,
                               cpu_vendor=cpu_vendor, catalog=catalog) for s in sizes]
    if as_json:
        emit_json(results[0].as_dict() if not sweep_sizes else [r.as_dict() for r in results])
        return
    first = results[0]
    table = Table(title=f"{op} on {first.fabric}: {gpus} GPUs, {first.gpus_per_node} per node "
                        f"(NCCL {first.nccl_version} model)")
    for column in ("size (B)", "time (us)", "algbw (GB/s)", "busbw (GB/s)", "algo", "proto"):
        table.add_column(column, justify="right" if "(" in column else "left")
    for r in results:
        table.add_row(f"{r.size_bytes}", f"{r.time_us:.2f}", f"{r.algbw_gbytes_per_s:.2f}",
                      f"{r.busbw_gbytes_per_s:.2f}", r.algorithm, r.protocol)
    stdout.print(table)


def _step(spec_path: Path, fabric: Optional[list[str]], nccl_version: Optional[str], as_json: bool) -> None:
    from fabricplan.perf.collectives import default_catalog
    from fabricplan.perf.step import cluster_shape, step_time
    from fabricplan.spec import load_spec

    catalog = default_catalog()
    spec = load_spec(spec_path, catalog)
    if not spec.jobs:
        raise InputError("the spec has no jobs; add a `jobs:` section", location=str(spec_path))
    cluster = cluster_shape(spec, catalog)
    fabrics = fabric or [choice.profile for choice in spec.fabric_choices()]
    results = [step_time(job, cluster, catalog.fabric(f, field="--fabric"), catalog=catalog,
                         nccl_version=nccl_version) for job in spec.jobs for f in fabrics]
    if as_json:
        emit_json({"spec": spec.name, "results": [r.as_dict() for r in results]})
        return
    table = Table(title=f"Training step time: {spec.name}")
    for column in ("job", "fabric", "step (s)", "compute (s)", "bubble (s)", "exposed comm (s)", "MFU",
                   "tokens/s", "GPU-hours"):
        table.add_column(column, justify="left" if column in ("job", "fabric") else "right")
    for r in results:
        exposed = ", ".join(f"{k} {v:.2f}" for k, v in r.exposed_comm_s.items() if v > 0) or "0"
        hours = f"{r.gpu_hours_for_budget:,.0f}" if r.gpu_hours_for_budget else "-"
        table.add_row(r.job, r.fabric, f"{r.step_time_s:.3f}", f"{r.compute_s:.3f}", f"{r.bubble_s:.3f}", exposed,
                      f"{r.mfu:.1%}", f"{r.tokens_per_s:,.0f}", hours)
    stdout.print(table)


def register(app: typer.Typer) -> None:
    """Add `collective` and `step` to the app."""

    @app.command("collective")
    def collective(
        op: str = typer.Option("all_reduce", "--op", help="all_reduce, all_gather, reduce_scatter, all_to_all, "
                                                          "broadcast, reduce, send_recv"),
        size: Optional[str] = typer.Option(None, "--size", help="Message size, e.g. 8B, 16MiB, 8GiB"),
        gpus: int = typer.Option(16, "--gpus", help="GPUs (ranks)"),
        gpus_per_node: int = typer.Option(8, "--gpus-per-node"),
        fabric: str = typer.Option("infiniband-ndr", "--fabric", help="Catalog fabric profile id"),
        gpu: str = typer.Option("h100-sxm", "--gpu", help="Catalog GPU id"),
        nics_per_node: Optional[int] = typer.Option(None, "--nics-per-node", help="Default: GPUs per node"),
        algo: Optional[str] = typer.Option(None, "--algo", help="Force: ring, tree, collnet_direct, "
                                                                "collnet_chain, nvls, nvls_tree, pat"),
        protocol: Optional[str] = typer.Option(None, "--protocol", help="Force: ll, ll128, simple"),
        nccl_version: Optional[str] = typer.Option(None, "--nccl-version", help="2.30.7 (default), 2.19.3, "
                                                                                "2.17.1, 2.7.5"),
        cpu_vendor: str = typer.Option("intel", "--cpu-vendor", help="intel or amd (NCCL's net overhead)"),
        sweep: Optional[str] = typer.Option(None, "--sweep-sizes", help="START:STOP, x2 steps, e.g. 8B:8GiB"),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON document"),
    ) -> None:
        """Time, algbw and busbw of one collective (nccl-tests definitions), with NCCL's algorithm choice."""
        _collective(op, size, gpus, gpus_per_node, fabric, gpu, nics_per_node, algo,
                    protocol.lower() if protocol else None, nccl_version, cpu_vendor, sweep, as_json)

    @app.command("step")
    def step(
        spec: Path = typer.Argument(..., help="Cluster spec (YAML/JSON) with jobs"),
        fabric: Optional[list[str]] = typer.Option(None, "--fabric", help="Fabric id(s); default: the spec's"),
        nccl_version: Optional[str] = typer.Option(None, "--nccl-version"),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON document"),
    ) -> None:
        """Training step time per job and fabric: compute, bubble, exposed communication, MFU, tokens/s."""
        _step(spec, fabric, nccl_version, as_json)
