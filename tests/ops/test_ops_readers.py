"""Readers: mlnx_qos, sysfs DCQCN (tree and dump), SONiC config_db.json, cabling."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ops_fixtures import DB_REL, GOOD

from fabricplan.catalog import load_catalog
from fabricplan.errors import InputError
from fabricplan.ops.readers import (
    parse_mlnx_qos,
    parse_sysfs_dump,
    read_cabling,
    read_config_db,
    read_nic,
    read_nics,
    read_sysfs_tree,
)

CATALOG = load_catalog()

QOS_TEXT = (GOOD / "nics/gpu01_eth2/mlnx_qos.txt").read_text()


def test_mlnx_qos_good():
    qos = parse_mlnx_qos(QOS_TEXT, "q.txt")
    assert qos.trust == "dscp" and qos.dcbx == "OS controlled"
    assert qos.pfc_enabled == {3}
    assert qos.prio2buffer == (0, 0, 0, 1, 0, 0, 0, 0)
    assert qos.buffer_sizes == (130944, 130944, 0, 0, 0, 0, 0, 0) and qos.max_buffer_size == 262016
    assert qos.cable_len_m == 7
    assert len(qos.dscp2prio) == 64 and qos.dscp2prio[26] == 3 and qos.dscp2prio[48] == 6
    assert {tc: (t.tsa, t.bw_percent) for tc, t in qos.tcs.items()} == {0: ("ets", 50), 3: ("ets", 50), 6: ("strict", 0)}
    assert qos.tcs[0].priorities == (0, 1, 2, 4, 5, 7)
    assert qos.locations["pfc_enabled"] == "q.txt:16"


def test_mlnx_qos_older_format_and_variants():
    text = (
        "DCBX mode: Firmware controlled\n"
        "Priority trust state: pcp\n"
        "Cable len: 30\n"
        "PFC configuration:\n"
        "\tpriority    0   1   2   3   4   5   6   7\n"
        "\tenabled     0   0   0   1   1   0   0   0\n"
        "tc: 0 ratelimit: 12.5 Gbps, tsa: ets, bw: 10%\n"
        "priority: 0\n"
        "\t priority: 1\n"
        "tc: 3 ratelimit: unlimited, tsa: ets, bw: 90%\n"
        "\t priority:  3\n"
        "\t priority:  4\n"
        "tc: 7 ratelimit: unlimited, tsa: vendor\n"
        "\t priority:  7\n"
    )
    qos = parse_mlnx_qos(text, "old.txt")
    assert qos.trust == "pcp" and qos.dscp2prio == {} and qos.buffer_sizes is None
    assert qos.pfc_enabled == {3, 4} and qos.cable_len_m == 30
    assert qos.tcs[0].ratelimit == "12.5 Gbps" and qos.tcs[0].priorities == (0, 1)
    assert qos.tcs[7].tsa == "vendor"


def test_mlnx_qos_wrapped_dscp_list():
    text = QOS_TEXT.replace(
        "\tprio:3 dscp:31,30,29,28,27,26,25,24,\n",
        "\tprio:3 dscp:31,30,29,28,27,26,25,24,\n\t\t50,\n").replace(
        "\tprio:6 dscp:55,54,53,52,51,50,49,48,", "\tprio:6 dscp:55,54,53,52,51,49,48,")
    qos = parse_mlnx_qos(text, "w.txt")
    assert qos.dscp2prio[50] == 3


@pytest.mark.parametrize(("old", "new", "line", "message"), [
    ("\tenabled     0   0   0   1   0   0   0   0", "\tenabled     0   0   0   1   0   0   0", 16, "8 values"),
    ("\tenabled     0   0   0   1   0   0   0   0", "\tenabled     0   0   0   2   0   0   0   0", 16, "must be in 0..1, got 2"),
    ("Priority trust state: dscp", "Priority trust state: vlan", 2, "dscp or pcp"),
    ("tc: 3 ratelimit: unlimited, tsa: ets, bw: 50%", "tc: 3 ratelimit: unlimited, tsa: wrr, bw: 50%", 25, "tsa"),
    ("Cable len: 7", "Cable length is seven", 13, "unrecognised"),
])
def test_mlnx_qos_errors_have_line(old, new, line, message):
    with pytest.raises(InputError, match=message) as info:
        parse_mlnx_qos(QOS_TEXT.replace(old, new), "bad.txt")
    assert info.value.location == f"bad.txt:{line}"


def test_mlnx_qos_truncated_reports_end():
    truncated = "\n".join(QOS_TEXT.splitlines()[:15])
    with pytest.raises(InputError, match="enabled") as info:
        parse_mlnx_qos(truncated, "t.txt")
    assert info.value.location == "t.txt:15"


def test_sysfs_tree_and_dump_agree():
    tree = read_sysfs_tree(GOOD / "nics/gpu01_eth2")
    lines = [ln for ln in (GOOD / "nics/gpu02_eth2.nic").read_text().splitlines() if ln.startswith("/sys")]
    dump = parse_sysfs_dump("\n".join(lines), "dump.txt")
    assert tree.dcqcn.rp == dump.dcqcn.rp and tree.dcqcn.np == dump.dcqcn.np
    assert tree.dcqcn.rp_enabled == dump.dcqcn.rp_enabled == {3}
    assert tree.dcqcn.np["cnp_dscp"] == 48 and tree.dcqcn.rp["rpg_gd"] == 11
    assert (tree.mtu, tree.speed_mbps) == (dump.mtu, dump.speed_mbps) == (9000, 100000)
    assert read_sysfs_tree(GOOD / "nics/gpu01_eth2/ecn").dcqcn.rp == tree.dcqcn.rp


def test_sysfs_dump_errors():
    with pytest.raises(InputError, match="integer") as info:
        parse_sysfs_dump("/sys/class/net/eth2/ecn/roce_rp/rpg_gd:eleven\n", "d.txt")
    assert info.value.location == "d.txt:1"
    with pytest.raises(InputError, match="0..7") as info:
        parse_sysfs_dump("/x/ecn/roce_np/enable/0:1\n/x/ecn/roce_np/enable/9:1\n", "d.txt")
    assert info.value.location == "d.txt:2"
    with pytest.raises(InputError, match="path:value"):
        parse_sysfs_dump("hello world\n", "d.txt")


def test_sysfs_tree_bad_value_location(tmp_path):
    (tmp_path / "ecn/roce_rp/enable").mkdir(parents=True)
    (tmp_path / "ecn/roce_rp/enable/3").write_text("yes\n")
    with pytest.raises(InputError) as info:
        read_sysfs_tree(tmp_path)
    assert info.value.location.endswith("ecn/roce_rp/enable/3")


def test_nic_dir_and_dump_forms():
    one = read_nic(GOOD / "nics/gpu01_eth2")
    two = read_nic(GOOD / "nics/gpu02_eth2.nic")
    assert (one.name, two.name) == ("gpu01:eth2", "gpu02:eth2")
    assert one.pfc_enabled == two.pfc_enabled and one.dcqcn.rp == two.dcqcn.rp
    assert two.locations["trust"].endswith("gpu02_eth2.nic:4")  # line numbers refer to the whole dump
    assert [n.name for n in read_nics([GOOD / "nics"])] == ["gpu01:eth2", "gpu02:eth2", "gpu03:eth2"]


def test_config_db_resolves_both_reference_forms():
    ports = {p.port: p for p in read_config_db(GOOD / DB_REL, catalog=CATALOG)}
    assert set(ports) == {"Ethernet0", "Ethernet4", "Ethernet8"}
    bracket, bare = ports["Ethernet0"], ports["Ethernet8"]
    assert bracket.switch == "leaf01" and bracket.speed_mbps == 100000 and bracket.mtu == 9100
    for attr in ("dscp_to_tc", "tc_to_pg", "tc_to_queue", "pfc_to_queue", "pfc_enable", "cable_length_m"):
        assert getattr(bracket, attr) == getattr(bare, attr)
    assert bare.dscp_to_tc[26] == 3 and bare.pfc_enable == {3} and bare.cable_length_m == 5
    assert bare.queues[3].wred.green_min_bytes == 153600 and bare.queues[6].scheduler.type == "STRICT"
    assert bare.buffer_pg[3].xoff_bytes == 81920 and bare.buffer_pg[3].pool.size_bytes == 10875072
    assert bare.buffer_queue[5].name == "egress_lossy_profile"
    assert bare.pfc_wd.detection_ms == 200 and bare.pfcwd_poll_ms == 200
    assert bare.shared_headroom_pool is True


def _write_db(tmp_path: Path, change) -> Path:
    db = json.loads((GOOD / DB_REL).read_text())
    change(db)
    path = tmp_path / "config_db.json"
    path.write_text(json.dumps(db, indent=2))
    return path


def test_config_db_port_lists_and_ranges(tmp_path):
    def change(db):
        db["BUFFER_PG"] = {"Ethernet0,Ethernet4|3-4": {"profile": "pg_lossless_100000_5m_profile"}}
        db["PORT_QOS_MAP"]["Ethernet0,Ethernet4"] = db["PORT_QOS_MAP"].pop("Ethernet0")
        del db["PORT_QOS_MAP"]["Ethernet4"]
    ports = {p.port: p for p in read_config_db(_write_db(tmp_path, change), catalog=CATALOG)}
    assert set(ports["Ethernet4"].buffer_pg) == {3, 4} and ports["Ethernet0"].buffer_pg[4].xoff_bytes == 81920
    assert ports["Ethernet4"].pfc_enable == {3} and ports["Ethernet8"].buffer_pg == {}


@pytest.mark.parametrize(("change", "location", "message"), [
    (lambda db: db["PORT_QOS_MAP"]["Ethernet0"].update(dscp_to_tc_map="[DSCP_TO_TC_MAP|NOPE]"),
     "$.PORT_QOS_MAP.Ethernet0.dscp_to_tc_map", "no entry 'NOPE'"),
    (lambda db: db["PORT_QOS_MAP"]["Ethernet0"].update(tc_to_pg_map="[TC_TO_QUEUE_MAP|ROCE]"),
     "$.PORT_QOS_MAP.Ethernet0.tc_to_pg_map", "expected TC_TO_PRIORITY_GROUP_MAP"),
    (lambda db: db["PORT"]["Ethernet4"].update(mtu="jumbo"), "$.PORT.Ethernet4.mtu", "integer"),
    (lambda db: db["DSCP_TO_TC_MAP"]["ROCE"].update({"99": "3"}), "$.DSCP_TO_TC_MAP.ROCE['99']", "0..63"),
    (lambda db: db["PORT_QOS_MAP"]["Ethernet0"].update(pfc_enable="3;4"), "$.PORT_QOS_MAP.Ethernet0.pfc_enable", "priority list"),
    (lambda db: db["CABLE_LENGTH"]["AZURE"].update(Ethernet0="5 meters"), "$.CABLE_LENGTH.AZURE.Ethernet0", "cable length"),
    (lambda db: db["BUFFER_PG"].update({"Ethernet0|9": {"profile": "ingress_lossy_profile"}}), "$.BUFFER_PG['Ethernet0|9']", "0..7"),
    (lambda db: db["WRED_PROFILE"]["ROCE_LOSSLESS"].update(ecn="ecn_sometimes"), "$.WRED_PROFILE.ROCE_LOSSLESS.ecn", "ecn must be"),
    (lambda db: db.update(QUEUE=[1, 2]), "$.QUEUE", "must be an object"),
])
def test_config_db_errors_have_json_path(tmp_path, change, location, message):
    path = _write_db(tmp_path, change)
    with pytest.raises(InputError, match=message) as info:
        read_config_db(path, catalog=CATALOG)
    assert info.value.location == f"{path}:{location}"


def test_config_db_invalid_json_has_line(tmp_path):
    path = tmp_path / "config_db.json"
    path.write_text('{\n  "PORT": {\n    "Ethernet0": {"mtu": "9100",}\n  }\n}\n')
    with pytest.raises(InputError, match="invalid JSON") as info:
        read_config_db(path, catalog=CATALOG)
    assert info.value.location == f"{path}:3:33"  # line and column of the trailing comma's close


def test_config_db_not_utf8(tmp_path):
    path = tmp_path / "config_db.json"
    path.write_bytes(b'{"PORT": {}}\n\xff\xfe')
    with pytest.raises(InputError, match="UTF-8") as info:
        read_config_db(path, catalog=CATALOG)
    assert info.value.location == f"{path}:2"


def test_cabling_good():
    entries = read_cabling(GOOD / "cabling.yaml")
    assert [(e.nic, e.switch_port, e.length_m) for e in entries] == [
        ("gpu01:eth2", "leaf01:Ethernet0", 5.0), ("gpu02:eth2", "leaf01:Ethernet4", 5.0),
        ("gpu03:eth2", "leaf01:Ethernet8", 5.0)]
    assert entries[1].location.endswith("cabling.yaml:6")


@pytest.mark.parametrize(("text", "line", "message"), [
    ("links:\n  - nic: a:eth0\n    switch: leaf01:Ethernet0\n  - nic: a:eth0\n    switch: leaf01:Ethernet4\n", 4, "cabled twice"),
    ("links:\n  - nic: a:eth0\n", 2, "no switch"),
    ("links:\n  - nic: a:eth0\n    switch: leaf01\n", 3, "SWITCH:PORT"),
    ("links:\n  - nic: a:eth0\n    switch: l:E0\n    length_m: far\n", 4, "metres"),
    ("links:\n  - nic: a:eth0\n    swich: l:E0\n", 3, "unknown field"),
    ("links: [\n", 2, "invalid YAML"),
])
def test_cabling_errors_have_line(tmp_path, text, line, message):
    path = tmp_path / "links.yaml"
    path.write_text(text)
    with pytest.raises(InputError, match=message) as info:
        read_cabling(path)
    # line (the strict YAML reader adds the column: file:line:column)
    assert info.value.location == f"{path}:{line}" or info.value.location.startswith(f"{path}:{line}:")
