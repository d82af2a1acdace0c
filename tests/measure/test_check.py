"""check-measured: a 200G-NIC log against a 400G design ranks the NIC speed first; high small-message
latency with fine bandwidth points at latency causes; exit codes, --json, --html."""

from __future__ import annotations

from dataclasses import replace

import pytest

from fabricplan.catalog import load_catalog
from fabricplan.measure.check import check_measured
from fabricplan.measure.read import parse_log
from fabricplan.measure.synth import model_log
from fabricplan.measure.system import infer_system
from fabricplan.spec import load_spec
from project_paths import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "measure"
SPEC = FIXTURES / "cluster_roce_2x8_h100.yaml"
BW = "fabrics.roce-v2.effective_bandwidth_gbytes_per_s"
LAT = "fabrics.roce-v2.host_stack_latency_us"


@pytest.fixture(scope="module")
def design():
    catalog = load_catalog()
    spec = load_spec(SPEC, catalog)
    system = replace(infer_system([], catalog, spec=spec), collnet=True)
    return catalog, system


def _log(design, values, name, debug=()):
    catalog, system = design
    return parse_log(model_log(system, catalog, values=values, noise=0.03, seed=7, debug_lines=debug), name)


def test_200g_nics_on_a_400g_design_rank_nic_speed_first(design):
    catalog, system = design
    half = catalog.fabric("roce-v2").effective_bandwidth_gbytes_per_s / 2  # 200G NICs: half the per-NIC bandwidth
    result = check_measured([_log(design, {BW: half}, "200g.log")], catalog, system)
    assert not result.passed
    assert result.causes[0].key == "nic_speed" and "200G NICs" in result.causes[0].detail
    assert result.causes[0].explained > 0.8
    ratio = result.verdicts[0].bandwidth_ratio  # not 50 %: at 2 nodes NVLink carries part of the traffic
    assert 0.5 < ratio < 0.9
    assert result.summary.startswith(f"all-reduce busbw at 8 GiB is {ratio:.0%} of what this design should give")
    assert "look at: a NIC below speed" in result.summary


def test_slow_small_messages_with_fine_bandwidth_point_at_latency(design):
    catalog, system = design
    slow = catalog.fabric("roce-v2").host_stack_latency_us + 15.0
    result = check_measured([_log(design, {LAT: slow}, "lat.log")], catalog, system)
    assert not result.passed
    assert result.causes[0].kind == "latency" and result.causes[0].key == "host_latency"
    assert "+15 us" in result.causes[0].detail
    assert "time at 8 B is" in result.summary and "bandwidth is fine" in result.summary
    verdict = result.verdicts[0]
    assert verdict.bandwidth_ok and not verdict.latency_ok


def test_gdr_lines_in_the_log_weaken_the_no_gdr_cause(design):
    catalog, system = design
    gdr = ("node-000:10000:10100 [0] NCCL INFO Channel 00/0 : 7[7] -> 8[0] [send] via NET/IB/0/GDRDMA",)
    plain = ("node-000:10000:10100 [0] NCCL INFO Channel 00/0 : 7[7] -> 8[0] [send] via NET/IB/0",)
    values = {BW: catalog.fabric("roce-v2").effective_bandwidth_gbytes_per_s / 2}
    with_gdr = {c.key: c for c in check_measured([_log(design, values, "a.log", gdr)], catalog, system).causes}
    without = {c.key: c for c in check_measured([_log(design, values, "b.log", plain)], catalog, system).causes}
    assert with_gdr["no_gdr"].weight < 1 < without["no_gdr"].weight
    assert "GDRDMA" in with_gdr["no_gdr"].evidence


def test_healthy_log_passes(design):
    catalog, system = design
    result = check_measured([_log(design, {}, "ok.log")], catalog, system)
    assert result.passed and result.summary.startswith("within the design")


def test_cli_exit_codes_json_and_html(cli, design, tmp_path):
    catalog, system = design
    half = catalog.fabric("roce-v2").effective_bandwidth_gbytes_per_s / 2
    bad = tmp_path / "all_reduce_perf_200g.log"
    bad.write_text(model_log(system, catalog, values={BW: half}, noise=0.02, seed=1))
    good = tmp_path / "all_reduce_perf_ok.log"
    good.write_text(model_log(system, catalog, noise=0.02, seed=1))
    page = tmp_path / "chart.html"
    result = cli("check-measured", bad, "--spec", SPEC, "--json", "--html", page)
    assert result.code == 1
    doc = result.json()
    assert doc["passed"] is False and doc["causes"][0]["key"] == "nic_speed"
    assert len(doc["points"]) == 31
    html = page.read_text()
    assert "chart-measured" in html and "plotly" in html.lower() and "NIC below speed" in html
    assert cli("check-measured", good, "--spec", SPEC).code == 0
    # the threshold flag gates: a threshold below the measured share passes
    ratio = doc["verdicts"][0]["busbw_ratio"]
    assert cli("check-measured", bad, "--spec", SPEC, "--threshold", f"{ratio - 0.05:.2f}").code == 0
    text = cli("check-measured", bad, "--spec", SPEC)
    assert text.code == 1 and "FAIL: all-reduce busbw at 8 GiB" in text.out.replace("\n", " ")


def test_perftest_latency_is_evidence_for_the_host_latency_cause(design):
    from fabricplan.measure.write import perftest_text

    catalog, system = design
    slow = catalog.fabric("roce-v2").host_stack_latency_us + 15.0
    log = _log(design, {LAT: slow}, "lat.log")
    fine = parse_log(perftest_text("ib_write_lat", [(2, 1000, 0.9, 3.0, 0.95, 0.96, 0.04, 1.0, 3.0)]), "fine.log")
    bad = parse_log(perftest_text("ib_write_lat", [(2, 1000, 15.9, 30.0, 16.2, 16.3, 0.4, 17.0, 30.0)]), "bad.log")
    as_designed = {c.key: c for c in check_measured([log, fine], catalog, system).causes}["host_latency"]
    confirmed = {c.key: c for c in check_measured([log, bad], catalog, system).causes}["host_latency"]
    assert "as designed" in as_designed.evidence and as_designed.weight == 1
    assert "16.20 us one-way" in confirmed.evidence and confirmed.weight > 1


def test_published_hdr_log_on_an_ndr_design_blames_sharp_then_the_nic_speed():
    """The Azure NDm A100 v4 rows (8 x HDR 200G, no SHARP plugin) checked against a 400G NDR design with SHARP:
    the log's '0 collnet channels' and the model put SHARP first, then 200G NICs on top of it."""
    catalog = load_catalog()
    spec = load_spec(FIXTURES / "cluster_ndr_2x8_a100.yaml", catalog)
    log = parse_log((FIXTURES / "all_reduce_debug_2x8_a100_hdr.log").read_text(), "azure.log")
    system = replace(infer_system([log], catalog, spec=spec, cpu_vendor="amd"), collnet=True)
    result = check_measured([log], catalog, system)
    first, second = [c for c in result.causes if c.applicable][:2]
    assert (first.key, second.key) == ("sharp", "nic_speed")
    assert "200G NICs" in second.detail and second.explained > 0.05
    assert "look at: SHARP (" in result.summary and "then a NIC below speed" in result.summary


def test_the_html_shows_the_terminal_s_causes_a_consistent_legend_and_the_reports_stylesheet(design):
    from markupsafe import escape
    from rich.console import Console

    from fabricplan.report.measure_tables import cause_rows, check_figure, check_html, check_report
    from fabricplan.report.pages import stylesheet

    catalog, system = design
    half = catalog.fabric("roce-v2").effective_bandwidth_gbytes_per_s / 2
    two = [_log(design, {BW: half}, "200g.log"),
           parse_log(model_log(system, catalog, operation="all_gather", values={BW: half}, noise=0.03, seed=3),
                     "all_gather.log")]
    result = check_measured(two, catalog, system)
    console = Console(width=200, record=True)
    console.print(check_report(result))
    terminal = console.export_text()
    rows = cause_rows(result)
    assert len(rows) > 1 and all(row[1][:40] in terminal for row in rows)  # (long titles wrap)
    page = check_html(result)
    assert f"<style>{stylesheet()}</style>" in page
    for row in rows:  # every cause the terminal ranks, in the same order, not only the big ones
        assert f"<td>{escape(row[1])}</td>" in page
    positions = [page.index(f"<td>{escape(row[1])}</td>") for row in rows]
    assert positions == sorted(positions)
    figure = check_figure(result)
    by_group: dict[str, set] = {}
    for trace in figure.data:
        colour = trace.marker.color if trace.mode == "markers" else trace.line.color
        by_group.setdefault(trace.legendgroup, set()).add((colour, trace.mode))
    assert all(len(styles) == 1 for styles in by_group.values())  # a legend entry looks the same in both panels
    panels = {(trace.legendgroup, trace.xaxis) for trace in figure.data}
    assert panels == {(group, axis) for group in by_group for axis in ("x", "x2")}  # and toggles both
    shown = [trace.legendgroup for trace in figure.data if trace.showlegend is not False]
    assert sorted(shown) == sorted(by_group)  # one legend entry per curve
    assert len({colour for styles in by_group.values() for colour, _ in styles}) == len(by_group) // 2
