"""Operations commands: ``lint`` (lossless-Ethernet configuration checker) and ``headroom``."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.text import Text

from fabricplan.cli.common import emit_json, stderr, stdout
from fabricplan.cli.plan_cmds import CatalogOption
from fabricplan.errors import InputError

FAIL_ON = ("error", "warning", "info", "never")


def lint_command(
    nic: Optional[list[Path]] = typer.Option(
        None, "--nic", help="NIC capture: a *.nic dump, a capture directory, or a folder of them (repeatable)."),
    switch: Optional[list[Path]] = typer.Option(
        None, "--switch", help="SONiC config_db.json, or a folder of them (repeatable)."),
    cabling: Optional[Path] = typer.Option(None, "--cabling", help="YAML file: which NIC port faces which switch port."),
    config: Optional[Path] = typer.Option(None, "--config", help="Lint config YAML: disable rules, set severities/options."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON document."),
    sarif: bool = typer.Option(False, "--sarif", help="Print a SARIF 2.1.0 log (for CI code-scanning views)."),
    fail_on: str = typer.Option("error", "--fail-on", help="Exit 1 if a finding is at or above: error, warning, info, never."),
    catalog: CatalogOption = None,
) -> None:
    """Check NIC (mlnx_qos + sysfs DCQCN) and SONiC switch configs for lossless-RoCE mismatches."""
    from fabricplan import __version__
    from fabricplan.catalog import load_catalog
    from fabricplan.ops.lint import lint_paths
    from fabricplan.ops.lint.finding import severity_rank
    from fabricplan.ops.lint.rules import RULES
    from fabricplan.report.lint_output import as_json, as_sarif, print_text

    if fail_on not in FAIL_ON:
        raise InputError(f"must be one of {', '.join(FAIL_ON)}, got {fail_on!r}", location="--fail-on")
    if json_out and sarif:
        raise InputError("choose one of --json and --sarif", location="--sarif")
    cat = load_catalog(catalog or [])
    result = lint_paths(nic or [], switch or [], cabling, config, catalog=cat)
    for note in result.notes:
        stderr.print(Text(f"note: {note}"))
    if sarif:
        emit_json(as_sarif(result.findings, RULES, __version__), catalog=cat)
    elif json_out:
        emit_json(as_json(result.fabric, result.findings), catalog=cat)
    else:
        print_text(stdout, result.fabric, result.findings)
    if fail_on != "never" and any(severity_rank(f.severity) >= severity_rank(fail_on) for f in result.findings):
        raise typer.Exit(code=1)


def headroom_command(
    speed: str = typer.Option(..., "--speed", help="Link speed: 400G, 100G, or Mb/s as SONiC writes it (100000)."),
    cable: str = typer.Option(..., "--cable", help="Cable length, e.g. 30m."),
    mtu: int = typer.Option(..., "--mtu", help="MTU [bytes] (port MTU for sonic, netdev MTU for mlx5)."),
    model: str = typer.Option("generic", "--model", help="generic (IEEE 802.1Qbb), sonic (Spectrum), or mlx5 (ConnectX)."),
    asic: Optional[str] = typer.Option(None, "--asic", help="sonic model: spectrum … spectrum-6, or Broadcom trident2, trident3, tomahawk … tomahawk5."),
    sku: Optional[str] = typer.Option(None, "--sku", help="sonic model: SONiC HwSKU (e.g. ACS-SN5600, Force10-S6100); picks the ASIC (and a Broadcom SKU's own table)."),
    lossless_mtu: Optional[int] = typer.Option(None, "--lossless-mtu", help="sonic model: LOSSLESS_TRAFFIC_PATTERN mtu (default 1024)."),
    small_packet_percentage: Optional[float] = typer.Option(
        None, "--small-packet-percentage", help="sonic model: LOSSLESS_TRAFFIC_PATTERN small_packet_percentage (default 50)."),
    lanes: int = typer.Option(4, "--lanes", help="sonic model: lanes of the port (8 doubles the pipeline latency)."),
    shared_headroom_pool: bool = typer.Option(False, "--shared-headroom-pool", help="sonic model: size = xon."),
    algorithm: Optional[str] = typer.Option(None, "--algorithm",
                                            help="sonic model, Spectrum: current (default), 2024 (sonic-swss 3943093d) or 2020 (NVIDIA's 2020 static tables); with --sku, the version that reproduces the SKU's table."),
    vendor_floor: bool = typer.Option(True, "--vendor-floor/--no-vendor-floor",
                                      help="sonic model, Spectrum: never less XOFF than NVIDIA's static table for the ASIC (the SKU's own with --sku); the dynamic value is shown beside it (default: on)."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON document."),
    catalog: CatalogOption = None,
) -> None:
    """PFC headroom: XOFF/XON/size for a speed, cable length and MTU, with every term shown."""
    from fabricplan.catalog import load_catalog
    from fabricplan.ops import headroom
    from fabricplan.ops.defaults import group as defaults_group
    from fabricplan.ops.defaults import show, span
    from fabricplan.ops.limits import MTU_RANGE_BYTES

    if model not in headroom.MODELS:
        raise InputError(f"must be one of {', '.join(headroom.MODELS)}, got {model!r}", location="--model")
    speed_mbps = headroom.parse_speed_mbps(speed, "--speed")
    cable_m = headroom.parse_length_m(cable, "--cable")
    lo, hi = MTU_RANGE_BYTES
    if not lo <= mtu <= hi:
        raise InputError(f"MTU must be in {span(lo, hi)} bytes, got {show(mtu)}", location="--mtu")
    if lossless_mtu is not None and not 1 <= lossless_mtu <= hi:
        raise InputError(f"MTU must be in {span(1, hi)} bytes, got {show(lossless_mtu)}", location="--lossless-mtu")
    if small_packet_percentage is not None and not 0 <= small_packet_percentage <= 100:  # NaN fails too
        raise InputError(f"must be in 0..100, got {small_packet_percentage:g}", location="--small-packet-percentage")
    if lanes not in (1, 2, 4, 8):
        raise InputError(f"must be 1, 2, 4 or 8, got {lanes}", location="--lanes")
    cat = load_catalog(catalog or [])
    options: dict = {}
    taken: list[str] = []
    if model == "sonic":  # a SKU's own table was generated with known inputs: they are its defaults
        given = {"lossless_mtu_bytes": lossless_mtu, "small_packet_percentage": small_packet_percentage,
                 "shared_headroom_pool": shared_headroom_pool, "algorithm": algorithm}
        given, taken = headroom.sku_defaults(sku, given, cat)
        lossless_mtu, small_packet_percentage = given["lossless_mtu_bytes"], given["small_packet_percentage"]
        shared_headroom_pool, algorithm = given["shared_headroom_pool"], given["algorithm"]
    algorithm = algorithm or "current"
    versions = sorted(defaults_group("headroom.sonic.algorithm", cat))
    if algorithm not in versions:
        raise InputError(f"must be one of {', '.join(versions)}, got {algorithm[:30]!r}", location="--algorithm")
    if model == "sonic":
        if asic and sku:
            raise InputError("give --asic or --sku, not both", location="--sku")
        chosen = headroom.asic_for(asic, sku, location="--sku" if sku else "--asic", catalog=cat)
        options = {"asic": chosen, "lossless_mtu_bytes": lossless_mtu, "shared_headroom_pool": shared_headroom_pool,
                   "small_packet_percentage": small_packet_percentage, "eight_lanes": lanes == 8, "sku": sku,
                   "algorithm": algorithm}
    elif (asic or sku or lossless_mtu or shared_headroom_pool or small_packet_percentage is not None or lanes != 4
          or algorithm != "current"):
        raise InputError("--asic, --sku, --lossless-mtu, --small-packet-percentage, --lanes, --algorithm and --shared-headroom-pool "
                         "apply to --model sonic only", location="--model")
    result = headroom.compute(model, speed_mbps, cable_m, mtu, catalog=cat, **options)
    if model == "sonic":
        if vendor_floor:
            result = headroom.with_vendor_floor(result, sku, speed_mbps, cable_m, cat)
        result = headroom.with_vendor_check(result, sku, speed_mbps, cable_m, cat, taken)
    from fabricplan.report.ops_tables import headroom_document, headroom_renderables

    if json_out:
        emit_json(headroom_document(result), catalog=cat)
        return
    for renderable in headroom_renderables(result, speed_mbps, cable_m, mtu):
        stdout.print(renderable)


def register(app: typer.Typer) -> None:
    """Add ``lint`` and ``headroom`` to the app."""
    app.command("lint")(lint_command)
    app.command("headroom")(headroom_command)
