"""`health --html`'s charts (their data): units on the axes, the checks' thresholds as lines, no empty charts."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from fabricplan.catalog import load_catalog
from fabricplan.ops.health import evaluate
from fabricplan.ops.health.checks import pfc_pause, pfc_storm
from fabricplan.ops.readers.telemetry import read_input
from fabricplan.report.health_html import AXIS_TITLES, _series_index, finding_figure, health_html, unit_of

CATALOG = load_catalog()
FIX = Path(__file__).resolve().parents[1] / "fixtures" / "health"


@pytest.fixture()
def result():
    telemetry = read_input("ethtool", FIX / "ethtool_storm.txt", catalog=CATALOG)
    telemetry.extend(read_input("hw_counters", FIX / "hw_counters_node01.txt", catalog=CATALOG))
    return evaluate(telemetry, catalog=CATALOG)


def _findings(result):
    return {f.rule_id: f for _entity, items in result.ranked() for f in items if f.series}


def test_threshold_lines_come_from_the_checks_slos_in_the_charted_unit(result):
    findings = _findings(result)
    index = _series_index(result)
    pause = finding_figure(findings["PFC001"], index)
    limits = {trace.yaxis: trace for trace in pause.data if trace.name.startswith("limit:")}
    assert set(limits) == {"y", "y2"}  # paused time and pause frames: a panel each, a limit in each
    defaults = pfc_pause.defaults(CATALOG)
    assert list(limits["y"].y) == pytest.approx([defaults["pause_fraction_max"] * 100] * 2)  # % of the time
    assert list(limits["y2"].y) == pytest.approx([defaults["pause_rate_max_per_s"]] * 2)
    paused = next(t for t in pause.data if t.yaxis == "y" and not t.name.startswith("limit:"))
    assert 0 <= min(v for v in paused.y if v is not None) and max(v for v in paused.y if v is not None) <= 100.5
    assert pause.layout.yaxis.title.text == AXIS_TITLES["%"] and pause.layout.yaxis2.title.text == AXIS_TITLES["/s"]
    assert pause.layout.xaxis2.title.text == "time (UTC)"
    storm = finding_figure(findings["PFC002"], index)
    [line] = [trace for trace in storm.data if trace.name.startswith("limit:")]
    assert list(line.y) == pytest.approx([pfc_storm.defaults(CATALOG)["storm_pause_fraction"] * 100] * 2)


def test_every_panel_has_its_unit_and_one_unit(result):
    index = _series_index(result)
    for finding in _findings(result).values():
        figure = finding_figure(finding, index)
        units = {unit_of(index[key]) for key in finding.series}
        axes = [name for name in figure.layout if name.startswith("yaxis")]
        assert len(axes) == len(units)
        assert {figure.layout[axis].title.text for axis in axes} == {AXIS_TITLES[u] for u in units}


def test_a_finding_with_nothing_to_draw_gets_a_note_not_an_empty_chart(result):
    findings = _findings(result)
    index = _series_index(result)
    full = health_html(result)
    some = index[findings["CC001"].series[0]]
    single = replace(some, counter="one_reading", t_s=some.t_s[:1], values=some.values[:1])
    result.telemetry.series.append(single)
    findings["CC001"].series = [(single.entity, single.label)]
    assert finding_figure(findings["CC001"], _series_index(result)) is None
    page = health_html(result)
    assert "no chart: its counters have no value to draw" in page
    assert page.count("class=\"plotly-graph-div\"") == full.count("class=\"plotly-graph-div\"") - 1
