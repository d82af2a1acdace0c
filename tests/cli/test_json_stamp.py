"""Every JSON document carries the tool's version and the SHA-256 of the catalog it used, and nothing
that depends on a cache (issue 30): two identical runs print identical JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

import fabricplan
from fabricplan.catalog import load_catalog
from fabricplan.report.json_document import document_text
from project_paths import EXAMPLES, ROOT
from tests.ops.ops_fixtures import setup_args

SPEC = EXAMPLES / "llama70b-1024-h100.yaml"
HEALTH = ROOT / "tests" / "fixtures" / "health"
BUNDLED = load_catalog().content_sha256()
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}


def test_the_hash_is_of_the_resolved_data(tmp_path):
    assert len(BUNDLED) == 64 and load_catalog().content_sha256() == BUNDLED
    overlay = tmp_path / "prices.yaml"
    overlay.write_text(yaml.safe_dump({"switches": [{"id": "sw_ib_qm9700", "price_usd": {"default": 44000}}]}))
    changed = load_catalog([overlay])
    assert changed.content_sha256() != BUNDLED
    # the same numbers set another way give the same hash: it is of the data, not of how it was layered
    same = load_catalog().with_values({"switches.sw_ib_qm9700.price_usd.default": 44000})
    assert same.content_sha256() == changed.content_sha256()
    # an overlay that changes nothing leaves the hash as it is
    unchanged = tmp_path / "same.yaml"
    unchanged.write_text(yaml.safe_dump({"switches": [{"id": "sw_ib_qm9700", "price_usd": {"default": 45000}}]}))
    assert load_catalog([unchanged]).content_sha256() == BUNDLED


def test_two_identical_compare_runs_print_identical_json(cli):
    first = cli("compare", SPEC, "-q", "--json")
    second = cli("compare", SPEC, "-q", "--json")
    assert first.code == 0, first.err
    assert first.out == second.out
    document = first.json()
    assert document["fabricplan_version"] == fabricplan.__version__
    assert document["catalog_sha256"] == BUNDLED
    assert not any("cache" in note.lower() for note in document["notes"]), document["notes"]


def test_two_compare_processes_print_identical_json(tmp_path):
    """A cold cache (a fresh FABRICPLAN_CACHE_DIR) and then a warm one: the same bytes."""
    env = {**ENV, "FABRICPLAN_CACHE_DIR": str(tmp_path / "cache")}
    runs = [subprocess.run([sys.executable, "-m", "fabricplan.cli.app", "compare", str(SPEC), "-q", "--quick", "--json"],
                           capture_output=True, text=True, timeout=300, env=env, cwd=ROOT) for _ in range(2)]
    assert runs[0].returncode == 0, runs[0].stderr
    assert runs[0].stdout == runs[1].stdout


def test_an_overlay_changes_the_stamp(cli, tmp_path):
    overlay = tmp_path / "prices.yaml"
    overlay.write_text(yaml.safe_dump({"switches": [{"id": "sw_ib_qm9700", "price_usd": {"default": 44000}}]}))
    document = cli("cost", SPEC, "--json", "--catalog", overlay).json()
    assert document["catalog_sha256"] == load_catalog([overlay]).content_sha256() != BUNDLED


@pytest.mark.parametrize("args", [
    ("compare", SPEC, "-q", "--quick"), ("step", SPEC), ("cost", SPEC), ("topology", SPEC),
    ("collective", "--size", "1G", "--gpus", "16"), ("dcqcn", "--flows", "2", "--delay-us", "10"),
    ("simulate", "incast", "--k", "4", "--senders", "2", "--max-time-ms", "1"),
    ("headroom", "--speed", "400G", "--cable", "30m", "--mtu", "9100"),
    ("lint", *setup_args(), "--fail-on", "never"),
    ("health", "--rtt", HEALTH / "rtt.csv", "--fail-on", "never"),
    ("catalog", "show", "sw_ib_qm9700"), ("catalog", "show", "tp_overlap_efficiency"), ("catalog", "list", "gpus"),
])
def test_every_document_carries_version_and_catalog(cli, args):
    result = cli(*args, "--json")
    assert result.code == 0, result.err
    document = result.json()
    assert document["fabricplan_version"] == fabricplan.__version__
    assert document["catalog_sha256"] == BUNDLED


def test_documents_without_a_catalog_say_so(cli, tmp_path):
    document = cli("init", tmp_path / "c.yaml", "--json").json()
    assert document["fabricplan_version"] == fabricplan.__version__ and document["catalog_sha256"] is None
    assert cli("sweep", "outputs", "--json").json()["catalog_sha256"] is None


def test_sarif_carries_the_stamp_in_its_property_bag(cli):
    log = cli("lint", *setup_args(), "--sarif", "--fail-on", "never").json()
    assert "fabricplan_version" not in log and "catalog_sha256" not in log  # SARIF allows no other keys
    assert log["properties"] == {"fabricplan_version": fabricplan.__version__, "catalog_sha256": BUNDLED}


def test_sweep_documents_name_the_sweeps_catalog(cli, tmp_path):
    sweep = tmp_path / "s.yaml"
    sweep.write_text(yaml.safe_dump({"name": "s", "base": str(SPEC), "axes": {"cluster.gpus": [512, 1024]}}))
    out = tmp_path / "out"
    run = cli("sweep", "run", sweep, "--out", out, "-e", "inprocess", "-q", "--json")
    assert run.code == 0, run.err
    assert run.json()["catalog_sha256"] == BUNDLED
    assert cli("sweep", "run", sweep, "--dry-run", "--json").json()["catalog_sha256"] == BUNDLED
    report = cli("sweep", "report", out, "--json").json()
    assert report["catalog_sha256"] == BUNDLED and report["fabricplan_version"] == fabricplan.__version__


def test_watch_lines_are_stamped_documents():
    line = json.loads(document_text({"change": "new"}, BUNDLED, indent=None))
    assert line == {"change": "new", "fabricplan_version": fabricplan.__version__, "catalog_sha256": BUNDLED}
