"""CLI front door: schema, init, topology and cost, in text and JSON."""

from __future__ import annotations

import json

import yaml

import fabricplan
from fabricplan.catalog import load_catalog
from fabricplan.spec import ClusterSpec, load_spec
from project_paths import EXAMPLES, pinned

CATALOG = load_catalog()


def test_schema_is_the_spec_schema(cli):
    result = cli("schema")
    assert result.code == 0
    schema = json.loads(result.out)
    assert schema == ClusterSpec.model_json_schema()
    assert "cluster" in schema["required"]
    assert schema["additionalProperties"] is False


def test_init_writes_a_valid_commented_spec(cli, tmp_path):
    path = tmp_path / "cluster.yaml"
    result = cli("init", path)
    assert result.code == 0 and path.exists()
    assert path.read_text().count("#") > 10  # commented
    spec = load_spec(path, catalog=CATALOG)
    assert spec.cluster.gpus == 128
    again = cli("init", path)
    assert again.code == 2 and "--force" in again.err
    written = cli("init", path, "--force", "--json").json()
    assert written == {"written": str(path), "fabricplan_version": fabricplan.__version__, "catalog_sha256": None}


def test_topology_json_is_one_document(cli):
    result = cli("topology", pinned("mid-128-h100-existing-ethernet"), "--json")
    assert result.code == 0, result.err
    data = result.json()
    assert set(data["fabrics"]) == {"ethernet-tcp", "roce-v2", "infiniband-ndr"}
    ndr = data["fabrics"]["infiniband-ndr"]
    assert ndr["tiers"] == 2 and ndr["port_speed_gbps"] == 400
    assert ndr["host_links"] == 128


def test_cost_json_keys_carry_units(cli):
    result = cli("cost", EXAMPLES / "mid-128-h100-existing-ethernet.yaml", "--json")
    assert result.code == 0, result.err
    data = result.json()
    fabric = data["fabrics"][0]
    for key in ("network_capex_usd", "network_tco_usd", "network_power_w", "network_capex_per_gpu_usd",
                "network_share_of_cluster_capex", "horizon_years"):
        assert key in fabric
    assert set(fabric["capex_usd"]) == {"switches", "nics", "optics", "cables"}
    assert data["assumptions"]["energy_usd_per_kwh"] == 0.08


def test_cost_text_output(cli):
    result = cli("cost", EXAMPLES / "mid-128-h100-existing-ethernet.yaml")
    assert result.code == 0
    assert "network share" in result.out and "Bill of materials: infiniband-ndr" in result.out
    assert result.err == ""


def test_catalog_overlay_changes_cost(cli, tmp_path):
    overlay = tmp_path / "prices.yaml"
    overlay.write_text(yaml.safe_dump({"switches": [
        {"id": "sw_eth_th5", "price_usd": {"default": 50000}, "source": "our quote", "date": "2026-11"}]}))
    base = cli("cost", EXAMPLES / "mid-128-h100-existing-ethernet.yaml", "--json").json()
    cheaper = cli("cost", EXAMPLES / "mid-128-h100-existing-ethernet.yaml", "--json", "--catalog", overlay).json()
    assert cheaper["fabrics"][1]["capex_usd"]["switches"] == base["fabrics"][1]["capex_usd"]["switches"] / 2


def test_help_lists_commands(cli):
    result = cli("--help")
    assert result.code == 0
    for command in ("init", "schema", "catalog", "topology", "cost"):
        assert command in result.out


def test_usage_errors_are_one_error_line(cli):
    for args in (("bogus",), ("cost",), ("cost", EXAMPLES / "mid-128-h100-existing-ethernet.yaml", "--bogus")):
        result = cli(*args)
        assert result.code == 2, args
        assert result.err.startswith("error: ") and result.err.count("\n") == 1 and result.out == "", args
    assert "--help" in cli("cost").err  # says where to look


def test_names_with_rich_markup_print_as_written(cli, tmp_path):
    # Spec names are user text: "[/]" must not be read as console markup (it used to crash the tables).
    document = yaml.safe_load((EXAMPLES / "mid-128-h100-existing-ethernet.yaml").read_text())
    document["name"] = "lab [/] [red]east"
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(document))
    for command in ("cost", "topology"):
        result = cli(command, spec)
        assert result.code == 0, result.err
        assert "lab [/] [red]east" in result.out
