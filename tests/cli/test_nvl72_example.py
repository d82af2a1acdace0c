"""examples/gb200-nvl72.yaml: 4 GB200 NVL72 racks through step, compare, cost and topology."""

from __future__ import annotations

from project_paths import EXAMPLES, pinned

EXAMPLE = EXAMPLES / "gb200-nvl72.yaml"


def test_step_runs_and_reports_both_fabrics(cli):
    result = cli("step", EXAMPLE, "--json")
    assert result.code == 0, result.err
    doc = result.json()
    text = str(doc)
    assert "roce-v2" in text and "infiniband-ndr" in text


def test_compare_runs(cli):
    result = cli("compare", EXAMPLE)
    assert result.code == 0, result.err
    assert "roce-v2" in result.out and "infiniband-ndr" in result.out


def test_topology_counts_72_nics_per_rack(cli):
    result = cli("topology", pinned("gb200-nvl72"))  # rail-optimised: 72 rails on each rack
    assert result.code == 0, result.err
    assert "288 endpoints (4 nodes × 72 NICs)" in result.out.replace("\n", " ").replace("  ", " ") or \
        "4 nodes × 72 NICs" in result.out


def test_cost_counts_racks_and_nics(cli):
    result = cli("cost", EXAMPLE)
    assert result.code == 0, result.err
    assert "4 server racks" in result.out
    assert "288" in result.out  # 4 racks x 72 ConnectX-7
