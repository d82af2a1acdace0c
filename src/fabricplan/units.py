"""Quantities written as text (sizes, link rates, lengths, durations): one parser for all of them.

Every command-line flag and file field that takes one of these as text reads it here, so that the
same text means the same thing everywhere (README, "Units"). A quantity is an optional sign, a
decimal number (digits with an optional fraction; no exponent, at most 40 characters) and a unit:

======== ==================================================================================
kind     units (spaces between number and unit are allowed)
======== ==================================================================================
size     bytes, case-insensitive. ``4096`` = ``4096B``. Binary: ``KiB MiB GiB TiB`` (2^10, 2^20,
         2^30, 2^40) and the bare letters ``K M G T``, which mean the same binary units as in
         nccl-tests (``-e 8G`` is 8 GiB). Decimal: ``KB MB GB TB`` (10^3, 10^6, 10^9, 10^12). A
         size is a whole, positive number of bytes: ``1.5KiB`` is 1,536 B, ``0.5`` and ``1.5``
         are refused (never rounded).
rate     bits per second, decimal prefixes ``k M G T`` (case-insensitive) with an optional ``b``,
         ``bps``, ``b/s``, ``bit/s`` or ``bits/s``: ``400G`` = ``400Gb/s`` = ``400Gbps`` =
         400 x 10^9 b/s. A bare number is the flag's own unit (``headroom --speed``: Mb/s, as
         SONiC writes ``PORT.speed``; ``--link``: Gb/s). A capital ``B`` (bytes per second) is
         refused: a link rate is in bits.
length   metres: ``30`` = ``30m``; also ``mm``, ``cm``, ``km`` (case-insensitive).
duration ``ns``, ``us`` (``µs``), ``ms``, ``s``, ``m`` or ``min`` (minutes, as Prometheus writes
         them), ``h``, ``d`` (case-insensitive); a bare number is the flag's unit (seconds for
         ``health --step``, ``--watch`` and the offset of ``now-15m``).
======== ==================================================================================

``inf``, ``nan``, exponents (``1e20``), a negative or a value outside the caller's range are
refused. Every refusal is one :class:`~fabricplan.errors.InputError` whose location is the flag
or the field (``--flow-size``, ``cabling.yaml:4``) and whose message shows the accepted form and
range; the CLI prints it as one line and exits 2.

The ``format_*`` functions write a value in a form the parsers read back to the same value
(``format_bytes(3 * 2**20) == "3MiB"``, ``format_bytes(1536) == "1536B"``, ``format_duration(900.0) ==
"15min"``).

Why not a library: pint loads a unit registry of thousands of definitions at first use (far more
than a command-line flag needs, and it reads ``M`` as mega, not nccl-tests' MiB); humanfriendly
reads ``K`` as 1,000 and has neither bit rates nor microseconds; bitmath has byte sizes only.
Arithmetic is exact (:mod:`decimal`), so a range check or a whole-bytes check never rounds.
"""

from __future__ import annotations

import math
import re
from decimal import Context, Decimal

from fabricplan.errors import InputError

#: Program limits (not physical defaults). Characters of the number of one quantity: any real
#: value has far fewer; more is refused before any arithmetic.
MAX_NUMBER_CHARS = 40
#: The largest message or flow size a command accepts: 1 TiB (as nccl-tests' largest sweeps).
MAX_MESSAGE_BYTES = 2 ** 40
#: Link rates: 1 Mb/s up to 10 Tb/s, over six times the fastest Ethernet port (1.6 Tb/s, IEEE 802.3dj).
LINK_RATE_RANGE_MBPS = (1, 10_000_000)

_EXACT = Context(prec=120)  # 40 digits times the largest factor (2^40 or 10^12) stay exact
_TEXT_LIMIT = 200  # characters looked at; a longer text cannot be a valid quantity
_QUANTITY = re.compile(r"\s*([+-]?)\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([A-Za-z\u00b5\u03bc/]*)\s*")

_KIB, _MIB, _GIB, _TIB = 2 ** 10, 2 ** 20, 2 ** 30, 2 ** 40
#: Size units (lower case) -> bytes.
BYTE_UNITS: dict[str, int] = {
    "": 1, "b": 1,
    "k": _KIB, "kib": _KIB, "m": _MIB, "mib": _MIB, "g": _GIB, "gib": _GIB, "t": _TIB, "tib": _TIB,
    "kb": 10 ** 3, "mb": 10 ** 6, "gb": 10 ** 9, "tb": 10 ** 12,
}
_BINARY_NAMES = (("TiB", _TIB), ("GiB", _GIB), ("MiB", _MIB), ("KiB", _KIB), ("B", 1))
_DECIMAL_NAMES = (("TB", 10 ** 12), ("GB", 10 ** 9), ("MB", 10 ** 6), ("KB", 10 ** 3), ("B", 1))
_SIZE_UNIT_LIST = "B, KiB, MiB, GiB, TiB (K, M, G, T: the same), KB, MB, GB, TB"

#: Rate prefixes (lower case) -> bits per second; the units a caller can ask for.
_RATE_PREFIXES = {"": 1, "k": 10 ** 3, "m": 10 ** 6, "g": 10 ** 9, "t": 10 ** 12}
_RATE_SUFFIXES = ("", "b", "bps", "b/s", "bit/s", "bits/s")
RATE_UNITS: dict[str, int] = {"b/s": 1, "kb/s": 10 ** 3, "Mb/s": 10 ** 6, "Gb/s": 10 ** 9, "Tb/s": 10 ** 12}

#: Length units (lower case) -> metres.
LENGTH_UNITS: dict[str, Decimal] = {"": Decimal(1), "m": Decimal(1), "mm": Decimal("0.001"),
                                    "cm": Decimal("0.01"), "km": Decimal(1000)}

#: Duration units (lower case) -> seconds.
DURATION_UNITS: dict[str, Decimal] = {
    "ns": Decimal("1e-9"), "us": Decimal("1e-6"), "\u00b5s": Decimal("1e-6"), "\u03bcs": Decimal("1e-6"),
    "ms": Decimal("0.001"), "s": Decimal(1), "sec": Decimal(1), "m": Decimal(60), "min": Decimal(60),
    "h": Decimal(3600), "d": Decimal(86400),
}
_UNIT_WORDS = {"s": "seconds", "ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds"}
_DURATION_NAMES = (("d", Decimal(86400)), ("h", Decimal(3600)), ("min", Decimal(60)), ("s", Decimal(1)),
                   ("ms", Decimal("0.001")), ("us", Decimal("1e-6")), ("ns", Decimal("1e-9")))


# --- parsing ------------------------------------------------------------------------------------

def parse_bytes(text: str, where: str, *, lo: int = 1, hi: int = MAX_MESSAGE_BYTES, noun: str = "size") -> int:
    """A size (``8GiB``, ``16M``, ``1MB``, ``4096``) -> whole bytes in ``lo..hi``."""
    span = f"{_spaced(format_bytes(lo))}..{_spaced(format_bytes(hi))}"
    number, unit, shown = _split(text, where, noun, "8B, 64KiB, 16MiB, 8G or 1MB", f"{span}, whole bytes")
    factor = BYTE_UNITS.get(unit.lower())
    if factor is None:
        raise InputError(f"{noun} {shown} has an unknown unit {unit!r}; use {_SIZE_UNIT_LIST} ({span})",
                         location=where)
    value = _EXACT.multiply(number, Decimal(factor))
    if value > 0 and value != value.to_integral_value():
        raise InputError(f"{noun} {shown} is {_plain(value)} bytes; a size is a whole number of bytes ({span})",
                         location=where)
    if not lo <= value <= hi:
        raise InputError(f"{noun} {shown} must be in {span}", location=where)
    return int(value)


def check_bytes(value: float, where: str, *, lo: int = 1, hi: int = MAX_MESSAGE_BYTES, noun: str = "size") -> int:
    """A size given as a number (the Python API): whole bytes in ``lo..hi``, else the same errors."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{noun} must be a number of bytes or a text such as 8GiB, got {type(value).__name__}",
                         location=where)
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(f"{noun} {value!r} must be in {_spaced(format_bytes(lo))}..{_spaced(format_bytes(hi))}",
                         location=where)
    return parse_bytes(_plain(Decimal(repr(value) if isinstance(value, float) else value)), where, lo=lo, hi=hi,
                       noun=noun)


def parse_rate(text: str, where: str, *, unit: str = "Gb/s", bare: str | None = None,
               lo: float | None = None, hi: float | None = None, whole: bool = False,
               noun: str = "link rate") -> float:
    """A link rate (``400G``, ``400Gb/s``, ``25Gbps``, a bare number in ``bare``) -> ``unit``.

    ``lo``/``hi`` (in ``unit``) default to :data:`LINK_RATE_RANGE_MBPS`; ``whole`` asks for a
    whole number of ``unit`` (an ``int`` is returned)."""
    to_unit = Decimal(RATE_UNITS[unit])
    bare = bare or unit
    low = Decimal(LINK_RATE_RANGE_MBPS[0] * 10 ** 6) / to_unit if lo is None else Decimal(repr(lo))
    high = Decimal(LINK_RATE_RANGE_MBPS[1] * 10 ** 6) / to_unit if hi is None else Decimal(repr(hi))
    span = f"{_grouped(low)}..{_grouped(high)} {unit}"
    example = _grouped(_EXACT.divide(Decimal(400 * 10 ** 9), Decimal(RATE_UNITS[bare]))).replace(",", "")
    number, text_unit, shown = _split(text, where, noun, f"400G, 400Gb/s or {example}",
                                      f"{span}; a bare number is {bare}")
    if "B" in text_unit:
        raise InputError(f"{noun} {shown} is in bytes per second; a link rate is in bits: write e.g. 400G or "
                         f"400Gb/s ({span})", location=where)
    lower = text_unit.lower()
    if not lower:
        factor = Decimal(RATE_UNITS[bare])
    else:
        prefix = lower[0] if lower[0] in "kmgt" else ""
        if lower[len(prefix):] not in _RATE_SUFFIXES or not (prefix or lower[len(prefix):]):
            raise InputError(f"{noun} {shown} has an unknown unit {text_unit!r}; use G, Gb/s, Gbps (also k, M, T: "
                             f"decimal prefixes of bits per second) ({span})", location=where)
        factor = Decimal(_RATE_PREFIXES[prefix])
    value = _EXACT.divide(_EXACT.multiply(number, factor), to_unit)
    if not low <= value <= high:
        raise InputError(f"{noun} {shown} must be in {span}", location=where)
    if whole:
        if value != value.to_integral_value():
            raise InputError(f"{noun} {shown} must be a whole number of {unit} ({span})", location=where)
        return int(value)
    return float(value)


def parse_length(text: str, where: str, *, lo: float = 0, hi: float = 120_000, noun: str = "length") -> float:
    """A length (``30m``, ``30``, ``2.5 m``, ``1.2km``) -> metres in ``lo..hi``."""
    low, high = Decimal(repr(lo)), Decimal(repr(hi))
    span = f"{_grouped(low)}..{_grouped(high)} m"
    number, unit, shown = _split(text, where, noun, "30m or 2.5m", f"{span}; a bare number is metres")
    factor = LENGTH_UNITS.get(unit.lower())
    if factor is None:
        raise InputError(f"{noun} {shown} has an unknown unit {unit!r}; use m (or mm, cm, km) ({span})",
                         location=where)
    value = _EXACT.multiply(number, factor)
    if not low <= value <= high:
        raise InputError(f"{noun} {shown} must be in {span}", location=where)
    return float(value)


def parse_duration(text: str, where: str, *, unit: str = "s", bare: str | None = None,
                   lo: float = 0.001, hi: float = 366 * 86400, noun: str = "duration") -> float:
    """A duration (``15s``, ``5m``, ``1h``, ``250ms``, ``85us``, a bare number in ``bare``) -> ``unit``;
    ``lo``/``hi`` are in ``unit``."""
    to_unit = DURATION_UNITS[unit]
    bare_factor = DURATION_UNITS[bare or unit]
    low, high = Decimal(repr(lo)), Decimal(repr(hi))
    span = (f"{format_duration(float(_EXACT.multiply(low, to_unit)))}.."
            f"{format_duration(float(_EXACT.multiply(high, to_unit)))}")
    number, text_unit, shown = _split(text, where, noun, "250ms, 15s, 5m or 1h",
                                      f"{span}; a bare number is {_UNIT_WORDS.get(bare or unit, bare or unit)}")
    factor = bare_factor if not text_unit else DURATION_UNITS.get(text_unit.lower())
    if factor is None:
        raise InputError(f"{noun} {shown} has an unknown unit {text_unit!r}; use ns, us, ms, s, m (minutes), h or d "
                         f"({span})", location=where)
    value = _EXACT.divide(_EXACT.multiply(number, factor), to_unit)
    if not low <= value <= high:
        raise InputError(f"{noun} {shown} must be in {span}", location=where)
    return float(value)


# --- formatting (each parses back to the same value) -------------------------------------------

def format_bytes(n: int, *, decimal: bool = False) -> str:
    """Whole bytes in the largest binary (``3MiB``) or decimal (``decimal=True``: ``3MB``) unit that
    holds them exactly; ``parse_bytes`` reads it back to ``n``."""
    for name, factor in _DECIMAL_NAMES if decimal else _BINARY_NAMES:
        if n % factor == 0 and abs(n) >= factor:
            return f"{n // factor}{name}"
    return f"{n}B"


def format_rate(value: float, unit: str = "Gb/s") -> str:
    """``400.0`` Gb/s -> ``400Gb/s`` (exact: ``parse_rate`` reads it back to ``value``)."""
    if unit not in RATE_UNITS:
        raise ValueError(f"unknown rate unit {unit!r}; one of {', '.join(RATE_UNITS)}")
    return f"{_plain(_decimal(value))}{unit}"


def format_length(metres: float) -> str:
    """``2.5`` -> ``2.5m``."""
    return f"{_plain(_decimal(metres))}m"


def format_duration(seconds: float) -> str:
    """Seconds in the largest unit that holds them as a whole number (``900.0`` -> ``15min``,
    ``0.25`` -> ``250ms``), else in seconds (``1.5s``); ``parse_duration`` reads it back exactly."""
    exact = _decimal(seconds)
    if exact:
        for name, factor in _DURATION_NAMES:
            count = _EXACT.divide(exact, factor)
            if count == count.to_integral_value() and abs(count) >= 1:
                return f"{_plain(count)}{name}"
    return f"{_plain(exact)}s"


# --- helpers ------------------------------------------------------------------------------------

def _split(text: object, where: str, noun: str, examples: str, span: str) -> tuple[Decimal, str, str]:
    """(signed number, unit text, the text as shown in a message) or the one-line refusal."""
    raw = str(text)
    shown = _shown(raw)
    match = _QUANTITY.fullmatch(raw) if len(raw) <= _TEXT_LIMIT else None
    if match is None or len(match.group(2)) > MAX_NUMBER_CHARS:
        raise InputError(f"{noun} {shown} is not like {examples} ({span})", location=where)
    number = Decimal(match.group(2))
    return (-number if match.group(1) == "-" else number), match.group(3), shown


def _shown(raw: str, limit: int = 30) -> str:
    """The text quoted for a one-line message: escaped (no line breaks) and clipped."""
    if len(raw) > limit:
        return repr(raw[:12]) + f"...({len(raw):,} characters)"
    return repr(raw)


def _decimal(value: float) -> Decimal:
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


def format_span(low: float, high: float, unit: str = "") -> str:
    """A flag's accepted range as error messages write it: ``0.001..10,000,000 Mb/s``, ``1..128``
    (whole numbers grouped by thousands, fractions as they are, never an exponent)."""
    def number(x: float) -> str:
        return _grouped(Decimal(repr(float(x))).normalize()) if math.isfinite(x) else str(x)

    return f"{number(low)}..{number(high)}" + (f" {unit}" if unit else "")


def _plain(value: Decimal) -> str:
    """Positional notation without trailing zeros: ``Decimal('1E+3')`` -> ``1000``."""
    text = format(value, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _grouped(value: Decimal) -> str:
    """``10000000`` -> ``10,000,000``; a fraction as it is (``0.001``)."""
    if value == value.to_integral_value():
        return f"{int(value):,}"
    return _plain(value)


def _spaced(text: str) -> str:
    """``1TiB`` -> ``1 TiB`` (for ranges in messages)."""
    return re.sub(r"^(-?[0-9.]+)", r"\1 ", text)
