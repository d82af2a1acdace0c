"""A bad ``spread`` in a --catalog overlay: one line naming the file, the entry and the field; exit 2."""

from __future__ import annotations

import pytest

from project_paths import EXAMPLES


@pytest.mark.parametrize("spread, expected", [
    ('{ranges: {power_w: [1200, 600]}, reason: "reversed"}', "ranges.power_w: low (1200) must not exceed high (600)"),
    ('{relative: 3, reason: "too wide"}', "spread.relative"),
    ('{reason: "x"}', "spread.reason"),  # an overlay merges into the bundled spread: only a bad value fails
    ('{exact: true, reason: "ok", widths: 2}', "spread.widths"),
])
def test_bad_spread_in_an_overlay_is_one_line(cli, tmp_path, spread, expected):
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text(f"switches:\n  - id: sw_eth_th5\n    spread: {spread}\n")
    result = cli("compare", str(EXAMPLES / "mid-128-h100-existing-ethernet.yaml"), "--catalog", str(overlay),
                 "--quiet", "--draws", "0")
    assert result.code == 2
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and "overlay.yaml" in lines[0] and "sw_eth_th5" in lines[0] and expected in lines[0]
