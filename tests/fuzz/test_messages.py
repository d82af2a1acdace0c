"""The helpers every one-line message goes through: control characters escaped, ranges written
without exponents (issue 31)."""

from __future__ import annotations

import pytest

from fabricplan.errors import printable
from fabricplan.units import format_span


@pytest.mark.parametrize("text, shown", [
    ("host\x1b[31mA", "host\\x1b[31mA"),
    ("a\nb\tc", "a\\x0ab\\x09c"),
    ("x\x00y\x7fz\x9b", "x\\x00y\\x7fz\\x9b"),
    ("evil\u202etxt.yaml", "evil\\u202etxt.yaml"),
    ("line\u2028sep", "line\\u2028sep"),
    ("plain ascii, é, 漢字, ✓", "plain ascii, é, 漢字, ✓"),
])
def test_printable_escapes_controls_only(text, shown):
    assert printable(text) == shown


def test_printable_can_keep_newlines_for_multi_line_output():
    assert printable("a\nb\x1b", keep_newlines=True) == "a\nb\\x1b"


@pytest.mark.parametrize("low, high, unit, shown", [
    (0.001, 10_000_000.0, "Mb/s", "0.001..10,000,000 Mb/s"),
    (1, 128, "", "1..128"),
    (1e-6, 0.999, "", "0.000001..0.999"),
    (1.0, 1e10, "bytes", "1..10,000,000,000 bytes"),
])
def test_format_span_writes_no_exponent(low, high, unit, shown):
    assert format_span(low, high, unit) == shown
