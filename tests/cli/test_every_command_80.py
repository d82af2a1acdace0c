"""Every command's terminal output at 80 columns (what rich assumes when output is piped, issue 30):
no line is wider than the terminal and no word is broken across lines.

A word is broken when the 80-column rendering holds a word that the same output rendered 400 columns
wide does not: a piece of one (rich's plain `Table` squeezed a header to "energy_usd_per_k" / "wh" and
a status to one letter; the project's `FitTable` never does). A table stacked into blocks at 80
columns may leave out its first header, so only new words count. Each case runs in a second or two on the bundled
examples and fixtures."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from rich.cells import cell_len

from fabricplan.cli import common
from project_paths import EXAMPLES, ROOT
from tests.ops.ops_fixtures import setup_args

WIDTH = 80
WIDE = 400
HEALTH = ROOT / "tests" / "fixtures" / "health"
SPEC = EXAMPLES / "llama70b-1024-h100.yaml"
HEALTH_ARGS = ("health", "--ethtool", HEALTH / "ethtool_storm.txt", "--hw-counters", HEALTH / "hw_counters_node01.txt",
               "--perfquery", HEALTH / "perfquery.txt", "--rtt", HEALTH / "rtt.csv", "--jobs", HEALTH / "jobs.yaml",
               "--all-ports", "--fail-on", "never")
# rules, underlines and box-drawing lines are not words
_RULE = re.compile(r"^[\s\u2500-\u257f]*$")


# a bare number: left out, as a run's wall-clock time ("(0.04 s wall)") differs between two renders
_NUMBER = re.compile(r"^[(\[]?[-+]?[\d.,]+%?[)\]]?[,;:]?$")


def words(text: str) -> set[str]:
    """The words of `text`: whitespace-separated, without the ':' a stacked block adds to a header."""
    return {word.rstrip(":") for line in text.splitlines() if not _RULE.match(line)
            for word in line.split() if word.rstrip(":") and not _RULE.match(word) and not _NUMBER.match(word)}


def render(cli, monkeypatch, width: int, args) -> str:
    monkeypatch.setattr(common.stdout, "width", width)
    result = cli(*args)
    assert result.code == 0, result.err
    return result.out


def tiny_sweep(tmp_path: Path, cli) -> Path:
    """A 4-point sweep over GPUs and the energy price (its column name is 18 letters long)."""
    sweep = tmp_path / "tiny.yaml"
    sweep.write_text(yaml.safe_dump({"name": "tiny", "base": str(SPEC), "axes": {
        "cluster.gpus": [512, 1024], "economics.energy_usd_per_kwh": [0.05, 0.2]}}))
    out = tmp_path / "tiny.sweep"
    assert cli("sweep", "run", sweep, "--out", out, "-e", "inprocess", "-q").code == 0
    return out


CASES = {
    "compare": ("compare", SPEC, "-q", "--quick"),
    "step": ("step", SPEC),
    "collective": ("collective", "--sweep-sizes", "8B:1GiB", "--gpus", "256"),
    # the 1,024-GPU example as a fleet (the bundled 16k mix takes ~3 s a render): jobs, failures, legend
    "fleet": ("fleet", SPEC, "--fabric", "infiniband-ndr", "--samples", "1", "--days", "1"),
    "health": HEALTH_ARGS,
    "lint": ("lint", *setup_args("pfc_priority_mismatch"), "--fail-on", "never"),
    "headroom": ("headroom", "--speed", "400G", "--cable", "30m", "--mtu", "9100", "--model", "sonic",
                 "--asic", "spectrum-4"),
    "sweep report": ("sweep", "report", "SWEEP"),
    "sweep outputs": ("sweep", "outputs"),
    "catalog list": ("catalog", "list"),
    "catalog list section": ("catalog", "list", "switches"),
    "catalog show": ("catalog", "show", "sw_ib_qm9700"),
    "catalog show parameter": ("catalog", "show", "tp_overlap_efficiency"),
    "dcqcn": ("dcqcn", "--flows", "16", "--delay-us", "10"),
    "simulate": ("simulate", "incast", "--k", "4", "--senders", "3", "--max-time-ms", "1"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_output_fits_80_columns_and_breaks_no_word(cli, monkeypatch, tmp_path, name):
    args = CASES[name]
    if "SWEEP" in args:
        args = tuple(tiny_sweep(tmp_path, cli) if a == "SWEEP" else a for a in args)
    narrow = render(cli, monkeypatch, WIDTH, args)
    wide = render(cli, monkeypatch, WIDE, args)
    assert narrow.strip()
    too_wide = [line for line in narrow.splitlines() if cell_len(line.rstrip()) > WIDTH]
    # lint prints a path or a command to paste on one line, even past the edge (test_terminal_80.py)
    too_wide = [line for line in too_wide if not line.lstrip().startswith(("at: ", "fix: "))]
    assert not too_wide, too_wide
    assert "…" not in narrow
    broken = words(narrow) - words(wide)
    assert not broken, sorted(broken)


def test_health_per_port_table_keeps_status_and_port_names_whole(cli, monkeypatch):
    out = render(cli, monkeypatch, WIDTH, HEALTH_ARGS)
    table = out[out.index("Per port"):out.index("not available")]
    rows = {line.split()[0]: line.split() for line in table.splitlines() if line.startswith(("node", "sw1"))}
    assert rows["node01:mlx5_0/1"][-1] == "error" and rows["sw1:lid3/1"][-1] == "error"
    assert rows["node09:lid1719/1"][-1] == "info"
    assert "node-a" in rows and rows["node-a"][-1] == "ok"


def test_sweep_report_keeps_axis_headers_whole(cli, monkeypatch, tmp_path):
    out = render(cli, monkeypatch, WIDTH, ("sweep", "report", tiny_sweep(tmp_path, cli)))
    crossovers = out[out.index("Crossovers"):]
    assert "energy_usd_per_kwh" in crossovers and "energy_usd_per_k\n" not in out
    assert all(cell_len(line) <= WIDTH for line in out.splitlines())


def test_piped_output_is_80_columns_wide(tmp_path):
    """Run as a user does, piped, with COLUMNS=80: the health table fits and keeps its words."""
    env = {**os.environ, "COLUMNS": str(WIDTH), "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    run = subprocess.run([sys.executable, "-m", "fabricplan.cli.app", *map(str, HEALTH_ARGS)], env=env,
                         capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert all(cell_len(line.rstrip()) <= WIDTH for line in run.stdout.splitlines())
    assert re.search(r"^node01:mlx5_0/1\s.*\serror\s*$", run.stdout, re.MULTILINE)
