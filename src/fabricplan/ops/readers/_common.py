"""Small helpers shared by the readers: safe file reading and location strings."""

from __future__ import annotations

import re
from pathlib import Path

from fabricplan.errors import InputError

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")


def read_text(path: Path | str) -> str:
    """Read a UTF-8 text file; every failure becomes an InputError naming the file."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise InputError("file not found", location=str(p)) from None
    except IsADirectoryError:
        raise InputError("is a directory, expected a file", location=str(p)) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", location=str(p)) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(f"not UTF-8 text (byte 0x{data[exc.start]:02x})", location=f"{p}:{line}") from None


def json_path(*parts: str | int) -> str:
    """``json_path("PORT", "Ethernet0", "mtu")`` -> ``$.PORT.Ethernet0.mtu`` (brackets for odd keys)."""
    out = "$"
    for part in parts:
        text = str(part)
        out += f".{text}" if _IDENT.match(text) else f"['{text}']"
    return out


def parse_int(text: object, location: str, what: str, lo: int | None = None, hi: int | None = None) -> int:
    """Parse an integer (int or decimal string) within [lo, hi], else InputError at ``location``."""
    if isinstance(text, bool):
        raise InputError(f"{what} must be an integer, got {text!r}", location=location)
    if isinstance(text, int):
        value = text
    elif isinstance(text, str) and re.fullmatch(r"\s*-?\d+\s*", text):
        value = int(text)
    else:
        raise InputError(f"{what} must be an integer, got {text!r}", location=location)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        rng = f"{lo if lo is not None else '-inf'}..{hi if hi is not None else 'inf'}"
        raise InputError(f"{what} must be in {rng}, got {value}", location=location)
    return value
