"""fp.health on the health fixtures: the typed result `fabricplan health` prints."""

from __future__ import annotations

import pytest

import fabricplan as fp
from fabricplan.report.health_output import as_json
from project_paths import EXAMPLES, ROOT

FIX = ROOT / "tests" / "fixtures" / "health"
SPEC = EXAMPLES / "mid-128-h100-existing-ethernet.yaml"


def _findings(result):
    return [(f.rule_id, f.link, f.severity) for f in result.findings]


def test_health_reads_files_and_evaluates_the_checks():
    result = fp.health(ethtool=FIX / "ethtool_storm.txt", hw_counters=[FIX / "hw_counters_node01.txt"])
    assert ("PFC002", "node01:mlx5_0/1", "error") in _findings(result)
    assert result.worst_severity() == "error"
    assert (result.start_s, result.end_s) == (1796112000.0, 1796112060.0)
    assert result.telemetry.sources  # what was read travels with the result (--save-telemetry writes it)


def test_health_is_what_the_command_prints(cli):
    args = ["--ethtool", FIX / "ethtool_storm.txt", "--hw-counters", FIX / "hw_counters_node01.txt",
            "--jobs", FIX / "jobs.yaml", "--start", "2026-12-01T08:00:10Z"]
    printed = cli("health", *args, "--json", "--fail-on", "never").json()
    result = fp.health(ethtool=[FIX / "ethtool_storm.txt"], hw_counters=[FIX / "hw_counters_node01.txt"],
                       jobs=FIX / "jobs.yaml", start="2026-12-01T08:00:10Z")
    stamp = {"fabricplan_version": printed.pop("fabricplan_version"), "catalog_sha256": printed.pop("catalog_sha256")}
    assert as_json(result) == printed
    assert stamp == {"fabricplan_version": fp.__version__, "catalog_sha256": fp.load_catalog().content_sha256()}
    assert as_json(fp.health(ethtool=[FIX / "ethtool_storm.txt"], hw_counters=[FIX / "hw_counters_node01.txt"],
                             jobs=FIX / "jobs.yaml", start=1796112010.0)) == printed


def test_health_times_as_numbers_or_text():
    text = fp.health(rtt=FIX / "rtt.csv", baseline_window="1796112000..2026-12-01T08:16:39Z")
    pair = fp.health(rtt=str(FIX / "rtt.csv"), baseline_window=(1796112000, 1796112999.0))
    assert [(p.name, p.baseline_us, p.baseline_source) for p in text.pairs] == \
        [(p.name, p.baseline_us, p.baseline_source) for p in pair.pairs]
    assert all(p.baseline_source == "p99.9 of the quiet window" for p in pair.pairs)
    # Relative times count from now_s: the whole capture is 'now-1d' and later for a now a day after it.
    late = fp.health(rtt=FIX / "rtt.csv", expected_rtt_us=10, start="now-1d", now_s=1796112000.0 + 86400)
    assert _findings(late) == _findings(fp.health(rtt=FIX / "rtt.csv", expected_rtt_us=10))


def test_health_against_the_design_at_a_load():
    result = fp.health(rtt=FIX / "rtt.csv", spec=SPEC, fabric="roce-v2", load=0.6)
    assert result.model["fabric"] == "roce-v2" and result.model["load"] == 0.6
    assert ("RTT001", "node-a -> node-b", "warning") in _findings(result)


@pytest.mark.parametrize(("kwargs", "needle"), [
    ({}, "nothing to check"),
    ({"rtt": FIX / "rtt.csv", "expected_rtt_us": 5, "baseline_window": (1, 2)}, "give one RTT baseline"),
    ({"rtt": FIX / "rtt.csv", "load": 0.5}, "--load needs --spec"),
    ({"rtt": FIX / "rtt.csv", "step": "fast"}, "--step: duration .fast. is not like 250ms"),
    ({"rtt": FIX / "rtt.csv", "start": "2030-01-01T00:00:00Z"}, "no reading between"),
])
def test_health_input_errors(kwargs, needle):
    with pytest.raises(fp.InputError, match=needle):
        fp.health(**kwargs)
