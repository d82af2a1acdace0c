"""English renderings of the Chinese-language seed quotes that rule citations carry.

The decision rules cite the two seed articles ([S1], [S2]; docs/reference/README.md) by quoting
them in the original. Reports print each quote with an English rendering beside it, in brackets,
so a reader without Chinese can check the rule against its source. The renderings are fabricplan's
own translations, kept in the catalog beside each source's title (``sources.yaml``: ``quotes``, each
``text`` with its ``text_en``); a compare report carries those of the sources it cites. A test runs
every rule and fails if a citation carries a Chinese quote with no rendering, so a changed or new
quote cannot ship untranslated.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from fabricplan.catalog.models import CJK_CHARACTERS

# A run of text holding at least one CJK character, with the punctuation and Latin words inside it:
# the quote as cited, from its first to its last CJK character or CJK punctuation mark.
_CJK = CJK_CHARACTERS
_QUOTE = re.compile(rf"[{_CJK}](?:[{_CJK}A-Za-z0-9 '…\-]*[{_CJK}A-Za-z0-9])?")


def cjk_runs(text: str) -> list[tuple[str, bool]]:
    """`text` split into its runs of Chinese text (as `_QUOTE` finds them) and the text between
    them, in order: (run, is Chinese). The HTML pages mark the Chinese runs with their language."""
    out: list[tuple[str, bool]] = []
    at = 0
    for match in _QUOTE.finditer(text):
        if not has_cjk(match.group(0)):
            continue
        if match.start() > at:
            out.append((text[at:match.start()], False))
        out.append((match.group(0), True))
        at = match.end()
    if at < len(text) or not out:
        out.append((text[at:], False))
    return out


def has_cjk(text: str) -> bool:
    return re.search(f"[{_CJK}]", text) is not None


Translations = Mapping[str, str]


def translations(sources: Iterable[Any]) -> dict[str, str]:
    """Quote -> English of the given sources: catalog ``Source`` entries (``quotes`` a list of text and
    text_en) or a report's ``CitedSource`` (``quotes`` a dict)."""
    out: dict[str, str] = {}
    for source in sources:
        quotes = source.quotes
        out.update(quotes if isinstance(quotes, Mapping) else {q.text: q.text_en for q in quotes})
    return out


def catalog_translations(catalog: Any) -> dict[str, str]:
    """Every quote translation the catalog's sources hold."""
    return translations(catalog.section("sources").values())


def quotes_in(citation: str, known: Translations) -> list[str]:
    """The quotes of a citation that carry Chinese text, longest first, as `known`'s keys match them."""
    found = [quote for quote in known if quote in citation]
    return sorted(found, key=len, reverse=True)


def untranslated(citation: str, known: Translations) -> list[str]:
    """Chinese text in `citation` that no known quote covers (empty when every quote has a rendering)."""
    rest = citation
    for quote in quotes_in(citation, known):
        rest = rest.replace(quote, " ")
    return [match.group(0) for match in _QUOTE.finditer(rest) if has_cjk(match.group(0))]


def with_english(citation: str, known: Translations) -> str:
    """`citation` with each known Chinese quote followed by its English rendering in brackets:
    "... 运维成熟度 [operations maturity] ..."."""
    if not has_cjk(citation):
        return citation
    out = citation
    placeholders: dict[str, str] = {}
    for number, quote in enumerate(quotes_in(citation, known)):
        token = f"\x00{number}\x00"
        placeholders[token] = f"{quote} [{known[quote]}]"
        out = out.replace(quote, token)
    for token, text in placeholders.items():
        out = out.replace(token, text)
    return out
