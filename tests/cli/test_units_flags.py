"""Every flag that takes a size, rate, length or duration reads it with the one parser
(fabricplan.units): the same text means the same everywhere, and a bad value is one line naming
the flag and the accepted range, exit 2, no traceback."""

from __future__ import annotations

import pytest

FIXTURES = "tests/fixtures/health"


def test_one_megabyte_means_the_same_to_collective_and_simulate(cli):
    collective = cli("collective", "--size", "1M", "--gpus", "16", "--json")
    simulate = cli("simulate", "incast", "--k", "4", "--senders", "2", "--flow-size", "1M", "--max-time-ms", "1",
                   "--json")
    assert collective.code == 0 and simulate.code == 0, (collective.err, simulate.err)
    assert collective.json()["size_bytes"] == 2 ** 20 == simulate.json()["settings"]["flow_size_bytes"]
    decimal = cli("collective", "--size", "1MB", "--gpus", "16", "--json").json()["size_bytes"]
    assert decimal == 10 ** 6


def test_link_rates_read_alike_in_dcqcn_simulate_and_headroom(cli):
    dcqcn = cli("dcqcn", "--flows", "2", "--delay-us", "10", "--link", "400Gb/s", "--json")
    assert dcqcn.code == 0, dcqcn.err
    assert cli("dcqcn", "--flows", "2", "--delay-us", "10", "--link", "400Gbps", "--json").out == dcqcn.out
    assert cli("dcqcn", "--flows", "2", "--delay-us", "10", "--link", "400", "--json").out == dcqcn.out
    headroom = cli("headroom", "--speed", "400Gb/s", "--cable", "30 m", "--mtu", "9216", "--json")
    assert headroom.code == 0, headroom.err
    assert cli("headroom", "--speed", "400000", "--cable", "30", "--mtu", "9216", "--json").out == headroom.out


COLLECTIVE = ("collective", "--gpus", "16")
SIMULATE = ("simulate", "incast", "--k", "4", "--senders", "2", "--max-time-ms", "1")
DCQCN = ("dcqcn", "--flows", "2", "--delay-us", "10")
HEADROOM = ("headroom", "--mtu", "9100")
HEALTH = ("health", "--rtt", f"{FIXTURES}/rtt.csv")


@pytest.mark.parametrize(("command", "args", "expected"), [
    (COLLECTIVE, ("--size", "0.5"), "--size: size '0.5' is 0.5 bytes; a size is a whole number of bytes (1 B..1 TiB)"),
    (COLLECTIVE, ("--size", "1.5"), "--size: size '1.5' is 1.5 bytes"),
    (COLLECTIVE, ("--size", "nan"), "--size: size 'nan' is not like 8B, 64KiB, 16MiB, 8G or 1MB (1 B..1 TiB"),
    (COLLECTIVE, ("--size", "inf"), "--size: size 'inf' is not like"),
    (COLLECTIVE, ("--size", "-1K"), "--size: size '-1K' must be in 1 B..1 TiB"),
    (COLLECTIVE, ("--size", "2T"), "--size: size '2T' must be in 1 B..1 TiB"),
    (COLLECTIVE, ("--sweep-sizes", "0.5:8G"), "--sweep-sizes: start '0.5' is 0.5 bytes"),
    (SIMULATE, ("--flow-size", "0.5"), "--flow-size: flow size '0.5' is 0.5 bytes; a size is a whole number of bytes"),
    (SIMULATE, ("--flow-size", "inf"), "--flow-size: flow size 'inf' is not like 8B, 64KiB, 16MiB, 8G or 1MB "
                                       "(1 B..1 TiB"),
    (SIMULATE, ("--flow-size", "-1MB"), "--flow-size: flow size '-1MB' must be in 1 B..1 TiB"),
    (SIMULATE, ("--flow-size", "9" * 40), "--flow-size: flow size '999999999999'...(40 characters) must be in "
                                          "1 B..1 TiB"),
    (SIMULATE, ("--link", "nan"), "--link: link rate 'nan' is not like 400G, 400Gb/s or 400 (0.001..10,000 Gb/s; "
                                  "a bare number is Gb/s)"),
    (SIMULATE, ("--link", "50GB/s"), "--link: link rate '50GB/s' is in bytes per second"),
    (SIMULATE, ("--link-latency-us", "-1"), "--link-latency-us: must be in 0..1,000,000 us"),
    (DCQCN, ("--link", "0"), "--link: link rate '0' must be in 0.001..10,000 Gb/s"),
    (DCQCN, ("--link", "1e400"), "--link: link rate '1e400' is not like"),
    (DCQCN, ("--link", "-40G"), "--link: link rate '-40G' must be in 0.001..10,000 Gb/s"),
    (HEADROOM, ("--speed", "inf", "--cable", "5m"), "--speed: speed 'inf' is not like 400G, 400Gb/s or 400000 "
                                                    "(1..10,000,000 Mb/s; a bare number is Mb/s)"),
    (HEADROOM, ("--speed", "100G", "--cable", "nan"), "--cable: cable length 'nan' is not like 30m or 2.5m "
                                                      "(0..120,000 m; a bare number is metres)"),
    (HEADROOM, ("--speed", "100G", "--cable", "-1"), "--cable: cable length '-1' must be in 0..120,000 m"),
    (HEALTH, ("--step", "0"), "--step: query step '0' must be in 1ms..366d"),
    (HEALTH, ("--step", "inf"), "--step: query step 'inf' is not like 250ms, 15s, 5m or 1h (1ms..366d; "
                                "a bare number is seconds)"),
    (HEALTH, ("--start", "now-nan"), "--start: offset 'nan' is not like"),
    (HEALTH, ("--start", "now-5y"), "--start: offset '5y' has an unknown unit 'y'"),
    (HEALTH, ("--start", "now+5m"), "--start: expected now, now-15m, epoch seconds or ISO 8601"),
    (HEALTH, ("--start", "now-101y"), "--start: offset '101y' has an unknown unit"),
    (HEALTH, ("--start", "now-40000d"), "--start: offset '40000d' must be in"),
])
def test_a_bad_quantity_is_one_line_naming_the_flag_and_the_range(cli, command, args, expected):
    result = cli(*command, *args)
    assert result.code == 2, (result.out, result.err)
    assert result.out == "" and "Traceback" not in result.err
    lines = result.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and expected in lines[0], result.err


def test_health_durations_take_any_time_unit(cli):
    base = cli(*HEALTH, "--json", "--fail-on", "never")
    assert base.code == 0, base.err
    for start in ("now-3650d", "-87600h", "now - 5256000m"):
        result = cli(*HEALTH, "--start", start, "--json", "--fail-on", "never")
        assert result.code == 0, result.err
