"""`fabricplan --version`, shell completion, and `-` as the spec path (read from standard input)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tomllib

import pytest

import fabricplan
from project_paths import EXAMPLES, ROOT

SPEC = EXAMPLES / "llama70b-1024-h100.yaml"
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}


def _stdin(monkeypatch, text: str) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))


def test_version_prints_the_package_version(cli):
    result = cli("--version")
    assert result.code == 0 and result.out == f"fabricplan {fabricplan.__version__}\n"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["version"] == fabricplan.__version__


def test_completion_is_offered_and_completes_commands_and_options():
    assert "--install-completion" in subprocess.run(
        [sys.executable, "-m", "fabricplan.cli.app", "--help"], env={**ENV, "COLUMNS": "200"},
        capture_output=True, text=True, timeout=60).stdout
    for words, cword, expected in (("fabricplan com", "1", "compare"), ("fabricplan compare --qu", "2", "--quick"),
                                   ("fabricplan catalog s", "2", "show")):
        run = subprocess.run([sys.executable, "-m", "fabricplan.cli.app"], capture_output=True, text=True, timeout=60,
                             env={**ENV, "_FABRICPLAN_COMPLETE": "complete_bash", "COMP_WORDS": words,
                                  "COMP_CWORD": cword})
        assert run.returncode == 0, run.stderr
        assert expected in run.stdout.split(), (words, run.stdout)


@pytest.mark.parametrize("command", [("step",), ("topology",), ("cost",), ("compare", "-q", "--quick")])
def test_dash_reads_the_spec_from_stdin(cli, monkeypatch, command):
    from_file = cli(command[0], SPEC, *command[1:], "--json")
    assert from_file.code == 0, from_file.err
    _stdin(monkeypatch, SPEC.read_text())
    from_stdin = cli(command[0], "-", *command[1:], "--json")
    assert from_stdin.code == 0, from_stdin.err
    first, second = from_file.json(), from_stdin.json()
    assert first == second


def test_dash_in_a_spec_option_and_json_on_stdin(cli, monkeypatch):
    document = __import__("yaml").safe_load(SPEC.read_text())
    _stdin(monkeypatch, json.dumps(document))
    result = cli("collective", "--spec", "-", "--fabric", "infiniband-ndr", "--size", "1G", "--gpus", "64", "--json")
    assert result.code == 0, result.err
    assert result.json()["size_bytes"] == 2 ** 30


def test_errors_in_a_piped_spec_name_stdin(cli, monkeypatch):
    _stdin(monkeypatch, "name: x\ncluster: {gpu: h100-sxm, gpus: many}\n")
    result = cli("step", "-")
    assert result.code == 2 and result.err.startswith("error: stdin:2:26: cluster.gpus:"), result.err
    assert "Traceback" not in result.err
    _stdin(monkeypatch, "")
    result = cli("compare", "-", "-q")
    assert result.code == 2 and result.err == "error: stdin: standard input is empty; expected a YAML or JSON mapping\n"


def test_a_piped_spec_through_the_installed_entry_point():
    run = subprocess.run([sys.executable, "-m", "fabricplan.cli.app", "step", "-", "--json"], input=SPEC.read_text(),
                         capture_output=True, text=True, timeout=120, env=ENV, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["results"]
