"""`fabricplan compare`: the main job."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from typing import Annotated, Optional

import typer

from fabricplan.cli.common import emit_json, stderr, stdout
from fabricplan.cli.plan_cmds import CatalogOption, JsonOption, SpecArgument
from fabricplan.errors import InputError


def compare(
    spec_path: SpecArgument,
    catalog: CatalogOption = None,
    json_output: JsonOption = False,
    markdown: Annotated[bool, typer.Option("--markdown", help="Print the report as Markdown.")] = False,
    html: Annotated[Optional[Path], typer.Option(
        "--html", help="Also write a self-contained HTML report (works offline) to this file.")] = None,
    quick: Annotated[bool, typer.Option(
        "--quick", help="Skip the crossover search and the sensitivity analysis.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress messages on stderr.")] = False,
    verbose: Annotated[bool, typer.Option(
        "--verbose", "-v", help="Terminal output: what every decision rule found, with its full citation.")] = False,
    efficiency_model: Annotated[Optional[str], typer.Option(
        "--efficiency-model", help="Model of each collective's share of the NIC bandwidth: auto "
                                   "(default: the simulator within a budget, else analytic), analytic, sim, ideal, or a registered one.")] = None,
    draws: Annotated[Optional[int], typer.Option(
        "--draws", min=0, max=1_000_000,
        help="Monte Carlo draws over the catalog's ranges (default: catalog uncertainty_draws, 1,000); 0 = none "
             "(the close call is then the fixed band).")] = None,
    seed: Annotated[Optional[int], typer.Option(
        "--seed", min=0, max=2**32 - 1, help="Seed of the Monte Carlo draws (default: catalog uncertainty_seed).")] = None,
) -> None:
    """Compare the fabrics on performance and cost, recommend one and say what would change it.

    Exits 1 when no fabric meets the spec's constraints (the report is still printed)."""
    from fabricplan.catalog import load_catalog
    from fabricplan.decide import compare as compare_spec
    from fabricplan.spec import load_spec

    if json_output and markdown:
        raise InputError("choose one of --json and --markdown")
    from fabricplan.perf.efficiency import efficiency_model as resolve_efficiency_model
    from fabricplan.plan import DEFAULT_PLAN

    plan = DEFAULT_PLAN
    if efficiency_model is not None:
        resolve_efficiency_model(efficiency_model)  # an unknown name fails before any work
        plan = DEFAULT_PLAN.replace(efficiency_model=efficiency_model)
    if html is not None:
        from fabricplan.io import check_output_path

        check_output_path(html, what="HTML report")  # before minutes of work, not after
    cat = load_catalog(catalog or [])
    spec = load_spec(spec_path, cat)
    show_progress = not quiet
    with stderr.status("comparing fabrics...", spinner="dots") if show_progress else nullcontext() as status:
        def progress(message: str) -> None:
            if status is not None:
                status.update(message)

        report = compare_spec(spec, cat, progress=progress, search_scale=not quick, analyse_sensitivity=not quick,
                              plan=plan, draws=draws, seed=seed)
    if html is not None:
        from fabricplan.io import write_text_atomic
        from fabricplan.report.html import compare_html

        write_text_atomic(html, compare_html(report), what="HTML report")
        if show_progress:
            stderr.print(f"wrote {html}")
    if json_output:
        emit_json(report, catalog=cat)
    elif markdown:
        from fabricplan.report.markdown import compare_markdown

        print(compare_markdown(report))
    else:
        from fabricplan.report.compare_terminal import compare_renderables

        for renderable in compare_renderables(report, verbose=verbose):
            stdout.print(renderable)
    if not report.recommendation.feasible:  # the report is printed, but no fabric meets the constraints
        raise typer.Exit(code=1)


def register(app: typer.Typer) -> None:
    """Add the decision commands to the app."""
    app.command()(compare)
