"""The catalog: bundled data files plus user overlays, validated into typed entries.

Two kinds of sections:

* entry lists (``SECTIONS``: switches, nics, optics, gpus, servers, fabrics, parameters, models),
  entries addressed by ``id``;
* documents (``DOCUMENTS``: perf_defaults, nccl_tuner, ops_defaults), one nested typed model per
  data file, addressed by their keys.

Values anywhere in the catalog are addressed by dotted paths (:meth:`Catalog.get_path`,
:meth:`Catalog.with_values`): ``switches.sw_ib_qm9700.price_usd.default``,
``perf_defaults.parameters.tp_overlap_efficiency.value``, ``nccl_tuner.versions.2.30.7.tree_factor``
(a key that itself contains dots, such as a version, is matched whole), list items by index
(``...base_latency_us.ring.2``).
"""

from __future__ import annotations

import copy
import hashlib
from collections import ChainMap
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache, partial
from pathlib import Path
from typing import Any
from uuid import uuid4

from pydantic import BaseModel, RootModel, ValidationError

from fabricplan.catalog.documents import NcclTuner, OpsDefaults, PerfDefaults
from fabricplan.catalog.files import load_data_file, load_validated
from fabricplan.catalog.models import (
    Entry,
    FabricProfile,
    Gpu,
    ModelPreset,
    Nic,
    Optic,
    Parameter,
    Range,
    Server,
    Source,
    Switch,
    plain,
)
from fabricplan.errors import CatalogError
from fabricplan.io import format_validation_error, read_document

# section name -> (bundled files, entry model)
SECTIONS: dict[str, tuple[tuple[str, ...], type[Entry]]] = {
    "switches": (("switches.yaml",), Switch),
    "nics": (("nics.yaml",), Nic),
    "optics": (("optics.yaml",), Optic),
    "gpus": (("gpus.yaml",), Gpu),
    "servers": (("servers.yaml",), Server),
    "fabrics": (("fabrics.yaml",), FabricProfile),
    "parameters": (("parameters.yaml", "decision.yaml"), Parameter),
    "models": (("models.yaml",), ModelPreset),
    "sources": (("sources.yaml",), Source),
}

# document section name -> (bundled file, model of the whole file)
DOCUMENTS: dict[str, tuple[str, type[BaseModel]]] = {
    "perf_defaults": ("perf_defaults.yaml", PerfDefaults),
    "nccl_tuner": ("nccl_tuner.yaml", NcclTuner),
    "ops_defaults": ("ops_defaults.yaml", OpsDefaults),
}

ALL_SECTIONS: tuple[str, ...] = (*SECTIONS, *DOCUMENTS)

SINGULAR = {"switches": "switch", "nics": "NIC", "optics": "optic or cable", "gpus": "GPU",
            "servers": "server", "fabrics": "fabric profile", "parameters": "parameter",
            "models": "model preset", "sources": "source"}

#: The origin recorded for values changed by :meth:`Catalog.with_values`.
SET_BY_PATH = "set by path"


@dataclass(frozen=True)
class Catalog:
    """All catalog entries by section and id, and the document sections by name.

    Look-ups raise CatalogError naming the known ids. ``origins`` maps an entry section to
    ``{id: "bundled" | overlay path | "set by path"}`` and a document section to
    ``{dotted sub-path: overlay path | "set by path"}`` for the parts that were overridden (the
    rest is bundled; :meth:`origin` resolves any path).
    """

    entries: Mapping[str, Mapping[str, Entry]]
    origins: Mapping[str, Mapping[str, str]]
    documents: Mapping[str, BaseModel]
    #: What this catalog's content is, as a key for results computed from it: derived from the
    #: parent's revision and the change (:meth:`with_values`, :func:`derived_revision`), so the same
    #: change of the same catalog gives the same key; a fresh one for a catalog built otherwise.
    revision: str = field(default_factory=lambda: uuid4().hex, compare=False)
    #: ``perf_defaults`` values already read (the models ask for them per number); not copied by
    #: ``dataclasses.replace``, so a changed catalog starts empty.
    _perf_values: dict[str, Any] = field(default_factory=dict, init=False, compare=False, repr=False)
    #: :meth:`content_sha256`, once computed (a catalog never changes).
    _sha256: list[str] = field(default_factory=list, init=False, compare=False, repr=False)

    def content_sha256(self) -> str:
        """SHA-256 of the resolved data: every entry and document after the overlays, as canonical
        JSON (sorted keys). The same numbers give the same hash, however they were layered (bundled,
        an overlay, ``with_values``); where they came from (``origins``) is not part of it. JSON
        documents carry it (``catalog_sha256``) so a result names the catalog it was computed from.

        Each item is hashed alone; the bundled items' hashes are cached per user with the validated
        catalog (:func:`_bundled_digests`), so only the entries and documents an overlay or
        ``with_values`` replaced are serialised here (the models' serialisers stay unbuilt)."""
        if not self._sha256:
            bundled = _bundled_digests()
            shipped = _bundled().entries
            entries = {section: {entry_id: bundled["entries"][section][entry_id]
                                 if shipped.get(section, {}).get(entry_id) is entry else _digest(entry)
                                 for entry_id, entry in items.items()}
                       for section, items in self.entries.items()}
            documents = {name: bundled["documents"][name] if _is_bundled_document(self.documents, name)
                         else _digest(self.documents[name]) for name in self.documents}
            self._sha256.append(_digest({"entries": entries, "documents": documents}))
        return self._sha256[0]

    def section(self, name: str) -> Mapping[str, Entry]:
        if name not in self.entries:
            raise CatalogError(f"unknown catalog section '{name}'; known: {', '.join(SECTIONS)}")
        return self.entries[name]

    def get(self, section: str, entry_id: str, *, field: str | None = None) -> Entry:
        items = self.section(section)
        if entry_id not in items:
            singular = SINGULAR.get(section, section)
            known = ", ".join(sorted(items))
            raise CatalogError(f"unknown {singular} '{entry_id}'; known: {known}", location=field)
        return items[entry_id]

    def switch(self, entry_id: str, field: str | None = None) -> Switch:
        return self.get("switches", entry_id, field=field)  # type: ignore[return-value]

    def nic(self, entry_id: str, field: str | None = None) -> Nic:
        return self.get("nics", entry_id, field=field)  # type: ignore[return-value]

    def optic(self, entry_id: str, field: str | None = None) -> Optic:
        return self.get("optics", entry_id, field=field)  # type: ignore[return-value]

    def gpu(self, entry_id: str, field: str | None = None) -> Gpu:
        return self.get("gpus", entry_id, field=field)  # type: ignore[return-value]

    def server(self, entry_id: str, field: str | None = None) -> Server:
        return self.get("servers", entry_id, field=field)  # type: ignore[return-value]

    def fabric(self, entry_id: str, field: str | None = None) -> FabricProfile:
        return self.get("fabrics", entry_id, field=field)  # type: ignore[return-value]

    def parameter(self, entry_id: str) -> Parameter:
        return self.get("parameters", entry_id)  # type: ignore[return-value]

    def model_preset(self, entry_id: str, field: str | None = None) -> ModelPreset:
        return self.get("models", entry_id, field=field)  # type: ignore[return-value]

    @property
    def perf_defaults(self) -> PerfDefaults:
        """``perf_defaults.yaml`` (with overlays)."""
        return self.documents["perf_defaults"]  # type: ignore[return-value]

    def perf_value(self, name: str) -> float | dict | str:
        """The ``value`` of the ``perf_defaults`` parameter ``name`` as stored (number, table or id):
        the one reader of those numbers for the performance models and the simulator. Its unit and
        source sit beside it in ``perf_defaults.yaml``."""
        known = self._perf_values.get(name)
        if known is not None:
            return known
        parameters = self.perf_defaults.parameters
        entry = parameters.get(name)
        if entry is None:
            raise CatalogError(f"no perf parameter '{name}'; known: {', '.join(parameters)}",
                               location="perf_defaults.parameters")
        self._perf_values[name] = entry.value
        return entry.value

    @property
    def nccl_tuner(self) -> NcclTuner:
        """``nccl_tuner.yaml`` (with overlays)."""
        return self.documents["nccl_tuner"]  # type: ignore[return-value]

    @property
    def ops_defaults(self) -> OpsDefaults:
        """``ops_defaults.yaml`` (with overlays)."""
        return self.documents["ops_defaults"]  # type: ignore[return-value]

    def server_for_gpu(self, gpu_id: str) -> Server | None:
        """The first server entry built around this GPU, if any."""
        for server in self.section("servers").values():
            if isinstance(server, Server) and server.gpu == gpu_id:
                return server
        return None

    # --- dotted paths ---------------------------------------------------------------------------

    def get_path(self, path: str) -> Any:
        """The value at a dotted path, e.g. ``"switches.sw_ib_qm9700.price_usd.default"``.

        Returns what is stored there: a number or text, a list or mapping, or a typed model
        (``...price_usd`` gives the :class:`Range`). CatalogError names the segment that failed
        and what exists at that point.
        """
        segments = _split(path)
        node: Any = self._root()
        i, where = 0, "the catalog"
        while i < len(segments):
            key, node, i = _child(node, segments, i, where, path)
            where = f"'{_join(segments[:i])}'"
        return node.root if isinstance(node, RootModel) else node

    def origin(self, path: str) -> str:
        """Where the value at a dotted path comes from: "bundled", an overlay file or "set by path"."""
        segments = _split(path)
        section = segments[0]
        if section in SECTIONS:
            if len(segments) < 2:
                return "bundled"
            key, _node, _i = _child(self.section(section), segments, 1, f"'{section}'", path)
            return self.origins[section].get(key, "bundled")
        if section not in DOCUMENTS:
            _child(self._root(), segments, 0, "the catalog", path)  # raises, naming the sections
        sub = _join(segments[1:])
        best, origin, below = -1, "bundled", None
        for recorded, where in self.origins.get(section, {}).items():
            if (sub == recorded or sub.startswith(recorded + ".") or not recorded) and len(recorded) > best:
                best, origin = len(recorded), where
            elif not sub or recorded.startswith(sub + "."):
                below = where  # part of this value was overridden (the latest such origin)
        return origin if best >= 0 or below is None else below

    def source_of(self, path: str) -> tuple[str, str]:
        """(source, date) that covers the value at a dotted path: those of the nearest enclosing
        entry or sourced block (for nccl_tuner's NVLink and architecture tables, their sibling
        ``*_source``/``*_date`` keys); ``("", "")`` when the path names a whole section."""
        segments = _split(path)
        node: Any = self._root()
        found, i = ("", ""), 0
        while i < len(segments):
            key, node, i = _child(node, segments, i, "the catalog", path)
            if i == 2 and segments[0] == "nccl_tuner":
                prefix = {"nvlink_bw_per_link_gbytes_per_s": "nvlink_bw",
                          "architecture_compute_capability": "architecture_compute_capability"}.get(key)
                if prefix:
                    tuner = self.nccl_tuner
                    found = (getattr(tuner, f"{prefix}_source"), getattr(tuner, f"{prefix}_date"))
            source, date = getattr(node, "source", None), getattr(node, "date", None)
            if isinstance(source, str) and isinstance(date, str):
                found = (source, date)
        return found

    def document_items(self, name: str) -> list[tuple[str, Any]]:
        """The sourced items of a document section as (dotted path below it, item), for listings:
        perf_defaults parameters, nccl_tuner versions and blocks, ops_defaults entries."""
        if name not in DOCUMENTS:
            raise CatalogError(f"unknown document section '{name}'; known: {', '.join(DOCUMENTS)}")
        document = self.documents[name]
        if name == "perf_defaults":
            return [(f"parameters.{key}", item) for key, item in self.perf_defaults.parameters.items()]
        if name == "nccl_tuner":
            tuner = self.nccl_tuner
            return [*((f"versions.{key}", item) for key, item in tuner.versions.items()),
                    ("network_steps", tuner.network_steps),
                    ("nvlink_bw_per_link_gbytes_per_s", tuner.nvlink_bw_per_link_gbytes_per_s),
                    ("architecture_compute_capability", tuner.architecture_compute_capability)]
        items: list[tuple[str, Any]] = []

        def walk(node: Any, prefix: str) -> None:
            children = node.root if isinstance(node, RootModel) else {
                field: getattr(node, field) for field in type(node).model_fields}
            for key, child in children.items():
                path = f"{prefix}.{key}" if prefix else key
                if isinstance(child, (RootModel, BaseModel)) and not hasattr(child, "value"):
                    walk(child, path)
                else:
                    items.append((path, child))

        walk(document, "")
        return items

    def with_values(self, values: Mapping[str, Any], *, origin: str = SET_BY_PATH) -> Catalog:
        """A new validated catalog with the values at dotted paths replaced; this one is unchanged.

        * Entry lists are addressed by id: ``"switches.sw_ib_qm9700.power_w"``.
        * A plain number set on a low/default/high range (e.g. ``"servers.dgx-h100.price_usd"``)
          sets ``low = default = high`` to it; set ``...price_usd.default`` to move only the default
          (it must stay within low..high).
        * A mapping value merges field by field into what is there, as overlays do.
        * Only the changed entry (or the changed part of a document) is validated again, so a sweep
          can call this many times. The changed entries/paths record ``origin``.

        CatalogError for a path that does not exist (naming the failing segment and what exists
        there) or a value its field does not accept (naming the path and what was expected).
        """
        entries = dict(self.entries)
        documents = _Documents.of(self.documents)
        origins = dict(self.origins)
        for path, value in values.items():
            segments = _split(path)
            root = ChainMap(documents, entries)  # iterates entries, then documents
            section, _node, i = _child(root, segments, 0, "the catalog", path)
            try:
                if section in SECTIONS:
                    if i == len(segments):
                        raise CatalogError(f"name an entry of '{section}' ({', '.join(entries[section])})",
                                           location=f"catalog path {path}")
                    entry_id, entry, j = _child(entries[section], segments, i, f"'{section}'", path)
                    if j < len(segments) and segments[j] == "id":
                        raise CatalogError("an entry's id cannot be set by path", location=f"catalog path {path}")
                    new_entry = _set(entry, segments, j, value, path)
                    model = SECTIONS[section][1]
                    if not isinstance(new_entry, model):
                        new_entry = model.model_validate(new_entry)
                    entries[section] = {**entries[section], entry_id: new_entry}
                    origins[section] = {**origins[section], entry_id: origin}
                else:
                    model = DOCUMENTS[section][1]
                    new_doc = _set(documents[section], segments, i, value, path)
                    if not isinstance(new_doc, model):
                        new_doc = model.model_validate(new_doc)
                    documents = documents.replace(section, new_doc)
                    origins[section] = {**origins.get(section, {}), _join(segments[i:]): origin}
            except ValidationError as exc:
                raise CatalogError(format_validation_error(exc), location=f"catalog path {path}") from None
        check_consistency(entries, origins)
        return Catalog(entries=entries, origins=origins, documents=documents,
                       revision=derived_revision(self.revision, "with_values", origin, sorted(values.items(), key=repr)))

    def _root(self) -> Mapping[str, Any]:
        return ChainMap(self.documents, self.entries)  # type: ignore[arg-type]


# --- dotted-path helpers ----------------------------------------------------------------------------

def _split(path: str) -> list[str]:
    if not isinstance(path, str) or not path or any(not part for part in path.split(".")):
        raise CatalogError(f"a catalog path is dot-separated names, e.g. switches.sw_ib_qm9700.power_w; "
                           f"got {path!r}")
    return path.split(".")


def _join(segments: list[str]) -> str:
    return ".".join(segments)


def _child(node: Any, segments: list[str], i: int, where: str, path: str) -> tuple[Any, Any, int]:
    """(key, child, next index) for ``segments[i]`` below ``node``; CatalogError naming what exists."""
    segment = segments[i]
    location = f"catalog path {path}"
    if isinstance(node, RootModel):
        node = node.root
    if isinstance(node, BaseModel):
        fields = type(node).model_fields
        if segment in fields:
            return segment, getattr(node, segment), i + 1
        raise CatalogError(f"no field '{segment}' in {where} ({type(node).__name__}); fields: "
                           f"{', '.join(fields)}", location=location)
    if isinstance(node, Mapping):
        # Keys may contain dots ("2.30.7"): the longest run of segments naming a key wins.
        for j in range(len(segments), i, -1):
            text = _join(segments[i:j])
            if text in node:
                return text, node[text], j
            if text.lstrip("-").isdigit() and int(text) in node:
                return int(text), node[int(text)], j
        known = ", ".join(str(k) for k in node) or "nothing"
        if any("." in str(k) for k in node):  # dotted keys: the segment may be the start of one
            segment = _join(segments[i:])
        raise CatalogError(f"no '{segment}' in {where}; known: {known}", location=location)
    if isinstance(node, (list, tuple)):
        if segment.isdigit() and int(segment) < len(node):
            return int(segment), node[int(segment)], i + 1
        raise CatalogError(f"'{segment}' is not an index of {where} (a list of {len(node)}: "
                           f"0..{len(node) - 1})", location=location)
    raise CatalogError(f"{where} is a value ({node!r}); it has no '{segment}'", location=location)


def _plain(node: Any) -> Any:
    """Models inside containers -> plain dicts, for field-by-field merges."""
    if isinstance(node, BaseModel):
        return plain(node)
    if isinstance(node, Mapping):
        return {key: _plain(value) for key, value in node.items()}
    if isinstance(node, (list, tuple)):
        return [_plain(value) for value in node]
    return node


def _new_value(old: Any, value: Any) -> Any:
    """What replaces ``old``: a number on a Range fills low/default/high; mappings merge."""
    if isinstance(old, Range) and isinstance(value, (int, float)) and not isinstance(value, bool):
        return {"low": value, "default": value, "high": value}
    if isinstance(value, Mapping) and isinstance(old, (BaseModel, Mapping)):
        return _merge(_plain(old), value)
    return value


def _set(node: Any, segments: list[str], i: int, value: Any, path: str) -> Any:
    """``node`` with the value at ``segments[i:]`` replaced; models on the way are re-validated."""
    if i == len(segments):
        return _new_value(node, value)
    key, child, j = _child(node, segments, i, f"'{_join(segments[:i])}'", path)
    new_child = _set(child, segments, j, value, path)
    if isinstance(node, RootModel):
        return type(node).model_validate({**node.root, key: new_child})
    if isinstance(node, BaseModel):
        fields = {name: getattr(node, name) for name in type(node).model_fields}
        fields[key] = new_child
        return type(node).model_validate(fields)
    if isinstance(node, Mapping):
        return {**node, key: new_child}
    items = list(node)
    items[key] = new_child
    return items


# --- loading ----------------------------------------------------------------------------------------

class _Documents(Mapping[str, BaseModel]):
    """The document sections, each parsed and validated on first use: a command that never reads
    ``ops_defaults`` (the step model) never pays for it. Immutable; :meth:`replace` gives a copy."""

    def __init__(self, items: Mapping[str, BaseModel | Callable[[], BaseModel]]) -> None:
        self._items = dict(items)

    @classmethod
    def of(cls, documents: Mapping[str, BaseModel]) -> _Documents:
        return documents if isinstance(documents, _Documents) else cls(documents)

    def __getitem__(self, name: str) -> BaseModel:
        value = self._items[name]  # KeyError for an unknown section, as a dict
        if not isinstance(value, BaseModel):
            value = value()
            self._items[name] = value
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def replace(self, name: str, value: BaseModel) -> _Documents:
        return _Documents({**self._items, name: value})


@dataclass(frozen=True)
class _Bundled:
    raw_entries: dict[str, dict[str, dict[str, Any]]]
    entries: dict[str, dict[str, Entry]]


@cache
def _bundled() -> _Bundled:
    """The bundled entry files, parsed and validated once per process and cached validated per user
    (:func:`fabricplan.catalog.files.load_validated`; treat as read-only)."""
    filenames = tuple(dict.fromkeys(name for names, _model in SECTIONS.values() for name in names))
    return load_validated("entries", filenames, _validate_bundled)


def _validate_bundled() -> _Bundled:
    raw_entries: dict[str, dict[str, dict[str, Any]]] = {}
    entries: dict[str, dict[str, Entry]] = {}
    for section, (filenames, model) in SECTIONS.items():
        raw_entries[section], entries[section] = {}, {}
        for filename in filenames:
            for item in load_data_file(filename)[section]:
                raw_entries[section][item["id"]] = item  # read-only: overlays merge into copies
                entries[section][item["id"]] = _validate(model, item, f"{filename}: {section}[id={item['id']}]")
    return _Bundled(raw_entries, entries)


def _raw_document(name: str) -> dict[str, Any]:
    """A bundled document file as parsed (cached by load_data_file; read-only)."""
    return load_data_file(DOCUMENTS[name][0])


@cache
def _bundled_document(name: str) -> BaseModel:
    """A bundled document section, validated once per process on first use."""
    filename, model = DOCUMENTS[name]
    document = load_validated(name, (filename,), lambda: _validate(model, _raw_document(name), filename))
    _LOADED_DOCUMENTS[name] = document
    return document


#: The bundled documents loaded so far (what :func:`_bundled_document` returned), by name.
_LOADED_DOCUMENTS: dict[str, BaseModel] = {}


def _is_bundled_document(documents: Mapping[str, Any], name: str) -> bool:
    """Whether ``documents[name]`` is the bundled document, unchanged (without loading it)."""
    items = getattr(documents, "_items", documents)
    value = items[name]
    if isinstance(value, partial) and value.func is _bundled_document:
        return True
    return _LOADED_DOCUMENTS.get(name) is value


def _digest(value: Any) -> str:
    """SHA-256 of a value (a catalog model, or plain data) as canonical JSON."""
    import json

    data = value.model_dump(mode="json") if isinstance(value, BaseModel) else value
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


@cache
def _bundled_digests() -> dict[str, dict[str, Any]]:
    """Per bundled entry and document, :func:`_digest` of it; cached per user beside the validated
    catalog, keyed by the same files and schema modules."""
    filenames = tuple(dict.fromkeys([*(name for names, _model in SECTIONS.values() for name in names),
                                     *(filename for filename, _model in DOCUMENTS.values())]))

    def build() -> dict[str, dict[str, Any]]:
        return {"entries": {section: {entry_id: _digest(entry) for entry_id, entry in items.items()}
                            for section, items in _bundled().entries.items()},
                "documents": {name: _digest(_bundled_document(name)) for name in DOCUMENTS}}

    return load_validated("digests", filenames, build)


def _validate(model: type[BaseModel], data: Any, where: str) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise CatalogError(format_validation_error(exc, model=model, schema_command="fabricplan catalog show ID --json"),
                           location=where) from None


def _merge(base: dict[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    """Field-level merge: nested mappings merge, everything else is replaced."""
    merged = dict(base)
    for key, value in update.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _merge(dict(merged[key]), value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _leaf_paths(update: Mapping[str, Any], prefix: str = "") -> list[str]:
    """Dotted paths of the overlay's leaves (what it overrides), for the origins of a document."""
    paths: list[str] = []
    for key, value in update.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, Mapping) and value:
            paths.extend(_leaf_paths(value, path))
        else:
            paths.append(path)
    return paths


def _apply_overlay(raw: dict[str, dict[str, dict[str, Any]]], documents: dict[str, dict[str, Any]],
                   origins: dict[str, dict[str, str]], path: Path) -> None:
    document = read_document(path)
    if not isinstance(document, Mapping):
        raise CatalogError("a catalog file must be a mapping of sections "
                           f"({', '.join(ALL_SECTIONS)}) to lists of entries or documents", location=str(path))
    for section, items in document.items():
        if section in DOCUMENTS:
            if not isinstance(items, Mapping):
                raise CatalogError(f"expected a mapping shaped like {DOCUMENTS[section][0]} "
                                   "(only the keys it changes)", location=f"{path}: {section}")
            documents[section] = _merge(documents[section], items)
            for leaf in _leaf_paths(items):
                origins[section][leaf] = str(path)
            continue
        if section not in SECTIONS:
            raise CatalogError(f"unknown section '{section}'; expected one of {', '.join(ALL_SECTIONS)}",
                               location=f"{path}: {section}")
        if not isinstance(items, list):
            raise CatalogError("expected a list of entries", location=f"{path}: {section}")
        for index, item in enumerate(items):
            where = f"{path}: {section}[{index}]"
            if not isinstance(item, Mapping) or not isinstance(item.get("id"), str):
                raise CatalogError("each entry must be a mapping with a string 'id'", location=where)
            entry_id = item["id"]
            existing = raw[section].get(entry_id)
            raw[section][entry_id] = _merge(existing, item) if existing else dict(item)
            origins[section][entry_id] = str(path)


def load_catalog(overlays: Iterable[str | Path] = ()) -> Catalog:
    """Load the bundled catalog and layer user files over it (same ids override, new ids add).

    Overlay files are YAML or JSON with the same sections as the bundled data. Entry lists by id,
    e.g. ``{"switches": [{"id": "sw_eth_th5", "price_usd": {"default": 80000}}]}``; documents as
    the bundled file's own shape with only the keys that change, e.g.
    ``{"perf_defaults": {"parameters": {"tp_overlap_efficiency": {"value": 0.5, "source": ..., "date": ...}}}}``
    or ``{"nccl_tuner": {"versions": {"2.30.7": {"tree_factor": 0.9}}}}``. Overrides merge field by
    field; an override needs only the fields it changes, plus ``source``/``date`` if it changes
    numbers. The bundled data is parsed and validated once per process; only overridden entries
    and documents are validated again.
    """
    bundled = _bundled()
    raw: dict[str, dict[str, dict[str, Any]]] = {s: dict(items) for s, items in bundled.raw_entries.items()}
    raw_documents = _RawDocuments()
    origins: dict[str, dict[str, str]] = {s: {i: "bundled" for i in items} for s, items in raw.items()}
    origins.update({name: {} for name in DOCUMENTS})
    for overlay in overlays:
        _apply_overlay(raw, raw_documents, origins, Path(overlay))
    entries: dict[str, dict[str, Entry]] = {}
    for section, (_filenames, model) in SECTIONS.items():
        entries[section] = dict(bundled.entries[section])
        for entry_id, origin in origins[section].items():
            if origin != "bundled":
                entries[section][entry_id] = _validate(model, raw[section][entry_id],
                                                       f"{origin}: {section}[id={entry_id}]")
    check_consistency(entries, origins)
    documents: dict[str, BaseModel | Callable[[], BaseModel]] = {}
    for name, (_filename, model) in DOCUMENTS.items():
        if origins[name]:
            overlay_files = ", ".join(dict.fromkeys(origins[name].values()))
            documents[name] = _validate(model, raw_documents[name], f"{overlay_files}: {name}")
        else:
            documents[name] = partial(_bundled_document, name)
    return Catalog(entries=entries, origins=origins, documents=_Documents(documents))


#: Sanity bounds of catalog parameters an overlay may set: (lowest, highest, why). Not defaults:
#: values outside would make a model meaningless (a sensitivity swing of 100 % or more prices
#: hardware at zero or below) or unbounded (a crossover search over 10^300 GPUs).
PARAMETER_BOUNDS: dict[str, tuple[float, float, str]] = {
    "energy_usd_per_kwh": (0.0, 10.0, "USD/kWh; the dearest retail electricity is below 1"),
    "pue": (1.0, 3.0, "a PUE is at least 1; 3 is beyond the least efficient data centres"),
    "colo_usd_per_kw_month": (0.0, 10_000.0, "USD per kW-month; wholesale rents are ~100-200"),
    "support_fraction_per_year": (0.0, 1.0, "a share of capex per year"),
    "support_covers_optics_share": (0.0, 1.0, "a share of the optics capex"),
    "support_covers_cables_share": (0.0, 1.0, "a share of the cable capex"),
    "fte_cost_usd_per_year": (0.0, 10_000_000.0, "USD per FTE-year; fully loaded costs are ~0.2-0.4 million"),
    "network_fte_per_1024_gpus": (0.0, 1_000.0, "FTE per 1,024 GPUs; sources say ~2-6"),
    "ops_fte_scaling_exponent": (0.0, 2.0, "exponent of a staffing curve; sources say 0.5-1"),
    "min_network_fte": (0.0, 1_000.0, "FTE"),
    "maturity_fte_multiplier_none": (0.0, 100.0, "a multiplier on staff"),
    "maturity_fte_multiplier_basic": (0.0, 100.0, "a multiplier on staff"),
    "maturity_fte_multiplier_experienced": (0.0, 100.0, "a multiplier on staff"),
    "maturity_fte_multiplier_expert": (0.0, 100.0, "a multiplier on staff"),
    "floor_rack_width_m": (0.1, 10.0, "metres of row per rack"),
    "floor_row_pitch_m": (0.5, 20.0, "metres between rows"),
    "floor_racks_per_row": (1.0, 1000.0, "racks in a row"),
    "floor_servers_per_rack": (1.0, 100.0, "servers in a rack"),
    "floor_in_rack_run_m": (0.1, 10.0, "metres within a rack"),
    "floor_run_overhead_m": (0.0, 100.0, "metres added to every inter-rack run"),
    "floor_slack_fraction": (0.0, 2.0, "a relative slack"),
    "failure_rate_gpu_per_million_hours": (0.0, 1e6, "interruptions per 10^6 hours"),
    "failure_rate_host_per_million_hours": (0.0, 1e6, "interruptions per 10^6 hours"),
    "failure_rate_nic_per_million_hours": (0.0, 1e6, "interruptions per 10^6 hours"),
    "failure_rate_switch_per_million_hours": (0.0, 1e6, "interruptions per 10^6 hours"),
    "failure_rate_link_per_million_hours": (0.0, 1e6, "interruptions per 10^6 hours"),
    "checkpoint_write_minutes": (0.0, 10_000.0, "minutes"),
    "restart_minutes": (0.0, 100_000.0, "minutes"),
    "sensitivity_swing": (0.0, 0.95, "a relative swing; 1 or more would price hardware at zero or below"),
    "scale_search_max_gpus": (1.0, 10_000_000.0, "GPUs; the spec's own bound on cluster.gpus"),
    "decision_close_call_band": (0.0, 1.0, "a relative difference"),
}

#: Which kind of optic each hardware slot of a fabric profile takes.
OPTIC_SLOTS = {"switch_optic": "transceiver", "nic_optic": "transceiver", "interswitch_optic": "transceiver",
               "host_dac": "cable", "fibre": "fibre"}


def check_consistency(entries: Mapping[str, Mapping[str, Entry]], origins: Mapping[str, Mapping[str, str]]) -> None:
    """Cross-entry checks after overlays: parameters within :data:`PARAMETER_BOUNDS`, every id a
    server or fabric profile names exists in its section, and each optic slot holds its kind
    (a transceiver where a transceiver goes, a cable as the host DAC). CatalogError naming the file
    the entry came from and its field."""
    def where(section: str, entry_id: str, field: str) -> str:
        return f"{origins[section].get(entry_id, 'bundled')}: {section}[id={entry_id}].{field}"

    def known(target: str, owner: str, entry_id: str, value: str, field: str) -> Entry:
        items = entries[target]
        if value not in items:
            raise CatalogError(f"unknown {SINGULAR[target]} '{value}'; known: {', '.join(sorted(items))}",
                               location=where(owner, entry_id, field))
        return items[value]

    for entry_id, parameter in entries["parameters"].items():
        bounds = PARAMETER_BOUNDS.get(entry_id)
        if bounds is None or origins["parameters"].get(entry_id) == "bundled":
            continue
        lowest, highest, why = bounds
        for point in ("low", "default", "high"):
            value = getattr(parameter.value, point)
            if value is not None and not lowest <= value <= highest:
                raise CatalogError(f"must be between {lowest:g} and {highest:g} ({why}), got {value:g}",
                                   location=where("parameters", entry_id, f"value.{point}"))
    for entry_id, optic in entries["optics"].items():
        twin_id = optic.third_party_part  # type: ignore[attr-defined]
        if twin_id is not None:
            twin = known("optics", "optics", entry_id, twin_id, "third_party_part")
            if twin.kind != optic.kind or twin.basis != "third_party":  # type: ignore[attr-defined]
                raise CatalogError(f"the third-party equivalent of a {optic.kind} must be a third-party "  # type: ignore[attr-defined]
                                   f"{optic.kind}; '{twin_id}' is a {twin.basis} {twin.kind}",  # type: ignore[attr-defined]
                                   location=where("optics", entry_id, "third_party_part"))
    for entry_id, server in entries["servers"].items():
        known("gpus", "servers", entry_id, server.gpu, "gpu")  # type: ignore[attr-defined]
        if server.included_nic is not None:  # type: ignore[attr-defined]
            known("nics", "servers", entry_id, server.included_nic, "included_nic")  # type: ignore[attr-defined]
    for entry_id, profile in entries["fabrics"].items():
        hardware = profile.hardware  # type: ignore[attr-defined]
        known("switches", "fabrics", entry_id, hardware.switch, "hardware.switch")
        known("nics", "fabrics", entry_id, hardware.nic, "hardware.nic")
        for slot, kind in OPTIC_SLOTS.items():
            value = getattr(hardware, slot)
            if value is None:
                continue
            optic = known("optics", "fabrics", entry_id, value, f"hardware.{slot}")
            if optic.kind != kind:  # type: ignore[attr-defined]
                raise CatalogError(f"'{value}' is a {optic.kind}, but {slot} takes a {kind}",  # type: ignore[attr-defined]
                                   location=where("fabrics", entry_id, f"hardware.{slot}"))
        for slot in ("host_media", "interswitch_media"):
            for i, medium in enumerate(getattr(hardware, slot)):
                field = f"hardware.{slot}[{i}]"
                end = known("optics", "fabrics", entry_id, medium.switch_end, f"{field}.switch_end")
                if medium.far_end is not None:
                    far = known("optics", "fabrics", entry_id, medium.far_end, f"{field}.far_end")
                    if end.kind != "transceiver" or far.kind != "transceiver":  # type: ignore[attr-defined]
                        raise CatalogError("a medium with a far_end joins two transceivers by fibre; "
                                           f"'{medium.switch_end}' is a {end.kind} and '{medium.far_end}' a {far.kind}",  # type: ignore[attr-defined]
                                           location=where("fabrics", entry_id, field))
                elif end.kind == "fibre":  # type: ignore[attr-defined]
                    raise CatalogError(f"'{medium.switch_end}' is fibre; a medium is a cable or transceivers",
                                       location=where("fabrics", entry_id, f"{field}.switch_end"))
                elif slot == "host_media" and end.kind == "transceiver":  # type: ignore[attr-defined]
                    raise CatalogError("a host link of transceivers needs the NIC-side optic as far_end",
                                       location=where("fabrics", entry_id, f"{field}.far_end"))


class _RawDocuments(dict):
    """Raw document sections for overlays to merge into: a bundled file is read when first asked for."""

    def __missing__(self, name: str) -> dict[str, Any]:
        value = _raw_document(name)
        self[name] = value
        return value


@cache
def default_catalog() -> Catalog:
    """The bundled catalog without overlays, loaded once: what the public API (``fabricplan.api``)
    and the CLI resolve ``catalog=None`` to, once, before passing it down."""
    return load_catalog()


def derived_revision(parent: str, *change: object) -> str:
    """The :attr:`Catalog.revision` of a catalog made from ``parent`` by ``change`` (its ``repr``):
    a content key that the same change of the same catalog reproduces."""
    return hashlib.sha256(repr((parent, change)).encode()).hexdigest()[:32]


def require_catalog(catalog: Catalog | None, reader: str, *details: object) -> Catalog:
    """``catalog``, or a TypeError naming ``reader`` (with ``details``, e.g. the parameter asked for)
    when it is None; the message is built only then (the accessors are called per model number).

    Below the public API and the CLI the catalog is always passed explicitly: a None there is a
    caller that dropped the user's ``--catalog`` overlays, so it is an error, never "the bundled
    catalog"."""
    if catalog is None:
        if details:
            reader = f"{reader}({', '.join(repr(d) for d in details)})"
        raise TypeError(f"{reader} needs the catalog: pass the Catalog the API or CLI loaded (with the "
                        "user's --catalog overlays); None does not mean the bundled catalog")
    return catalog
