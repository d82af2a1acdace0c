"""CLI surface: flags show as flags, init writes to stdout or refuses a bad path in one line."""

from __future__ import annotations

import re

import pytest
import yaml

COMMANDS = (("compare",), ("step",), ("cost",), ("topology",), ("collective",), ("lint",), ("headroom",),
            ("init",), ("schema",), ("catalog", "list"), ("catalog", "show"))


@pytest.mark.parametrize("command", COMMANDS)
def test_help_shows_on_off_options_as_flags(cli, command):
    result = cli(*command, "--help")
    assert result.code == 0
    assert "--json" in result.out and "--help" in result.out
    assert "<bool>" not in result.out and "BOOLEAN" not in result.out
    assert re.search(r"--json\s+Print", result.out)  # the help text follows the flag directly


def test_help_keeps_the_type_of_options_with_values(cli):
    assert "<path>" in cli("compare", "--help").out  # --html takes a file


def test_init_dash_prints_the_example_spec(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = cli("init", "-")
    assert result.code == 0 and result.err == ""
    assert yaml.safe_load(result.out)["name"] == "my-cluster"
    assert list(tmp_path.iterdir()) == []  # no file named "-"


@pytest.mark.parametrize("target, expected", [("missing/dir/cluster.yaml", "does not exist"),
                                              (".", "is a directory")])
def test_init_into_a_bad_place_is_one_line_and_exit_2(cli, tmp_path, monkeypatch, target, expected):
    monkeypatch.chdir(tmp_path)
    result = cli("init", target)
    assert result.code == 2 and result.out == ""
    assert result.err.count("\n") == 1 and expected in result.err and target in result.err


def test_titles_use_singular_nouns_for_one(cli, tmp_path):
    from tests.cli.test_terminal_80 import EXAMPLES

    out = cli("topology", EXAMPLES / "single-node-8-inference.yaml").out
    assert "on 1 node" in out and "1 nodes" not in out
    document = yaml.safe_load((EXAMPLES / "mid-128-h100-existing-ethernet.yaml").read_text())
    document["fabrics"] = ["roce-v2"]
    spec = tmp_path / "one.yaml"
    spec.write_text(yaml.safe_dump(document))
    text = cli("compare", spec, "-q", "--quick").out
    assert "1 fabric," in text and "1 fabrics" not in text
