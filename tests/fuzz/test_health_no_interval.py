"""`fabricplan health` when nothing was measured (issue 31): one snapshot per port (no interval, no
rate), a Prometheus whose every rate is NaN, +Inf or negative, timestamps running backwards, and
saved .npz telemetry with NaN, negative or beyond-64-bit readings. Never "healthy": exit 2 with one
line saying it could not judge (the CLI's convention when no check could be evaluated), naming the
source; a port with only single readings beside measured ones is "not measured", never "ok"."""

from __future__ import annotations

import json
import urllib.parse

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples
from loopback import serve

from fabricplan.catalog import load_catalog
from fabricplan.errors import InputError
from fabricplan.ops.readers.prometheus_api import read_prometheus
from fabricplan.ops.telemetry import Series, Telemetry, save_npz
from project_paths import ROOT

CATALOG = load_catalog()
FIX = ROOT / "tests" / "fixtures" / "health"
ETHTOOL_COUNTERS = ("rx_prio3_pause", "rx_prio3_pause_duration", "tx_prio3_pause", "rx_discards_phy",
                    "rx_out_of_buffer", "link_down_events_phy", "tx_vport_rdma_unicast_packets")


def _could_not_judge(result, *needles: str) -> None:
    assert result.code == 2, (result.out, result.err)
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.err
    assert "Traceback" not in result.err and "Healthy" not in result.out
    for needle in needles:
        assert needle in lines[0], lines[0]


def _snapshot(host: str, t: int, values: dict[str, int]) -> str:
    body = "".join(f"     {name}: {value}\n" for name, value in values.items())
    return f"# time={t} host={host} device=eth2\nNIC statistics:\n{body}"


def test_one_snapshot_per_port_is_not_healthy(cli, tmp_path):
    # was: "Healthy on what was measured" with exit 0 (the checks read a NaN rate as a 0 % pause)
    one = tmp_path / "one.txt"
    one.write_text(_snapshot("node02", 1796112000, dict.fromkeys(ETHTOOL_COUNTERS, 1000)))
    _could_not_judge(cli("health", "--ethtool", one), "could not judge", "single reading", str(one))


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ports=st.lists(st.tuples(st.integers(0, 2**63), st.sets(st.sampled_from(ETHTOOL_COUNTERS), min_size=1),
                                st.integers(1_700_000_000, 1_900_000_000)), min_size=1, max_size=4),
       format_=st.sampled_from(["ethtool", "prom"]))
def test_health_never_reports_healthy_on_fewer_than_two_readings_per_counter(cli, tmp_path_factory, ports, format_):
    path = tmp_path_factory.mktemp("once") / f"capture.{'txt' if format_ == 'ethtool' else 'prom'}"
    if format_ == "ethtool":
        path.write_text("".join(_snapshot(f"node{i}", t, dict.fromkeys(names, value))
                                for i, (value, names, t) in enumerate(ports)))
        result = cli("health", "--ethtool", path, "--fail-on", "never")
    else:
        lines = []
        for i, (value, _names, t) in enumerate(ports):
            lines += [f"# time={t} host=node{i}",
                      f'node_ethtool_received_prio3_pause_duration{{device="eth{i}"}} {value}',
                      f'node_ethtool_received_prio3_pause{{device="eth{i}"}} {value}']
        path.write_text("\n".join(lines) + "\n")
        result = cli("health", "--prom-text", path, "--fail-on", "never")
    _could_not_judge(result, "could not judge")


def test_a_port_read_once_beside_measured_ports_is_not_measured(cli, tmp_path):
    once = tmp_path / "once.txt"
    once.write_text(_snapshot("node09", 1796112000, dict.fromkeys(ETHTOOL_COUNTERS, 5)))
    result = cli("health", "--ethtool", FIX / "ethtool_healthy.txt", "--ethtool", once, "--json")
    assert result.code == 0, result.err
    doc = result.json()
    ports = {p["entity"]: p for p in doc["ports"]}
    assert ports["node09:eth2"]["status"] == "not measured" and ports["node09:eth2"]["values"] == {}
    assert ports["node02:eth2"]["status"] == "ok"
    assert doc["summary"]["ports_not_measured"] == 1
    assert any("single reading" in note and str(once) in note for note in doc["notes"])
    text = cli("health", "--ethtool", FIX / "ethtool_healthy.txt", "--ethtool", once, "--html", tmp_path / "h.html").out
    assert "1 more port not measured" in " ".join(text.split())
    page = (tmp_path / "h.html").read_text()
    assert "1 more ports not measured" in page and "single reading" in page


def test_timestamps_running_backwards_are_refused_naming_the_line(cli, tmp_path):
    path = tmp_path / "back.txt"
    path.write_text(_snapshot("node02", 1796112030, dict.fromkeys(ETHTOOL_COUNTERS, 2000))
                    + _snapshot("node02", 1796112000, dict.fromkeys(ETHTOOL_COUNTERS, 1000)))
    _could_not_judge(cli("health", "--ethtool", path), f"{path}:10", "timestamps run backwards")


@pytest.mark.parametrize("reading, accepted", [("18446744073709551615", True), ("18446744073709551616", False),
                                               ("99999999999999999999", False)])
def test_text_counters_above_2_64_minus_1_are_refused(cli, tmp_path, reading, accepted):
    path = tmp_path / "big.txt"
    path.write_text(_snapshot("n", 1796112000, {"rx_discards_phy": reading})
                    + _snapshot("n", 1796112015, {"rx_discards_phy": reading}))
    result = cli("health", "--ethtool", path, "--fail-on", "never")
    if accepted:
        assert result.code == 0, result.err
    else:
        _could_not_judge(result, f"{path}:3", "2^64 - 1")


def _npz(tmp_path, values, *, kind="counter", from_rate=False):
    t = 1796112000.0 + 15.0 * np.arange(len(values))
    series = Series("rx_discards_phy", "node01", "eth2", "", None, t, np.array(values, dtype=float), "capture.txt",
                    kind=kind, from_rate=from_rate)
    path = tmp_path / "saved.npz"
    save_npz(Telemetry([series], ["capture.txt"]), path)
    return path


@pytest.mark.parametrize("values, needle", [
    ([0, float("nan"), 10], "reading 1 is nan"), ([0, -5, 10], "reading 1 is -5"),
    ([0, float("inf"), 10], "reading 1 is inf"), ([0, 1e30, 2e30], "2^64 - 1")])
def test_saved_telemetry_with_impossible_readings_is_refused(cli, tmp_path, values, needle):
    path = _npz(tmp_path, values)
    _could_not_judge(cli("health", "--telemetry", path), str(path), "rx_discards_phy of node01:eth2", needle)


def test_saved_prometheus_rates_may_hold_an_unknown_interval(cli, tmp_path):
    # integrated from rates: a NaN is an unknown rate (not a corrupt file)
    path = _npz(tmp_path, [0, float("nan"), 10, 20], from_rate=True)
    assert cli("health", "--telemetry", path, "--fail-on", "never").code == 0


class _FakeClient:
    """The PrometheusClient calls read_prometheus makes, answering one range of rates per metric."""

    def __init__(self, rates: list[str], times: list[float] | None = None) -> None:
        self.rates = rates
        self.times = times or [1000.0 + 15 * i for i in range(len(rates))]

    def metric_names(self, start_s, end_s):
        return ["node_ethtool_received_prio3_pause_duration"]

    def query_range(self, promql, start_s, end_s, step_s):
        return [{"metric": {"instance": "node01:9100", "device": "eth0"},
                 "values": [[t, r] for t, r in zip(self.times, self.rates, strict=True)]}]

    def query(self, promql, at_s):
        return []


@pytest.mark.parametrize("rates", [["NaN"] * 4, ["+Inf"] * 4, ["-3", "-1", "-2", "-5"], ["1", "NaN", "+Inf", "-1"]])
def test_prometheus_with_no_usable_rate_could_not_judge(rates):
    with pytest.raises(InputError, match="could not judge") as caught:
        read_prometheus("http://prom:9090", 1000.0, 1060.0, 15.0, CATALOG, client=_FakeClient(rates))
    assert caught.value.location == "http://prom:9090" and "no usable rate on node01:eth0" in str(caught.value)


def test_prometheus_unknown_rates_stay_unknown_and_are_noted():
    read = read_prometheus("http://prom:9090", 1000.0, 1090.0, 15.0, CATALOG,
                           client=_FakeClient(["0", "10", "NaN", "20", "30", "-4", "40"]))
    (series,) = read.series
    increases = np.diff(series.values)
    # an unknown rate leaves the intervals beside it unknown (never zero), and no more: it used to
    # make every later interval unknown (a cumulative sum through a NaN)
    assert increases[0] == pytest.approx(150) and increases[3] == pytest.approx(450)
    assert np.isnan(increases[[1, 2, 4, 5]]).all()
    assert any("2 rates NaN, infinite or negative" in note for note in read.notes)


def test_prometheus_timestamps_running_backwards_are_set_aside():
    with pytest.raises(InputError, match="timestamps run backwards"):
        read_prometheus("http://prom:9090", 1000.0, 1060.0, 15.0, CATALOG,
                        client=_FakeClient(["1", "2", "3"], times=[1030.0, 1015.0, 1000.0]))


def test_cli_against_a_prometheus_of_nan_rates_exits_2(cli):
    names = ["node_ethtool_received_prio3_pause_duration"]

    def body_of(request_path):
        path = urllib.parse.urlparse(request_path).path
        if path.endswith("/label/__name__/values"):
            data = names
        elif path.endswith("/query_range"):
            data = {"resultType": "matrix", "result": [{"metric": {"instance": "h:9100", "device": "eth0"},
                                                        "values": [[1000 + 15 * i, "NaN"] for i in range(5)]}]}
        else:
            data = {"resultType": "vector", "result": []}
        return json.dumps({"status": "success", "data": data}).encode(), "application/json"

    server, url = serve(body_of)
    try:
        _could_not_judge(cli("health", "--prometheus", url), "could not judge", url, "NaN, infinite or negative")
    finally:
        server.shutdown()


def test_saved_prometheus_rates_all_unknown_could_not_judge(cli, tmp_path):
    # a saved series integrated from rates, every rate unknown: two readings, but no rate to judge
    path = _npz(tmp_path, [0, float("nan"), float("nan")], from_rate=True)
    _could_not_judge(cli("health", "--telemetry", path), "could not judge", "no known rate")
