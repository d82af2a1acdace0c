"""Headless Chromium opens the report offline and plotly draws every chart.

Chromium runs with every host name unresolvable and a throw-away profile; after a virtual-time
budget it dumps the DOM, which must show plotly's SVG inside each chart div with the bars and
lines the report's numbers call for.
"""

from __future__ import annotations

import re

import pytest

from fabricplan.cost.bom import CATEGORIES
from fabricplan.report.compare_charts import LEAD_UNCHANGED_TOLERANCE, recommended_lead
from fabricplan.report.headless import CHROMIUM, RenderedPage, render_page
from fabricplan.report.html import compare_html

from .dom import subtree, with_class

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason=f"headless Chromium not installed at {CHROMIUM}")

CHART_IDS = ("chart-step", "chart-tco", "chart-scale", "chart-tornado")
BAR_PATH = re.compile(r"M([-\d.]+),([-\d.]+)V([-\d.]+)H([-\d.]+)V[-\d.]+Z")


@pytest.fixture(scope="module")
def rendered(compare_report, tmp_path_factory) -> RenderedPage:
    page = tmp_path_factory.mktemp("report") / "compare.html"
    page.write_text(compare_html(compare_report), encoding="utf-8")
    return render_page(page, timeout_s=60)


@pytest.fixture(scope="module")
def rendered_dom(rendered) -> str:
    return rendered.dom


def test_no_script_errors_and_no_network_loads(rendered):
    # Chromium cannot resolve any host: a load from a CDN would be logged as a failed load here.
    assert rendered.errors == []


def drawn_bars(elements) -> int:
    """Bars plotly drew with a non-zero area: <g class="point"><path d="Mx0,y0Vy1Hx1Vy0Z">."""
    count = 0
    for index, (tag, attrs) in enumerate(elements[:-1]):
        child_tag, child = elements[index + 1]
        if tag == "g" and attrs.get("class") == "point" and child_tag == "path":
            match = BAR_PATH.fullmatch(child.get("d", ""))
            if match:
                x0, y0, y1, x1 = map(float, match.groups())
                count += abs(x1 - x0) > 0 and abs(y1 - y0) > 0
    return count


def expected_step_bars(report) -> int:
    return sum(sum(1 for value in (job.compute_s, job.bubble_s, *job.exposed_comm_s.values()) if value > 0)
               for fabric in report.fabrics for job in fabric.jobs)


def expected_tco_bars(report) -> int:
    per_fabric = [
        sum(fabric.cost.capex_usd[c] > 0 for c in CATEGORIES)
        + sum(value > 0 for value in fabric.cost.opex_usd_per_year.model_dump().values())
        + (3 if fabric.cost.servers else 0)  # network total, server capex, server opex
        for fabric in report.fabrics]
    return sum(per_fabric)


def expected_tornado_bars(report) -> int:
    base = recommended_lead(report)
    leads = [recommended_lead(report, changes) for row in report.sensitivity
             for changes in (row.metric_change_low, row.metric_change_high)]
    return sum(abs(lead - base) > LEAD_UNCHANGED_TOLERANCE for lead in leads)


@pytest.mark.parametrize("chart_id", CHART_IDS)
def test_plotly_took_over_the_chart_div(rendered_dom, chart_id):
    elements = subtree(rendered_dom, chart_id)
    assert elements, f"{chart_id} missing from the rendered page"
    assert "js-plotly-plot" in elements[0][1].get("class", "").split(), "plotly never drew into the div"
    assert with_class(elements, "plot-container"), f"{chart_id}: no plot-container"
    assert with_class(elements, "main-svg"), f"{chart_id}: no SVG"
    assert with_class(elements, "legend"), f"{chart_id}: no legend"


@pytest.mark.parametrize("chart_id, expected", [
    ("chart-step", expected_step_bars), ("chart-tco", expected_tco_bars), ("chart-tornado", expected_tornado_bars)])
def test_bar_charts_drew_every_non_zero_bar(rendered_dom, compare_report, chart_id, expected):
    elements = subtree(rendered_dom, chart_id)
    assert with_class(elements, "trace", "bars"), f"{chart_id}: no bar traces"
    want = expected(compare_report)
    assert want > 0
    assert drawn_bars(elements) == want


def test_scale_chart_drew_a_line_and_markers_per_fabric(rendered_dom, compare_report):
    elements = subtree(rendered_dom, "chart-scale")
    assert with_class(elements, "scatterlayer")
    lines = [attrs["d"] for tag, attrs in with_class(elements, "js-line") if tag == "path"]
    curves = [d for d in lines if d.count("L") >= 2]  # the vertical marker lines have one segment
    assert len(curves) == len(compare_report.fabrics)
    markers = [attrs for tag, attrs in with_class(elements, "point") if tag == "path" and attrs.get("d")]
    assert len(markers) == len(compare_report.fabrics) * len(compare_report.scale_curve)
    axis_text = " ".join(rendered_dom[m.start():m.start() + 200] for m in re.finditer('class="xtick"', rendered_dom))
    assert "8,192" in axis_text  # the log axis got its GPU-count ticks


def test_page_text_survives_rendering(rendered_dom, compare_report):
    assert f"Recommended: {compare_report.recommendation.recommended}" in rendered_dom
    assert 'id="comparison"' in rendered_dom
