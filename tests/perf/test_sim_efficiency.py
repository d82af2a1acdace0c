"""The `sim` efficiency model: flow-level results through the efficiency seam, cached by scenario."""

from __future__ import annotations

import json

import pytest

from fabricplan.catalog import default_catalog
from fabricplan.design import NetworkPlacement
from fabricplan.perf import sim_efficiency
from fabricplan.perf.efficiency import AnalyticEfficiency, TrafficCase, efficiency_model, efficiency_models

CATALOG = default_catalog()
ROCE = CATALOG.fabric("roce-v2")
IB = CATALOG.fabric("infiniband-ndr")


def _case(pattern="ring", n=256, aligned=True, profile=ROCE, per_leaf=32, uplinks=32):
    placement = NetworkPlacement(2, per_leaf, uplinks, 0, (1.0,), 1, aligned)
    return TrafficCase(pattern, n, placement, profile, CATALOG)


@pytest.fixture(autouse=True)
def _fresh(monkeypatch, tmp_path):
    monkeypatch.setenv("FABRICPLAN_CACHE_DIR", str(tmp_path))
    sim_efficiency.clear_memory_cache()
    yield
    sim_efficiency.clear_memory_cache()


def test_registered_by_name():
    assert "sim" in efficiency_models()
    assert efficiency_model("sim").name == "sim"


def test_placement_matters_and_adaptive_routing_recovers():
    model = efficiency_model("sim")
    packed, spread = model(_case(aligned=True)), model(_case(aligned=False))
    assert packed.value > 0.9 and spread.value < 0.5
    assert packed.model == spread.model == "sim"
    assert spread.oversubscription == pytest.approx(1.0)  # non-blocking: the loss is all collisions
    assert model(_case(aligned=False, profile=IB)).value == pytest.approx(1.0, abs=1e-6)
    # a 4:1 leaf caps even perfect balancing
    capped = model(_case(pattern="all_to_all", n=128, uplinks=8))
    # each host link carries 16 peers x 2 channels = 32 transfers; 728 of the leaf's 1,024 leave it
    # over 8 uplinks (91 each), so even perfect balancing gets 32 / 91
    assert capped.oversubscription == pytest.approx(32 / 91) and capped.value <= capped.oversubscription + 1e-9


def test_cached_in_memory_and_on_disk(tmp_path):
    model = efficiency_model("sim")
    before = sim_efficiency.usage()
    first = model(_case())
    files = list((tmp_path / "sim").glob("*.json"))
    assert len(files) == 1 and files[0].stem == sim_efficiency.scenario_key(_case())
    assert json.loads(files[0].read_text())["value"] == pytest.approx(first.value)
    assert model(_case()).value == first.value
    sim_efficiency.clear_memory_cache()
    assert model(_case()).value == first.value
    after = sim_efficiency.usage()
    assert {k: after[k] - before[k] for k in after} == {"simulated": 1, "memory_cache": 1, "disk_cache": 1,
                                                        "fallback": 0}
    note = sim_efficiency.usage_note(before)
    # the note is the same however many answers came from the cache (issue 30: identical runs, identical notes)
    assert "3 traffic cases" in note and "cache" not in note


def test_a_corrupt_cache_entry_is_recomputed(tmp_path):
    model = efficiency_model("sim")
    value = model(_case()).value
    path = tmp_path / "sim" / f"{sim_efficiency.scenario_key(_case())}.json"
    path.write_text("{not json")
    sim_efficiency.clear_memory_cache()
    assert model(_case()).value == value


def test_cache_off(monkeypatch, tmp_path):
    monkeypatch.setenv("FABRICPLAN_CACHE_DIR", "off")
    efficiency_model("sim")(_case())
    assert not (tmp_path / "sim").exists()


def test_key_changes_with_every_input():
    base = sim_efficiency.scenario_key(_case())
    others = {sim_efficiency.scenario_key(c) for c in (_case(n=255), _case(aligned=False), _case(profile=IB),
                                                         _case(pattern="tree"), _case(uplinks=16))}
    assert base not in others and len(others) == 5
    qps4 = CATALOG.with_values({"perf_defaults.parameters.nccl_ib_qps_per_connection.value": 4})
    case = TrafficCase("ring", 256, _case().placement, ROCE, qps4)
    assert sim_efficiency.scenario_key(case) != base
    # The link rate: the same fabric at 200G is another simulation (flow latency against transfer time).
    slower = TrafficCase("ring", 256, _case().placement, ROCE.model_copy(update={"link_rate_gbps": 200}), CATALOG)
    assert sim_efficiency.scenario(slower)["link_gbps"] == 200.0
    assert sim_efficiency.scenario_key(slower) != base


def test_too_large_cases_fall_back_to_the_analytic_model():
    case = _case(pattern="all_to_all", n=1024, per_leaf=64, uplinks=64)
    result = efficiency_model("sim")(case)
    assert result.model == "analytic (sim fallback)"
    assert result.value == AnalyticEfficiency()(case).value


def test_compare_names_the_model_and_notes_how_it_answered():
    from fabricplan.decide.compare import compare
    from fabricplan.plan import DEFAULT_PLAN
    from fabricplan.spec import parse_spec

    spec = parse_spec({"name": "sim-compare", "cluster": {"gpu": "h100-sxm", "gpus": 512, "gpus_per_node": 8,
                                                          "nics_per_node": 8},
                       "topology": {"style": "rail_optimized"}, "fabrics": ["roce-v2", "infiniband-ndr"],
                       "jobs": [{"name": "dp", "model": "llama3-8b", "global_batch_sequences": 512,
                                 "seq_len_tokens": 8192}]})
    sim_plan = DEFAULT_PLAN.replace(efficiency_model="sim")
    report = compare(spec, CATALOG, search_scale=False, analyse_sensitivity=False, plan=sim_plan)
    assert report.efficiency_model == "sim"
    [note] = [n for n in report.notes if n.startswith("Efficiency model 'sim'")]
    import re

    assert "simulated" in note and not re.search(r"\b0 traffic cases", note)
    plain = compare(spec, CATALOG, search_scale=False, analyse_sensitivity=False,
                    plan=DEFAULT_PLAN.replace(efficiency_model="analytic"))
    assert plain.efficiency_model == "analytic" and not any("Efficiency model" in n for n in plain.notes)
    default = compare(spec, CATALOG, search_scale=False, analyse_sensitivity=False)
    assert default.efficiency_model == "auto"
    [note] = [n for n in default.notes if n.startswith("Efficiency model 'auto'")]
    assert re.search(r"': [1-9]\d* traffic cases from the flow-level simulator", note)


def test_auto_simulates_within_the_budget_and_falls_back_over_it():
    auto = efficiency_model("auto")
    small = _case(aligned=False)  # 256 nodes x 2 channels = 512 connections: within the default budget
    assert sim_efficiency.connections(sim_efficiency.scenario(small)) == 512
    assert auto(small).value == efficiency_model("sim")(small).value and auto(small).model == "sim"
    assert auto(small).value < 0.5  # the simulator's answer, not the analytic one
    assert AnalyticEfficiency()(small).value != pytest.approx(auto(small).value, abs=0.01)
    tight = CATALOG.with_values({"perf_defaults.parameters.sim_auto_max_connections.value": 511})
    over = TrafficCase("ring", 256, small.placement, ROCE, tight)
    before = sim_efficiency.AutoEfficiency.usage()
    result = auto(over)
    assert result.model == "analytic (auto: over budget)"
    assert result.value == AnalyticEfficiency()(over).value
    note = sim_efficiency.AutoEfficiency.usage_note(before)
    assert "0 traffic cases from the flow-level simulator" in note and "1 over the simulation budget" in note
