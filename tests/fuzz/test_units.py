"""The one parser of sizes, link rates, lengths and durations (fabricplan.units): its semantics,
format -> parse round trips, and any text at all giving a value in range or one InputError naming
the flag (never another exception, never a line break in the message)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from fabricplan.errors import InputError
from fabricplan.units import (
    BYTE_UNITS,
    DURATION_UNITS,
    LENGTH_UNITS,
    MAX_MESSAGE_BYTES,
    check_bytes,
    format_bytes,
    format_duration,
    format_length,
    format_rate,
    parse_bytes,
    parse_duration,
    parse_length,
    parse_rate,
)


@pytest.mark.parametrize(("text", "size"), [
    ("8GiB", 8 * 2 ** 30), ("8G", 8 * 2 ** 30), ("8g", 8 * 2 ** 30), ("16M", 16 * 2 ** 20), ("64K", 65536),
    ("1T", 2 ** 40), ("1TiB", 2 ** 40), ("1MB", 10 ** 6), ("64KB", 64_000), ("1GB", 10 ** 9), ("1 MiB", 2 ** 20),
    ("4096", 4096), ("4096B", 4096), (" 8b ", 8), ("1.5KiB", 1536), ("0.5MiB", 2 ** 19), ("1.5KB", 1500),
    ("+8", 8), ("008", 8), ("8.", 8),
])
def test_sizes_binary_letters_as_nccl_tests_decimal_with_b(text, size):
    assert parse_bytes(text, "--size") == size


@pytest.mark.parametrize(("text", "message"), [
    ("0.5", "--size: size '0.5' is 0.5 bytes; a size is a whole number of bytes (1 B..1 TiB)"),
    ("1.5", "--size: size '1.5' is 1.5 bytes"),
    ("0.1KB", None),  # 100 B: whole, accepted
    ("0", "--size: size '0' must be in 1 B..1 TiB"),
    ("-1MB", "--size: size '-1MB' must be in 1 B..1 TiB"),
    ("2TiB", "--size: size '2TiB' must be in 1 B..1 TiB"),
    ("inf", "--size: size 'inf' is not like 8B, 64KiB, 16MiB, 8G or 1MB (1 B..1 TiB, whole bytes)"),
    ("nan", "is not like"), ("Infinity", "is not like"), ("1e6", "is not like"), ("", "is not like"),
    ("MB", "is not like"), ("1,000", "is not like"), ("0x10", "is not like"),
    ("1PB", "has an unknown unit 'PB'; use B, KiB, MiB, GiB, TiB (K, M, G, T: the same), KB, MB, GB, TB"),
    ("1Mb/s", "has an unknown unit"), ("9" * 41, "is not like"), ("9" * 40, "must be in 1 B..1 TiB"),
])
def test_sizes_refused_in_one_line_naming_the_flag_and_the_range(text, message):
    if message is None:
        assert parse_bytes(text, "--size") == 100
        return
    with pytest.raises(InputError) as caught:
        parse_bytes(text, "--size")
    assert caught.value.location == "--size"
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_size_given_as_a_number_must_be_whole_bytes_too():
    assert check_bytes(1e6, "flow_size") == 10 ** 6 and check_bytes(4096, "size") == 4096
    for bad, fragment in ((0.5, "is 0.5 bytes"), (math.nan, "must be in"), (math.inf, "must be in"),
                          (-1, "must be in"), (2 ** 41, "must be in"), ("8", "must be a number"), (True, "a number")):
        with pytest.raises(InputError, match=fragment):
            check_bytes(bad, "size")


@pytest.mark.parametrize(("text", "unit", "value"), [
    ("400G", "Gb/s", 400.0), ("400Gb/s", "Gb/s", 400.0), ("400Gbps", "Gb/s", 400.0), ("400gbit/s", "Gb/s", 400.0),
    ("400 Gbits/s", "Gb/s", 400.0), ("400", "Gb/s", 400.0), ("2.5G", "Gb/s", 2.5), ("100M", "Gb/s", 0.1),
    ("1.6T", "Gb/s", 1600.0), ("400G", "Mb/s", 400_000), ("25Gbps", "Mb/s", 25_000), ("100000", "Mb/s", 100_000),
    ("100000kb/s", "Mb/s", 100),
])
def test_link_rates_are_bits_per_second_with_decimal_prefixes(text, unit, value):
    assert parse_rate(text, "--link", unit=unit) == value


def test_a_bare_rate_is_the_flags_unit_and_bytes_are_refused():
    assert parse_rate("100000", "--speed", unit="Mb/s", whole=True) == 100_000
    assert parse_rate("100", "--link", unit="Gb/s") == 100.0
    for text in ("50GB/s", "50GBps", "400GB"):
        with pytest.raises(InputError, match="is in bytes per second; a link rate is in bits"):
            parse_rate(text, "--link")
    for text, fragment in (("0G", "must be in 0.001..10,000 Gb/s"), ("20T", "must be in 0.001..10,000 Gb/s"),
                           ("1Gib/s", "unknown unit 'Gib/s'"), ("fast", "is not like 400G, 400Gb/s or 400 "
                                                                         "(0.001..10,000 Gb/s; a bare number is Gb/s)"),
                           ("-100G", "must be in"), ("inf", "is not like"), ("G", "is not like")):
        with pytest.raises(InputError, match=fragment.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
            parse_rate(text, "--link")
    with pytest.raises(InputError, match="must be a whole number of Mb/s"):
        parse_rate("2.0005G", "--speed", unit="Mb/s", whole=True)


@pytest.mark.parametrize(("text", "metres"), [("30m", 30.0), ("30", 30.0), ("2.5 m", 2.5), ("30M", 30.0),
                                              ("150cm", 1.5), ("1.2km", 1200.0), ("500mm", 0.5)])
def test_lengths_are_metres(text, metres):
    assert parse_length(text, "--cable") == metres


@pytest.mark.parametrize(("text", "seconds"), [("15s", 15.0), ("15", 15.0), ("5m", 300.0), ("5min", 300.0),
                                               ("1h", 3600.0), ("1d", 86400.0), ("250ms", 0.25), ("1.5s", 1.5),
                                               ("2H", 7200.0), ("500MS", 0.5)])
def test_durations(text, seconds):
    assert parse_duration(text, "--step") == seconds


def test_durations_in_other_units_and_ranges():
    assert parse_duration("85us", "--delay", unit="us", lo=0, hi=1e9) == 85.0
    assert parse_duration("85\u00b5s", "--delay", unit="us", lo=0, hi=1e9) == 85.0
    assert parse_duration("0.5ms", "--delay", unit="us", lo=0, hi=1e9) == 500.0
    assert parse_duration("85", "--delay", unit="us", lo=0, hi=1e9) == 85.0
    for text, fragment in (("0", "must be in 1ms..366d"), ("400d", "must be in 1ms..366d"),
                           ("5y", "unknown unit 'y'; use ns, us, ms, s, m (minutes), h or d"),
                           ("fast", "is not like 250ms, 15s, 5m or 1h (1ms..366d; a bare number is seconds)")):
        with pytest.raises(InputError) as caught:
            parse_duration(text, "--step", noun="query step")
        assert fragment in str(caught.value) and caught.value.location == "--step"


# --- round trips: what format_* writes, parse_* reads back to the same value ---------------------

@given(st.integers(1, MAX_MESSAGE_BYTES), st.booleans())
@settings(max_examples=examples(300))
def test_format_then_parse_bytes_is_the_identity(n, decimal):
    text = format_bytes(n, decimal=decimal)
    assert parse_bytes(text, "--size") == n
    assert parse_bytes(text.lower(), "--size") == n and parse_bytes(f" {text.upper()} ", "--size") == n


@given(st.integers(1, 2 ** 20), st.sampled_from(sorted(BYTE_UNITS)))
@settings(max_examples=examples(200))
def test_a_count_of_any_size_unit_is_count_times_the_unit(count, unit):
    size = count * BYTE_UNITS[unit]
    if size > MAX_MESSAGE_BYTES:
        with pytest.raises(InputError, match="must be in 1 B..1 TiB"):
            parse_bytes(f"{count}{unit}", "--flow-size")
    else:
        assert parse_bytes(f"{count}{unit}", "--flow-size") == size


@given(st.floats(0.001, 10_000, allow_nan=False), st.sampled_from(["Gb/s", "Mb/s"]))
@settings(max_examples=examples(200))
def test_format_then_parse_rate_is_the_identity(gbps, unit):
    value = gbps if unit == "Gb/s" else gbps * 1000
    assert parse_rate(format_rate(value, unit), "--link", unit=unit) == value


@given(st.floats(0, 120_000, allow_nan=False).filter(lambda m: m == 0 or m >= 1e-6))  # 1 um: 40 characters hold it
@settings(max_examples=examples(200))
def test_format_then_parse_length_is_the_identity(metres):
    assert parse_length(format_length(metres), "--cable") == metres


@given(st.one_of(st.floats(0.001, 366 * 86400, allow_nan=False),
                 st.integers(1, 366 * 86400).map(float),
                 st.integers(1, 10 ** 6).map(lambda ms: ms / 1000)))
@settings(max_examples=examples(300))
def test_format_then_parse_duration_is_the_identity(seconds):
    assert parse_duration(format_duration(seconds), "--step") == seconds


def test_formats_read_well():
    assert [format_bytes(n) for n in (8, 1536, 3 * 2 ** 20, 2 ** 40)] == ["8B", "1536B", "3MiB", "1TiB"]
    assert format_bytes(10 ** 6, decimal=True) == "1MB"
    assert [format_duration(s) for s in (900.0, 0.25, 1.5, 86400.0)] == ["15min", "250ms", "1500ms", "1d"]
    assert format_rate(2.5) == "2.5Gb/s" and format_length(30.0) == "30m"


# --- fuzz: any text is a value in range or one InputError naming the flag -------------------------

UNITS_ALPHABET = "0123456789.+- eEinfaINFAKMGTBbiIpsS/mkuµμnhd,x\n\t"
texts = st.one_of(st.text(max_size=60), st.text(alphabet=UNITS_ALPHABET, max_size=30),
                  st.builds(lambda n, u: f"{n}{u}", st.floats(allow_nan=True, allow_infinity=True),
                            st.sampled_from(sorted(BYTE_UNITS) + sorted(DURATION_UNITS) + sorted(LENGTH_UNITS)
                                            + ["Gb/s", "GB/s", "Gbps", "bit/s", "%", "iB"])))


def _refused_cleanly(call, where: str) -> None:
    try:
        call()
    except InputError as exc:
        assert exc.location == where
        assert "\n" not in str(exc) and "\r" not in str(exc) and len(str(exc)) < 300, str(exc)


@given(texts)
@settings(max_examples=examples(400))
def test_any_text_is_a_size_in_range_or_one_clean_error(text):
    def call():
        value = parse_bytes(text, "--flow-size")
        assert isinstance(value, int) and 1 <= value <= MAX_MESSAGE_BYTES
    _refused_cleanly(call, "--flow-size")


@given(texts)
@settings(max_examples=examples(400))
def test_any_text_is_a_rate_in_range_or_one_clean_error(text):
    def call():
        value = parse_rate(text, "--speed", unit="Mb/s", lo=1, hi=10_000_000, whole=True)
        assert isinstance(value, int) and 1 <= value <= 10_000_000
        gbps = parse_rate(text, "--link")
        assert math.isfinite(gbps) and 0.001 <= gbps <= 10_000
    _refused_cleanly(call, "--speed")


@given(texts)
@settings(max_examples=examples(400))
def test_any_text_is_a_length_or_duration_in_range_or_one_clean_error(text):
    def length():
        assert 0 <= parse_length(text, "--cable") <= 120_000

    def duration():
        assert 0.001 <= parse_duration(text, "--watch") <= 366 * 86400
    _refused_cleanly(length, "--cable")
    _refused_cleanly(duration, "--watch")
