"""`fleet`: the spec's job mix arriving, placed and sharing each fabric's design over time."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from fabricplan.cli.common import emit_json, stdout
from fabricplan.cli.plan_cmds import CatalogOption


def _fleet(spec: Path, fabric: Optional[str], policy: Optional[str], routing: Optional[str], days: Optional[float],
           samples: Optional[int], seed: int, qps: Optional[int], as_json: bool, html: Optional[Path],
           catalog_paths: Optional[list[Path]]) -> None:
    from fabricplan import __version__
    from fabricplan.api import fleet
    from fabricplan.catalog import load_catalog
    from fabricplan.report.fleet_output import fleet_document, fleet_renderable

    if html is not None:
        from fabricplan.io import check_output_path

        check_output_path(html, what="fleet report")  # before the simulation, not after
    catalog = load_catalog(catalog_paths or [])
    with stdout.status("simulating the fleet ...") if not as_json else _nothing():
        results = fleet(spec, fabric, catalog, policy=policy, routing=routing, days=days, samples=samples, seed=seed,
                        qps=qps)
    if html is not None:
        from fabricplan.report.fleet_plot import write_fleet_html

        write_fleet_html(results, html)
    if as_json:
        emit_json(fleet_document(results, version=__version__), catalog=catalog)
        return
    stdout.print(fleet_renderable(results))


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def register(app: typer.Typer) -> None:
    @app.command()
    def fleet(
        spec: Path = typer.Argument(..., help="Cluster spec (YAML) whose jobs form the mix; - reads it from stdin", metavar="SPEC"),
        fabric: Optional[str] = typer.Option(None, "--fabric", help="One of the spec's fabrics (default: all)"),
        policy: Optional[str] = typer.Option(None, "--policy", help="Scheduler policy: packed, first_fit or random "
                                                                    "(default: the spec's)"),
        routing: Optional[str] = typer.Option(None, "--routing", help="ecmp, adaptive or spray (default: the "
                                                                      "fabric profile's)"),
        days: Optional[float] = typer.Option(None, "--days", help="Days of fleet time (default: catalog, 30)"),
        samples: Optional[int] = typer.Option(None, "--samples", help="Instants simulated (default: catalog, 8)"),
        seed: int = typer.Option(0, "--seed", help="Seed of arrivals, durations, placement and hashing (0 or more)"),
        qps: Optional[int] = typer.Option(None, "--qps", help="Queue pairs per connection, each hashed separately "
                                                              "(default: NCCL's 1)"),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON document"),
        html: Optional[Path] = typer.Option(None, "--html", help="Write each job's pace over time and the "
                                                                 "fragmentation (plotly HTML)"),
        catalog: CatalogOption = None,
    ) -> None:
        """Jobs arriving and leaving, placed by a scheduler policy, sharing the fabric: each job's pace."""
        _fleet(spec, fabric, policy, routing, days, samples, seed, qps, as_json, html, catalog)
