"""Small helpers shared by the readers: safe file reading and location strings."""

from __future__ import annotations

import functools
import math
import re
from datetime import UTC, datetime
from pathlib import Path

import yaml

from fabricplan.errors import InputError
from fabricplan.io import MAX_DOCUMENT_BYTES, parse_text, read_text_bounded
from fabricplan.ops.defaults import show, span
from fabricplan.ops.limits import MAX_NUMBER_DIGITS, U32_MAX

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")
_PRIO = re.compile(r"^(rx|tx)_prio(\d)_(.+)$")


# Program limit: the largest capture read (a config_db of a 512-port switch is a few MB; NIC dumps
# are a few KB). Endless inputs (/dev/zero, a pipe) stop here instead of filling memory.
MAX_INPUT_BYTES = MAX_DOCUMENT_BYTES


def read_text(path: Path | str) -> str:
    """Read a UTF-8 text capture of at most :data:`MAX_INPUT_BYTES`; every failure becomes an
    InputError naming the file (the bounded reader of :mod:`fabricplan.io`: a FIFO without a writer
    reads as empty, endless inputs stop at the limit, a bad byte is reported with its line)."""
    return read_text_bounded(Path(path), str(path),
                             expected="a configuration capture is expected to be a few KB or MB")


def read_structured(path: Path | str, *, as_json: bool) -> tuple[str, object]:
    """Text and strictly parsed content of a JSON or YAML input (``fabricplan.io.parse_text``:
    duplicated keys, nesting depth, YAML aliases and huge numbers are errors with line and column)."""
    text = read_text(path)
    if not text.strip():
        return text, None
    try:
        return text, parse_text(text, str(path), as_json=as_json)
    except yaml.YAMLError as exc:  # e.g. a control character: PyYAML's reader raises before parsing
        offset = getattr(exc, "position", None)
        line = f":{text.count(chr(10), 0, offset) + 1}" if isinstance(offset, int) else ""
        char = getattr(exc, "character", None)
        what = f"character {char!r} is not allowed in YAML" if char is not None else "not readable as YAML"
        raise InputError(f"invalid YAML: {what}", location=f"{path}{line}") from None


def json_path(*parts: str | int) -> str:
    """``json_path("PORT", "Ethernet0", "mtu")`` -> ``$.PORT.Ethernet0.mtu`` (brackets for odd keys)."""
    out = "$"
    for part in parts:
        text = str(part)
        out += f".{text}" if _IDENT.match(text) else f"['{text}']"
    return out


_INTEGER = re.compile(r"\s*-?\d+\s*")


def parse_int(text: object, location: str, what: str, lo: int | None = 0, hi: int | None = U32_MAX) -> int:
    """Parse an integer (int or decimal string) within [lo, hi] (default 0..2^32-1, the width of
    SAI attributes), else InputError at ``location`` naming the range; numbers longer than
    :data:`~fabricplan.ops.limits.MAX_NUMBER_DIGITS` digits are refused before conversion."""
    if isinstance(text, bool):
        raise InputError(f"{what} must be an integer, got {text!r}", location=location)
    if isinstance(text, int):
        value = text
    elif isinstance(text, str) and _INTEGER.fullmatch(text):
        digits = len(text.strip().lstrip("-"))
        if digits > MAX_NUMBER_DIGITS:
            raise InputError(f"{what} must be in {span(lo, hi)}, got a {digits:,}-digit number", location=location)
        value = int(text)
    else:
        shown = text if not isinstance(text, str) or len(text) <= 40 else text[:37] + "..."
        raise InputError(f"{what} must be an integer, got {shown!r}", location=location)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise InputError(f"{what} must be in {span(lo, hi)}, got {show(value)}", location=location)
    return value


def parse_bounded_int(digits: str, location: str, what: str, lo: int, hi: int) -> int:
    """A run of decimal digits matched by a reader's regex, within [lo, hi] (digits capped first)."""
    return parse_int(digits.strip(), location, what, lo, hi)


def parse_decimal(text: str, location: str, what: str, lo: float, hi: float, unit: str = "") -> float:
    """A decimal number matched by a reader's regex (e.g. ``5`` or ``2.5``) within [lo, hi]."""
    if len(text) > MAX_NUMBER_DIGITS + 1:
        raise InputError(f"{what} must be in {span(lo, hi)}{unit}, got a {len(text):,}-character number",
                         location=location)
    value = float(text)
    if not lo <= value <= hi:
        raise InputError(f"{what} must be in {span(lo, hi)}{unit}, got {show(value)}", location=location)
    return value


# --- telemetry readers (ethtool snapshots, exposition text): time stamps and counter names -----

def parse_time(text: str, location: str) -> float:
    """Epoch seconds (``1764576000`` or ``1764576000.5``) or ISO 8601 -> epoch seconds (UTC if naive)."""
    raw = text.strip()
    try:
        value = float(raw)
    except ValueError:
        try:
            stamp = datetime.fromisoformat(raw.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            raise InputError(f"time must be epoch seconds or ISO 8601 (2026-12-01T08:00:00Z), got {raw[:40]!r}",
                             location=location) from None
        if stamp.tzinfo is None:
            stamp = stamp.replace(tzinfo=UTC)
        return stamp.timestamp()
    if not math.isfinite(value) or not 0 <= value < 1e11:
        raise InputError(f"time must be epoch seconds (0..1e11), got {raw[:40]!r}", location=location)
    return value


@functools.lru_cache(maxsize=4096)
def canonical_ethtool(name: str) -> tuple[str, int | None]:
    """``rx_prio3_pause`` -> (``rx_pause``, 3); any other name stays as it is, priority None."""
    m = _PRIO.match(name)
    if m:
        return f"{m.group(1)}_{m.group(3)}", int(m.group(2))
    return name, None


# Shared by the telemetry readers (telemetry.py, switch_telemetry.py).
TELEMETRY_HEADER = re.compile(r"^#\s*(?:fabricplan\s+)?((?:[A-Za-z_]+=\S+\s*)+)$")
HEADER_PAIR = re.compile(r"([A-Za-z_]+)=(\S+)")

#: Numbers longer than this are refused (a u64 has 20 digits).
MAX_DIGITS = 20
#: The largest reading a 64-bit counter holds (2^64 - 1); a larger one is a corrupt capture.
U64_MAX = 2**64 - 1
#: Program limit: the largest telemetry text file read (a day of full ``ethtool -S`` snapshots of a
#: port every 15 s is ~60 MB); larger captures: split them, or save once as .npz.
MAX_TELEMETRY_BYTES = 512 * 1024 * 1024


def read_telemetry_text(path: Path | str) -> str:
    """A UTF-8 telemetry capture of at most :data:`MAX_TELEMETRY_BYTES` (the configuration readers'
    bounded reader below 10 MiB; above, a plain bounded read). Failures are InputErrors naming the file."""
    where = str(path)
    try:
        size = Path(path).stat().st_size if Path(path).is_file() else 0
    except OSError:
        size = 0
    if size <= 10 * 1024 * 1024:
        return read_text(path)
    if size > MAX_TELEMETRY_BYTES:
        raise InputError(f"file is {size / 1e6:,.0f} MB; telemetry text is read up to "
                         f"{MAX_TELEMETRY_BYTES // (1024 * 1024)} MiB a file (split it, or save it once as .npz with "
                         "--save-telemetry)", location=where)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", location=where) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError("not UTF-8 text (a binary file?)", location=f"{where}:{line}") from None

def parse_reading(text: str, location: str, what: str) -> float:
    """A counter reading: a non-negative finite number of at most :data:`MAX_DIGITS` digits and at most
    :data:`U64_MAX` (InputError naming ``location``)."""
    if text.isdigit() and len(text) < MAX_DIGITS:  # the common case: a plain counter reading (< 2^64)
        return float(text)
    digits = text.strip().lstrip("-")
    if len(digits) > MAX_DIGITS:
        raise InputError(f"{what}: a {len(digits):,}-digit number (at most {MAX_DIGITS} digits)", location=location)
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{what} must be a number, got {text[:40]!r}", location=location) from None
    if not math.isfinite(value) or value < 0:
        raise InputError(f"{what} must be a finite number >= 0, got {text[:40]!r}", location=location)
    check_u64(int(digits) if digits.isdigit() else value, location, what)
    return value


def check_u64(value: float | int, location: str, what: str) -> None:
    """InputError naming ``location`` if a counter reading is above 2^64 - 1 (as a float: above 2^64,
    the nearest float)."""
    if value > (U64_MAX if isinstance(value, int) else float(2**64)):
        raise InputError(f"{what} reads {value:.6g}, above 2^64 - 1 (the largest a 64-bit counter holds): "
                         "a corrupt capture", location=location)


def parse_header(line: str) -> dict[str, str] | None:
    """``# key=value ...`` header of a telemetry capture (host, device, time) as a dict, or None."""
    if not line.startswith("#"):
        return None
    m = TELEMETRY_HEADER.match(line.strip())
    return dict(HEADER_PAIR.findall(m.group(1))) if m else None
