"""`fabricplan simulate`: the JSON document's keys, scenario conventions and the plot."""

from __future__ import annotations

import numpy as np
import pytest

from fabricplan.catalog import load_catalog
from fabricplan.sim.network import fat_tree
from fabricplan.sim.scenarios import build_job

CATALOG = load_catalog()


def test_simulate_json_keys_and_numbers(cli):
    result = cli("simulate", "incast", "--k", "8", "--senders", "8", "--flow-size", "256KB", "--link", "100G",
                 "--json")
    assert result.code == 0, result.err
    doc = result.json()
    for key in ("fct_us", "goodput_gbps", "pfc_pause_us", "pause_spread_hops", "ecn_marks", "cnps", "drops_bytes",
                "victim_slowdown", "jain_fairness", "jobs", "simulated_us_per_wall_s"):
        assert key in doc
    assert set(doc["fct_us"]) == {"mean", "p50", "p99", "max"}
    assert doc["completed"] == doc["flows"] == 8
    # 8 x 256 KB (63 packets of 4,160 B each) through one 100G port: at least 8 x 262,080 B / 12.5 GB/s = 168 us
    assert doc["fct_us"]["max"] >= 8 * 63 * 4160 / 12.5e3
    assert 80 < doc["goodput_gbps"] <= 100
    assert doc["settings"]["packet_payload_bytes"] == 4096 and doc["settings"]["link_latency_us"] == 1.0
    assert all(name.count("->") == 1 for name in doc["pfc_pause_us"])


def test_one_flow_alone_takes_its_ideal_time(cli):
    # a 2-host permutation: each flow alone at 100G, 1 MB = 245 packets = 1,019,200 B on the wire:
    # 81.5 us of serialisation + 3 hops x 1 us there and back + 2 store-and-forward packets (0.7 us)
    doc = cli("simulate", "permutation", "--k", "4", "--hosts", "2", "--json").json()
    expected = 245 * 4160 / 12.5e3 + 2 * 2 * 1.0 + 1 * 4160 / 12.5e3
    assert doc["fct_us"]["max"] == pytest.approx(expected, rel=0.03)


def test_scenario_conventions():
    net = fat_tree(8, 2, link_gbps=100, catalog=CATALOG)
    incast = build_job("incast", net, 8, 6, 1e6, 1)
    assert incast.src[:6].tolist() == [4, 5, 6, 7, 8, 9] and set(incast.dst[:6].tolist()) == {0}
    assert incast.victim.tolist() == [False] * 6 + [True] and (incast.src[-1], incast.dst[-1]) == (10, 1)
    perm = build_job("permutation", net, 8, None, 1e6, 7)
    assert sorted(perm.dst.tolist()) == list(range(32)) and not np.any(perm.src == perm.dst)
    assert perm.dst.tolist() == build_job("permutation", net, 8, None, 1e6, 7).dst.tolist()  # seeded
    ring = build_job("allreduce", net, 8, None, 1e6, 1)
    assert ring.size_bytes[0] == pytest.approx(2 * 31 / 32 * 1e6)
    a2a = build_job("alltoall", net, 8, None, 31e6, 1)
    assert len(a2a.src) == 32 * 31 and a2a.size_bytes[0] == pytest.approx(1e6)


def test_flow_size_is_read_as_collective_reads_a_message_size(cli):
    """--flow-size goes through the one size parser: 1M is 1 MiB (as collective --size), 1MB 10^6 B."""
    for text, size in (("1M", 2 ** 20), ("1MB", 10 ** 6), ("64KiB", 65536), ("4096", 4096)):
        result = cli("simulate", "incast", "--k", "4", "--senders", "2", "--flow-size", text, "--max-time-ms", "1",
                     "--json")
        assert result.code == 0, result.err
        assert result.json()["settings"]["flow_size_bytes"] == size


def test_plot_writes_html(cli, tmp_path):
    out = tmp_path / "sim.html"
    result = cli("simulate", "allreduce", "--k", "4", "--flow-size", "64KB", "--plot", str(out))
    assert result.code == 0, result.err
    text = out.read_text()
    assert "Sending rate per flow group" in text and "Ports paused by PFC" in text


def test_the_plot_draws_each_flow_group_as_a_median_and_a_band_not_one_line_per_flow():
    from fabricplan.report.sim_plot import flow_groups, flow_rates, simulate_figure
    from fabricplan.sim.scenarios import run_scenarios

    result = run_scenarios("incast,permutation", k=4, senders=3, flow_size="64KB", max_time_ms=2, record=True,
                           catalog=CATALOG)
    recorded = len(result.fluid.timeline["flows"])
    groups = flow_groups(result)
    assert sum(len(columns) for columns in groups.values()) == recorded > len(groups)
    assert list(groups)[0] == "incast" and set(groups) <= {"incast", "incast victims", "permutation",
                                                           "permutation victims"}
    figure = simulate_figure(result)
    rates = [trace for trace in figure.data if trace.xaxis == "x"]
    medians = [trace for trace in rates if trace.fill != "toself"]
    bands = [trace for trace in rates if trace.fill == "toself"]
    assert len(medians) == len(groups) < recorded  # one line per group, not per flow
    assert len(bands) == sum(len(columns) > 1 for columns in groups.values())
    t, rates, window = flow_rates(result)
    assert window >= 1 and rates.shape == result.fluid.timeline["rate_gbps"].shape
    finished = result.fluid.finish_us[result.fluid.timeline["flows"]]
    for column, end in enumerate(finished):  # a finished flow leaves its group's statistics
        if np.isfinite(end):
            assert np.isnan(rates[t > end, column]).all() and not np.isnan(rates[t <= end, column]).any()
    for (name, columns), median in zip(groups.items(), medians):
        assert median.name.startswith(f"{name}: {len(columns)} flow")
        group = rates[:, columns]
        live = ~np.isnan(group).all(axis=1)
        expected = np.nanmedian(group[live], axis=1)
        assert np.asarray(median.y, dtype=float)[live] == pytest.approx(expected)
        assert np.isnan(np.asarray(median.y, dtype=float)[~live]).all()  # a gap once every flow is done
    for band, median in zip(bands, [m for m, c in zip(medians, groups.values()) if len(c) > 1]):
        assert band.legendgroup == median.legendgroup  # toggled with its median
        sending = [mid for mid in median.y if mid == mid]
        half = len(band.y) // 2
        assert half == len(sending) and all(high >= mid - 1e-9 for high, mid in zip(band.y[:half], sending))
    assert figure.layout.yaxis.title.text == "Gb/s"


def test_simulate_a_specs_design_takes_its_fabric_defaults(cli):
    # the 1,024-H100 example on InfiniBand NDR: credits + IB CC and adaptive routing from the profile,
    # 400G ports from the design; lossless without pause frames
    doc = cli("simulate", "incast", "--spec", "examples/llama70b-1024-h100.yaml", "--fabric", "infiniband-ndr",
              "--senders", "16", "--json").json()
    settings = doc["settings"]
    assert (settings["cc"], settings["routing"], settings["link_gbps"]) == ("ib-cc", "adaptive", 400.0)
    assert doc["completed"] == 16 and doc["drops_bytes"] == 0 and doc["pfc_paused_ports"] == 0
    roce = cli("simulate", "incast", "--spec", "examples/llama70b-1024-h100.yaml", "--fabric", "roce-v2",
               "--senders", "16", "--json").json()
    assert roce["settings"]["cc"] == "dcqcn" and roce["settings"]["pfc"] is True
    bad = cli("simulate", "incast", "--spec", "examples/llama70b-1024-h100.yaml", "--fabric", "aws-efa")
    assert bad.code == 2 and "--fabric" in bad.err


def test_a_run_stopped_by_the_time_limit_is_incomplete_not_a_result(cli):
    # issue 31: 64 x 12 MB stopped at the 50 ms default printed "0/64 flows done ... goodput 0.0 Gb/s"
    # with exit 0; the same shape, smaller: 16 x 12 MB into one 100G port needs >= 15.4 ms
    args = ("simulate", "incast", "--k", "8", "--senders", "16", "--flow-size", "12MB", "--max-time-ms", "5")
    result = cli(*args)
    assert result.code == 1
    assert "0/16 flows done" in result.out and "INCOMPLETE" in result.out and "goodput  n/a" in result.out
    assert "0.0 Gb/s" not in result.out.split("goodput")[1].splitlines()[0]
    (line,) = result.err.strip().splitlines()
    assert line.startswith("incomplete:") and "--max-time-ms limit of 5 ms" in line and "0/16 flows done" in line
    suggested = float(line.rsplit("--max-time-ms ", 1)[1])
    doc_result = cli(*args, "--json")
    assert doc_result.code == 1
    doc = doc_result.json()
    assert doc["complete"] is False and doc["goodput_gbps"] is None
    assert doc["incomplete"]["flag"] == "--max-time-ms" and doc["incomplete"]["suggested_max_time_ms"] == suggested
    # what moved in the window: about the bottleneck's 100G, and a third of the bytes (5 of ~15.4 ms)
    assert 80 < doc["delivered_gbps_in_window"] <= 100
    assert 0.25 < doc["incomplete"]["delivered_fraction"] < 0.4
    # the suggested limit is enough: the run finishes, exit 0, a real goodput
    done = cli(*args[:-1], f"{suggested:g}", "--json")
    assert done.code == 0, done.err
    finished = done.json()
    assert finished["complete"] is True and finished["incomplete"] is None
    assert finished["completed"] == 16 and 80 < finished["goodput_gbps"] <= 100
