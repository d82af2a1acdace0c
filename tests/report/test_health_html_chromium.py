"""Headless Chromium opens the `health --html` page offline and plotly draws a line for every
counter behind every finding and one for each threshold (the same harness as the compare report's test)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabricplan.catalog import load_catalog
from fabricplan.ops.health import evaluate
from fabricplan.ops.readers.telemetry import read_input
from fabricplan.report.headless import CHROMIUM, render_page
from fabricplan.report.health_html import health_html

from .dom import subtree

CATALOG = load_catalog()

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason=f"headless Chromium not installed at {CHROMIUM}")
FIX = Path(__file__).resolve().parents[1] / "fixtures" / "health"


def test_every_finding_chart_draws_its_counters(tmp_path):
    telemetry = read_input("ethtool", FIX / "ethtool_storm.txt", catalog=CATALOG)
    telemetry.extend(read_input("hw_counters", FIX / "hw_counters_node01.txt", catalog=CATALOG))
    result = evaluate(telemetry, catalog=CATALOG)
    page = tmp_path / "health.html"
    page.write_text(health_html(result), encoding="utf-8")
    rendered = render_page(page, timeout_s=60)
    assert rendered.errors == []
    charted = [f for _e, items in result.ranked() for f in items if f.series]
    assert len(charted) == 5
    for number, finding in enumerate(charted):
        lines = [attrs for tag, attrs in subtree(rendered.dom, f"chart-{number}")
                 if tag == "path" and "js-line" in attrs.get("class", "") and len(attrs.get("d", "")) > 10]
        limits = {(entity, label) for entity, label, _value, _text in finding.limits or []}
        assert len(lines) == len(finding.series) + len(limits & set(finding.series)), (finding.rule_id, number)
