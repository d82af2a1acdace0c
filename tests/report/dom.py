"""Small HTML helpers for the report tests (standard library only)."""

from __future__ import annotations

from html.parser import HTMLParser

VOID_ELEMENTS = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
                           "track", "wbr"})


class AttributeCollector(HTMLParser):
    """Every (tag, attribute, value) in a document; script and style bodies are not parsed as markup."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.attributes: list[tuple[str, str, str]] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attributes += [(tag, name, value or "") for name, value in attrs]


def attributes(document: str) -> list[tuple[str, str, str]]:
    collector = AttributeCollector()
    collector.feed(document)
    return collector.attributes


def tags(document: str) -> list[str]:
    collector = AttributeCollector()
    collector.feed(document)
    return collector.tags


class SubtreeCollector(HTMLParser):
    """The start tags (with attributes) and text inside the element with a given id."""

    def __init__(self, element_id: str) -> None:
        super().__init__(convert_charrefs=True)
        self.element_id = element_id
        self.depth = 0  # > 0 while inside the element
        self.found = False
        self.start_tags: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag, attrs):
        attributes = {name: value or "" for name, value in attrs}
        if self.depth:
            self.start_tags.append((tag, attributes))
            if tag not in VOID_ELEMENTS:
                self.depth += 1
        elif attributes.get("id") == self.element_id and not self.found:
            self.found = True
            self.depth = 1
            self.start_tags.append((tag, attributes))

    def handle_startendtag(self, tag, attrs):
        if self.depth:
            self.start_tags.append((tag, {name: value or "" for name, value in attrs}))

    def handle_endtag(self, tag):
        if self.depth and tag not in VOID_ELEMENTS:
            self.depth -= 1


def subtree(document: str, element_id: str) -> list[tuple[str, dict[str, str]]]:
    """Start tags of the element with `element_id` and its descendants (empty when there is none)."""
    collector = SubtreeCollector(element_id)
    collector.feed(document)
    return collector.start_tags


def with_class(elements: list[tuple[str, dict[str, str]]], *classes: str) -> list[tuple[str, dict[str, str]]]:
    """Elements whose class attribute contains every one of `classes`."""
    return [(tag, attrs) for tag, attrs in elements if set(classes) <= set(attrs.get("class", "").split())]
