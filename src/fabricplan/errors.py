"""Errors that the CLI turns into one-line messages (exit 2) instead of tracebacks."""

from __future__ import annotations


class FabricplanError(Exception):
    """Base class for every error fabricplan reports to the user."""


class InputError(FabricplanError):
    """Unusable input: a file, a field or a command-line value.

    ``location`` names where the bad value sits (file, line, JSON/field path) so the message
    can say exactly which field and what was expected.
    """

    def __init__(self, message: str, location: str | None = None) -> None:
        self.location = location
        self.message = message
        super().__init__(f"{location}: {message}" if location else message)


class CatalogError(InputError):
    """A catalog name that does not exist, or a malformed catalog file."""


def closest(word: str, known, n: int = 3) -> list[str]:
    """Up to ``n`` of ``known`` closest to ``word`` (difflib's ratio, at least 0.6), best first; a
    case-insensitive match comes first. The one "did you mean" of every unknown name (spec fields,
    catalog ids, sections)."""
    import difflib

    choices = sorted({str(k) for k in known})
    folded = {c.lower(): c for c in choices}
    found = difflib.get_close_matches(word, choices, n=n, cutoff=0.6)
    exact = folded.get(word.lower())
    if exact is not None and exact != word:
        found = [exact, *(f for f in found if f != exact)][:n]
    return found


def did_you_mean(word: str, known, n: int = 3) -> str:
    """``"did you mean 'a', 'b' or 'c'?"`` for the closest of ``known`` to ``word`` ("" when none is close)."""
    found = [f"'{f}'" for f in closest(word, known, n)]
    if not found:
        return ""
    options = found[0] if len(found) == 1 else f"{', '.join(found[:-1])} or {found[-1]}"
    return f"did you mean {options}?"


def printable(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with every control, format or line-separator character (Unicode categories Cc, Cf,
    Zl, Zp: ESC, NUL, DEL, C1 controls, bidirectional overrides, U+2028) written as an escape (``\\x1b``, ``\\u202e``), so a
    file, host or job name a user wrote can never move the cursor, recolour or rewrite a terminal,
    nor split a one-line message (newlines and tabs are escaped too unless ``keep_newlines``)."""
    import unicodedata

    if text.isprintable():
        return text
    out = []
    for ch in text:
        if (keep_newlines and ch in "\n\t") or unicodedata.category(ch) not in ("Cc", "Cf", "Zl", "Zp"):
            out.append(ch)
        else:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    return "".join(out)
