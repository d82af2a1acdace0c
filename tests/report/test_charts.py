"""What the charts show (their data, not pixels): one colour per fabric in every report, the scale chart."""

from __future__ import annotations

import pytest

from fabricplan.decide.models import TierBoundary
from fabricplan.report import colours
from fabricplan.report.compare_charts import scale_figure
from fabricplan.sweep.adapter import fabric_column
from fabricplan.sweep.analysis import analyse
from fabricplan.sweep.render import map_figure, pareto_figure

from .conftest import make_report


def _line_colours(figure) -> dict[str, str]:
    """Legend group (the fabric) -> the colour of its line."""
    return {trace.legendgroup: trace.line.color for trace in figure.data
            if trace.legendgroup and trace.mode and "markers" in trace.mode}


def _sweep(fabrics: list[str], recommended: str):
    columns = {"point_id": ["0", "1"], "error": [None, None], "x": [1, 2], "recommended": [recommended] * 2}
    for k, fabric in enumerate(fabrics):
        columns[fabric_column(fabric, "cost_per_useful_gpu_hour_usd")] = [3.0 + k, 3.5 + k]
        columns[fabric_column(fabric, "step_time_s")] = [1.0 + k, 0.9 + k]
    return analyse(columns, {"name": "t", "axes": {"x.path": "x"}, "fabrics": fabrics}, x="x")


def test_the_same_fabric_has_the_same_colour_in_reports_with_different_rankings():
    first = make_report()
    second = make_report()
    second.fabrics = list(reversed(second.fabrics))  # another ranking, another order
    second.recommendation.ranking = list(reversed(second.recommendation.ranking))
    in_first, in_second = _line_colours(scale_figure(first)), _line_colours(scale_figure(second))
    assert in_first == in_second and len(set(in_first.values())) == 3
    # The sweep report's charts use the same colours, whatever order its manifest lists the fabrics in.
    fabrics = [f.fabric for f in first.fabrics]
    for order in (fabrics, fabrics[::-1]):
        pareto = pareto_figure(_sweep(order, "roce-v2"))
        fronts = {t.legendgroup: t.line.color for t in pareto.data if "Pareto front" in t.name}
        assert fronts == in_first
        points = {t.legendgroup: t.marker.color for t in pareto.data if "all points" in t.name}
        assert points == in_first
        heatmap = map_figure(_sweep(order, "roce-v2")).data[0]
        index = order.index("roce-v2")
        (low, low_colour), (high, high_colour) = heatmap.colorscale[2 * index:2 * index + 2]  # a band per fabric
        bands = len(order) + 1  # a band per fabric and one for a tie
        assert (low, high) == pytest.approx((index / bands, (index + 1) / bands))
        assert low_colour == high_colour == in_first["roce-v2"]


def test_an_unknown_fabric_id_gets_a_stable_colour_from_the_palette():
    colour = colours.fabric_colour("my-own-fabric")
    assert colour in colours.PALETTE and colour == colours.fabric_colour("my-own-fabric")
    assert colours.fabric_colour("roce-v2") == colours.KNOWN["roce-v2"]
    assert len(set(colours.KNOWN.values())) == len(colours.KNOWN)
    assert not set(colours.KNOWN.values()) & set(colours.PALETTE)


def test_the_scale_chart_is_relative_to_the_cheapest_fabric_with_bands_and_tier_boundaries():
    report = make_report()
    for point in report.scale_curve:  # Monte Carlo bands: 0-1 % above the cheapest of the draw
        point.excess_band = {f: [0.0, 0.01] for f in point.cost_per_useful_gpu_hour_usd}
    report.tier_boundaries = [TierBoundary(fabric="roce-v2", switch="x", radix=64, tiers_above=3, gpus=2048)]
    figure = scale_figure(report)
    assert figure.layout.xaxis.type == "log" and figure.layout.yaxis.type == "linear"
    lines = {t.legendgroup: t for t in figure.data if t.mode == "lines+markers"}
    for index, point in enumerate(sorted(report.scale_curve, key=lambda p: p.gpus)):
        best = min(point.cost_per_useful_gpu_hour_usd.values())
        for fabric, cost in point.cost_per_useful_gpu_hour_usd.items():
            assert lines[fabric].y[index] == pytest.approx(100 * (cost / best - 1))
            assert lines[fabric].customdata[index] == pytest.approx(cost)  # hover keeps the dollars
        assert min(lines[f].y[index] for f in lines) == pytest.approx(0.0)
    bands = [t for t in figure.data if t.fill == "toself"]
    assert sorted(t.legendgroup for t in bands) == sorted(lines)
    for band in bands:  # upper edge out, lower edge back, in percent
        half = len(band.y) // 2
        assert list(band.y[:half]) == pytest.approx([1.0] * half) and list(band.y[half:]) == pytest.approx([0.0] * half)
    # TCP is far dearer at scale: the y range shows RoCE and InfiniBand readably and names TCP above it.
    low, high = figure.layout.yaxis.range
    close = [v for f in ("roce-v2", "infiniband-ndr") for v in lines[f].y]
    assert low <= min(close) and max(close) <= high < max(lines["ethernet-tcp"].y)
    assert "ethernet-tcp" in figure.layout.title.text and "above the range" in figure.layout.title.text
    assert any("tier boundary at 2,048 GPUs" in (t.name or "") for t in figure.data)


def test_the_scale_chart_without_draws_has_no_bands():
    figure = scale_figure(make_report())
    assert not [t for t in figure.data if t.fill == "toself"]
    assert "Monte Carlo" not in figure.layout.title.text
