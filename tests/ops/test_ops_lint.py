"""Lint rules: the good setup is clean, each broken variant fires exactly its rule; config; outputs."""

from __future__ import annotations

import json

import pytest
from ops_fixtures import GOOD, setup_args, variant_expectation, variant_names

from fabricplan.catalog import load_catalog
from fabricplan.ops.lint.finding import SEVERITIES
from fabricplan.ops.lint.rules import RULES, RULES_BY_ID

CATALOG = load_catalog()


def test_good_setup_has_zero_findings(cli, good_args):
    result = cli("lint", *good_args)
    assert result.code == 0, result.out + result.err
    assert "No findings: 3 links (3 NIC ports, 3 switch ports) checked." in result.out
    doc = cli("lint", *good_args, "--json").json()
    assert doc["findings"] == []
    assert doc["summary"] == {"error": 0, "warning": 0, "info": 0, "links": 3, "nics": 3, "switch_ports": 3,
                              "links_with_findings": 0}


@pytest.mark.parametrize("variant", variant_names())
def test_broken_variant_fires_exactly_its_rule(cli, variant):
    expected = variant_expectation(variant)["rule"]
    result = cli("lint", *setup_args(variant), "--json")
    doc = result.json()
    assert {f["rule"] for f in doc["findings"]} == {expected}, doc["findings"]
    severity = RULES_BY_ID[expected].SEVERITY
    assert result.code == (1 if severity == "error" else 0)
    for item in doc["findings"]:
        assert item["severity"] == severity
        assert item["message"] and item["fix"] and item["location"]


def test_every_rule_has_a_broken_variant():
    covered = {variant_expectation(name)["rule"] for name in variant_names()}
    assert covered == set(RULES_BY_ID)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.ID)
def test_rule_module_contract(rule):
    assert rule.SEVERITY in SEVERITIES and rule.SCOPE in ("link", "fabric")
    assert isinstance(rule.defaults(CATALOG), dict) and rule.TITLE
    doc = rule.__doc__ or ""
    assert doc.startswith(rule.ID) and "Passing" in doc and "Failing" in doc
    assert callable(rule.check)


def _findings(cli, variant, *extra):
    return cli("lint", *setup_args(variant), "--json", *extra).json()["findings"]


def test_switch_headroom_numbers(cli):
    (item,) = _findings(cli, "headroom_cable_300m")
    # ACS-MSN3800 = Spectrum-2; ingress_lossless_pool has xoff (shared headroom pool), so the PG size
    # only needs xon (19 KB). 300 m at 100G, 50 % small packets: propagation 9100 + 37878.8 (cable)
    # + 819.2 + 25216 = 73014 B, plus the SN3800 gearbox (PERIPHERAL_TABLE gearbox_delay 400:
    # 2 x 100000 x 400 / 8192 = 9765.6 B) = 82779.6 B x occupancy 1.23529 + 1024 -> 103424.
    assert item["evidence"]["required"] == {"xoff": 103424, "size": 19456, "model": "sonic"}
    assert item["evidence"]["switch"]["xoff"] == 81920
    assert ('HSET "BUFFER_PROFILE|pg_lossless_100000_300m_profile" pool "ingress_lossless_pool" xoff "103424" '
            'xon "19456" size "19456" dynamic_th "0"') in item["fix"]
    assert 'HSET "BUFFER_PG|Ethernet0|3" profile "pg_lossless_100000_300m_profile"' in item["fix"]


def test_nic_headroom_numbers(cli):
    (item,) = _findings(cli, "nic_buffer_too_small")
    assert item["evidence"]["required"]["size"] == 56080 + 9216 + 128
    assert item["evidence"]["nic"]["size"] == 40960
    assert "--buffer_size 130944,65424,0,0,0,0,0,0" in item["fix"]
    (item,) = _findings(cli, "nic_cable_len_short")
    assert item["fix"] == "mlnx_qos -i eth2 --cable_len 30"


def test_ecn_before_pfc_threshold(cli):
    items = _findings(cli, "ecn_after_pfc")
    assert len(items) == 3
    assert items[0]["evidence"]["switch"]["pause_threshold_bytes"] == 10875072 // 2


def test_pfc_mismatch_evidence_and_fix(cli):
    (item,) = _findings(cli, "pfc_mismatch")
    assert item["link"] == "gpu02:eth2 <-> leaf01:Ethernet4"
    assert item["evidence"] == {"nic": {"pfc_enabled": [3]}, "switch": {"pfc_enable": [4]}}
    assert item["location"].endswith("config_db.json:$.PORT_QOS_MAP.Ethernet4.pfc_enable")
    assert item["fix"] == ('sonic-db-cli CONFIG_DB HSET "PORT_QOS_MAP|Ethernet4" pfc_enable "3" '
                           "(the NIC's set holds RoCE priority 3)")


def test_chain_points_at_the_map_entry(cli):
    items = _findings(cli, "chain_dscp_to_tc")
    assert {i["location"].split(":", 1)[1] for i in items} == {"$.DSCP_TO_TC_MAP.ROCE['26']"}
    assert items[0]["evidence"]["chain"]["switch_tc"] == 0


def test_text_output_grouped_by_link(cli):
    result = cli("lint", *setup_args("cnp_pfc_enabled"))
    assert result.code == 1
    lines = result.out.splitlines()
    assert lines[0] == "gpu02:eth2 <-> leaf01:Ethernet4"
    assert sum("CNP001" in line for line in lines) == 2
    assert "fix: mlnx_qos -i eth2 --pfc 0,0,0,1,0,0,0,0" in result.out
    assert "2 errors, 0 warnings, 0 info on 1 of 3 links" in result.out


def test_fail_on_levels(cli):
    args = setup_args("dcqcn_params_differ")  # a warning
    assert cli("lint", *args).code == 0
    assert cli("lint", *args, "--fail-on", "warning").code == 1
    assert cli("lint", *args, "--fail-on", "info").code == 1
    assert cli("lint", *setup_args("pfc_mismatch"), "--fail-on", "never").code == 0
    bad = cli("lint", *args, "--fail-on", "sometimes")
    assert bad.code == 2 and bad.err.startswith("error: ")


def test_sarif_output(cli):
    result = cli("lint", *setup_args("ets_roce_zero"), "--sarif")
    assert result.code == 1
    log = json.loads(result.out)
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    run = log["runs"][0]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == [r.ID for r in RULES]
    (res,) = run["results"]
    assert res["ruleId"] == "ETS001" and res["level"] == "error"
    assert run["tool"]["driver"]["rules"][res["ruleIndex"]]["id"] == "ETS001"
    physical = res["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"].endswith("broken/ets_roce_zero/nics/gpu03_eth2.nic")
    assert physical["region"] == {"startLine": 27}


def test_sarif_json_path_location(cli):
    log = json.loads(cli("lint", *setup_args("pfc_mismatch"), "--sarif").out)
    location = log["runs"][0]["results"][0]["locations"][0]
    assert location["logicalLocations"][0]["fullyQualifiedName"] == "$.PORT_QOS_MAP.Ethernet4.pfc_enable"


def test_config_disables_and_reseverities(cli, tmp_path):
    config = tmp_path / "lint.yaml"
    config.write_text("rules:\n  PFC001: disable\n")
    result = cli("lint", *setup_args("pfc_mismatch"), "--config", config, "--json")
    assert result.code == 0 and result.json()["findings"] == []
    config.write_text("rules:\n  PFC001:\n    severity: info\n  DCQCN002: {severity: error}\n")
    assert cli("lint", *setup_args("pfc_mismatch"), "--config", config).code == 0
    result = cli("lint", *setup_args("dcqcn_params_differ"), "--config", config, "--json")
    assert result.code == 1 and result.json()["findings"][0]["severity"] == "error"


def test_config_options_and_settings(cli, tmp_path):
    config = tmp_path / "lint.yaml"
    config.write_text("rules:\n  PFC002:\n    max_lossless_priorities: 3\n")
    assert cli("lint", *setup_args("too_many_lossless"), "--config", config, "--json").json()["findings"] == []
    # RoCE on DSCP 34 (prio 4 by dscp>>3) while everything is set up for 26/3: the chain breaks.
    config.write_text("settings:\n  roce_dscp: 34\n")
    rules = {f["rule"] for f in cli("lint", *setup_args(), "--config", config, "--json").json()["findings"]}
    assert "CLS001" in rules and "DCQCN001" in rules


@pytest.mark.parametrize(("text", "message"), [
    ("rules:\n  NOPE001: disable\n", "unknown rule"),
    ("rules:\n  PFC002: {severity: fatal}\n", "severity"),
    ("rules:\n  PFC002: {max_lossless: 3}\n", "unknown option"),
    ("rules:\n  PFC002: {max_lossless_priorities: three}\n", "must be like"),
    ("settings:\n  roce_dscp_value: 26\n", "unknown setting"),
    ("rules: [\n", "invalid YAML"),
])
def test_config_errors_exit_2(cli, tmp_path, text, message):
    config = tmp_path / "lint.yaml"
    config.write_text(text)
    result = cli("lint", *setup_args(), "--config", config)
    assert result.code == 2 and message in result.err and str(config) in result.err


def test_no_cabling_checks_sides_separately(cli):
    result = cli("lint", "--nic", GOOD / "nics" / "gpu02_eth2.nic",
                 "--switch", GOOD / "switches/leaf01/config_db.json", "--json")
    # three switch ports and one NIC: no pairing, so no cross-link rule can fire
    assert result.code == 0 and "no --cabling file" in result.err


def test_cabling_row_matching_nothing_is_a_warning(cli, tmp_path):
    cabling = tmp_path / "links.yaml"
    cabling.write_text((GOOD / "cabling.yaml").read_text() + "  - nic: gpu99:eth2\n    switch: leaf01:Ethernet12\n")
    result = cli("lint", *setup_args()[:-1], cabling, "--json")
    (item,) = result.json()["findings"]
    assert result.code == 0 and item["rule"] == "LINK002" and item["severity"] == "warning"
    assert item["location"] == f"{cabling}:12"
    assert "NIC gpu99:eth2 was not captured" in item["message"] and "leaf01 has no port Ethernet12" in item["message"]


def test_unusable_inputs_exit_2(cli, tmp_path):
    missing = cli("lint", "--nic", tmp_path / "nope.nic", "--switch", GOOD / "switches")
    assert missing.code == 2 and missing.err.startswith("error: ") and "nope.nic" in missing.err
    nothing = cli("lint")
    assert nothing.code == 2 and "nothing to lint" in nothing.err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli("lint", "--nic", empty).code == 2


def test_no_cabling_pairs_a_single_nic_with_a_single_port(cli, tmp_path):
    db = json.loads((GOOD / "switches/leaf01/config_db.json").read_text())
    for table in ("PORT", "PORT_QOS_MAP", "PFC_WD"):
        db[table] = {k: v for k, v in db[table].items() if k in ("Ethernet4", "GLOBAL")}
    for table in ("QUEUE", "BUFFER_PG", "BUFFER_QUEUE"):
        db[table] = {k: v for k, v in db[table].items() if k.startswith("Ethernet4|")}
    db["PORT_QOS_MAP"]["Ethernet4"]["pfc_enable"] = "4"
    path = tmp_path / "config_db.json"
    path.write_text(json.dumps(db))
    result = cli("lint", "--nic", GOOD / "nics/gpu02_eth2.nic", "--switch", path, "--json")
    assert result.code == 1
    assert {f["rule"] for f in result.json()["findings"]} == {"PFC001"}


def test_switch_folder_is_expanded(cli):
    args = setup_args()
    args[args.index("--switch") + 1] = str(GOOD / "switches")
    assert cli("lint", *args).code == 0
