"""`sweep report`: Pareto fronts, the recommended-fabric map, crossovers; terminal, JSON and HTML."""

from __future__ import annotations

import math

import pytest
from sweep_files import SMALL_AXES, write_sweep

from fabricplan.sweep.analysis import analyse, pareto_indices


def test_pareto_keeps_the_non_dominated_points():
    steps = [1.0, 2.0, 2.0, 3.0, 4.0, 1.5, math.nan]
    costs = [9.0, 5.0, 6.0, 5.0, 1.0, 9.5, 0.1]
    # (1,9) (2,5) (4,1) are the front; (2,6) (3,5) (1.5,9.5) are dominated; NaN is left out.
    assert pareto_indices(steps, costs) == [0, 1, 4]


def _table(cost_a, cost_b, xs, ys):
    """A synthetic results table of two fabrics over x (outer) and y (inner)."""
    n = len(xs) * len(ys)
    columns = {"point_id": [str(k) for k in range(n)], "error": [None] * n, "x": [], "y": [], "recommended": [],
               "a__cost_per_useful_gpu_hour_usd": [], "b__cost_per_useful_gpu_hour_usd": [],
               "a__step_time_s": [], "b__step_time_s": []}
    for x in xs:
        for y in ys:
            ca, cb = cost_a(x, y), cost_b(x, y)
            columns["x"].append(x)
            columns["y"].append(y)
            columns["recommended"].append("a" if ca <= cb else "b")
            columns["a__cost_per_useful_gpu_hour_usd"].append(ca)
            columns["b__cost_per_useful_gpu_hour_usd"].append(cb)
            columns["a__step_time_s"].append(1.0 / x)
            columns["b__step_time_s"].append(1.1 / x)
    return columns, {"name": "t", "axes": {"x.path": "x", "y.path": "y"}, "fabrics": ["a", "b"]}


def test_crossover_is_where_the_cost_gap_changes_sign():
    # a costs 2 + x/100, b costs 3 + y: equal at x = 100 (1 + y); linear x (span 4x): linear interpolation.
    columns, manifest = _table(lambda x, y: 2 + x / 100, lambda x, y: 3 + y, [50, 100, 150, 200], [0, 0.5])
    analysis = analyse(columns, manifest, x="x.path", y="y")
    crossings = {c.y: c for c in analysis.crossovers}
    assert crossings[0].x == pytest.approx(100.0)
    assert crossings[0.5].x == pytest.approx(150.0)
    assert (crossings[0].leader_below, crossings[0].leader_above) == ("a", "b")
    cells = {(c.x, c.y): c.recommended for c in analysis.recommended_map}
    assert cells[(50, 0)] == "a" and cells[(200, 0)] == "b" and cells[(200, 0.5)] == "b"
    assert analysis.gap["a|b"][(200, 0)] == pytest.approx((2 + 2) / 3 - 1)


def test_crossover_on_log_x_when_x_spans_decades():
    # gap g = log10(x) - 2: zero at x = 100, between 10 and 1000 (log interpolation gives exactly 100).
    columns, manifest = _table(lambda x, y: math.log10(x) - 1, lambda x, y: 1.0, [1, 10, 1000], [0])
    [crossing] = analyse(columns, manifest, x="x", y="y").crossovers
    assert crossing.x == pytest.approx(100.0)


def test_report_cli_terminal_json_and_html(cli, tmp_path):
    out = tmp_path / "out"
    assert cli("sweep", "run", write_sweep(tmp_path, SMALL_AXES), "--out", out, "-e", "inprocess", "-q").code == 0
    text = cli("sweep", "report", out)
    assert text.code == 0
    assert "Pareto front, infiniband-ndr" in text.out and "Recommended fabric" in text.out
    document = cli("sweep", "report", out, "--json", "--x", "cluster.gpus", "--y",
                   "catalog_switches_sw_ib_qm9700_price_usd").json()
    assert document["x"] == "cluster_gpus" and document["points"] == 6
    assert sum(document["recommended_counts"].values()) == 6
    for front in document["fronts"].values():
        steps = [p["step_time_s"] for p in front]
        costs = [p["cost_per_useful_gpu_hour_usd"] for p in front]
        assert steps == sorted(steps) and costs == sorted(costs, reverse=True)  # a front trades one for the other
    html = tmp_path / "r.html"
    result = cli("sweep", "report", out, "--html", html)
    assert result.code == 0
    page = html.read_text()
    assert 'id="chart-pareto"' in page and 'id="chart-map"' in page and "chart-gap-0" in page
    assert "cdn.plot.ly" not in page.split("<body>")[1]  # plotly.js inline, nothing loaded from the network


def test_report_html_draws_in_headless_chromium(cli, tmp_path):
    from fabricplan.report.headless import CHROMIUM, render_page

    if not CHROMIUM.exists():
        pytest.skip("Chromium not installed")
    out = tmp_path / "out"
    cli("sweep", "run", write_sweep(tmp_path, SMALL_AXES), "--out", out, "-e", "inprocess", "-q")
    cli("sweep", "report", out, "--html", tmp_path / "r.html")
    page = render_page(tmp_path / "r.html")
    assert not page.errors
    assert page.dom.count('class="main-svg"') >= 3  # plotly drew the charts


def _tied_table():
    """Two fabrics; at x = 1 one point each recommends a and b (a tie), at x = 2 both recommend b."""
    columns = {"point_id": ["0", "1", "2", "3"], "error": [None] * 4, "x": [1, 1, 2, 2],
               "recommended": ["b", "a", "b", "b"]}
    for k, fabric in enumerate(("a", "b")):
        columns[f"{fabric}__cost_per_useful_gpu_hour_usd"] = [3.0 + k, 3.1 + k, 2.9 + k, 3.2 + k]
        columns[f"{fabric}__step_time_s"] = [1.0, 1.1, 0.9, 0.8]
    return columns, {"name": "t", "axes": {"x.path": "x"}, "fabrics": ["a", "b"]}


def test_a_tied_cell_shows_as_a_tie_not_as_one_fabric_at_50_percent():
    from rich.console import Console

    from fabricplan.sweep.render import TIE_COLOUR, map_figure, terminal_renderables

    analysis = analyse(*_tied_table(), x="x")
    cells = {c.x: c for c in analysis.recommended_map}
    assert cells[1].tied == ["a", "b"] and cells[1].share == 0.5
    assert cells[2].tied == [] and cells[2].recommended == "b" and cells[2].share == 1
    console = Console(width=100, record=True)
    for renderable in terminal_renderables(analysis):
        console.print(renderable)
    text = console.export_text()
    assert "tie A/B" in text and "A 50%" not in text
    heatmap = map_figure(analysis).data[0]
    assert list(heatmap.text[0]) == ["tie a/b", "b<br>100%"]
    tie_band = heatmap.colorscale[2 * heatmap.z[0][0]][1]
    assert tie_band == TIE_COLOUR and heatmap.colorscale[2 * heatmap.z[0][1]][1] != TIE_COLOUR


def test_the_pareto_axis_is_cost_per_useful_gpu_hour():
    from fabricplan.sweep.render import pareto_figure

    figure = pareto_figure(analyse(*_tied_table(), x="x"))
    assert figure.layout.yaxis.title.text == "cost per useful GPU-hour [USD]"
    assert "TCO" not in figure.layout.yaxis.title.text
