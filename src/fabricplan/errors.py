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


def printable(text: object, limit: int | None = None, *, keep_newlines: bool = False) -> str:
    """Untrusted text (a server's error body, a host, file or job name) made safe for one line of a
    terminal: every control, format or line-separator character (Unicode categories Cc, Cf, Zl, Zp:
    NUL, ESC, DEL, C1 controls, bidirectional overrides, U+2028) written as an escape (``\\x1b``,
    ``\\u202e``), so nothing moves the cursor, recolours the terminal or starts a second line (a
    forged ``error:``); newlines and tabs too unless ``keep_newlines``. ``limit`` clips the result to
    that many characters (``...`` marks the cut)."""
    import unicodedata

    shown = str(text)
    if not shown.isprintable():
        out = []
        for ch in shown:
            if (keep_newlines and ch in "\n\t") or unicodedata.category(ch) not in ("Cc", "Cf", "Zl", "Zp"):
                out.append(ch)
            else:
                code = ord(ch)
                out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000
                           else f"\\U{code:08x}")
        shown = "".join(out)
    if limit is not None and len(shown) > limit:
        shown = shown[: max(0, limit - 3)] + "..."
    return shown
