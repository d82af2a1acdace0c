"""At 80 columns (what rich assumes when output is piped) no cell is cut: no "…", every number the
JSON output holds appears whole as the text output rounds it, every job and fabric name appears whole,
and no line is wider than the terminal."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from rich.cells import cell_len

from fabricplan.cli import common
from fabricplan.report.compare_content import microseconds, seconds, signed_percent, usd_cents
from fabricplan.report.tables import percent, usd
from tests.ops.ops_fixtures import setup_args, variant_names

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
WIDTH = 80


@pytest.fixture
def cli80(cli, monkeypatch):
    monkeypatch.setattr(common.stdout, "width", WIDTH)
    return cli


def whole(token: str, text: str) -> bool:
    """`token` appears in `text` not as part of a longer word, number or name."""
    return re.search(rf"(?<![\w.,$-]){re.escape(token)}(?![\w-]|[.,]\d)", text) is not None


def assert_readable(text: str) -> None:
    assert "…" not in text
    too_wide = [line for line in text.splitlines() if cell_len(line.rstrip()) > WIDTH]
    assert not too_wide, too_wide


def long_named_spec(tmp_path: Path) -> Path:
    """The 1,024-GPU example with long job names: two jobs sharing the cluster."""
    document = yaml.safe_load((EXAMPLES / "llama70b-1024-h100.yaml").read_text())
    job = document["jobs"][0]
    first = {**job, "name": "llama3-70b-pretrain-long-context-experiment-a", "share": 0.5}
    second = {**job, "name": "llama3-70b-pretrain-long-context-experiment-b", "share": 0.4}
    document["jobs"] = [first, second]
    path = tmp_path / "long-names.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


@pytest.mark.parametrize("spec_name", ["llama70b-1024-h100.yaml", "moe-alltoall-2048-h100.yaml", "long"])
def test_compare_at_80_columns_cuts_no_cell(cli80, tmp_path, spec_name):
    spec = long_named_spec(tmp_path) if spec_name == "long" else EXAMPLES / spec_name
    text = cli80("compare", spec, "-q")
    assert text.code == 0, text.err
    report = cli80("compare", spec, "-q", "--json").json()
    out = text.out
    assert_readable(out)
    shown: list[str] = []
    for fabric in report["fabrics"]:
        shown += [fabric["fabric"], fabric["name"], usd_cents(fabric["cost_per_useful_gpu_hour_usd"]),
                  usd(fabric["tco_usd"]), percent(fabric["weighted_mfu"]), percent(fabric["weighted_gpu_utilisation"]),
                  microseconds(fabric["small_message_latency_us"]), usd(fabric["cost"]["network_capex_usd"])]
        for job in fabric["jobs"]:
            shown += [job["job"], seconds(job["step_time_s"]), percent(job["exposed_comm_share"])]
    recommended = report["recommendation"]["recommended"]
    for row in report["sensitivity"]:
        shown += [row["factor"], signed_percent(row["metric_change_low"][recommended]),
                  signed_percent(row["metric_change_high"][recommended])]
    for crossover in report["crossovers"]:
        shown += [crossover["fabric_a"], crossover["fabric_b"]]
        if crossover["gpus"] is not None:
            shown.append(f"{crossover['gpus']:,}")
    for rule in report["rules"]:
        shown.append(rule["id"])
    # a name of several words may wrap between its words inside its cell, never inside a word
    missing = [token for token in shown if not (whole(token, out) or all(whole(word, out) for word in token.split()))]
    missing += [token for token in shown if " " not in token and not whole(token, out)]
    assert not missing, missing
    assert report["sensitivity"] and report["crossovers"]  # every section was rendered and checked


def test_compare_rules_are_one_line_each_and_verbose_adds_citations(cli80):
    spec = EXAMPLES / "llama70b-1024-h100.yaml"
    short = cli80("compare", spec, "-q", "--quick").out
    verbose = cli80("compare", spec, "-q", "--quick", "--verbose").out
    report = cli80("compare", spec, "-q", "--quick", "--json").json()
    rules_section = short[short.index("Decision rules"):]
    for rule in report["rules"]:
        line = next(line for line in rules_section.splitlines() if line.startswith(rule["id"]))
        assert ("yes" if rule["fired"] else "no") in line.split()[:2]
    assert "[S1]" not in short and "分析" not in short  # citations only on request
    assert "[S1]" in verbose
    flat = " ".join(verbose.split())
    for rule in report["rules"]:
        assert " ".join(rule["message"].split()) in flat
    # the Chinese quotes carry an English rendering beside them
    assert "单节点8卡以下…优先选择RoCE [clusters of up to one 8-GPU node ... prefer RoCE]" in flat
    # "…" in a quote is the source's own elision, next to the quoted Chinese text; nothing else has one
    assert all(re.search("[\u4e00-\u9fff]", line) for line in verbose.splitlines() if "…" in line)
    assert_readable(verbose.replace("…", "~"))
    # was ~360 lines, ~200 of them the rules table; issue 26 added the advice table and the options'
    # uplift lines (the designs table shows only what the search traded)
    assert len(short.splitlines()) < 150


@pytest.mark.parametrize("spec_name", ["llama70b-1024-h100.yaml", "llama405b-16k-h100.yaml", "long"])
def test_step_at_80_columns_cuts_no_cell(cli80, tmp_path, spec_name):
    spec = long_named_spec(tmp_path) if spec_name == "long" else EXAMPLES / spec_name
    text = cli80("step", spec)
    assert text.code == 0, text.err
    assert_readable(text.out)
    for result in cli80("step", spec, "--json").json()["results"]:
        tokens = [result["job"], result["fabric"], f"{result['step_time_s']:.3f}", f"{result['compute_s']:.3f}",
                  f"{result['bubble_s']:.3f}", f"{result['mfu']:.1%}", f"{result['tokens_per_s']:,.0f}"]
        if result.get("gpu_hours_for_budget"):
            tokens.append(f"{result['gpu_hours_for_budget']:,.0f}")
        tokens += [f"{kind} {value:.2f}" for kind, value in result["exposed_comm_s"].items() if value > 0]
        missing = [token for token in tokens if token not in text.out]
        assert not missing, missing


@pytest.mark.parametrize("variant", variant_names())
def test_lint_at_80_columns_cuts_no_cell(cli80, variant):
    text = cli80("lint", *setup_args(variant), "--fail-on", "never")
    document = cli80("lint", *setup_args(variant), "--json", "--fail-on", "never").json()
    assert "…" not in text.out
    flat = " ".join(text.out.split())
    for finding in document["findings"]:
        assert finding["link"] in text.out and finding["rule"] in text.out
        assert " ".join(finding["message"].split()) in flat
        assert " ".join(finding["fix"].split()) in flat
        if finding.get("location"):
            assert finding["location"] in text.out  # a path is never wrapped or folded
        assert f"fix: {finding['fix']}" in text.out  # a command to paste stays on one line
    for line in text.out.splitlines():  # only a path or a command to paste may run past the edge
        if cell_len(line) > WIDTH:
            assert (len(line.split()) <= 2 and line.lstrip().startswith("at: ")) or line.lstrip().startswith("fix: "), line


@pytest.mark.parametrize("args", [
    ("cost", EXAMPLES / "llama70b-1024-h100.yaml"),
    ("topology", EXAMPLES / "llama405b-16k-h100.yaml"),
    ("collective", "--sweep-sizes", "8B:8GiB", "--gpus", "1024"),
    ("headroom", "--speed", "400G", "--cable", "30m", "--mtu", "9100", "--model", "sonic", "--asic", "spectrum-4"),
    ("catalog", "show", "rule_infiniband_ops_efficiency_above_gpus"),
    ("catalog", "list", "fabrics"),
])
def test_other_commands_fit_80_columns(cli80, args):
    result = cli80(*args)
    assert result.code == 0, result.err
    assert_readable(result.out)


def test_cost_numbers_are_whole_at_80_columns(cli80):
    spec = EXAMPLES / "llama70b-1024-h100.yaml"
    out = cli80("cost", spec).out
    for fabric in cli80("cost", spec, "--json").json()["fabrics"]:
        for token in (fabric["fabric"], usd(fabric["network_capex_usd"]), usd(fabric["network_tco_usd"]),
                      usd(fabric["cluster_tco_usd"]), f"{fabric['network_power_w'] / 1000:,.1f} kW"):
            assert token in out, token
        for line in fabric["bom"]:
            assert whole(line["item_id"], out) and f"{line['quantity']:,}" in out
