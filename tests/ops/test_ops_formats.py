"""Input layouts: every mlnx_qos output layout since 2017, both CONFIG_DB layouts, "0 links" is an error."""

from __future__ import annotations

import json

import pytest
from ops_fixtures import DB_REL, GOOD, OPS_FIXTURES, setup_args

from fabricplan.catalog import load_catalog
from fabricplan.errors import InputError
from fabricplan.ops.readers import parse_mlnx_qos, read_config_db
from fabricplan.ops.readers.mlnx_qos import LAYOUTS

CATALOG = load_catalog()

SAMPLES = OPS_FIXTURES / "mlnx_qos"


@pytest.mark.parametrize(("name", "layout", "max_buffer", "default_prios"), [
    ("ofed-4.2", "ofed-4.2", None, ()),
    ("ofed-4.2-wrapped", "ofed-4.2", None, ()),
    ("ofed-4.6", "ofed-4.6", None, ()),
    ("2021-default-prio", "2021-default-prio", 262016, ()),
    ("2023-max-buffer", "2023-max-buffer", 262016, (3,)),
    ("2024-no-default-prio", "2024-no-default-prio", 262016, ()),
])
def test_every_mlnx_qos_layout_reads_the_same_port(name, layout, max_buffer, default_prios):
    qos = parse_mlnx_qos((SAMPLES / f"{name}.txt").read_text(), name)
    assert qos.layout == layout and layout in LAYOUTS
    assert qos.trust == "dscp" and qos.pfc_enabled == {3}
    assert len(qos.dscp2prio) == 64 and qos.dscp2prio[26] == 3
    assert qos.max_buffer_size == max_buffer and qos.default_priorities == default_prios
    assert {tc: (t.tsa, t.bw_percent) for tc, t in qos.tcs.items()} == {0: ("ets", 50), 3: ("ets", 50), 6: ("strict", 0)}
    if layout.startswith("ofed-4.2"):
        assert qos.buffer_sizes is None and qos.prio2buffer is None
    else:
        assert qos.buffer_sizes == (130944, 130944, 0, 0, 0, 0, 0, 0) and qos.prio2buffer == (0, 0, 0, 1, 0, 0, 0, 0)


def test_wrapped_2017_dscp_list_continues_the_priority():
    qos = parse_mlnx_qos((SAMPLES / "ofed-4.2-wrapped.txt").read_text(), "w")
    assert qos.dscp2prio[50] == 3


def test_lldpad_warning_and_unknown_tsa_are_accepted():
    text = ("****** WARNING: lldpad service is running and may overwrite your settings ******\n\n"
            + (SAMPLES / "2024-no-default-prio.txt").read_text().replace("tsa: strict", "tsa: unknown"))
    assert parse_mlnx_qos(text, "x").tcs[6].tsa == "unknown"


def test_default_priority_out_of_range_names_line():
    text = (SAMPLES / "2023-max-buffer.txt").read_text().replace("\tprio:3\n", "\tprio:9\n")
    with pytest.raises(InputError, match="default priority must be in 0..7, got 9") as info:
        parse_mlnx_qos(text, "bad.txt")
    assert info.value.location == "bad.txt:13"


def test_the_nic_lint_accepts_a_2021_capture(cli, tmp_path):
    capture = tmp_path / "gpu01_eth2"
    capture.mkdir()
    for item in (GOOD / "nics/gpu01_eth2").rglob("*"):
        target = capture / item.relative_to(GOOD / "nics/gpu01_eth2")
        if item.is_dir():
            target.mkdir(exist_ok=True)
        else:
            target.write_bytes(item.read_bytes())
    (capture / "mlnx_qos.txt").write_text((SAMPLES / "2021-default-prio.txt").read_text())
    args = setup_args()
    args[args.index(str(GOOD / "nics/gpu01_eth2"))] = str(capture)
    result = cli("lint", *args, "--json")
    assert result.code == 0, result.err
    assert result.json()["findings"] == []


def _flat(nested: dict, wrap: bool = False) -> dict:
    out = {}
    for table, rows in nested.items():
        for key, row in rows.items():
            out[f"{table}|{key}"] = {"type": "hash", "value": row} if wrap else row
    return out


@pytest.mark.parametrize("wrap", [False, True], ids=["mock-table", "redis-dump"])
def test_flat_config_db_reads_like_nested(tmp_path, wrap):
    nested = json.loads((GOOD / DB_REL).read_text())
    path = tmp_path / "config_db.json"
    path.write_text(json.dumps(_flat(nested, wrap)))
    flat_ports = {p.port: p for p in read_config_db(path, catalog=CATALOG)}
    nested_ports = {p.port: p for p in read_config_db(GOOD / DB_REL, catalog=CATALOG)}
    assert flat_ports.keys() == nested_ports.keys() and len(flat_ports) == 3
    for name, port in nested_ports.items():
        other = flat_ports[name]
        assert (other.speed_mbps, other.pfc_enable, other.dscp_to_tc, other.cable_length_m) == \
               (port.speed_mbps, port.pfc_enable, port.dscp_to_tc, port.cable_length_m)
        assert {i: p.xoff_bytes for i, p in other.buffer_pg.items()} == {i: p.xoff_bytes for i, p in port.buffer_pg.items()}
    assert flat_ports["Ethernet0"].locations["speed"] == f"{path}:$['PORT|Ethernet0'].speed"


def test_flat_config_db_lints_clean(cli, tmp_path):
    path = tmp_path / "config_db.json"
    path.write_text(json.dumps(_flat(json.loads((GOOD / DB_REL).read_text()))))
    args = setup_args()
    args[args.index("--switch") + 1] = str(path)
    result = cli("lint", *args, "--json")
    assert result.code == 0 and result.json()["summary"]["links"] == 3 and result.json()["findings"] == []


def test_flat_list_fields_lose_the_at_sign(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"PORT|Ethernet0": {"speed": "100000", "mtu": "9100"},
                                "PORT_QOS_MAP|Ethernet0": {"pfc_enable@": "3,4"}}))
    (port,) = read_config_db(path, catalog=CATALOG)
    assert port.pfc_enable == {3, 4}


def test_zero_ports_is_an_error_not_a_pass(cli, tmp_path):
    path = tmp_path / "dump.json"
    path.write_text(json.dumps({"port|Ethernet0": {"speed": "100000"}}))  # not a CONFIG_DB table name
    result = cli("lint", "--switch", path)
    assert result.code == 2 and "read 0 switch ports" in result.err and str(path) in result.err
    assert "Traceback" not in result.err
