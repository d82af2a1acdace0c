"""CONFIG_DBs in the shape sonic-cfggen renders for vendor SKUs (tests/fixtures/ops/cfggen/, written
by make_cfggen.py from SONiC's templates): zero errors on the sane defaults, each rule still fires on
its broken variant, platform-aware headroom, YANG ranges, design exceptions."""

from __future__ import annotations

import json

import pytest
import yaml
from ops_fixtures import OPS_FIXTURES

from fabricplan.catalog import load_catalog
from fabricplan.errors import InputError
from fabricplan.ops.readers import read_config_db

CATALOG = load_catalog()

CFGGEN = OPS_FIXTURES / "cfggen"
SANE = ["nvidia-sn4600c-t0", "nvidia-sn4600c-running", "arista-7260-dualtor", "dell-s6100-t0"]
BROKEN = sorted(p.name for p in (CFGGEN / "broken").iterdir() if p.is_dir())


@pytest.fixture
def azure_lint(tmp_path):
    """SONiC's AZURE templates carry lossless traffic on DSCP 3/4 (TC 3/4), so the user declares it."""
    path = tmp_path / "lint.yaml"
    path.write_text("settings:\n  roce_dscp: 3\n")
    return path


def _lint(cli, db, config, *extra):
    result = cli("lint", "--switch", db, "--config", config, "--json", *extra)
    return result, result.json()


@pytest.mark.parametrize("name", SANE)
def test_sane_vendor_default_has_zero_errors_and_warnings(cli, azure_lint, name):
    result, doc = _lint(cli, CFGGEN / name / "config_db.json", azure_lint)
    assert result.code == 0, doc["findings"]
    assert doc["summary"]["error"] == 0 and doc["summary"]["warning"] == 0
    assert doc["summary"]["switch_ports"] == 4 and doc["summary"]["links"] == 4
    for item in doc["findings"]:  # what remains is information with a reason or a named key
        assert item["severity"] == "info" and "$." in item["location"]


@pytest.mark.parametrize("name", BROKEN)
def test_broken_vendor_variant_fires_its_rule(cli, azure_lint, name):
    rule = yaml.safe_load((CFGGEN / "broken" / name / "expect.yaml").read_text())["rule"]
    result, doc = _lint(cli, CFGGEN / "broken" / name / "config_db.json", azure_lint)
    fired = {f["rule"] for f in doc["findings"] if f["severity"] != "info"}
    assert rule in fired, doc["findings"]
    for item in doc["findings"]:
        assert item["location"] and "$." in item["location"]


def test_dualtor_design_is_an_accepted_exception_with_reason(cli, azure_lint):
    _, doc = _lint(cli, CFGGEN / "arista-7260-dualtor" / "config_db.json", azure_lint)
    uplink = [f for f in doc["findings"] if f["link"].endswith(":Ethernet12")]
    assert {f["rule"] for f in uplink} == {"PFC002", "PFCWD001", "CNP001"}
    for item in uplink:
        assert item["severity"] == "info"
        assert "dual-ToR" in item["reason"] or "DWRR" in item["reason"]
    # the same four priorities on a switch that is not a dual ToR stay a warning / error
    _, doc = _lint(cli, CFGGEN / "broken" / "nvidia-four-lossless" / "config_db.json", azure_lint)
    severities = {(f["rule"], f["severity"]) for f in doc["findings"] if f["link"].endswith(":Ethernet0")}
    assert ("PFC002", "warning") in severities and ("CNP001", "error") in severities


def test_vendor_profile_is_the_reference(cli, azure_lint, tmp_path):
    db = json.loads((CFGGEN / "nvidia-sn4600c-running" / "config_db.json").read_text())
    # Spectrum-3, SHP, 100G 5m: the model asks xoff 46080; the vendor's ACS-MSN4700 row is 33792 and passes
    _, doc = _lint(cli, CFGGEN / "nvidia-sn4600c-running" / "config_db.json", azure_lint)
    assert not [f for f in doc["findings"] if f["rule"] == "HDRM001"]
    # the same numbers on a SKU whose table says otherwise are checked against the model
    db["DEVICE_METADATA"]["localhost"]["hwsku"] = "ACS-MSN3800"
    db["DEVICE_METADATA"]["localhost"]["platform"] = "x86_64-mlnx_msn3800-r0"
    path = tmp_path / "config_db.json"
    path.write_text(json.dumps(db))
    result, doc = _lint(cli, path, azure_lint)
    items = [f for f in doc["findings"] if f["rule"] == "HDRM001"]
    assert len(items) == 3 and result.code == 1
    # SN3800 carries a gearbox (peripheral_table.j2 gearbox_delay 400): 46080 without it, 57344 with it
    assert items[0]["evidence"]["required"] == {"xoff": 57344, "size": 19456, "model": "sonic"}


def test_broadcom_switch_is_sized_with_its_sku_table(cli, azure_lint, tmp_path):
    # Force10-S6100 (Tomahawk): its pg_lossless_40000_5m_profile is th/6100's row (xoff 66560): no finding.
    _, doc = _lint(cli, CFGGEN / "dell-s6100-t0" / "config_db.json", azure_lint)
    assert [f for f in doc["findings"] if f["rule"] == "HDRM001"] == []
    db = json.loads((CFGGEN / "dell-s6100-t0" / "config_db.json").read_text())
    db["BUFFER_PROFILE"]["pg_lossless_40000_5m_profile"]["xoff"] = "49920"  # 240 cells, below the table's 320
    db["CABLE_LENGTH"]["AZURE"]["Ethernet0"] = "100m"
    path = tmp_path / "config_db.json"
    path.write_text(json.dumps(db))
    result, doc = _lint(cli, path, azure_lint)
    items = {f["link"].split(":")[-1]: f for f in doc["findings"] if f["rule"] == "HDRM001"}
    assert result.code == 1 and len(items) == 4
    assert items["Ethernet4"]["evidence"]["required"] == {"xoff": 66560, "size": 1248, "model": "sonic"}
    # 100 m lies between the 40 m (71552) and 300 m (108160) rows: 71552 + 60/260 * 36608 = 79999.4 -> 385 cells
    assert items["Ethernet0"]["evidence"]["required"]["xoff"] == 385 * 208
    assert "--asic tomahawk" in items["Ethernet0"]["fix"]


def test_broadcom_missing_speed_cable_pair_fires(cli, azure_lint, tmp_path):
    # Arista-7260CX3 (th2/7260) has 5m, 40m and 300m rows for 100G; with the traditional buffer model and no
    # lossless profile in CONFIG_DB, 100m gives no lossless PG at all.
    db = json.loads((CFGGEN / "arista-7260-dualtor" / "config_db.json").read_text())
    db["CABLE_LENGTH"]["AZURE"]["Ethernet8"] = "100m"
    path = tmp_path / "config_db.json"
    path.write_text(json.dumps(db))
    result, doc = _lint(cli, path, azure_lint)
    items = [f for f in doc["findings"] if f["rule"] == "HDRM001"]
    assert result.code == 1 and len(items) == 1 and items[0]["severity"] == "error"
    assert "no row for 100000 Mb/s, 100 m" in items[0]["message"] and "th2-7260" in items[0]["message"]
    assert items[0]["evidence"]["table"]["cables_for_speed_m"] == [5, 40, 300]
    assert '"CABLE_LENGTH|AZURE" Ethernet8 "300m"' in items[0]["fix"]
    assert items[0]["location"].endswith("$.CABLE_LENGTH.AZURE.Ethernet8")
    # the dynamic buffer model computes the PG instead: no finding
    db["DEVICE_METADATA"]["localhost"]["buffer_model"] = "dynamic"
    path.write_text(json.dumps(db))
    _, doc = _lint(cli, path, azure_lint)
    assert [f for f in doc["findings"] if f["rule"] == "HDRM001"] == []


def test_missing_speed_in_the_sku_table_fires(cli, azure_lint, tmp_path):
    db = json.loads((CFGGEN / "dell-s6100-t0" / "config_db.json").read_text())
    for port in ("Ethernet0", "Ethernet4", "Ethernet8", "Ethernet12"):
        db["BUFFER_PG"].pop(f"{port}|3-4", None)
    db["PORT"]["Ethernet4"]["speed"] = "200000"  # not a speed of th/6100
    path = tmp_path / "config_db.json"
    path.write_text(json.dumps(db))
    _, doc = _lint(cli, path, azure_lint)
    items = [f for f in doc["findings"] if f["rule"] == "HDRM001"]
    assert len(items) == 1 and "no row for 200000 Mb/s (speeds 10000, 25000, 40000, 50000, 100000)" in items[0]["message"]


def test_platform_picks_the_asic_and_lanes_are_read(tmp_path):
    db = json.loads((CFGGEN / "nvidia-sn4600c-running" / "config_db.json").read_text())
    db["PORT"]["Ethernet0"]["lanes"] = "0,1,2,3,4,5,6,7"
    path = tmp_path / "c.json"
    path.write_text(json.dumps(db))
    ports = {p.port: p for p in read_config_db(path, catalog=CATALOG)}
    assert ports["Ethernet0"].lanes == 8 and ports["Ethernet4"].lanes == 4
    assert ports["Ethernet0"].platform == "x86_64-mlnx_msn4600c-r0" and ports["Ethernet0"].hwsku == "ACS-MSN4600C"


def test_eight_lane_port_needs_more_headroom(cli, azure_lint, tmp_path):
    db = json.loads((CFGGEN / "nvidia-sn4600c-running" / "config_db.json").read_text())
    db["PORT"]["Ethernet0"].update(speed="400000", lanes="0,1,2,3,4,5,6,7")
    db["BUFFER_PROFILE"]["pg_lossless_100000_5m_profile"]["xoff"] = "90112"  # enough for 400G, 4 lanes
    db["BUFFER_PROFILE"]["pg_lossless_100000_5m_profile"]["size"] = "19456"
    path = tmp_path / "c.json"
    path.write_text(json.dumps(db))
    _, doc = _lint(cli, path, azure_lint)
    (item,) = [f for f in doc["findings"] if f["rule"] == "HDRM001" and f["link"].endswith(":Ethernet0")]
    # 8 lanes: xon (and, with SHP, size) = 2 x 19 KB
    assert item["evidence"]["required"]["size"] == 38912


@pytest.mark.parametrize(("table", "key", "value", "ok"), [
    ("DSCP_TO_TC_MAP", "33", "8", True), ("DSCP_TO_TC_MAP", "33", "15", True), ("DSCP_TO_TC_MAP", "33", "16", False),
    ("TC_TO_PRIORITY_GROUP_MAP", "15", "0", True), ("TC_TO_PRIORITY_GROUP_MAP", "8", "8", False),
    ("TC_TO_QUEUE_MAP", "8", "9", True), ("TC_TO_QUEUE_MAP", "8", "10", False),
])
def test_map_ranges_follow_sonic_yang(tmp_path, table, key, value, ok):
    db = json.loads((CFGGEN / "nvidia-sn4600c-t0" / "config_db.json").read_text())
    db[table]["AZURE"][key] = value
    path = tmp_path / "c.json"
    path.write_text(json.dumps(db))
    if ok:
        assert read_config_db(path, catalog=CATALOG)
    else:
        with pytest.raises(InputError, match=f"{table} value must be in") as info:
            read_config_db(path, catalog=CATALOG)
        assert info.value.location.endswith(f"$.{table}.AZURE['{key}']")


def test_port_without_qos_is_not_a_cls001_finding(cli, azure_lint):
    _, doc = _lint(cli, CFGGEN / "nvidia-sn4600c-t0" / "config_db.json", azure_lint)
    assert not [f for f in doc["findings"] if f["link"].endswith(":Ethernet12")]


def test_missing_pair_on_a_spectrum_sku(cli, azure_lint, tmp_path):
    # ACS-MSN4600C uses ACS-MSN4700's table (5m, 40m, 300m); 30m with the traditional model -> no lossless PG
    db = json.loads((CFGGEN / "nvidia-sn4600c-t0" / "config_db.json").read_text())
    db["CABLE_LENGTH"]["AZURE"]["Ethernet8"] = "30m"
    path = tmp_path / "config_db.json"
    path.write_text(json.dumps(db))
    result, doc = _lint(cli, path, azure_lint)
    items = [f for f in doc["findings"] if f["rule"] == "HDRM001"]
    assert result.code == 1 and len(items) == 1
    assert "ACS-MSN4700" in items[0]["message"] and "100000 Mb/s, 30 m" in items[0]["message"]
    assert '"CABLE_LENGTH|AZURE" Ethernet8 "40m"' in items[0]["fix"]


def test_broadcom_profile_at_a_speed_without_row_is_info(cli, azure_lint, tmp_path):
    # an explicit lossless profile on a 200G port of a Force10-S6100 (table up to 100G): not sized, one info each
    db = json.loads((CFGGEN / "dell-s6100-t0" / "config_db.json").read_text())
    db["PORT"]["Ethernet4"]["speed"] = "200000"
    path = tmp_path / "config_db.json"
    path.write_text(json.dumps(db))
    result, doc = _lint(cli, path, azure_lint)
    items = [f for f in doc["findings"] if f["rule"] == "HDRM001"]
    assert result.code == 0 and len(items) == 1 and items[0]["severity"] == "info"
    assert "no lossless profile for 200000 Mb/s" in items[0]["message"]
    assert items[0]["location"].endswith("$.PORT.Ethernet4.speed")
