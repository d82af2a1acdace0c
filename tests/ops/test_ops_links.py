"""LINK001/LINK002: links the inputs do not pair are findings; "no link checked" is never a pass."""

from __future__ import annotations

import json

from ops_fixtures import DB_REL, GOOD, setup_args


def _nic_args() -> list[str]:
    return [a for e in sorted((GOOD / "nics").iterdir()) for a in ("--nic", str(e))]


def test_hostname_mismatch_is_an_error_naming_both_sides(cli, tmp_path):
    cabling = tmp_path / "links.yaml"
    cabling.write_text((GOOD / "cabling.yaml").read_text().replace("leaf01:", "leafA:"))
    result = cli("lint", *_nic_args(), "--switch", str(GOOD / DB_REL), "--cabling", str(cabling), "--json")
    assert result.code == 1
    (item,) = result.json()["findings"]
    assert item["rule"] == "LINK001" and item["severity"] == "error"
    assert "switches leafA are not among the config_db hostnames read (leaf01)" in item["message"]
    assert item["location"] == f"{cabling}:3"
    text = cli("lint", *_nic_args(), "--switch", str(GOOD / DB_REL), "--cabling", str(cabling))
    assert "No findings" not in text.out and text.code == 1


def test_cabling_without_switch_inputs_checks_no_link(cli):
    result = cli("lint", *_nic_args(), "--cabling", str(GOOD / "cabling.yaml"), "--json")
    assert result.code == 1
    assert [f["rule"] for f in result.json()["findings"]] == ["LINK001"]
    assert "no --switch config_db files were given" in result.json()["findings"][0]["message"]


def test_missing_port_table_is_reported(cli, tmp_path):
    db = json.loads((GOOD / DB_REL).read_text())
    del db["PORT"]
    path = tmp_path / "leaf01" / "config_db.json"
    path.parent.mkdir()
    path.write_text(json.dumps(db))
    args = setup_args()
    args[args.index("--switch") + 1] = str(path)
    result = cli("lint", *args, "--json")
    findings = result.json()["findings"]
    assert [f["rule"] for f in findings] == ["LINK002"], findings
    assert findings[0]["location"] == f"{path}:$.PORT"
    assert "3 lossless port(s) (Ethernet0, Ethernet4, Ethernet8) have no PORT row" in findings[0]["message"]
    assert "No findings" not in cli("lint", *args).out


def test_no_cabling_with_several_nics_warns(cli):
    result = cli("lint", *_nic_args(), "--switch", str(GOOD / DB_REL), "--json")
    assert [f["rule"] for f in result.json()["findings"]] == ["LINK002"]
    assert result.code == 0 and "3 NIC ports and 3 switch ports were checked separately" in result.json()["findings"][0]["message"]


def test_nic_missing_from_cabling_is_a_warning_at_the_capture(cli, tmp_path):
    cabling = tmp_path / "links.yaml"
    text = (GOOD / "cabling.yaml").read_text()
    cabling.write_text(text[: text.index("  - nic: gpu03:eth2")])
    result = cli("lint", *_nic_args(), "--switch", str(GOOD / DB_REL), "--cabling", str(cabling), "--json")
    (item,) = result.json()["findings"]
    assert item["rule"] == "LINK002" and item["location"].endswith("gpu03_eth2.nic")


def test_link_rules_can_be_disabled(cli, tmp_path):
    config = tmp_path / "lint.yaml"
    config.write_text("rules:\n  LINK001: disable\n")
    result = cli("lint", *setup_args("link_hostname_mismatch"), "--config", str(config))
    assert result.code == 0 and "No findings" in result.out
