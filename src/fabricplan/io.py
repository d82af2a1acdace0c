"""Reading user documents (YAML or JSON) with one-line errors that say where the problem is.

User documents (specs, catalog overlays) are read strictly and within bounds, so that a mistaken or
hostile file fails fast with a one-line `InputError` instead of hanging, eating memory or ending in
a traceback: the bytes read, the nesting depth, the YAML aliases and the values after expanding
them, and the digits of an integer are limited; duplicated mapping keys and floats that overflow
are errors. YAML is parsed with libyaml (`yaml.CSafeLoader`) when PyYAML has it, else in Python.

Writing: every file the tool writes (reports, overlays, the example spec, plots, saved telemetry,
sweep parts and manifests, caches) goes through :func:`atomic_output` (or its
:func:`write_text_atomic` / :func:`write_bytes_atomic`): a temporary file beside the target,
fsynced, permissions as any new file (0644 under umask 022), renamed into place; whole or absent,
never through a symbolic link and never over something that is not a regular file.
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.events import (
    AliasEvent,
    CollectionStartEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import Resolver

from fabricplan.errors import InputError

if TYPE_CHECKING:
    from pydantic import ValidationError

# Program limits for user documents (not physical defaults). Specs and catalog overlays are a
# few KB, a few levels deep, with a handful of anchors; these bounds are far above that and far
# below what would hang the reader, exhaust memory or overflow the interpreter's stack.
MAX_DOCUMENT_BYTES = 10 * 1024 * 1024  # bytes read before parsing; a larger input is refused
MAX_NESTING_DEPTH_LEVELS = 100  # nested mappings/sequences (Python's recursion limit is 1,000)
MAX_YAML_ALIASES = 1_000  # `*alias` references in one YAML document
MAX_DOCUMENT_VALUES = 1_000_000  # values (scalars, mappings, sequences) after expanding aliases
MAX_INTEGER_DIGITS = 300  # digits of one integer literal (no quantity here needs more than ~20)

# PyYAML's scanner, parser and composer in C when libyaml is available; the same behaviour in Python
# otherwise. The one place that chooses; `fabricplan.catalog.files` uses it for bundled data too.
_CParser = getattr(yaml, "CParser", None)
YAML_SAFE_LOADER: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_YAML_TAG = "tag:yaml.org,2002:"
_MERGE_TAG = "tag:yaml.org,2002:merge"


#: The path that stands for standard input (a spec piped in: ``fabricplan compare - < cluster.yaml``).
STDIN = "-"
#: How errors name a document read from standard input.
STDIN_NAME = "stdin"
_stdin_read: tuple[Any, str] | None = None  # (the stream, its text): read once per stream


def read_stdin_text() -> str:
    """Standard input as UTF-8 text of at most MAX_DOCUMENT_BYTES, read once per process (a second
    reader of ``-``, e.g. a design re-read for one of its fabrics, gets the same text). A terminal
    is refused: it would wait for typing without saying so."""
    global _stdin_read
    import sys

    stream = sys.stdin
    if _stdin_read is not None and _stdin_read[0] is stream:
        return _stdin_read[1]
    if stream is None:
        raise InputError("'-' reads the spec from standard input, but there is none", location=STDIN_NAME)
    isatty = getattr(stream, "isatty", None)
    if isatty is not None and isatty():
        raise InputError("'-' reads the spec from standard input, which is a terminal; pipe one in "
                         "(fabricplan compare - < cluster.yaml)", location=STDIN_NAME)
    binary = getattr(stream, "buffer", None)
    data = binary.read(MAX_DOCUMENT_BYTES + 1) if binary is not None else stream.read(MAX_DOCUMENT_BYTES + 1)
    if isinstance(data, str):
        data = data.encode("utf-8")
    if len(data) > MAX_DOCUMENT_BYTES:
        raise InputError(_too_large(f"more than {MAX_DOCUMENT_BYTES // (1024 * 1024)} MiB",
                                    "a spec is expected to be a few KB", "input"), location=STDIN_NAME)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(f"not UTF-8 text (byte 0x{data[exc.start]:02x})", location=f"{STDIN_NAME}:{line}") from None
    _stdin_read = (stream, text)
    return text


def read_document(path: str | Path) -> Any:
    """Parse a YAML or JSON file (JSON is chosen by the `.json` suffix; YAML otherwise). ``-`` reads
    standard input (:func:`read_stdin_text`): JSON when it starts with ``{``, YAML otherwise."""
    return read_document_text(path)[0]


def read_document_text(path: str | Path) -> tuple[Any, str]:
    """:func:`read_document` and the text it parsed (for :func:`document_position`)."""
    if str(path) == STDIN:
        text = read_stdin_text()
        if not text.strip():
            raise InputError("standard input is empty; expected a YAML or JSON mapping", location=STDIN_NAME)
        return parse_text(text, STDIN_NAME, as_json=text.lstrip().startswith("{")), text
    path = Path(path)
    where = str(path)
    text = read_text_bounded(path, where)
    if not text.strip():
        raise InputError("file is empty; expected a YAML or JSON mapping", location=where)
    return parse_text(text, where, as_json=path.suffix.lower() == ".json"), text


def document_position(text: str, path: tuple[Any, ...]) -> tuple[int, int] | None:
    """1-based (line, column) in a YAML or JSON ``text`` (already parsed once without error) of the
    field at ``path`` (mapping keys and list indices, as a validation error's ``loc``): its key, or
    the list item; of the nearest enclosing value when the rest of ``path`` is not in the text (a
    missing field: the mapping that lacks it).
    Composed again by the bounded composer (nodes only, nothing constructed); None if that fails."""
    loader = None
    try:
        loader = _StrictLoader(text)
        loader.where = "document"
        node = _compose_bounded(loader, "document")
    except (yaml.YAMLError, InputError):
        return None
    finally:
        if loader is not None:
            loader.dispose()
    if node is None:
        return None
    mark = node.start_mark
    for index, part in enumerate(path):
        if isinstance(node, yaml.MappingNode):
            pair = next(((k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == str(part)), None)
            if pair is None:
                break
            mark = pair[0].start_mark if index == len(path) - 1 else pair[1].start_mark  # the field itself
            node = pair[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            node = node.value[part]
            mark = node.start_mark
        else:
            break
    return mark.line + 1, mark.column + 1


def read_text_bounded(path: Path, where: str, *, expected: str = "a spec or catalog file is expected to be a few KB",
                      allow_control: bool = False) -> str:
    """Read a UTF-8 text input of at most MAX_DOCUMENT_BYTES: endless inputs (/dev/zero, a pipe)
    stop at MAX_DOCUMENT_BYTES + 1 bytes. Every failure is an InputError at ``where`` (a bad
    byte with its line); ``expected`` says what size of input the caller expects.

    The file is opened non-blocking so that a FIFO without a writer reads as empty instead of
    waiting for one; reads then block as usual. A control character (``_CONTROL_CHARACTER``) is
    refused with its line unless ``allow_control`` (logs whose stray lines are skipped).
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise InputError("file not found", location=where) from None
    except IsADirectoryError:
        raise InputError("expected a file, got a directory", location=where) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", location=where) from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise InputError("expected a file, got a directory", location=where)
        regular = stat.S_ISREG(mode)
        if regular and os.fstat(fd).st_size > MAX_DOCUMENT_BYTES:
            raise InputError(_too_large(f"{os.fstat(fd).st_size / 1e6:.1f} MB", expected=expected), location=where)
        os.set_blocking(fd, True)
        chunks: list[bytes] = []
        total = 0
        while total <= MAX_DOCUMENT_BYTES:
            chunk = os.read(fd, min(1 << 20, MAX_DOCUMENT_BYTES + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", location=where) from None
    finally:
        os.close(fd)
    if total > MAX_DOCUMENT_BYTES:
        kind = "file" if regular else "input (not a regular file)"
        raise InputError(_too_large(f"more than {MAX_DOCUMENT_BYTES // (1024 * 1024)} MiB", expected, kind),
                         location=where)
    data = b"".join(chunks)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(f"not UTF-8 text (byte 0x{data[exc.start]:02x})", location=f"{where}:{line}") from None
    control = None if allow_control else _CONTROL_CHARACTER.search(text)
    if control is not None:  # a host or port name holding ESC would reach the terminal as a sequence
        line = text.count("\n", 0, control.start()) + 1
        raise InputError(f"control character U+{ord(control.group()):04X} is not allowed in a text input",
                         location=f"{where}:{line}")
    return text


def _too_large(size: str, expected: str, kind: str = "file") -> str:
    return f"{kind} is {size}; {expected} (limit {MAX_DOCUMENT_BYTES // (1024 * 1024)} MiB)"


def parse_text(text: str, where: str, *, as_json: bool = False) -> Any:
    """Parse YAML or JSON text strictly, turning every problem into InputError with line and column."""
    if as_json:
        return _parse_json(text, where)
    return _parse_yaml(text, where)


# --- JSON -----------------------------------------------------------------------------------


class _JsonRejected(Exception):
    """Raised from the json hooks; the token scan then finds where the problem is."""


def _json_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise _JsonRejected
    return result


def _json_int(literal: str) -> int:
    if len(literal.lstrip("-")) > MAX_INTEGER_DIGITS:
        raise _JsonRejected
    return int(literal)


def _json_float(literal: str) -> float:
    value = float(literal)
    if math.isinf(value):
        raise _JsonRejected
    return value


def _json_constant(literal: str) -> float:
    raise _JsonRejected


def _parse_json(text: str, where: str) -> Any:
    """`json.loads` with hooks that refuse duplicate keys, huge integers, overflowing floats and
    NaN/Infinity; the nesting depth is checked on the result (and caught if the C decoder's own
    recursion guard fires first). The problem is then located by `_locate_json_problem`."""
    try:
        value = json.loads(text, object_pairs_hook=_json_pairs, parse_int=_json_int, parse_float=_json_float,
                           parse_constant=_json_constant)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", location=f"{where}:{exc.lineno}:{exc.colno}") from None
    except (_JsonRejected, RecursionError):
        pass
    else:
        if _depth_within_limit(value):
            _refuse_control_strings(value, text, where)
            return value
    message, line, column = _locate_json_problem(text)
    raise InputError(message, location=f"{where}:{line}:{column}")


#: Control characters a document's strings may not hold (written as escapes: the YAML reader
#: refuses raw ones): all C0 and C1 controls and DEL but tab, newline and carriage return. A name
#: holding ESC would otherwise reach the terminal as an escape sequence in every table it is in.
_CONTROL_CHARACTER = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def _control_message(text: str) -> str | None:
    found = _CONTROL_CHARACTER.search(text)
    return None if found is None else (f"control character U+{ord(found.group()):04X} in a string is not "
                                       "allowed (names and texts are printed to terminals)")


def _refuse_control_strings(value: Any, text: str, where: str) -> None:
    """InputError at the first JSON string (key or value) holding a control character, located at
    the first such escape in ``text`` (iterative walk)."""
    stack = [value]
    while stack:
        item = stack.pop()
        strings = [item] if isinstance(item, str) else list(item) if isinstance(item, dict) else []
        for string in strings:
            message = _control_message(string)
            if message is not None:
                escape = re.search(r"\\u00[0-1][0-9a-fA-F]|\\u007[fF]|\\u00[89][0-9a-fA-F]|\\[bf]", text)
                line, column = _line_column(text, escape.start()) if escape else (1, 1)
                raise InputError(message, location=f"{where}:{line}:{column}")
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _depth_within_limit(value: Any) -> bool:
    """Whether parsed JSON nests at most MAX_NESTING_DEPTH_LEVELS deep (iterative walk)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth + 1 > MAX_NESTING_DEPTH_LEVELS:
                return False
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return True


# Strings, structure and numbers of JSON text (other tokens are skipped; the decoder has already
# accepted the syntax up to the problem this scan looks for).
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:]|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|NaN|-?Infinity')


def _locate_json_problem(text: str) -> tuple[str, int, int]:
    """First problem in JSON text that the decoder hooks refused: too deep, a duplicate key, a huge
    integer, an overflowing float or NaN/Infinity; returned with its 1-based line and column."""
    stack: list[dict[str, int] | None] = []  # per open container: keys seen (objects) or None
    previous = None
    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        if token in ("{", "["):
            stack.append({} if token == "{" else None)
            if len(stack) > MAX_NESTING_DEPTH_LEVELS:
                return (f"nested more than {MAX_NESTING_DEPTH_LEVELS} levels deep", *_line_column(text, match.start()))
        elif token in ("}", "]"):
            if stack:
                stack.pop()
        elif token == ":" and previous is not None and previous.group().startswith('"') and stack and stack[-1] is not None:
            keys = stack[-1]
            key = json.loads(previous.group())
            line, column = _line_column(text, previous.start())
            if key in keys:
                return f"duplicate key '{_clip(key)}' (first on line {keys[key]})", line, column
            keys[key] = line
        elif token[0] in "-0123456789":
            digits = len(token.lstrip("-"))
            if not any(c in token for c in ".eE"):
                if digits > MAX_INTEGER_DIGITS:
                    return (f"integer has {digits:,} digits; at most {MAX_INTEGER_DIGITS} are accepted",
                            *_line_column(text, match.start()))
            elif math.isinf(float(token)):
                return (f"number {_clip(token)} is too large for a float (overflows to infinity)",
                        *_line_column(text, match.start()))
        elif token in ("NaN", "Infinity", "-Infinity"):
            return f"{token} is not a JSON number; give a finite number", *_line_column(text, match.start())
        previous = match
    return "invalid JSON: nested too deep or otherwise not accepted", 1, 1


def _line_column(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of a character offset."""
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _clip(text: str, limit: int = 30) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --- YAML -----------------------------------------------------------------------------------


def _mark(where: str, mark: Any) -> str:
    return f"{where}:{mark.line + 1}:{mark.column + 1}" if mark is not None else where


class _StrictConstructor(SafeConstructor):
    """PyYAML's safe constructor, refusing duplicate keys, huge integers and overflowing floats."""

    where = ""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, MappingNode):
            seen: dict[Any, int] = {}
            for key_node, _value in node.value:  # the node's own keys, before merges (`<<`) apply
                if key_node.tag == _MERGE_TAG:
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    first = seen.get(key)
                except TypeError:  # unhashable key: the base class reports it
                    continue
                if first is not None:
                    raise InputError(f"duplicate key '{_clip(str(key))}' (first on line {first})",
                                     location=_mark(self.where, key_node.start_mark))
                seen[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_int(self, node: Any) -> int:
        digits = sum(c.isdigit() for c in str(node.value))
        if digits > MAX_INTEGER_DIGITS:
            raise InputError(f"integer has {digits:,} digits; at most {MAX_INTEGER_DIGITS} are accepted",
                             location=_mark(self.where, node.start_mark))
        return super().construct_yaml_int(node)

    def construct_yaml_float(self, node: Any) -> float:
        value = super().construct_yaml_float(node)
        if math.isinf(value) and "inf" not in str(node.value).lower():
            raise InputError(f"number {_clip(str(node.value))} is too large for a float (overflows to infinity)",
                             location=_mark(self.where, node.start_mark))
        return value


_StrictConstructor.add_constructor(_YAML_TAG + "int", _StrictConstructor.construct_yaml_int)
_StrictConstructor.add_constructor(_YAML_TAG + "float", _StrictConstructor.construct_yaml_float)


if _CParser is not None:
    class _StrictLoader(_CParser, _StrictConstructor, Resolver):  # type: ignore[misc,valid-type]
        def __init__(self, stream: str) -> None:
            _CParser.__init__(self, stream)
            _StrictConstructor.__init__(self)
            Resolver.__init__(self)
else:  # pragma: no cover - PyYAML without libyaml
    from yaml.parser import Parser
    from yaml.reader import Reader
    from yaml.scanner import Scanner

    class _StrictLoader(Reader, Scanner, Parser, _StrictConstructor, Resolver):  # type: ignore[no-redef]
        def __init__(self, stream: str) -> None:
            Reader.__init__(self, stream)
            Scanner.__init__(self)
            Parser.__init__(self)
            _StrictConstructor.__init__(self)
            Resolver.__init__(self)


def _parse_yaml(text: str, where: str) -> Any:
    """Parse one YAML document: events from libyaml (or PyYAML), composed by `_compose_bounded`,
    then built by the strict safe constructor."""
    try:
        loader = _StrictLoader(text)  # the reader rejects control characters here
    except yaml.reader.ReaderError as exc:
        raise InputError(f"invalid YAML: control character U+{exc.character:04X} at offset {exc.position} is not allowed "
                         "(control characters must be escaped in a quoted string)", location=where) from None
    loader.where = where
    try:
        root = _compose_bounded(loader, where)
        return None if root is None else loader.construct_document(root)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        problem = exc.problem or "syntax error"
        raise InputError(f"invalid YAML: {problem}", location=f"{where}{line}") from None
    except yaml.YAMLError as exc:
        raise InputError(f"invalid YAML: {exc}", location=where) from None
    finally:
        loader.dispose()


def _compose_bounded(loader: Any, where: str) -> Node | None:
    """Compose the single document of a YAML stream into nodes, without recursion.

    Like PyYAML's composer (same nodes, tags and errors), plus the bounds: nesting depth, number
    of aliases, and the number of values the document holds once every alias is expanded. That
    last count is exact and cheap: each node's expanded size is known when it closes, and an
    alias adds the size of the (closed) node it names, so a "billion laughs" document fails at the
    alias that crosses the limit, before anything is built. An alias to a node that is still
    open (a recursive document) is refused too.
    """
    loader.get_event()  # StreamStart
    if loader.check_event(StreamEndEvent):
        loader.get_event()
        return None
    loader.get_event()  # DocumentStart
    anchors: dict[str, Node] = {}
    sizes: dict[int, int] = {}  # id(node) -> expanded values, for closed anchored nodes
    stack: list[list[Any]] = []  # open collections: [node, pending mapping key, expanded size]
    root: Node | None = None
    aliases = 0
    total = 0
    while True:
        event = loader.get_event()
        if isinstance(event, (ScalarEvent, CollectionStartEvent, AliasEvent)):
            if isinstance(event, AliasEvent):
                node = anchors.get(event.anchor)
                if node is None:
                    raise InputError(f"invalid YAML: alias *{event.anchor} has no anchor &{event.anchor} before it",
                                     location=_mark(where, event.start_mark))
                size = sizes.get(id(node))
                if size is None:
                    raise InputError(f"alias *{event.anchor} refers to a node that contains it "
                                     "(recursive YAML is not accepted)", location=_mark(where, event.start_mark))
                aliases += 1
                if aliases > MAX_YAML_ALIASES:
                    raise InputError(f"more than {MAX_YAML_ALIASES:,} YAML aliases",
                                     location=_mark(where, event.start_mark))
            else:
                if event.anchor is not None and event.anchor in anchors:
                    first = anchors[event.anchor].start_mark.line + 1
                    raise InputError(f"invalid YAML: duplicate anchor &{event.anchor} (first on line {first})",
                                     location=_mark(where, event.start_mark))
                tag = event.tag
                if isinstance(event, ScalarEvent):
                    problem = _control_message(event.value)
                    if problem is not None:
                        raise InputError(problem, location=_mark(where, event.start_mark))
                    if tag is None or tag == "!":
                        tag = loader.resolve(ScalarNode, event.value, event.implicit)
                    node = ScalarNode(tag, event.value, event.start_mark, event.end_mark, style=event.style)
                else:
                    kind = SequenceNode if isinstance(event, SequenceStartEvent) else MappingNode
                    if tag is None or tag == "!":
                        tag = loader.resolve(kind, None, event.implicit)
                    node = kind(tag, [], event.start_mark, None, flow_style=event.flow_style)
                if event.anchor is not None:
                    anchors[event.anchor] = node
                size = 1
            total += size
            if total > MAX_DOCUMENT_VALUES:
                raise InputError(f"more than {MAX_DOCUMENT_VALUES:,} values once YAML aliases are expanded",
                                 location=_mark(where, event.start_mark))
            if isinstance(event, (SequenceStartEvent, MappingStartEvent)):
                stack.append([node, None, 1])
                if len(stack) > MAX_NESTING_DEPTH_LEVELS:
                    raise InputError(f"nested more than {MAX_NESTING_DEPTH_LEVELS} levels deep",
                                     location=_mark(where, event.start_mark))
                continue
            if isinstance(event, ScalarEvent) and event.anchor is not None:
                sizes[id(node)] = 1
        else:  # SequenceEnd or MappingEnd: the innermost open collection closes
            node, _pending, size = stack.pop()
            node.end_mark = event.end_mark
            sizes[id(node)] = size
        if not stack:
            root = node
            break
        parent = stack[-1]
        parent[2] += size
        if isinstance(parent[0], SequenceNode):
            parent[0].value.append(node)
        elif parent[1] is None:
            parent[1] = node
        else:
            parent[0].value.append((parent[1], node))
            parent[1] = None
    loader.get_event()  # DocumentEnd
    if not loader.check_event(StreamEndEvent):
        event = loader.get_event()
        raise InputError("invalid YAML: expected a single document, found another one",
                         location=_mark(where, event.start_mark))
    loader.get_event()  # StreamEnd
    return root


def _path_text(loc: tuple[Any, ...]) -> str:
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text or "(top level)"


_TYPE_TAGS = {"str", "int", "float", "bool", "list", "dict"}


def _is_union_tag(part: Any) -> bool:
    """Pydantic puts the union branch (a type or CamelCase model name) into error paths; our
    field names are snake_case, so these tags can be dropped to leave the user's own path."""
    if not isinstance(part, str):
        return False
    return part in _TYPE_TAGS or part.startswith("function-") or (part[:1].isupper() and part.isalnum())


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _unwrapped(annotation: Any) -> list[Any]:
    """The types an annotation can hold: Annotated, Optional and unions opened up."""
    import types
    import typing

    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrapped(typing.get_args(annotation)[0])
    if origin is typing.Union or origin is types.UnionType:
        return [t for arg in typing.get_args(annotation) for t in _unwrapped(arg)]
    return [annotation]


def _fields_at(model: Any, loc: tuple[Any, ...]) -> list[str]:
    """The field names (and aliases) of the pydantic model(s) at ``loc`` under ``model``: what a
    user could have meant where pydantic says "extra field". Lists, dicts and unions are followed."""
    import typing

    current = _unwrapped(model)
    for part in loc:
        following = []
        for kind in current:
            fields = getattr(kind, "model_fields", None) if isinstance(kind, type) else None
            origin, args = typing.get_origin(kind), typing.get_args(kind)
            if fields is not None and isinstance(part, str):
                field = fields.get(part) or next((f for f in fields.values() if f.alias == part), None)
                if field is not None:
                    following += _unwrapped(field.annotation)
            elif origin in (list, tuple, set, frozenset) and isinstance(part, int) and args:
                following += _unwrapped(args[0])
            elif origin is dict and len(args) == 2:
                following += _unwrapped(args[1])
        current = following
    names: set[str] = set()
    for kind in current:
        fields = getattr(kind, "model_fields", None) if isinstance(kind, type) else None
        for name, field in (fields or {}).items():
            names.add(field.alias or name)
    return sorted(names)


def _shown_errors(exc: ValidationError) -> tuple[list[dict], list[tuple[Any, ...]], list[int]]:
    """A validation error's errors, their paths without union tags, and the indices of those worth
    showing, first shown first."""
    errors = exc.errors()
    paths = [tuple(p for p in e["loc"] if not _is_union_tag(p)) for e in errors]
    # A union such as `gpu: str | GpuInline` reports the failed `str` branch too; when another
    # error sits below the same path, that branch was not what the user meant.
    keep = [i for i, (e, loc) in enumerate(zip(errors, paths))
            if not (e["type"].endswith("_type") and isinstance(e.get("input"), dict)
                    and any(len(o) > len(loc) and o[: len(loc)] == loc for o in paths))]
    # a misspelt field also makes the field it meant "missing": the unknown one, which says what it
    # was probably meant to be, comes first
    keep.sort(key=lambda i: errors[i]["type"] != "extra_forbidden")
    return errors, paths, keep


def first_error_path(exc: ValidationError) -> tuple[Any, ...]:
    """The path (``loc`` without union tags) of the error :func:`format_validation_error` shows first."""
    _, paths, keep = _shown_errors(exc)
    return paths[keep[0]] if keep else ()


def format_validation_error(exc: ValidationError, max_errors: int = 3, model: Any = None,
                            schema_command: str = "fabricplan schema") -> str:
    """One line per pydantic error, joined with '; ': field path, what was expected, what was given.
    An unknown field under ``model`` (the pydantic model validated) names the closest known fields."""
    from fabricplan.errors import did_you_mean

    errors, paths, keep = _shown_errors(exc)
    parts = []
    for i in keep[:max_errors]:
        error, loc = errors[i], paths[i]
        message = error["msg"]
        given = f" (got {_short(error.get('input'))})"
        if error["type"] == "extra_forbidden":
            hint = did_you_mean(str(loc[-1]), _fields_at(model, loc[:-1])) if model is not None and loc else ""
            message = (f"unknown field; {hint} (`{schema_command}` lists the fields)" if hint else
                       f"unknown field (check the spelling; `{schema_command}` lists the fields)")
            given = ""
        elif error["type"] == "missing":
            message, given = "required field is missing", ""
        elif error["type"] == "value_error":
            message, given = message.removeprefix("Value error, "), ""
        parts.append(f"{_path_text(loc)}: {message}{given}")
    errors = [errors[i] for i in keep]
    more = len(errors) - max_errors
    if more > 0:
        parts.append(f"and {more} more error(s)")
    return "; ".join(parts)


# --- writing files: one atomic writer for every file the tool writes --------------------------

#: What a path that is not a regular file is, for the one-line refusal.
_FILE_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
               (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))
#: Temporary names tried before giving up (each a fresh random name; a clash is already unlikely).
_TEMPORARY_TRIES = 100


def _target_mode(path: Path, what: str) -> int | None:
    """The permission bits of the regular file at ``path`` (kept by the new file), None if there is
    none; a one-line refusal when ``path`` is a symbolic link, a directory, a FIFO, a device or a
    socket, or when its folder does not exist."""
    where = str(path)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise InputError(f"cannot write the {what}: {_reason(exc)}; nothing was changed", location=where) from None
    if info is None:
        if not (path.parent if str(path.parent) else Path(".")).is_dir():
            raise InputError(f"cannot write the {what}: folder {str(path.parent)!r} does not exist", location=where)
        return None
    if stat.S_ISLNK(info.st_mode):
        raise InputError(f"cannot write the {what}: this is a symbolic link (to {_link_target(path)!r}); give the "
                         "real file's path or remove the link; nothing was changed", location=where)
    for test, kind in _FILE_KINDS:
        if test(info.st_mode):
            hint = "; give a file name" if kind == "a directory" else ""
            raise InputError(f"cannot write the {what}: this is {kind}, not a regular file{hint}; nothing was "
                             "changed", location=where)
    return stat.S_IMODE(info.st_mode)


def _link_target(path: Path) -> str:
    try:
        target = os.readlink(path)
    except OSError:
        return "?"
    return target if len(target) <= 60 else target[:57] + "..."


def _reason(exc: BaseException) -> str:
    """An OSError's reason on one line (``No space left on device``)."""
    text = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return " ".join(str(text).split())


def check_output_path(path: str | Path, *, what: str = "file") -> None:
    """Fail early, in one line, when `path` cannot be an output file: it is a directory, a symbolic
    link, a FIFO or a device, or its folder does not exist (the checks :func:`atomic_output` makes).
    Commands call this before long work whose result goes to `path`."""
    _target_mode(Path(path), what)


def _create_temporary(folder: Path, name: str) -> tuple[int, Path]:
    """A new, empty file ``.<name>.<random>.tmp`` in ``folder``, opened for writing.

    Created with ``O_EXCL`` (a fresh name: never an existing file or a link planted there) and mode
    0666, which the kernel reduces by the umask (and a default ACL of the folder), as for any file
    a program creates: 0644 under the usual umask 022, 0664 under a team's 002. ``tempfile.mkstemp``
    would create it 0600, unreadable by the rest of a team reading a shared folder."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    flags |= getattr(os, "O_BINARY", 0)
    for _ in range(_TEMPORARY_TRIES):
        candidate = folder / f".{name}.{os.urandom(6).hex()}.tmp"
        try:
            return os.open(candidate, flags, 0o666), candidate
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, f"no free temporary name after {_TEMPORARY_TRIES} tries")


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable (best effort: not every platform or file system allows it)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextmanager
def atomic_output(path: str | Path, *, what: str = "file", text: bool = False,
                  mode: int | None = None) -> Iterator[IO[Any]]:
    """Write the file at `path` all at once or not at all: ``with atomic_output(p) as handle: ...``.

    The body writes to ``handle`` (binary; ``text=True``: UTF-8 text, newlines as written), which is
    a new temporary file in the same folder (:func:`_create_temporary`: permissions as any new file,
    0644 under umask 022). When the body ends, the file is flushed and fsynced, takes the
    permission bits of the file it replaces (if any), and replaces `path` with ``os.replace``
    (atomic on POSIX and Windows within one file system); the folder is then fsynced. A failure at
    any point (disk full, ENOSPC; permission denied; an exception in the body) removes the
    temporary file and leaves a previous `path` byte for byte as it was; an ``OSError`` becomes a
    one-line :class:`InputError` naming `path`, anything else is re-raised as it is.

    `path` is refused (one line, nothing written) when it is a symbolic link (the link is neither
    followed nor replaced: give the real path), a directory, a FIFO, a socket or a device, or when
    its folder does not exist. `what` names the output in messages ("HTML report", "sweep part").
    `mode` sets the new file's permission bits whatever the umask and the file it replaces (the
    cache's entries: 0600).
    """
    path = Path(path)
    where = str(path)
    folder = path.parent if str(path.parent) else Path(".")
    kept = _target_mode(path, what)
    mode = kept if mode is None else mode
    temporary: Path | None = None
    try:
        fd, temporary = _create_temporary(folder, path.name)
        try:
            if mode is not None and hasattr(os, "fchmod"):
                os.fchmod(fd, mode)
            handle = os.fdopen(fd, "w", encoding="utf-8", newline="") if text else os.fdopen(fd, "wb")
        except BaseException:
            os.close(fd)
            raise
        with handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        _target_mode(path, what)  # still nothing but a regular file (or nothing) there
        os.replace(temporary, path)
        temporary = None
        _sync_folder(folder)
    except OSError as exc:
        raise InputError(f"cannot write the {what}: {_reason(exc)}; nothing was changed", location=where) from None
    finally:
        if temporary is not None:
            try:
                os.unlink(temporary)
            except OSError:
                pass


def write_text_atomic(path: str | Path, text: str, *, what: str = "file", mode: int | None = None) -> None:
    """Write `text` (UTF-8) to `path` through :func:`atomic_output`: whole or not at all."""
    with atomic_output(path, what=what, text=True, mode=mode) as handle:
        handle.write(text)


def write_bytes_atomic(path: str | Path, data: bytes, *, what: str = "file", mode: int | None = None) -> None:
    """Write `data` to `path` through :func:`atomic_output`: whole or not at all."""
    with atomic_output(path, what=what, mode=mode) as handle:
        handle.write(data)
