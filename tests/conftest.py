"""Shared test helpers."""

from __future__ import annotations

import json

import pytest

from fabricplan.cli.app import run




class CliResult:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err

    def json(self):
        return json.loads(self.out)


@pytest.fixture
def cli(capsys):
    """Run the fabricplan CLI in-process and capture exit code, stdout and stderr."""

    def invoke(*args: str) -> CliResult:
        code = run([str(a) for a in args])
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return invoke
