"""The flow-level simulator against published figures (docs/validation.md, flow-level section)."""

from __future__ import annotations

import pytest

from validation.sim import ROWS


@pytest.mark.parametrize("row", [r for r in ROWS if r.gated], ids=lambda r: r.name[:60])
def test_published_figure_within_tolerance(row):
    value = row.run()
    assert row.low <= value <= row.high, (row.name, value)


def test_checked_only_rows_say_why():
    assert all(row.note for row in ROWS if not row.gated)
