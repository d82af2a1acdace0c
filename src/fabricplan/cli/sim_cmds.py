"""Simulator commands: `dcqcn` (DCQCN fixed point, stability, convergence) and `simulate` (fluid
congestion dynamics of incast, permutation, all-reduce and all-to-all on a fat tree)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.text import Text

from fabricplan.cli.common import emit_json, stderr, stdout
from fabricplan.cli.plan_cmds import CatalogOption
from fabricplan.errors import InputError


def parse_link_gbps(text: str, flag: str = "--link") -> float:
    """A link rate (``100G``, ``400Gb/s``, ``25Gbps``; a bare number is Gb/s) -> Gb/s (fabricplan.units)."""
    from fabricplan.units import parse_rate

    return parse_rate(text, flag, unit="Gb/s")


def _dcqcn(flows: int, delay_us: float, link: str, overrides: dict, as_json: bool,
           catalog_paths: Optional[list[Path]]) -> None:
    from fabricplan.catalog import load_catalog
    from fabricplan.sim.dcqcn import analyse, dcqcn_params

    catalog = load_catalog(catalog_paths or [])
    link_gbps = parse_link_gbps(link)
    params = dcqcn_params(catalog, **overrides)
    result = analyse(link_gbps, flows, delay_us, params, catalog=catalog)
    document = result.document()
    if as_json:
        emit_json(document, catalog=catalog)
        return
    fp = result.fixed_point
    verdict = "stable" if result.stable else "UNSTABLE"
    stdout.print(f"DCQCN, {flows} flows on {link_gbps:g} Gb/s, control-loop delay {delay_us:g} us")
    stdout.print(f"  fixed point   {fp.rate_gbps:.3g} Gb/s per flow, queue {fp.queue_bytes / 1e3:.1f} KB, "
                 f"alpha* {fp.alpha:.3f}")
    stdout.print(f"                p* {fp.p_star:.3g} (Taylor {fp.p_star_taylor:.3g})"
                 + ("" if fp.in_marking_range else ", above Pmax: the queue sits at ~Kmax"))
    stdout.print(f"  phase margin  {result.phase_margin_deg:.1f} deg -> {verdict}")
    stdout.print(f"  convergence   <= {result.convergence.bound_ms:.1f} ms to within 10 % of fair share")


def _simulate(scenario: str, options: dict, as_json: bool, plot: Optional[Path],
              catalog_paths: Optional[list[Path]]) -> None:
    from fabricplan.catalog import load_catalog
    from fabricplan.sim.scenarios import run_scenarios

    if plot is not None:
        from fabricplan.io import check_output_path

        check_output_path(plot, what="plot")  # before the simulation, not after
    catalog = load_catalog(catalog_paths or [])
    options = dict(options)
    link = options.pop("link", None)
    options["link_gbps"] = parse_link_gbps(link) if link else None
    spec, fabric = options.pop("spec", None), options.pop("fabric", None)
    defaults = {"cc": "dcqcn", "pfc": "on", "routing": "ecmp"}
    if spec is not None:
        from fabricplan.sim.scenarios import design_case

        if options["link_gbps"] is not None or options["hosts"] is not None:
            raise InputError("--link and --hosts describe the generic fat tree; a spec's design sets them",
                             location="--spec")
        case = design_case(spec, fabric, catalog)
        options["network"] = case["network"]
        defaults = {"cc": case["cc"], "pfc": "on" if case["pfc"] else "off", "routing": case["routing"]}
    elif fabric is not None:
        raise InputError("--fabric picks one of a spec's fabrics; give --spec too", location="--fabric")
    for key, value in defaults.items():
        if options.get(key) is None:
            options[key] = value
    result = run_scenarios(scenario, catalog=catalog, record=plot is not None, **options)
    if plot is not None:
        from fabricplan.report.sim_plot import write_plot

        write_plot(result, plot)
    document = result.document()
    from fabricplan.sim.scenarios import incomplete_line, summary_lines

    if as_json:
        emit_json(document, catalog=catalog)
    else:
        for line in summary_lines(document):
            stdout.print(line)
    unfinished = incomplete_line(document)
    if unfinished is not None:  # partial numbers are not a result: say which limit stopped it, exit 1
        stderr.print(Text(unfinished), soft_wrap=True)
        raise typer.Exit(code=1)


def register(app: typer.Typer) -> None:
    """Add `dcqcn` and `simulate` to the app."""

    @app.command("dcqcn")
    def dcqcn(
        flows: int = typer.Option(..., "--flows", help="Flows sharing the bottleneck (incast degree N)"),
        delay_us: float = typer.Option(..., "--delay-us", help="Control-loop delay tau* in us (RTT + CNP path)"),
        link: str = typer.Option("100G", "--link", help="Bottleneck link rate: 40G, 400Gb/s, 25Gbps (bits/s; a bare number is Gb/s)"),
        rai_mbps: Optional[float] = typer.Option(None, "--rai-mbps", help="Additive increase R_AI, Mb/s"),
        kmin_kb: Optional[float] = typer.Option(None, "--kmin-kb", help="ECN Kmin, KB"),
        kmax_kb: Optional[float] = typer.Option(None, "--kmax-kb", help="ECN Kmax, KB"),
        pmax: Optional[float] = typer.Option(None, "--pmax", help="Marking probability at Kmax (0..1)"),
        g: Optional[float] = typer.Option(None, "--g", help="Alpha EWMA gain g (e.g. 0.00390625 = 1/256)"),
        cnp_interval_us: Optional[float] = typer.Option(None, "--cnp-interval-us", help="NP CNP interval tau"),
        alpha_interval_us: Optional[float] = typer.Option(None, "--alpha-interval-us", help="Alpha interval tau'"),
        rate_timer_us: Optional[float] = typer.Option(None, "--rate-timer-us", help="Rate-increase timer T"),
        byte_counter_bytes: Optional[float] = typer.Option(None, "--byte-counter-bytes", help="Byte counter B"),
        fast_recovery: Optional[float] = typer.Option(None, "--fast-recovery", help="Fast-recovery steps F"),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON document"),
        catalog: CatalogOption = None,
    ) -> None:
        """DCQCN fixed point, phase margin (stable or not) and convergence-time bound (CoNEXT'16 analysis)."""
        overrides = {"rai_mbps": rai_mbps, "kmin_kb": kmin_kb, "kmax_kb": kmax_kb, "pmax": pmax, "g": g,
                     "cnp_interval_us": cnp_interval_us, "alpha_interval_us": alpha_interval_us,
                     "rate_timer_us": rate_timer_us, "byte_counter_bytes": byte_counter_bytes,
                     "fast_recovery_steps": fast_recovery}
        _dcqcn(flows, delay_us, link, overrides, as_json, catalog)

    @app.command("simulate")
    def simulate(
        scenario: str = typer.Argument(..., metavar="SCENARIO", help="incast, permutation, allreduce or alltoall; several jobs "
                                                 "sharing the fabric: comma-separated (incast,permutation)"),
        k: int = typer.Option(16, "--k", help="Fat-tree switch radix k (even)"),
        tiers: int = typer.Option(2, "--tiers", help="Fat-tree tiers: 2 or 3"),
        link: Optional[str] = typer.Option(None, "--link", help="Link rate: 100G, 400Gb/s (bits/s; a bare number is Gb/s; default: catalog)"),
        hosts: Optional[int] = typer.Option(None, "--hosts", help="Hosts attached (default: all of the tree)"),
        senders: Optional[int] = typer.Option(None, "--senders", help="Incast degree N (default 16)"),
        flow_size: str = typer.Option("1MB", "--flow-size", help="Bytes per flow: 64KB, 1MB (10^6), 1M or 1MiB (2^20); whole bytes up to 1TiB"),
        spec: Optional[Path] = typer.Option(None, "--spec", help="Simulate this spec's design instead of a "
                                                                 "generic fat tree (hosts are NIC ports)"),
        fabric: Optional[str] = typer.Option(None, "--fabric", help="Which of the spec's fabrics (default: its "
                                                                    "first); sets --cc/--pfc/--routing defaults"),
        routing: Optional[str] = typer.Option(None, "--routing", help="ecmp (default), adaptive or spray"),
        qps: Optional[int] = typer.Option(None, "--qps", help="Queue pairs per connection, each hashed "
                                                              "separately (default: NCCL's 1)"),
        cc: Optional[str] = typer.Option(None, "--cc", help="dcqcn (default), none, ib-credit, ib-cc or tcp"),
        pfc: Optional[str] = typer.Option(None, "--pfc", help="on (default) or off (ignored by ib-credit, ib-cc "
                                                              "and tcp)"),
        pfc_xoff_kb: Optional[float] = typer.Option(None, "--pfc-xoff-kb", help="Ingress bytes that send XOFF"),
        pfc_xon_kb: Optional[float] = typer.Option(None, "--pfc-xon-kb", help="Ingress bytes that send XON"),
        mtu: Optional[int] = typer.Option(None, "--mtu", help="Payload bytes per packet (default 4096)"),
        link_latency_us: Optional[float] = typer.Option(None, "--link-latency-us", help="Propagation per link"),
        seed: int = typer.Option(1, "--seed", help="Seed of ECMP hashing and the permutation"),
        max_time_ms: float = typer.Option(50.0, "--max-time-ms", help="Stop after this much simulated time"),
        step_us: Optional[float] = typer.Option(None, "--step-us", help="Integration step (default: catalog)"),
        loop_delay_us: Optional[float] = typer.Option(None, "--loop-delay-us", help="Control-loop delay added to "
                                                                                    "each path's round trip"),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON document"),
        plot: Optional[Path] = typer.Option(None, "--plot", help="Write rates, queues and pauses over time "
                                                                 "(plotly HTML)"),
        catalog: CatalogOption = None,
    ) -> None:
        """Fluid simulation of queues, ECN/DCQCN, PFC, InfiniBand credits or TCP on a k-ary fat tree."""
        options = {"spec": spec, "fabric": fabric, "k": k, "tiers": tiers, "link": link, "hosts": hosts, "senders": senders,
                   "flow_size": flow_size, "routing": routing, "qps": qps, "cc": cc, "pfc": pfc, "pfc_xoff_kb": pfc_xoff_kb,
                   "pfc_xon_kb": pfc_xon_kb, "mtu": mtu, "link_latency_us": link_latency_us, "seed": seed,
                   "max_time_ms": max_time_ms, "step_us": step_us, "loop_delay_us": loop_delay_us}
        _simulate(scenario, options, as_json, plot, catalog)
