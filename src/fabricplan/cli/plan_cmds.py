"""Planning commands: schema, init, catalog, topology and cost."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from fabricplan.cli.common import emit_json, stdout
from fabricplan.errors import InputError

# The models, the catalog and the report builders are imported inside the commands that use them,
# so that `fabricplan --help` and light commands start fast.

# The catalog section names for the `catalog list` help text; importing the catalog (its pydantic
# models) only to print help would cost ~0.2 s. A test checks this equals `catalog.ALL_SECTIONS`.
HELP_SECTION_NAMES = ("switches", "nics", "optics", "gpus", "servers", "fabrics", "parameters", "models",
                      "sources", "perf_defaults", "nccl_tuner", "ops_defaults")

CatalogOption = Annotated[
    Optional[list[Path]],
    typer.Option("--catalog", help="A YAML/JSON file layered over the bundled catalog (repeatable)."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]
SpecArgument = Annotated[Path, typer.Argument(help="Cluster spec (YAML or JSON; - reads it from stdin).", show_default=False,
                                              metavar="SPEC")]

catalog_app = typer.Typer(help="List and show catalog entries (hardware, fabrics, prices, parameters).",
                          no_args_is_help=True)


def schema(json_output: JsonOption = False) -> None:
    """Print the JSON Schema of the cluster spec (always JSON; --json is accepted for symmetry)."""
    from fabricplan.spec import ClusterSpec

    print(json.dumps(ClusterSpec.model_json_schema(), indent=2))


def init(
    path: Annotated[Path, typer.Argument(help="Where to write the example spec; - prints it on stdout.", metavar="PATH")
                    ] = Path("cluster.yaml"),
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
    json_output: JsonOption = False,
) -> None:
    """Write a commented example cluster spec to start from."""
    from fabricplan.spec.example import EXAMPLE_SPEC_YAML

    if str(path) == "-":
        if json_output:
            raise InputError("init - prints the spec itself; --json applies to writing a file", location="--json")
        sys.stdout.write(EXAMPLE_SPEC_YAML)
        return
    if path.is_dir():
        raise InputError("is a directory; give a file name, e.g. cluster.yaml inside it", location=str(path))
    if path.exists() and not force:
        raise InputError("file exists; pass --force to overwrite it", location=str(path))
    from fabricplan.io import write_text_atomic

    write_text_atomic(path, EXAMPLE_SPEC_YAML, what="example spec")
    if json_output:
        emit_json({"written": str(path)}, catalog=None)
    else:
        stdout.print(f"wrote {path}; edit it, then run: fabricplan compare {path}", soft_wrap=True)


@catalog_app.command("list")
def catalog_list(
    section: Annotated[Optional[str], typer.Argument(help=f"One of: {', '.join(HELP_SECTION_NAMES)}", metavar="SECTION")] = None,
    all_entries: Annotated[bool, typer.Option("--all", help="Every entry of every section (without a SECTION, "
                                                            "a summary per section is printed).")] = False,
    catalog: CatalogOption = None,
    json_output: JsonOption = False,
) -> None:
    """Summarise the catalog's sections, or list a section's entries (perf_defaults, nccl_tuner and
    ops_defaults: their items) with their dates; --json gives the entries themselves."""
    from fabricplan.catalog import ALL_SECTIONS, load_catalog
    from fabricplan.errors import did_you_mean

    if section is not None and section not in ALL_SECTIONS:
        hint = did_you_mean(section, ALL_SECTIONS)
        raise InputError(f"unknown catalog section '{section}'" + (f"; {hint}" if hint else "") +
                         f" (known: {', '.join(ALL_SECTIONS)})")
    if section is not None and all_entries:
        raise InputError("give a SECTION or --all, not both", location="--all")
    cat = load_catalog(catalog or [])
    names = [section] if section else list(ALL_SECTIONS)
    if json_output:  # scripts get the entries, of one section or of all
        emit_json({name: {i: _plain_json(e) for i, e in _items(cat, name)} for name in names}, catalog=cat)
        return
    from fabricplan.report.catalog_tables import section_table, summary_table

    if section is None and not all_entries:
        stdout.print(summary_table(cat, names))
        return
    for name in names:
        stdout.print(section_table(cat, name))


def _items(cat, name: str):
    from fabricplan.catalog import SECTIONS

    return cat.section(name).items() if name in SECTIONS else cat.document_items(name)


def _plain_json(item):
    return item.model_dump(mode="json") if hasattr(item, "model_dump") else item


def _document_path(cat, name: str) -> str | None:
    """A dotted catalog path for ``name``: itself, or a perf_defaults parameter / ops_defaults entry."""
    candidates = [name, f"perf_defaults.parameters.{name}", f"ops_defaults.{name}"]
    for path in candidates:
        try:
            cat.get_path(path)
        except InputError:
            continue
        return path
    return None


@catalog_app.command("show")
def catalog_show(
    entry_id: Annotated[str, typer.Argument(
        metavar="ID",
        help="Entry id (e.g. sw_ib_qm9700), perf parameter (tp_overlap_efficiency) or dotted path "
             "(nccl_tuner.versions.2.30.7.tree_factor)")],
    catalog: CatalogOption = None,
    json_output: JsonOption = False,
) -> None:
    """Show one catalog entry, or the value at a dotted path, with every field and its source."""
    from fabricplan.catalog import DOCUMENTS, SECTIONS, load_catalog

    cat = load_catalog(catalog or [])
    for name in SECTIONS:
        if entry_id in cat.section(name):
            entry = cat.section(name)[entry_id]
            if json_output:
                emit_json({"section": name, "origin": cat.origins[name][entry_id],
                           "entry": entry.model_dump(mode="json")}, catalog=cat)
                return
            fields = entry.model_dump(mode="json")
            quotes = fields.pop("quotes", None) or []  # a source's quotes: one row each, the translation after
            rows = [[key, json.dumps(value, ensure_ascii=False) if isinstance(value, (dict, list)) else str(value)]
                    for key, value in fields.items()]
            rows += [["quote" if i == 0 else "", f"{q['text']} [{q['text_en']}]"] for i, q in enumerate(quotes)]
            stdout.print(_field_table(f"{name}: {entry_id} ({cat.origins[name][entry_id]})", rows, cat))
            return
    path = _document_path(cat, entry_id) if entry_id not in DOCUMENTS else None
    if path is None and "." in entry_id:
        cat.get_path(entry_id)  # raises, naming the segment that failed and what exists there
    if path is not None:
        value = _plain_json(cat.get_path(path))
        source, date = cat.source_of(path)
        origin = cat.origin(path)
        if json_output:
            emit_json({"path": path, "value": value, "source": source, "date": date, "origin": origin}, catalog=cat)
            return
        rows = []
        if isinstance(value, dict) and "value" in value and "source" in value:  # a sourced item: its fields
            for key, field_value in value.items():
                if field_value is not None:
                    rows.append([key, json.dumps(field_value, ensure_ascii=False)
                                 if isinstance(field_value, (dict, list)) else str(field_value)])
        else:
            rows += [["value", json.dumps(value, ensure_ascii=False) if isinstance(value, (dict, list)) else str(value)],
                     ["source", source], ["date", date]]
        stdout.print(_field_table(f"{path} ({origin})", rows, cat))
        return
    from fabricplan.errors import did_you_mean

    known = [i for name in SECTIONS for i in cat.section(name)]
    known += [path.rsplit(".", 1)[-1] for path, _item in cat.document_items("perf_defaults")]
    hint = did_you_mean(entry_id, known)
    raise InputError(f"no catalog entry '{entry_id}'" + (f"; {hint}" if hint else "") +
                     " (`fabricplan catalog list` lists them; or a dotted path such as "
                     "perf_defaults.parameters.<name>)")


def _field_table(title: str, rows: list[list[str]], catalog):
    """Field / value rows of one catalog entry; Chinese source quotes get their English rendering (the
    catalog's sources hold the translations)."""
    from fabricplan.report.layout import FitTable
    from fabricplan.report.quotes import catalog_translations, with_english

    known = catalog_translations(catalog)
    return FitTable(("field", "value"), [[key, value if key in ("quote", "") else with_english(value, known)]
                                         for key, value in rows], title=title,
                    show_header=False, column_styles=("bold", ""))


def _load(spec_path: Path, catalog_paths: list[Path] | None):
    from fabricplan.catalog import load_catalog
    from fabricplan.spec import load_spec

    cat = load_catalog(catalog_paths or [])
    return load_spec(spec_path, cat), cat


def _chosen(spec, cat):
    """The design ``compare`` chooses per fabric (the spec's own when it fixes switch and style)."""
    from fabricplan.plan import chosen_designs

    return chosen_designs(spec, cat)


def topology(spec_path: SpecArgument, catalog: CatalogOption = None, json_output: JsonOption = False) -> None:
    """Size the topology (switches per tier, links) for each fabric in the spec."""
    from fabricplan.cost import cost as cost_spec
    from fabricplan.report.tables import topology_table

    spec, cat = _load(spec_path, catalog)
    report = cost_spec(spec, cat, designs=_chosen(spec, cat))
    if json_output:
        emit_json({"spec": spec.name, "gpus": spec.cluster.gpus,
                   "fabrics": {f.fabric: {"switch_id": f.switch_id, "port_speed_gbps": f.port_speed_gbps,
                                          **f.model_dump(mode="json")["topology"]} for f in report.fabrics}},
                  catalog=cat)
        return
    stdout.print(topology_table(report))


def cost(
    spec_path: SpecArgument,
    catalog: CatalogOption = None,
    price_point: Annotated[Optional[str], typer.Option(
        "--price-point", help="Price every item at its low, default or high catalog price.")] = None,
    json_output: JsonOption = False,
) -> None:
    """Bill of materials, power, operations and TCO for each fabric in the spec."""
    from fabricplan.cost import cost as cost_spec
    from fabricplan.report.tables import cost_tables

    spec, cat = _load(spec_path, catalog)
    if price_point is not None:
        if price_point not in ("low", "default", "high"):
            raise InputError(f"--price-point must be low, default or high (got '{price_point}')")
        spec = spec.model_copy(update={"economics": spec.economics.model_copy(update={"price_point": price_point})})
    report = cost_spec(spec, cat, designs=_chosen(spec, cat))
    if json_output:
        emit_json(report, catalog=cat)
        return
    for renderable in cost_tables(report):
        stdout.print(renderable)


def register(app: typer.Typer) -> None:
    """Add the planning commands to the app."""
    app.command()(init)
    app.command()(schema)
    app.add_typer(catalog_app, name="catalog")
    app.command()(topology)
    app.command()(cost)
