"""The HTML report is one self-contained offline page with plotly.js once and every user text escaped."""

from __future__ import annotations

import re

import pytest
from markupsafe import escape
from plotly.offline import get_plotlyjs

from fabricplan.report.compare_charts import recommended_lead
from fabricplan.report.html import CHARTS, compare_html

from .conftest import make_report
from .dom import attributes, tags

CHART_IDS = ("chart-step", "chart-tco", "chart-scale", "chart-tornado")


@pytest.fixture(scope="module")
def page(compare_report) -> str:
    return compare_html(compare_report)


def test_loads_nothing_from_the_network(page):
    for tag, name, value in attributes(page):
        if name in {"src", "href", "srcset", "action", "poster", "data"}:
            assert not re.match(r"\s*(https?:)?//", value), (tag, name, value)
    assert 'src="http' not in page and 'href="http' not in page.replace(get_plotlyjs(), "")
    assert "link" not in tags(page)  # no stylesheets or fonts from elsewhere
    css = re.search(r"<style>(.*?)</style>", page, re.S).group(1)
    assert "url(" not in css and "@import" not in css and "@font-face" not in css


def test_plotly_is_inlined_exactly_once(page):
    assert page.count("plotly.js v") == 1
    assert page.count(get_plotlyjs()) == 1
    assert tags(page).count("script") == 2 + len(CHARTS)  # the library, one per chart, print resize


def test_every_chart_has_its_stable_div(page):
    assert [div_id for div_id, _ in CHARTS] == list(CHART_IDS)
    for div_id in CHART_IDS:
        assert page.count(f'id="{div_id}"') == 1
        assert re.search(rf'Plotly\.newPlot\(\s*"{div_id}"', page), f"no drawing script for {div_id}"


def test_content_sections(page, compare_report):
    for fabric in compare_report.fabrics:
        assert fabric.fabric in page
    for rule in compare_report.rules:
        assert rule.id in page
    recommendation = compare_report.recommendation
    assert f"Recommended: {recommendation.recommended}" in page
    assert 'id="disagreements"' in page
    for reason in recommendation.why_not.values():
        assert str(escape(reason)) in page


def test_user_text_is_escaped():
    report = make_report(spec_name='<script>alert("spec")</script> lab',
                         job_names={"llama3-70b-pretrain": "<img src=x onerror=alert(1)>"})
    page = compare_html(report)
    assert '<script>alert("spec")' not in page
    assert "&lt;script&gt;alert(&#34;spec&#34;)&lt;/script&gt; lab" in page
    assert "<img" not in page
    assert tags(page).count("script") == 2 + len(CHARTS)  # no script smuggled in
    assert "img" not in tags(page)


def test_recommended_lead_matches_the_ranking(compare_report):
    by_id = {f.fabric: f.cost_per_useful_gpu_hour_usd for f in compare_report.fabrics}
    # ethernet-tcp is excluded by a fired rule, so the rival is roce-v2.
    assert recommended_lead(compare_report) == pytest.approx(by_id["roce-v2"] / by_id["infiniband-ndr"] - 1)
    flip = next(row for row in compare_report.sensitivity if row.flips)
    assert recommended_lead(compare_report, flip.metric_change_high) < 0 < recommended_lead(
        compare_report, flip.metric_change_low)


def test_without_scale_curve_or_sensitivity_the_page_still_renders():
    report = make_report()
    report.scale_curve = []
    report.sensitivity = []
    page = compare_html(report)
    assert 'id="chart-step"' in page and 'id="chart-tco"' in page
    assert 'id="chart-scale"' not in page and 'id="chart-tornado"' not in page
    assert "No scale curve" in page
