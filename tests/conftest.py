"""Shared test helpers."""

from __future__ import annotations

import json
import os
import tempfile

import pytest
from hypothesis import settings

# The parsed-data cache of the bundled catalog files goes to a folder of this test session, not the
# user's ~/.cache (set before anything loads a data file).
os.environ.setdefault("FABRICPLAN_CACHE_DIR", tempfile.mkdtemp(prefix="fabricplan-test-cache-"))

from fabricplan.cli.app import run  # noqa: E402

# Hypothesis profiles. `ci` (the default) is derandomised: every run draws the same examples, so a
# property that fails fails on every run, not at random. `explore` draws many more, with fresh
# randomness each run, to hunt for latent bugs by hand:
#     PYTHONPATH=src python -m pytest tests/topology --hypothesis-profile=explore
#     FABRICPLAN_HYPOTHESIS_PROFILE=explore PYTHONPATH=src python -m pytest tests/topology
# Tests that set their own max_examples scale it with `hypothesis_budget.examples(n)`.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", max_examples=2_000, derandomize=False, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("FABRICPLAN_HYPOTHESIS_PROFILE", "ci"))


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
