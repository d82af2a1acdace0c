"""`--help` prints every help text as written (issue 30): rich markup no longer eats "[us]",
"[bytes]" or "[host or pattern, ...]", a repeatable option shows the type of one value and a
required argument's name in the usage line is bare."""

from __future__ import annotations

import re

import pytest
import typer

from fabricplan.cli.app import full_app


def _commands(group, path=()):
    """(command path, click command) of every command and group under `group`."""
    for name, command in sorted(group.commands.items()):
        yield (*path, name), command
        if hasattr(command, "commands"):
            yield from _commands(command, (*path, name))


CLICK = typer.main.get_command(full_app())
COMMANDS = list(_commands(CLICK))
# a help text's bracketed pieces: [..], <..>, {..} (one level deep)
_BRACKETS = re.compile(r"\[[^\[\]]*\]|<[^<>]*>|\{[^{}]*\}")


def _flat(text: str) -> str:
    """Help output without its panel borders, on one line (it wraps at the terminal's width)."""
    return " ".join(re.sub(r"[\u2500-\u257f]", " ", text).split())


def _as_written(help_text: str) -> str:
    """A registered help text as its author wrote it (the app escaped it for rich)."""
    return " ".join(re.sub(r"\\(\[)", r"\1", help_text).split())


def test_every_command_is_covered():
    names = {path[0] for path, _ in COMMANDS}
    assert {"health", "headroom", "step", "compare", "catalog", "sweep"} <= names
    assert ("catalog", "show") in dict(COMMANDS) and ("sweep", "report") in dict(COMMANDS)


@pytest.mark.parametrize("path", [path for path, _ in COMMANDS], ids=" ".join)
def test_help_keeps_every_bracket(cli, monkeypatch, path):
    monkeypatch.setenv("COLUMNS", "200")
    result = cli(*path, "--help")
    assert result.code == 0, result.err
    shown = _flat(result.out)
    command = dict(COMMANDS)[path]
    texts = [command.help or ""] + [getattr(p, "help", None) or "" for p in command.params]
    expected = [piece for text in texts for piece in _BRACKETS.findall(_as_written(text))]
    missing = [piece for piece in expected if " ".join(piece.split()) not in shown]
    assert not missing, missing
    assert "<list[" not in shown
    usage = next(line for line in result.out.splitlines() if "Usage:" in line)
    assert "{" not in usage and "}" not in usage and "...." not in usage, usage


@pytest.mark.parametrize(("command", "pieces"), [
    ("health", ["Expected RTT [us] the p99.9", "YAML 'jobs: {name: [host or pattern, ...]}'", "Slurm hostlists (node[01-16])", "--ethtool <path>"]),
    ("headroom", ["MTU [bytes] (port MTU for sonic"]),
    ("step", ["Usage: fabricplan step [OPTIONS] SPEC", "--fabric <str>", "--catalog <path>"]),
    ("compare", ["Usage: fabricplan compare [OPTIONS] SPEC"]),
])
def test_the_reported_help_texts(cli, monkeypatch, command, pieces):
    monkeypatch.setenv("COLUMNS", "200")
    shown = _flat(cli(command, "--help").out)
    for piece in pieces:
        assert piece in shown, piece


def test_a_shared_option_is_escaped_once(cli, monkeypatch):
    """`--catalog` is one object on many commands: its help reads the same on each (no "\\[")."""
    monkeypatch.setenv("COLUMNS", "200")
    for command in ("step", "health", "compare"):
        assert "\\" not in _flat(cli(command, "--help").out)


def test_every_command_takes_json():
    """Every command accepts --json (issue 30: `sweep schema --json` was refused)."""
    without = [" ".join(path) for path, command in COMMANDS if not hasattr(command, "commands")
               and not any("--json" in p.opts for p in command.params)]
    assert not without, without


def test_schemas_with_json_print_the_same_document(cli):
    for command in (("schema",), ("sweep", "schema")):
        plain, flagged = cli(*command), cli(*command, "--json")
        assert plain.code == flagged.code == 0, flagged.err
        assert flagged.json() == plain.json() and flagged.json()["properties"]
