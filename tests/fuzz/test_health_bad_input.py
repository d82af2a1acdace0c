"""Bad input to `fabricplan health`: malformed exposition text and snapshots, a Prometheus that is
down, answers an error or non-JSON, a time range with no data, bad flags. Each exits 2 with one
line naming the file (and line) or the URL/flag, never a traceback and never "healthy"."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricplan.catalog import load_catalog
from fabricplan.errors import InputError
from fabricplan.ops.readers.prom_text import read_exposition

CATALOG = load_catalog()

GOOD_HEAD = "# time=1796112000 host=h\n"


def _one_line_exit_2(result, *needles: str) -> None:
    assert result.code == 2, (result.out, result.err)
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    assert lines[0].startswith("error: ")
    assert "Traceback" not in result.err and "Healthy" not in result.out
    for needle in needles:
        assert needle in lines[0], lines[0]


EXPOSITION_CASES = {
    "unclosed_brace": ('node_infiniband_link_downed_total{device="mlx5_0",port="1" 3\n', ":2: not Prometheus exposition"),
    "bad_label": ('node_infiniband_link_downed_total{device=mlx5_0} 3\n', ":2: not Prometheus exposition text"),
    "value_not_number": ('node_infiniband_link_downed_total{device="d",port="1"} three\n', "to float: 'three'"),
    "bad_timestamp": ('node_infiniband_link_downed_total{device="d",port="1"} 3 12.5\n', "integer milliseconds"),
    "extra_fields": ('node_infiniband_link_downed_total{device="d",port="1"} 3 1 2\n', "expected 'name{labels}"),
    "negative_counter": ('node_infiniband_link_downed_total{device="d",port="1"} -3\n', "finite and >= 0"),
    "nan_counter": ('node_infiniband_link_downed_total{device="d",port="1"} NaN\n', "finite and >= 0"),
    "bad_name": ('9node 3\n', "invalid metric name"),
    "stray_quote": ('node_infiniband_link_downed_total{device="d\n', ":2: not Prometheus exposition text"),
    "bad_time_header": ("# time=yesterday\n", "epoch seconds or ISO 8601"),
}


@pytest.mark.parametrize("name", sorted(EXPOSITION_CASES))
def test_malformed_exposition_text(cli, tmp_path, name):
    body, needle = EXPOSITION_CASES[name]
    path = tmp_path / "scrape.prom"
    path.write_text(body if name == "bad_time_header" else GOOD_HEAD + body)
    _one_line_exit_2(cli("health", "--prom-text", path), str(path), needle)


def test_exposition_without_time_or_known_metrics(cli, tmp_path):
    path = tmp_path / "a.prom"
    path.write_text('node_infiniband_link_downed_total{device="d",port="1"} 3\n')
    _one_line_exit_2(cli("health", "--prom-text", path), "has no time")
    path.write_text(GOOD_HEAD + "up 1\nprocess_cpu_seconds_total 3\n")
    _one_line_exit_2(cli("health", "--prom-text", path), "no node_infiniband_*")
    path.write_text("")
    _one_line_exit_2(cli("health", "--prom-text", path), "no samples")


SNAPSHOT_CASES = {
    ("--ethtool", "header_without_time"): ("# host=a device=eth0\nNIC statistics:\n     rx_prio3_pause: 1\n", ":1: snapshot header needs time"),
    ("--ethtool", "counter_before_header"): ("NIC statistics:\n     rx_prio3_pause: 1\n", ":2: counter before any"),
    ("--ethtool", "garbage_line"): ("# time=1 host=a\nNIC statistics:\n  rx_prio3_pause = 1\n", ":3: expected '     counter: value'"),
    ("--ethtool", "huge_number"): ("# time=1 host=a\nNIC statistics:\n     rx_prio3_pause: " + "9" * 5000 + "\n", "5,000-digit"),
    ("--ethtool", "bad_rdma"): ("# time=1 host=a rdma=mlx5_0\nNIC statistics:\n", "rdma must be DEVICE/PORT"),
    ("--ethtool", "no_snapshot"): ("\n", "no snapshot"),
    ("--hw-counters", "not_grep_output"): ("# time=1 host=a\nnp_cnp_sent 12\n", ":2: expected '/sys/class/infiniband"),
    ("--perfquery", "line_before_block"): ("# time=1 host=a\nPortXmitWait:....1\n", "before a '# Port counters"),
    ("--perfquery", "not_perfquery"): ("# time=1 host=a\n# Port counters: Lid 3 port 1\nPortXmitWait = 1\n", ":3: expected 'Name:.....value'"),
    ("--rtt", "no_header"): ("1,a,b,3\n", ":1: RTT CSV header lacks"),
    ("--rtt", "bad_rtt"): ("time,src,dst,rtt_us\n1,a,b,fast\n", ":2:rtt_us: rtt_us must be a number"),
    ("--rtt", "short_row"): ("time,src,dst,rtt_us\n1,a\n", ":2: expected 4 columns"),
    ("--rtt", "bad_time"): ("time,src,dst,rtt_us\nlater,a,b,3\n", ":2:time: time must be"),
    ("--rtt", "infinite_rtt"): ("time,src,dst,rtt_us\n1,a,b,inf\n", "finite number"),
    ("--telemetry", "not_npz"): ("hello", "not a fabricplan telemetry .npz"),
}


@pytest.mark.parametrize("key", sorted(SNAPSHOT_CASES))
def test_malformed_snapshots(cli, tmp_path, key):
    flag, _name = key
    body, needle = SNAPSHOT_CASES[key]
    path = tmp_path / "capture.txt"
    path.write_text(body)
    _one_line_exit_2(cli("health", flag, path), str(path), needle)


def test_missing_file(cli, tmp_path):
    _one_line_exit_2(cli("health", "--ethtool", tmp_path / "nope.txt"), "file not found")


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_prometheus_down(cli):
    url = f"http://127.0.0.1:{_closed_port()}"
    _one_line_exit_2(cli("health", "--prometheus", url), "cannot reach Prometheus", url)


class _Fake:
    """A loopback server answering every request with one canned (status, body)."""

    def __init__(self, status: int, body: bytes) -> None:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                self.send_response(fake.status)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(fake.body)

            def log_message(self, *args):
                pass

        self.status, self.body = status, body
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()


@pytest.mark.parametrize(("status", "body", "needle"), [
    (400, json.dumps({"status": "error", "errorType": "bad_data", "error": "invalid parameter"}).encode(),
     "HTTP 400: bad_data: invalid parameter"),
    (200, json.dumps({"status": "error", "errorType": "execution", "error": "query timed out"}).encode(),
     "Prometheus error: execution: query timed out"),
    (200, b"<html>not prometheus</html>", "is not JSON"),
    (503, b"Service Unavailable", "HTTP 503"),
    (200, json.dumps({"status": "success", "data": []}).encode(), "a time range with no data"),
    (200, json.dumps({"status": "success", "data": {"x": 1}}).encode(), "must be a list of metric names"),
])
def test_prometheus_answers_an_error_or_nothing(cli, status, body, needle):
    fake = _Fake(status, body)
    try:
        _one_line_exit_2(cli("health", "--prometheus", fake.url), needle)
    finally:
        fake.close()


@pytest.mark.parametrize(("args", "needle"), [
    (("--prometheus", "ftp://x"), "expected an http(s) URL"),
    (("--prometheus", "http://127.0.0.1:9", "--start", "now", "--end", "now-1h"), "--end must be after --start"),
    (("--prometheus", "http://127.0.0.1:9", "--start", "now-30d", "--step", "1s"), "at most 11,000 points"),
    (("--prometheus", "http://127.0.0.1:9", "--step", "fast"), "--step: query step 'fast' is not like 250ms, 15s"),
    ((), "nothing to check"),
    (("--rtt", "x.csv", "--watch", "5s"), "--watch needs --prometheus"),
    (("--rtt", "x.csv", "--expected-rtt-us", "-1"), "must be > 0 us"),
    (("--rtt", "x.csv", "--expected-rtt-us", "5", "--baseline-window", "1..2"), "give one RTT baseline"),
    (("--rtt", "x.csv", "--fail-on", "sometimes"), "must be one of"),
])
def test_bad_flags(cli, args, needle):
    _one_line_exit_2(cli("health", *args), needle)


def test_bad_health_config_option(cli, tmp_path):
    config = tmp_path / "h.yaml"
    config.write_text("rules:\n  RTT001:\n    quantile: 5\n")
    _one_line_exit_2(cli("health", "--rtt", "x.csv", "--config", config), "quantile must be in 0.5..1")


@settings(max_examples=200)
@given(st.text(alphabet='node_infiniband_link_downed_total{}="dp,1 \n#time=0.5e\\', max_size=200))
def test_exposition_reader_raises_only_input_errors(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("p") / "x.prom"
    path.write_text(text)
    try:
        read_exposition(path, catalog=CATALOG)
    except InputError:
        pass


# --- --load, SONiC `show pfcwd stats`, `rdma statistic show` ---------------------------------------

SPEC = "examples/mid-128-h100-existing-ethernet.yaml"


@pytest.mark.parametrize("value", ["abc", "-0.1", "0", "0%", "1.5", "150%", "nan", "inf", "", "0.6x", "1e-1", "60 %%"])
def test_bad_load_values(cli, value):
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    rtt = root / "tests" / "fixtures" / "health" / "rtt.csv"
    _one_line_exit_2(cli("health", "--rtt", rtt, "--spec", root / SPEC, "--fabric", "roce-v2", "--load", value),
                     "--load")


def test_load_needs_a_spec(cli):
    _one_line_exit_2(cli("health", "--rtt", "x.csv", "--load", "0.5"), "--load needs --spec")


PFCWD_HEAD = ("# time=1796112000 host=sw\n      QUEUE       STATUS    STORM DETECTED/RESTORED    TX OK/DROP    RX OK/DROP\n"
              "-----------  -----------  -------------------------  ------------  ------------\n")
PFCWD_CASES = {
    "short_row": (PFCWD_HEAD + "Ethernet0:3  operational  1/0  100/300\n", "expected 5 columns"),
    "bad_pair": (PFCWD_HEAD + "Ethernet0:3  operational  1-0  100/300  100/300\n", "must be A/B counts"),
    "bad_queue": (PFCWD_HEAD + "Ethernet0  operational  1/0  100/300  100/300\n", "PORT:QUEUE"),
    "unknown_column": ("# time=1796112000 host=sw\n  QUEUE    STATUS    STORMS\n", "'show pfcwd stats' header"),
    "row_before_header": ("# time=1796112000 host=sw\nEthernet0:3  operational  1/0  1/0  1/0\n", "row before"),
    "no_time": ("      QUEUE       STATUS    STORM DETECTED/RESTORED\nEthernet0:3  x  1/0\n", "before any '# time="),
    "empty": ("", "no 'show pfcwd stats' table"),
    "huge_number": (PFCWD_HEAD + "Ethernet0:3  operational  1/0  " + "9" * 30 + "/0  1/0\n", "digit number"),
}


@pytest.mark.parametrize("name", sorted(PFCWD_CASES))
def test_malformed_pfcwd_stats(cli, tmp_path, name):
    body, needle = PFCWD_CASES[name]
    path = tmp_path / "pfcwd.txt"
    path.write_text(body)
    _one_line_exit_2(cli("health", "--pfcwd", path), str(path), needle)


RDMA_CASES = {
    "odd_tokens": ("link mlx5_0/1 np_cnp_sent 3 rp_cnp_handled\n", "has no value"),
    "not_a_number": ("link mlx5_0/1 np_cnp_sent three\n", "must be a whole number"),
    "negative": ("link mlx5_0/1 np_cnp_sent -3\n", "must be a whole number"),
    "not_link": ("dev mlx5_0 np_cnp_sent 3\n", "expected 'link DEV/PORT"),
    "bad_json": ('[{"ifname": "mlx5_0", "port": 1, "np_cnp_sent": 3}\n', "not valid JSON"),
    "json_no_port": ('[{"ifname": "mlx5_0", "np_cnp_sent": 3}]\n', "needs ifname and port"),
    "json_bad_value": ('[{"ifname": "mlx5_0", "port": 1, "np_cnp_sent": "3"}]\n', "np_cnp_sent must be a whole"),
}


@pytest.mark.parametrize("name", sorted(RDMA_CASES))
def test_malformed_rdma_statistic(cli, tmp_path, name):
    body, needle = RDMA_CASES[name]
    path = tmp_path / "rdma.txt"
    path.write_text(GOOD_HEAD + body)
    _one_line_exit_2(cli("health", "--rdma-stat", path), str(path), needle)


def test_rdma_statistic_without_header_or_lines(cli, tmp_path):
    path = tmp_path / "rdma.txt"
    path.write_text("link mlx5_0/1 np_cnp_sent 3\n")
    _one_line_exit_2(cli("health", "--rdma-stat", path), "before any '# time=")
    path.write_text(GOOD_HEAD)
    _one_line_exit_2(cli("health", "--rdma-stat", path), "no 'link DEV/PORT")


@settings(max_examples=150)
@given(st.text(alphabet="link mlx5_0/1 np_cnp_sent 3[]{}\":,QUEUE STATUS Ethernet0:3 N/A-\n#time=5", max_size=200))
def test_switch_telemetry_readers_raise_only_input_errors(tmp_path_factory, text):
    from fabricplan.ops.readers.switch_telemetry import read_pfcwd_stats, read_rdma_statistic

    path = tmp_path_factory.mktemp("s") / "x.txt"
    path.write_text(text)
    for reader in (read_pfcwd_stats, read_rdma_statistic):
        try:
            reader(path)
        except InputError:
            pass
