"""Hand-made bad inputs for lint and headroom, one per class of issue 10: huge integers in every
number an ops reader reads, absurd physical values, duplicated keys, non-finite numbers, deep
nesting, endless inputs. Each exits 2 with one line naming the right file and the field, in
bounded time, never a traceback."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from _ops_fuzz import CABLING_TEXT, DB, DB_TEXT, NIC_TEXT, check_contract, lint_args, run_cli

BIG = "9" * 5000  # past Python's 4,300-digit int conversion limit


def _db_with(path: list[str], value: object) -> str:
    db = json.loads(json.dumps(DB))
    node = db
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return json.dumps(db, indent=1)


DB_CASES = {
    # name: (config_db text, what the message must say)
    "port_mtu_huge_string": (_db_with(["PORT", "Ethernet0", "mtu"], BIG),
                             "$.PORT.Ethernet0.mtu: mtu must be in 68..65,535, got a 5,000-digit number"),
    "port_mtu_absurd": (_db_with(["PORT", "Ethernet0", "mtu"], "99999999999"),
                        "$.PORT.Ethernet0.mtu: mtu must be in 68..65,535, got 99999999999"),
    "port_mtu_huge_json_int": (DB_TEXT.replace('"mtu": "9100"', '"mtu": ' + BIG, 1), "integer has 5,000 digits"),
    "port_speed_huge": (_db_with(["PORT", "Ethernet0", "speed"], BIG), "$.PORT.Ethernet0.speed: speed must be in 1..10,000,000"),
    "profile_xoff_huge": (_db_with(["BUFFER_PROFILE", "pg_lossless_100000_5m_profile", "xoff"], BIG),
                          "xoff must be in 0..4,294,967,295, got a 5,000-digit number"),
    "profile_size_above_u32": (_db_with(["BUFFER_PROFILE", "pg_lossless_100000_5m_profile", "size"], "4294967296"),
                               "size must be in 0..4,294,967,295, got 4294967296"),
    "profile_size_negative": (_db_with(["BUFFER_PROFILE", "pg_lossless_100000_5m_profile", "size"], "-1"),
                              "size must be in 0..4,294,967,295, got -1"),
    "pfcwd_detection_huge": (_db_with(["PFC_WD", "Ethernet0", "detection_time"], BIG), "$.PFC_WD.Ethernet0.detection_time"),
    "pfcwd_poll_huge": (_db_with(["PFC_WD", "GLOBAL", "POLL_INTERVAL"], BIG), "$.PFC_WD.GLOBAL.POLL_INTERVAL"),
    "scheduler_weight_huge": (_db_with(["SCHEDULER", "scheduler.roce", "weight"], BIG), "$.SCHEDULER['scheduler.roce'].weight"),
    "wred_threshold_huge": (_db_with(["WRED_PROFILE", "ROCE_LOSSLESS", "green_min_threshold"], BIG),
                            "$.WRED_PROFILE.ROCE_LOSSLESS.green_min_threshold"),
    "pg_index_range_huge": (DB_TEXT.replace('"Ethernet0|3"', '"Ethernet0|3-' + BIG + '"', 1), "index must be in 0..7"),
    "pg_index_huge": (DB_TEXT.replace('"Ethernet0|3"', '"Ethernet0|' + BIG + '"', 1), "index must be in 0..7"),
    "dscp_map_key_64": (_db_with(["DSCP_TO_TC_MAP", "ROCE", "64"], "3") if "ROCE" in DB["DSCP_TO_TC_MAP"] else None,
                        "DSCP_TO_TC_MAP key must be in 0..63, got 64"),
    "cable_length_absurd": (_db_with(["CABLE_LENGTH", "AZURE", "Ethernet0"], "100000000000000000000m"),
                            "$.CABLE_LENGTH.AZURE.Ethernet0: cable length must be in 0..120,000 m"),
    "cable_length_huge": (_db_with(["CABLE_LENGTH", "AZURE", "Ethernet0"], BIG + "m"),
                          "cable length must look like '5m' (metres, 0..120,000)"),
    "cable_length_exponent": (_db_with(["CABLE_LENGTH", "AZURE", "Ethernet0"], "1e20m"), "cable length must look like '5m'"),
    "duplicate_key": (DB_TEXT.replace('"PORT": {', '"PORT": {"Ethernet0": {}, ', 1), "duplicate key 'Ethernet0'"),
    "duplicate_table": (DB_TEXT.replace('"PORT": {', '"CABLE_LENGTH": {}, "PORT": {', 1), "duplicate key 'CABLE_LENGTH'"),
    "nan_literal": (DB_TEXT.replace('"mtu": "9100"', '"mtu": NaN', 1), "NaN is not a JSON number"),
    "float_overflow": (DB_TEXT.replace('"mtu": "9100"', '"mtu": 1e999', 1), "too large for a float"),
    "mtu_float": (DB_TEXT.replace('"mtu": "9100"', '"mtu": 9100.5', 1), "mtu must be an integer"),
    "mtu_wrong_type": (DB_TEXT.replace('"mtu": "9100"', '"mtu": [9100]', 1), "mtu must be an integer"),
    "deep_nesting": ('{"PORT": ' + "[" * 1500 + "]" * 1500 + "}", "nested more than"),
    "truncated": (DB_TEXT[: len(DB_TEXT) // 2], "invalid JSON"),
    "empty": ("", "file is empty"),
}


@pytest.mark.parametrize("name", sorted(DB_CASES))
def test_config_db_case(tmp_path, name):
    text, expected = DB_CASES[name]
    assert text is not None, "fixture changed: the case needs updating"
    args, files = lint_args(tmp_path, db=text)
    code, out, err, seconds = run_cli(*args)
    check_contract(code, out, err, seconds, blamed=files["db"])
    assert code == 2 and expected in err, err


NIC_CASES = {
    "receive_buffer_huge": (("Receive buffer size (bytes): 130944,", f"Receive buffer size (bytes): {BIG},"),
                            "receive buffer size must be in 0..4,294,967,295"),
    "max_buffer_size_huge": (("max_buffer_size=262016", f"max_buffer_size={BIG}"), "max_buffer_size must be in"),
    "cable_len_huge": (("Cable len: 7", f"Cable len: {BIG}"), "Cable len must be in 0..120,000"),
    "cable_len_absurd": (("Cable len: 7", "Cable len: 100000000000000000000"), "Cable len must be in 0..120,000, got"),
    "dscp_64": (("prio:7 dscp:63,", "prio:7 dscp:64,63,"), "DSCP must be in 0..63, got 64"),
    "dscp_huge": (("prio:7 dscp:63,", f"prio:7 dscp:{BIG},63,"), "DSCP must be in 0..63"),
    "prio_9": (("\tprio:7 dscp:", "\tprio:9 dscp:"), "dscp2prio priority must be in 0..7, got 9"),
    "tc_huge": (("tc: 6 ratelimit", f"tc: {BIG} ratelimit"), "tc must be in 0..7"),
    "pfc_row_huge": (("\tbuffer      0   0   0   1", f"\tbuffer      0   0   0   {BIG}"), "buffer row value must be in 0..7"),
    "sysfs_value_huge": (("roce_rp/rpg_gd:11", f"roce_rp/rpg_gd:{BIG}"), "roce_rp/rpg_gd must be in 0..4,294,967,295"),
    "sysfs_mtu_absurd": (("/sys/class/net/eth2/mtu:9000", "/sys/class/net/eth2/mtu:99999999999"),
                         "mtu must be in 68..65,535, got 99999999999"),
    "sysfs_negative": (("roce_np/min_time_between_cnps:4", "roce_np/min_time_between_cnps:-4"),
                       "min_time_between_cnps must be in 0..4,294,967,295, got -4"),
}


@pytest.mark.parametrize("name", sorted(NIC_CASES))
def test_nic_dump_case(tmp_path, name):
    (old, new), expected = NIC_CASES[name]
    assert old in NIC_TEXT, "fixture changed: the case needs updating"
    args, files = lint_args(tmp_path, nic=NIC_TEXT.replace(old, new, 1))
    code, out, err, seconds = run_cli(*args)
    check_contract(code, out, err, seconds, blamed=files["nic"])
    assert code == 2 and expected in err, err


CABLING_CASES = {
    "length_absurd": (("length_m: 5", "length_m: 100000000000000000000"),
                      "cable length '100000000000000000000' must be in 0..120,000 m"),
    "length_huge": (("length_m: 5", f"length_m: {BIG}"), "integer has 5,000 digits"),
    "length_exponent": (("length_m: 5", "length_m: 1e20"), "cable length '1e20' is not like 30m or 2.5m (0..120,000 m"),
    "length_nan": (("length_m: 5", "length_m: .nan"), "cable length '.nan' is not like 30m"),
    "length_negative": (("length_m: 5", "length_m: -5"), "cable length '-5' must be in 0..120,000 m"),
    "length_km": (("length_m: 5", "length_m: 200km"), "cable length '200km' must be in 0..120,000 m"),
    "duplicate_field": (("length_m: 5", "length_m: 5\n    length_m: 7"), "duplicate key 'length_m'"),
    "duplicate_top": (("links:", "links: []\nlinks:"), "duplicate key 'links'"),
    "control_character": (("links:", "links:\x00"), "control character U+0000 is not allowed"),
}


@pytest.mark.parametrize("name", sorted(CABLING_CASES))
def test_cabling_case(tmp_path, name):
    (old, new), expected = CABLING_CASES[name]
    assert old in CABLING_TEXT
    args, files = lint_args(tmp_path, cabling=CABLING_TEXT.replace(old, new, 1))
    code, out, err, seconds = run_cli(*args)
    check_contract(code, out, err, seconds, blamed=files["cabling"])
    assert code == 2 and expected in err and str(files["db"]) not in err, err


CONFIG_CASES = {
    "dscp_64": ("settings:\n  roce_dscp: 64\n", "option roce_dscp must be in 0..63, got 64"),
    "dscp_negative": ("settings:\n  roce_dscp: -1\n", "option roce_dscp must be in 0..63, got -1"),
    "pcp_9": ("settings:\n  roce_pcp: 9\n", "option roce_pcp must be in 0..7, got 9"),
    "cnp_prio_9": ("rules:\n  CNP001:\n    cnp_802p_prio: 9\n", "option cnp_802p_prio must be in 0..7, got 9"),
    "huge_int": (f"settings:\n  roce_dscp: {BIG}\n", "integer has 5,000 digits"),
    "big_int": ("rules:\n  PFCWD001:\n    detection_max_ms: " + "9" * 200 + "\n", "got a 200-digit number"),
    "float_overflow": ("rules:\n  PFCWD001:\n    detection_max_ms: 1.0e+999\n", "too large for a float"),
    "nan": ("rules:\n  PFC002:\n    max_lossless_priorities: .nan\n", "must be like 2"),
    "bool_for_int": ("settings:\n  roce_dscp: true\n", "must be like 26"),
    "list_of_ints": ("rules:\n  ETS001:\n    scheduler_types: [1, 2]\n", "must be like"),
    "headroom_model": ("rules:\n  HDRM001:\n    headroom_model: lua\n", "must be one of generic, sonic"),
    "duplicate_rule": ("rules:\n  PFC002: disable\n  PFC002: enable\n", "duplicate key 'PFC002'"),
    "duplicate_setting": ("settings:\n  roce_dscp: 26\n  roce_dscp: 24\n", "duplicate key 'roce_dscp'"),
    "alias_bomb": ("a: &a [x,x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{c}: &{c} [*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p}]\n"
        for p, c in zip("abcdefghi", "bcdefghij")), "aliases"),
}


@pytest.mark.parametrize("name", sorted(CONFIG_CASES))
def test_lint_config_case(tmp_path, name):
    text, expected = CONFIG_CASES[name]
    args, files = lint_args(tmp_path, config=text)
    code, out, err, seconds = run_cli(*args)
    check_contract(code, out, err, seconds, blamed=files["config"])
    assert code == 2 and expected in err, err


HEADROOM = ["headroom", "--speed", "100G", "--cable", "5m", "--mtu", "9100"]
HEADROOM_CASES = {
    "speed_huge": (["--speed", BIG], "--speed", "is not like 400G"),
    "speed_absurd": (["--speed", "99999999999G"], "--speed", "must be in 1..10,000,000 Mb/s"),
    "speed_zero": (["--speed", "0"], "--speed", "must be in 1..10,000,000 Mb/s"),
    "cable_huge": (["--cable", BIG + "m"], "--cable", "is not like 30m or 2.5m (0..120,000 m; a bare number is metres)"),
    "cable_exponent": (["--cable", "1e20m"], "--cable", "is not like 30m or 2.5m (0..120,000 m"),
    "cable_absurd": (["--cable", "100000000000000000000m"], "--cable", "must be in 0..120,000 m"),
    "cable_too_long": (["--cable", "200000m"], "--cable", "must be in 0..120,000 m"),
    "cable_negative": (["--cable", "-5m"], "--cable", "cable length '-5m' must be in 0..120,000 m"),
    "speed_bytes": (["--speed", "50GB/s"], "--speed", "is in bytes per second; a link rate is in bits"),
    "speed_fraction": (["--speed", "2.0005G"], "--speed", "must be a whole number of Mb/s"),
    "speed_nan": (["--speed", "nan"], "--speed", "speed 'nan' is not like 400G, 400Gb/s or 400000 "
                                                 "(1..10,000,000 Mb/s; a bare number is Mb/s)"),
    "mtu_absurd": (["--mtu", "99999999999"], "--mtu", "MTU must be in 68..65,535 bytes, got 99999999999"),
    "mtu_huge": (["--mtu", BIG], "--mtu", ""),
    "mtu_negative": (["--mtu", "-1"], "--mtu", "MTU must be in 68..65,535"),
    "lossless_mtu_huge": (["--model", "sonic", "--asic", "spectrum-2", "--lossless-mtu", BIG], "--lossless-mtu", ""),
    "lossless_mtu_absurd": (["--model", "sonic", "--asic", "spectrum-2", "--lossless-mtu", "99999999999"],
                            "--lossless-mtu", "must be in 1..65,535"),
    "small_packet_nan": (["--model", "sonic", "--asic", "spectrum-2", "--small-packet-percentage", "nan"],
                         "--small-packet-percentage", "must be in 0..100"),
    "mlx5_cable_huge": (["--model", "mlx5", "--cable", "5" + "0" * 400 + "m"], "--cable", "is not like 30m"),
    "algorithm_unknown": (["--model", "sonic", "--asic", "spectrum-2", "--algorithm", BIG], "--algorithm",
                          "must be one of 2020, 2024, current"),
    "algorithm_generic": (["--algorithm", "2020"], "--model", "apply to --model sonic only"),
    "broadcom_speed_missing": (["--model", "sonic", "--asic", "tomahawk", "--speed", "400G"], "speed",
                               "no lossless profile for 400000 Mb/s"),
    "broadcom_algorithm": (["--model", "sonic", "--asic", "trident3", "--algorithm", "2020"], "algorithm",
                           "applies to Spectrum ASICs"),
}


@pytest.mark.parametrize("name", sorted(HEADROOM_CASES))
def test_headroom_flag_case(name):
    extra, flag, expected = HEADROOM_CASES[name]
    args = list(HEADROOM)
    for i in range(0, len(extra), 2):
        if extra[i] in args:
            args[args.index(extra[i]) + 1] = extra[i + 1]
        else:
            args += extra[i:i + 2]
    code, out, err, seconds = run_cli(*args)
    check_contract(code, out, err, seconds, blamed=flag)
    assert code == 2 and expected in err, err


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
@pytest.mark.parametrize("which", ["--nic", "--switch", "--cabling", "--config"])
def test_endless_input_is_refused_in_bounded_time(tmp_path, which):
    args, _files = lint_args(tmp_path)
    if which == "--config":
        args += ["--config", "/dev/zero"]
    else:
        args[args.index(which, 5 if which == "--nic" else 0) + 1] = "/dev/zero"
    code, out, err, seconds = run_cli(*args)
    check_contract(code, out, err, seconds, blamed="/dev/zero")
    assert code == 2


def test_fifo_without_writer_does_not_hang(tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    args, _files = lint_args(tmp_path)
    args[args.index("--switch") + 1] = fifo
    code, out, err, seconds = run_cli(*args)
    check_contract(code, out, err, seconds, blamed=fifo)
    assert code == 2
