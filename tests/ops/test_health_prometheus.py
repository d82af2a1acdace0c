"""`fabricplan health --prometheus` against a REAL Prometheus server (Debian's `prometheus` package).

The test runs a small exporter on loopback (an http.server thread) whose counters move with the
wall clock: port `eth1` is paused 100 % for 12 s (a PFC storm), RDMA port `mlx5_1/1` has a
retransmit burst of 500 packet-sequence errors/s over 1,000,000 packets/s for 12 s (0.05 %), and
two more ports stay quiet. A Prometheus process (temporary data dir and config, 1 s scrape
interval, 127.0.0.1 on a free port) scrapes it; health must find exactly those two ports, with
rates within 10 %.

Without the prometheus binary the test is skipped with the reason, except in CI (CI=true), where
it fails: .ci/run installs the package.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import urllib.request

import pytest
from loopback import serve

PROMETHEUS = shutil.which("prometheus")
STORM_S = 12.0
PACKETS_PER_S = 1_000_000.0
RETX_BURST_PER_S = 500.0
QUIET_PAUSE_US_PER_S = 1_000.0  # 0.1 % paused


def _need_prometheus() -> None:
    if PROMETHEUS is None:
        if os.environ.get("CI") == "true":
            pytest.fail("prometheus binary not found in CI: .ci/run must install Debian's prometheus package")
        pytest.skip("prometheus binary not installed (apt-get install -y prometheus); the real-server test needs it")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Schedule:
    """Counters as functions of the wall clock: a base slope, plus an extra slope inside [start, end)."""

    def __init__(self) -> None:
        self.origin = time.time()
        self.storm: tuple[float, float] | None = None
        self.burst: tuple[float, float] | None = None

    @staticmethod
    def _inside(window: tuple[float, float] | None, t: float) -> float:
        if window is None:
            return 0.0
        return max(0.0, min(t, window[1]) - window[0]) if t > window[0] else 0.0

    def metrics(self, t: float) -> str:
        up = t - self.origin
        storm = self._inside(self.storm, t)
        burst = self._inside(self.burst, t)
        # eth1: paused 0.1 % normally, 100 % during the storm (the extra 999,000 us/s makes 1,000,000).
        eth1_us = QUIET_PAUSE_US_PER_S * up + (1e6 - QUIET_PAUSE_US_PER_S) * storm
        lines = [
            "# TYPE node_ethtool_received_prio3_pause_duration untyped",
            f'node_ethtool_received_prio3_pause_duration{{device="eth0"}} {int(QUIET_PAUSE_US_PER_S * up)}',
            f'node_ethtool_received_prio3_pause_duration{{device="eth1"}} {int(eth1_us)}',
            f'node_ethtool_received_prio3_pause{{device="eth0"}} {int(10 * up)}',
            f'node_ethtool_received_prio3_pause{{device="eth1"}} {int(10 * up + 300 * storm)}',
            "# TYPE node_infiniband_port_packets_transmitted_total counter",
        ]
        for dev in ("mlx5_0", "mlx5_1"):
            retx = 1.0 * up + (RETX_BURST_PER_S * burst if dev == "mlx5_1" else 0.0)
            lines += [
                f'node_infiniband_port_packets_transmitted_total{{device="{dev}",port="1"}} {int(PACKETS_PER_S * up)}',
                f'node_infiniband_packet_sequence_errors_total{{device="{dev}",port="1"}} {int(retx)}',
                f'node_infiniband_local_ack_timeout_errors_total{{device="{dev}",port="1"}} 0',
                f'node_infiniband_link_downed_total{{device="{dev}",port="1"}} 0',
                f'node_infiniband_symbol_error_total{{device="{dev}",port="1"}} 0',
            ]
        # Each sample carries the time its value was computed (Prometheus honours exposition
        # timestamps), so a scrape delayed by a loaded machine does not bend the rates.
        stamp = f" {int(t * 1000)}"
        return "\n".join(line if line.startswith("#") else line + stamp for line in lines) + "\n"


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    """(prometheus URL, schedule, storm window, burst window) after the storm and the burst."""
    _need_prometheus()
    schedule = Schedule()

    exporter, _ = serve(lambda path: (schedule.metrics(round(time.time(), 3)).encode(), "text/plain; version=0.0.4"))
    folder = tmp_path_factory.mktemp("prometheus")
    config = folder / "prometheus.yml"
    config.write_text("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n"
                      "scrape_configs:\n  - job_name: fixture\n    static_configs:\n"
                      f"      - targets: ['127.0.0.1:{exporter.server_address[1]}']\n")
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    process = subprocess.Popen([PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={folder / 'data'}",
                                f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/-/ready", timeout=1) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if process.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"prometheus did not start: {process.stderr.read().decode()[-500:]}")
            time.sleep(0.2)
        ready = time.time()
        schedule.storm = (ready + 6.0, ready + 6.0 + STORM_S)
        schedule.burst = (ready + 8.0, ready + 8.0 + STORM_S)
        time.sleep(max(0.0, schedule.burst[1] + 4.0 - time.time()))
        yield url, schedule, ready
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
        exporter.shutdown()


def _close(value: float, expected: float, tolerance: float = 0.10) -> bool:
    return abs(value - expected) <= tolerance * abs(expected)


def test_real_prometheus_finds_exactly_the_storm_and_the_retransmit_burst(cli, live):
    url, schedule, ready = live
    result = cli("health", "--prometheus", url, "--start", f"{ready:.3f}", "--end", f"{time.time():.3f}",
                 "--step", "1s", "--json", "--fail-on", "never")
    assert result.code == 0, result.err
    doc = result.json()
    by_entity: dict[str, set[str]] = {}
    for f in doc["findings"]:
        by_entity.setdefault(f["entity"], set()).add(f["rule"])
    assert by_entity == {"127.0.0.1:eth1": {"PFC001", "PFC002"}, "127.0.0.1:mlx5_1/1": {"RETX001"}}, doc["findings"]
    storm = next(f for f in doc["findings"] if f["rule"] == "PFC002")
    assert storm["evidence"]["priority"] == 3
    assert _close(storm["evidence"]["paused_fraction_in_storm"], 1.0)
    # the 4 s rate window sees the whole storm only after its first 4 s: a run of at least 12 - 4 s
    assert STORM_S - 5 <= storm["evidence"]["storm_seconds"] <= STORM_S + 5
    pause = next(f for f in doc["findings"] if f["rule"] == "PFC001")
    assert _close(pause["evidence"]["paused_fraction_peak"], 1.0)
    retx = next(f for f in doc["findings"] if f["rule"] == "RETX001")["evidence"]
    assert _close(retx["retransmits_per_s_peak"], RETX_BURST_PER_S + 1.0)
    assert _close(retx["packets_sent_per_s_at_peak"], PACKETS_PER_S)
    assert _close(retx["retransmit_ratio_peak"], (RETX_BURST_PER_S + 1.0) / PACKETS_PER_S)
    # the quiet ports were measured (not "not available") and are below their limits
    ports = {p["entity"]: p for p in doc["ports"]}
    assert ports["127.0.0.1:eth0"]["status"] == "ok"
    assert _close(ports["127.0.0.1:eth0"]["values"]["paused_fraction_peak"], QUIET_PAUSE_US_PER_S / 1e6, 0.5)
    assert ports["127.0.0.1:mlx5_0/1"]["status"] == "ok"
    assert _close(ports["127.0.0.1:mlx5_0/1"]["values"]["retransmit_ratio_peak"], 1.0 / PACKETS_PER_S, 0.5)


def test_real_prometheus_text_output_and_exit_code(cli, live):
    url, _schedule, ready = live
    result = cli("health", "--prometheus", url, "--start", f"{ready:.3f}", "--end", f"{time.time():.3f}",
                 "--step", "1s")
    assert result.code == 1  # PFC002 is an error, the default --fail-on
    assert result.out.index("127.0.0.1:eth1") < result.out.index("127.0.0.1:mlx5_1/1")  # error before warning


def test_watch_prints_the_findings_then_no_change(cli, live):
    url, _schedule, _ready = live
    result = cli("health", "--prometheus", url, "--start", "now-40s", "--step", "1s", "--watch", "1s",
                 "--iterations", "2")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    added = [line for line in lines if " + " in line]
    assert any("PFC002" in line and "127.0.0.1:eth1" in line for line in added), lines
    assert any("RETX001" in line and "127.0.0.1:mlx5_1/1" in line for line in added), lines
    assert "no change" in lines[-1] or " - " in lines[-1] or " + " in lines[-1]


def test_a_range_with_no_data_is_exit_2_not_healthy(cli, live):
    url, _schedule, ready = live
    result = cli("health", "--prometheus", url, "--start", f"{ready - 7200:.0f}", "--end", f"{ready - 3600:.0f}",
                 "--step", "15s")
    assert result.code == 2
    assert len(result.err.strip().splitlines()) == 1 and "no data" in result.err
    assert "Traceback" not in result.err


def test_without_the_binary_ci_fails_and_elsewhere_skips_with_the_reason(monkeypatch):
    import sys

    module = sys.modules[__name__]
    monkeypatch.setattr(module, "PROMETHEUS", None)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="must install"):
        _need_prometheus()
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="apt-get install -y prometheus"):
        _need_prometheus()
