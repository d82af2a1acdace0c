"""`fabricplan health --spec`: findings against what the design should give at the observed load
(api.expected_under_load, the fluid model of sim/load.py), in text, JSON and HTML."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabricplan.api import expected_under_load

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "examples" / "mid-128-h100-existing-ethernet.yaml"
T0 = 1796112000
LINK_BYTES_PER_S = 400e9 / 8   # roce-v2 in this spec: 400 Gb/s ports


def _findings(doc, rule=None, entity=None):
    return [f for f in doc["findings"] if (rule is None or f["rule"] == rule) and (entity is None or f["entity"] == entity)]


def _rtt(tmp_path, values: dict[tuple[str, str], float]) -> Path:
    rows = ["time,src,dst,rtt_us"]
    for i in range(2000):
        for (src, dst), value in values.items():
            rows.append(f"{T0 + i * 0.5},{src},{dst},{value:.4f}")
    path = tmp_path / "rtt.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def _ethtool(tmp_path, ports: dict[str, tuple[float, float]], with_bytes: bool = True) -> Path:
    """Per host: (load, paused fraction), over 5 snapshots 15 s apart, on mlx5_0/1."""
    out = []
    for i in range(5):
        for host, (load, paused) in ports.items():
            out.append(f"# time={T0 + i * 15} host={host} device=eth2 rdma=mlx5_0/1\nNIC statistics:\n"
                       + (f"     tx_bytes_phy: {round(i * 15 * load * LINK_BYTES_PER_S)}\n"
                          f"     rx_bytes_phy: {round(i * 15 * load * LINK_BYTES_PER_S * 0.5)}\n" if with_bytes else "")
                       + f"     rx_prio3_pause: {i * 100}\n"
                       f"     rx_prio3_pause_duration: {round(i * 15e6 * paused)}\n")
    path = tmp_path / "ports.ethtool"
    path.write_text("".join(out))
    return path


def test_rtt_finding_fires_at_3x_the_design_under_load_and_not_at_1_2x(cli, tmp_path):
    expected = expected_under_load(SPEC, "roce-v2").at(0.6).rtt_p999_us
    rtt = _rtt(tmp_path, {("node-a", "node-b"): 3 * expected, ("node-c", "node-d"): 1.2 * expected})
    result = cli("health", "--rtt", rtt, "--spec", SPEC, "--fabric", "roce-v2", "--load", "60%", "--json")
    doc = result.json()
    found = _findings(doc, "RTT001")
    assert [f["entity"] for f in found] == ["node-a -> node-b"]
    ev = found[0]["evidence"]
    assert ev["ratio"] == pytest.approx(3.0, rel=1e-3) and ev["baseline_us"] == pytest.approx(expected, rel=1e-5)
    assert ev["load"] == 0.6 and ev["load_from"] == "--load" and ev["load_bucket"] == 0.6
    assert ev["unloaded_rtt_us"] < ev["baseline_us"]
    assert f"is 3x the {expected:.3g} µs this design should give at 60 % load" in found[0]["message"]
    assert result.code == 0  # a warning; --fail-on error


def test_pause_fraction_against_the_model_at_the_load_of_the_byte_counters(cli, tmp_path):
    expected = expected_under_load(SPEC, "roce-v2").at(0.1).pause_fraction
    path = _ethtool(tmp_path, {"hot": (0.1, 4 * expected), "fine": (0.1, 1.2 * expected)})
    doc = cli("health", "--ethtool", path, "--spec", SPEC, "--fabric", "roce-v2", "--json", "--fail-on", "never").json()
    found = _findings(doc, "MODEL001")
    assert [f["entity"] for f in found] == ["hot:mlx5_0/1"]
    ev = found[0]["evidence"]
    assert ev["load"] == pytest.approx(0.1, rel=1e-6) and ev["load_from"] == "byte counters (tx_bytes_phy/rx_bytes_phy)"
    assert ev["paused_fraction_mean"] == pytest.approx(4 * expected, rel=1e-4)
    assert ev["model_pause_fraction"] == pytest.approx(expected, rel=1e-5)
    assert ev["limit"] == pytest.approx(max(3 * expected, 0.005), rel=1e-5)
    assert "of the time where this design at 10 % load should pause" in found[0]["message"]
    model = doc["model"]
    assert set(model) == {"fabric", "mechanism", "link_gbps", "unloaded_rtt_us", "source", "load", "load_from",
                          "expected"}
    assert model["fabric"] == "roce-v2" and model["load"] == pytest.approx(0.1, rel=1e-6)
    assert set(model["expected"][0]) == {"load_bucket", "rtt_p999_us", "pause_fraction", "cnp_per_s",
                                         "credit_wait_fraction", "ecn_marks_per_s", "becn_per_s"}
    assert model["expected"][0]["ecn_marks_per_s"] >= model["expected"][0]["cnp_per_s"] > 0  # a CNP per marked burst
    ratios = {m["entity"]: m["values"].get("paused_fraction_vs_model") for m in doc["ports"]}
    assert ratios["fine:mlx5_0/1"] == pytest.approx(1.2 * expected / max(3 * expected, 0.005), rel=1e-4)


def test_cnp_rate_against_the_model(cli, tmp_path):
    expected = expected_under_load(SPEC, "roce-v2").at(0.1).cnp_per_s
    limit = max(3 * expected, 1000)
    lines = []
    for i in range(3):
        lines.append(f"# time={T0 + i * 15} host=hot\nlink mlx5_0/1 np_cnp_sent {round(i * 15 * 1.5 * limit)}\n")
        lines.append(f"# time={T0 + i * 15} host=fine\nlink mlx5_0/1 np_cnp_sent {round(i * 15 * 0.8 * limit)}\n")
    stat = tmp_path / "rdma.txt"
    stat.write_text("".join(lines))
    eth = _ethtool(tmp_path, {"hot": (0.1, 0.0), "fine": (0.1, 0.0)})
    doc = cli("health", "--rdma-stat", stat, "--ethtool", eth, "--spec", SPEC, "--fabric", "roce-v2", "--json",
              "--fail-on", "never").json()
    found = _findings(doc, "MODEL001")
    assert [f["entity"] for f in found] == ["hot:mlx5_0/1"]
    ev = found[0]["evidence"]
    assert ev["cnp_per_s_mean"] == pytest.approx(1.5 * limit, rel=1e-3) and ev["limit_per_s"] == pytest.approx(limit, rel=1e-5)


def test_text_and_html_say_what_the_design_should_give(cli, tmp_path):
    expected = expected_under_load(SPEC, "roce-v2").at(0.1).pause_fraction
    path = _ethtool(tmp_path, {"hot": (0.1, 4 * expected)})
    html = tmp_path / "h.html"
    result = cli("health", "--ethtool", path, "--spec", SPEC, "--fabric", "roce-v2", "--html", html)
    assert "Against the model: the design of roce-v2" in result.out
    assert "At 10 % load this design gives p99.9 RTT" in " ".join(result.out.split())
    assert "MODEL001" in result.out
    page = html.read_text()
    assert "<h2>Against the model</h2>" in page and "At 10 % load this design gives" in page


def test_without_a_load_the_model_check_is_not_available(cli, tmp_path):
    path = _ethtool(tmp_path, {"h": (0.5, 0.5)}, with_bytes=False)
    doc = cli("health", "--ethtool", path, "--spec", SPEC, "--fabric", "roce-v2", "--json", "--fail-on", "never").json()
    assert not _findings(doc, "MODEL001")
    na = [n for n in doc["not_available"] if n["check"] == "MODEL001"]
    assert len(na) == 1 and "no load for this port" in na[0]["reason"]
    assert doc["model"]["load"] is None


def test_tcp_fabric_has_no_pause_expectation(cli, tmp_path):
    path = _ethtool(tmp_path, {"h": (0.3, 0.5)})
    doc = cli("health", "--ethtool", path, "--spec", SPEC, "--fabric", "ethernet-tcp", "--json",
              "--fail-on", "never").json()
    assert not _findings(doc, "MODEL001")
    assert any(n["check"] == "MODEL001" and "no PFC" in n["reason"] for n in doc["not_available"])
    assert doc["model"]["expected"][0]["pause_fraction"] is None
