"""`fabricplan health` on captured files: every format, wrap/reset/saturation, missing counters,
mixed NIC types, RTT baselines (stated, learned, from the design), outputs and configuration.

Fixtures: tests/fixtures/health (written by generate.py, whose comments give each number)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from fabricplan.catalog import load_catalog
from fabricplan.ops.readers.prom_text import read_exposition
from fabricplan.ops.readers.telemetry import read_ethtool, read_perfquery, read_rtt_csv, read_sysfs_counters
from fabricplan.ops.telemetry import Series, increases

CATALOG = load_catalog()

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "health"
ROOT = Path(__file__).resolve().parents[2]


def _findings(doc, rule=None, entity=None):
    return [f for f in doc["findings"] if (rule is None or f["rule"] == rule) and (entity is None or f["entity"] == entity)]


# --- readers -----------------------------------------------------------------------------------

def test_ethtool_reader_moves_the_priority_to_a_label_and_names_the_rdma_port():
    t = read_ethtool(FIX / "ethtool_storm.txt")
    ports = t.ports()
    assert [p.name for p in ports] == ["node01:mlx5_0/1"]
    duration = ports[0].get("rx_pause_duration", 3)
    assert duration.values.tolist() == [5_000_000, 5_300_000, 20_300_000, 20_600_000, 20_900_000]
    assert np.diff(duration.t_s).tolist() == [15.0] * 4
    assert ports[0].get("tx_vport_rdma_unicast_packets").values[1] == 810_000_000


def test_sysfs_reader_reads_grep_dump_lines():
    port = read_sysfs_counters(FIX / "hw_counters_node01.txt", catalog=CATALOG).ports()[0]
    assert port.name == "node01:mlx5_0/1"
    assert port.get("packet_seq_err").values.tolist() == [0, 10, 20, 2020, 2030]


def test_perfquery_non_extended_counters_carry_their_iba_width_and_extended_do_not():
    ports = {p.name: p for p in read_perfquery(FIX / "perfquery.txt", catalog=CATALOG).ports()}
    assert ports["sw1:lid3/1"].get("symbol_error").width_bits == 16
    assert ports["sw1:lid3/1"].get("port_xmit_wait").width_bits == 32
    assert ports["node09:lid1719/1"].get("port_xmit_wait").width_bits is None
    assert ports["node09:lid1719/1"].get("port_xmit_data").values[0] == 36298026860928


def test_exposition_reader_maps_node_exporter_and_infiniband_exporter_names():
    gpu = {p.name: p for p in read_exposition(FIX / "node_exporter.prom", catalog=CATALOG).ports()}
    ib = gpu["gpu02:mlx5_1/1"]
    assert ib.get("link_downed").values.tolist() == [3, 3, 4]
    assert ib.get("packet_seq_err").values.tolist() == [0, 100, 200]
    assert ib.get("np_cnp_sent") is not None and ib.get("rp_cnp_handled") is not None
    assert gpu["gpu02:eth0"].get("rx_discards_phy") is not None  # node_ethtool_received_discards_phy
    leaf = read_exposition(FIX / "infiniband_exporter.prom", catalog=CATALOG).ports()[0]
    assert leaf.name == "leaf01:0x7cfe9003009ce5b0/7"
    assert leaf.get("port_xmit_discards").t_s.tolist() == [1796112000.0, 1796112060.0]  # sample timestamps (ms)


def test_rtt_reader_groups_samples_by_pair():
    pairs = read_rtt_csv(FIX / "rtt.csv").rtt_pairs()
    assert sorted(p.name for p in pairs) == ["node-a -> node-b", "node-c -> node-d"]
    assert all(len(p.series.values) == 4000 for p in pairs)


# --- counter arithmetic: reset, saturation -------------------------------------------------------

def _series(values, width=None):
    return Series("c", "h", "d", "1", None, np.arange(len(values), dtype=float) * 10, np.asarray(values, float), "x",
                  width_bits=width)


def test_a_reset_counts_the_new_value_from_zero():
    inc = increases(_series([100, 180, 12, 40]))
    assert inc.dv.tolist() == [80, 12, 28]
    assert inc.resets.tolist() == [2]


def test_a_saturated_counter_has_unknown_increases_not_zero():
    inc = increases(_series([65000, 65535, 65535, 65535], width=16))
    assert inc.dv[0] == 535
    assert all(math.isnan(x) for x in inc.dv[1:])
    assert inc.saturated_at == 1
    assert inc.mean_rate() == pytest.approx(535 / 10)


# --- checks through the CLI ------------------------------------------------------------------------

def test_storm_pause_reset_retransmit_and_ecn_without_cnp_on_one_port(cli):
    result = cli("health", "--ethtool", FIX / "ethtool_storm.txt", "--hw-counters", FIX / "hw_counters_node01.txt",
                 "--json")
    assert result.code == 1
    doc = result.json()
    port = "node01:mlx5_0/1"
    assert {f["rule"] for f in _findings(doc, entity=port)} == {"PFC002", "PFC001", "RETX001", "CC001", "CNT001"}
    storm = _findings(doc, "PFC002")[0]["evidence"]
    assert storm["storm_seconds"] == 15.0 and storm["paused_fraction_in_storm"] == 1.0
    pause = _findings(doc, "PFC001")[0]["evidence"]
    assert pause["paused_fraction_peak"] == 1.0
    assert pause["paused_fraction_mean"] == pytest.approx(15.9e6 / 60e6)
    retx = _findings(doc, "RETX001")[0]["evidence"]
    assert retx["retransmit_ratio_peak"] == pytest.approx(2000 / 10_000_000)
    assert retx["retransmit_ratio_mean"] == pytest.approx(2030 / 40_000_000)
    assert retx["packets_sent_counter"] == "tx_vport_rdma_unicast_packets"
    assert _findings(doc, "CC001")[0]["evidence"] == {"ecn_marked": 16000.0, "cnp_sent": 0.0}
    assert "rx_pause[prio3]" in _findings(doc, "CNT001")[0]["evidence"]["counters"]
    # worst first: the error (storm) leads
    assert doc["findings"][0]["rule"] == "PFC002"


def test_perfquery_saturation_symbol_errors_and_reset(cli):
    doc = cli("health", "--perfquery", FIX / "perfquery.txt", "--json").json()
    assert _findings(doc, "IB001", "sw1:lid3/1")[0]["evidence"]["per_hour"] == 12000.0
    saturated = _findings(doc, "CNT002", "sw1:lid3/1")[0]["evidence"]
    assert saturated["counter"] == "port_xmit_wait" and saturated["width_bits"] == 32
    assert {"port_xmit_data", "port_xmit_wait"} <= set(_findings(doc, "CNT001", "node09:lid1719/1")[0]["evidence"]["counters"])


def test_exporters_link_down_and_xmit_discards(cli):
    doc = cli("health", "--prom-text", FIX / "node_exporter.prom", "--prom-text", FIX / "infiniband_exporter.prom",
              "--json").json()
    assert _findings(doc, "IB002", "gpu02:mlx5_1/1")[0]["evidence"]["downs"] == 1.0
    assert _findings(doc, "IB003", "leaf01:0x7cfe9003009ce5b0/7")[0]["evidence"]["per_s_peak"] == 500.0
    assert _findings(doc, "IB001", "leaf01:0x7cfe9003009ce5b0/7")[0]["evidence"]["per_hour"] == 3000.0
    # measured below the limit: no finding, but the number is in the per-port values
    gpu = next(p for p in doc["ports"] if p["entity"] == "gpu02:mlx5_1/1")
    assert gpu["values"]["retransmit_ratio_peak"] == pytest.approx(100 / 10_000_000)
    assert not _findings(doc, "RETX001", "gpu02:mlx5_1/1")


def test_healthy_capture_exits_0(cli):
    result = cli("health", "--ethtool", FIX / "ethtool_healthy.txt")
    assert result.code == 0, result.out
    assert "Healthy on what was measured" in result.out


def test_missing_counters_alone_are_bad_input_never_healthy(cli):
    result = cli("health", "--ethtool", FIX / "ethtool_other_nic.txt")
    assert result.code == 2
    assert "no health check could be evaluated" in result.err and "Healthy" not in result.out


def test_mixed_nic_types_the_unknown_driver_is_not_measured(cli):
    doc = cli("health", "--ethtool", FIX / "ethtool_healthy.txt", "--ethtool", FIX / "ethtool_other_nic.txt",
              "--perfquery", FIX / "perfquery.txt", "--json", "--fail-on", "never").json()
    ports = {p["entity"]: p for p in doc["ports"]}
    assert ports["node03:ens5"]["status"] == "not measured"
    assert {"PFC001", "PFC002", "PFC003"} <= set(ports["node03:ens5"]["not_available"])
    assert ports["node02:eth2"]["status"] == "ok"
    missing = [n for n in doc["not_available"] if n["entity"] == "node03:ens5" and n["check"] == "PFC001"][0]
    assert "rx_prioN_pause_duration" in missing["missing"]


def test_rtt_tail_against_a_stated_rtt(cli):
    doc = cli("health", "--rtt", FIX / "rtt.csv", "--expected-rtt-us", "10", "--json").json()
    found = _findings(doc, "RTT001")
    assert [f["entity"] for f in found] == ["node-a -> node-b"]
    ev = found[0]["evidence"]
    assert 30 < ev["tail_us"] < 32 and ev["ratio"] == pytest.approx(ev["tail_us"] / 10, rel=1e-5)


def test_rtt_baseline_learned_from_a_quiet_window(cli):
    # the first half (same pattern) is the quiet window: the tail is as usual, so no finding
    result = cli("health", "--rtt", FIX / "rtt.csv", "--baseline-window", "1796112000..1796112999", "--json")
    doc = result.json()
    assert result.code == 0 and not _findings(doc, "RTT001")
    ratios = [p["values"]["rtt_tail_ratio"] for p in doc["ports"] if "rtt_tail_ratio" in p["values"]]
    assert len(ratios) == 2 and all(0.9 < r < 1.2 for r in ratios)


def test_rtt_without_a_baseline_is_not_available(cli):
    result = cli("health", "--rtt", FIX / "rtt.csv", "--json")
    doc = result.json()
    assert result.code == 0
    assert {n["check"] for n in doc["not_available"]} == {"RTT001"}


def test_rtt_against_the_design_of_the_spec(cli):
    import fabricplan as fp
    from fabricplan.api import expected_rtt_us

    spec = ROOT / "examples" / "mid-128-h100-existing-ethernet.yaml"
    rtt, said = expected_rtt_us(spec, "roce-v2")
    compare = fp.compare(spec)
    one_way = next(f for f in compare.fabrics if f.fabric == "roce-v2").small_message_latency_us
    assert rtt == pytest.approx(2 * one_way)
    doc = cli("health", "--rtt", FIX / "rtt.csv", "--spec", spec, "--fabric", "roce-v2", "--json").json()
    found = _findings(doc, "RTT001")
    assert {f["entity"] for f in found} == {"node-a -> node-b", "node-c -> node-d"}
    ev = found[0]["evidence"]
    assert ev["baseline_us"] == pytest.approx(rtt) and "the design of roce-v2" in ev["baseline_from"]
    assert "x the expected" in found[0]["message"]


def test_spec_with_several_fabrics_needs_fabric(cli):
    result = cli("health", "--rtt", FIX / "rtt.csv", "--spec", ROOT / "examples" / "mid-128-h100-existing-ethernet.yaml")
    assert result.code == 2 and "--fabric" in result.err


# --- outputs, config, saved model ----------------------------------------------------------------

def test_html_report_has_a_chart_per_finding(cli, tmp_path):
    out = tmp_path / "health.html"
    result = cli("health", "--ethtool", FIX / "ethtool_storm.txt", "--hw-counters", FIX / "hw_counters_node01.txt",
                 "--html", out, "--fail-on", "never")
    assert result.code == 0
    page = out.read_text()
    assert page.count('id="chart-') == 5 and "rx_pause_duration[prio3]" in page and "Plotly" in page


def test_config_disables_a_check_and_moves_a_threshold(cli, tmp_path):
    config = tmp_path / "health.yaml"
    config.write_text("rules:\n  PFC002: disable\n  RETX001:\n    retransmit_ratio_max: 0.001\n")
    doc = cli("health", "--ethtool", FIX / "ethtool_storm.txt", "--hw-counters", FIX / "hw_counters_node01.txt",
              "--config", config, "--json").json()
    rules = {f["rule"] for f in doc["findings"]}
    assert "PFC002" not in rules and "RETX001" not in rules and "PFC001" in rules


def test_catalog_overlay_moves_a_health_threshold(cli, tmp_path):
    overlay = tmp_path / "cat.yaml"
    overlay.write_text("ops_defaults:\n  health:\n    symbol_error_max_per_hour:\n      value: 20000\n"
                       "      source: test\n      date: '2026-12-01'\n")
    doc = cli("health", "--perfquery", FIX / "perfquery.txt", "--catalog", overlay, "--json").json()
    assert not _findings(doc, "IB001")


def test_saved_telemetry_rereads_to_the_same_findings(cli, tmp_path):
    saved = tmp_path / "t.npz"
    args = ("--ethtool", FIX / "ethtool_storm.txt", "--hw-counters", FIX / "hw_counters_node01.txt")
    first = cli("health", *args, "--save-telemetry", saved, "--json").json()
    again = cli("health", "--telemetry", saved, "--json").json()
    assert first["findings"] == again["findings"]


def test_start_end_clip_files(cli):
    # only the last two snapshots: the storm interval is outside, so no PFC002
    doc = cli("health", "--ethtool", FIX / "ethtool_storm.txt", "--start", "2026-12-01T08:00:30Z", "--json").json()
    assert not _findings(doc, "PFC002")


def test_vectorised_increases_of_a_saved_group_equal_the_per_counter_ones(tmp_path):
    from fabricplan.ops.readers.telemetry import read_npz
    from fabricplan.ops.telemetry import Telemetry, _increases, save_npz

    rng = np.random.default_rng(3)
    t = np.arange(200, dtype=float) * 15
    rows = [np.cumsum(rng.integers(0, 50, 200)).astype(float) for _ in range(130)]
    rows[5][100:] -= rows[5][99] + 1  # a reset
    telemetry = Telemetry([Series("c", f"h{i}", "d", "1", None, t, v, "x") for i, v in enumerate(rows)], ["x"])
    save_npz(telemetry, str(tmp_path / "g.npz"))
    for s in read_npz(tmp_path / "g.npz").series:
        fast, slow = increases(s), _increases(s)
        assert np.array_equal(fast.dv, slow.dv) and np.array_equal(fast.resets, slow.resets)
        assert fast.peak_rate() == slow.peak_rate() and fast.total() == slow.total()


def test_docs_list_every_check_with_its_default():
    from fabricplan.ops import defaults
    from fabricplan.ops.health.checks import CHECKS

    text = (ROOT / "docs" / "health.md").read_text()
    rows = {line.split("|")[1].strip(): line for line in text.splitlines() if line.startswith("| ") and
            line.split("|")[1].strip() in {c.ID for c in CHECKS}}
    assert set(rows) == {c.ID for c in CHECKS}
    for check in CHECKS:
        assert f"| {check.SEVERITY} |" in rows[check.ID], check.ID
        for path in check.OPTIONS.values():
            name = path.split(".")[-1]
            if not isinstance(defaults.value(path, catalog=CATALOG), list):
                assert f"`{name}`" in rows[check.ID], (check.ID, name)


def test_telemetry_text_above_the_config_readers_10_mib_is_read(tmp_path):
    snapshot = "NIC statistics:\n" + "".join(f"     rx_counter_{k}: {k}\n" for k in range(300))
    path = tmp_path / "day.ethtool"
    with path.open("w") as handle:
        for i in range(1500):  # ~11 MB: a full ethtool -S every 15 s for about 6 hours
            handle.write(f"# time={1796112000 + 15 * i} host=h device=eth0\n{snapshot}")
    assert path.stat().st_size > 10 * 1024 * 1024
    port = read_ethtool(path).ports()[0]
    assert len(port.counters) == 300 and len(port.get("rx_counter_7").t_s) == 1500


def test_jobs_file_names_the_job_on_each_unhealthy_port(cli):
    args = ("health", "--ethtool", FIX / "ethtool_storm.txt", "--prom-text", FIX / "node_exporter.prom",
            "--jobs", FIX / "jobs.yaml")
    doc = cli(*args, "--json").json()
    assert _findings(doc, "PFC002")[0]["evidence"]["jobs"] == ["llama70b-train"]
    assert _findings(doc, "IB002")[0]["evidence"]["jobs"] == ["eval"]
    assert "node01:mlx5_0/1  (job: llama70b-train)" in cli(*args).out


def test_bad_jobs_file(cli, tmp_path):
    path = tmp_path / "jobs.yaml"
    path.write_text("jobs:\n  a: 3\n")
    result = cli("health", "--ethtool", FIX / "ethtool_healthy.txt", "--jobs", path)
    assert result.code == 2 and f"{path}:$.jobs.a" in result.err and "non-empty list" in result.err


# --- SONiC PFC watchdog (`show pfcwd stats`) and `rdma statistic show` ----------------------------

def test_pfcwd_reader_reads_each_queue_as_counters_of_the_switch_port():
    from fabricplan.ops.readers.switch_telemetry import read_pfcwd_stats

    ports = {p.name: p for p in read_pfcwd_stats(FIX / "pfcwd_stats.txt").ports()}
    assert sorted(ports) == ["switch01:Ethernet0", "switch01:Ethernet12", "switch01:Ethernet4", "switch01:Ethernet8"]
    e0 = ports["switch01:Ethernet0"]
    assert e0.get("pfcwd_storm_detected", 3).values.tolist() == [0, 0, 1, 1]
    assert e0.get("pfcwd_tx_drop", 3).values.tolist() == [0, 0, 300, 300]
    assert e0.get("pfcwd_rx_ok", 3).values.tolist() == [1000, 1100, 1200, 1300]
    assert ports["switch01:Ethernet8"].get("pfcwd_storm_detected", 4) is None  # N/A cells are not readings
    assert ports["switch01:Ethernet8"].get("pfcwd_tx_ok", 4).values.tolist() == [700, 710, 720, 730]


def test_pfcwd_storm_found_on_its_queue_reset_and_na_reported(cli):
    result = cli("health", "--pfcwd", FIX / "pfcwd_stats.txt", "--json")
    doc = result.json()
    assert result.code == 1  # PFCWD001 is an error
    storms = _findings(doc, "PFCWD001")
    assert [f["entity"] for f in storms] == ["switch01:Ethernet0"]
    ev = storms[0]["evidence"]
    assert ev["queue"] == 3 and ev["storms"] == 1 and ev["pfcwd_tx_drop_packets"] == 300
    assert ev["pfcwd_rx_drop_packets"] == 200 and ev["peak_at"] == "2026-12-01T08:00:30Z"
    # cleared counters on Ethernet12 are a reset (CNT001), not 3 storms
    assert [f["entity"] for f in _findings(doc, "CNT001")] == ["switch01:Ethernet12"]
    na = [n for n in doc["not_available"] if n["check"] == "PFCWD001"]
    assert [n["entity"] for n in na] == ["switch01:Ethernet8"] and na[0]["missing"] == ["pfcwd_storm_detected"]


def test_rdma_statistic_reader_text_and_json_forms():
    from fabricplan.ops.readers.switch_telemetry import read_rdma_statistic

    ports = {p.name: p for p in read_rdma_statistic(FIX / "rdma_statistic.txt").ports()}
    assert sorted(ports) == ["node05:mlx5_0/1", "node05:mlx5_1/1"]
    assert ports["node05:mlx5_0/1"].get("packet_seq_err").values.tolist() == [0, 10, 3020]
    assert ports["node05:mlx5_1/1"].get("packet_seq_err") is None
    js = read_rdma_statistic(FIX / "rdma_statistic.json.txt").ports()
    assert [p.name for p in js] == ["node06:mlx5_0/1"]
    assert js[0].get("np_cnp_sent").values.tolist() == [0, 100, 200]


def test_rdma_statistic_retransmit_burst_and_missing_counters(cli):
    doc = cli("health", "--rdma-stat", FIX / "rdma_statistic.txt", "--json").json()
    found = _findings(doc, "RETX001")
    assert [f["entity"] for f in found] == ["node05:mlx5_0/1"]
    # interval 2: 3,010 retransmit events over 10 M packets
    assert found[0]["evidence"]["retransmit_ratio_peak"] == pytest.approx(3010 / 10_000_000, rel=1e-4)
    assert any(n["check"] == "RETX001" and n["entity"] == "node05:mlx5_1/1" for n in doc["not_available"])


def test_rdma_statistic_counter_reset_counts_from_zero(tmp_path, cli):
    path = tmp_path / "r.txt"
    path.write_text("# time=1796112000 host=n\nlink mlx5_0/1 np_cnp_sent 5000\n"
                    "# time=1796112015 host=n\nlink mlx5_0/1 np_cnp_sent 6500\n"
                    "# time=1796112030 host=n\nlink mlx5_0/1 np_cnp_sent 300\n")
    from fabricplan.ops.readers.switch_telemetry import read_rdma_statistic

    series = read_rdma_statistic(path).ports()[0].get("np_cnp_sent")
    inc = increases(series)
    assert inc.dv.tolist() == [1500, 300] and inc.resets.tolist() == [2]
    doc = cli("health", "--rdma-stat", path, "--json").json()
    assert [f["entity"] for f in _findings(doc, "CNT001")] == ["n:mlx5_0/1"]
