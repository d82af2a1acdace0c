"""The catalog: bundled data files plus user overlays, validated into typed entries."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from fabricplan.catalog.files import load_data_file
from fabricplan.catalog.models import (
    Entry,
    FabricProfile,
    Gpu,
    Nic,
    Optic,
    Parameter,
    Server,
    Switch,
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
}

SINGULAR = {"switches": "switch", "nics": "NIC", "optics": "optic or cable", "gpus": "GPU",
            "servers": "server", "fabrics": "fabric profile", "parameters": "parameter"}


@dataclass(frozen=True)
class Catalog:
    """All catalog entries by section and id. Look-ups raise CatalogError naming the known ids."""

    entries: Mapping[str, Mapping[str, Entry]]
    origins: Mapping[str, Mapping[str, str]]  # section -> id -> "bundled" or the overlay path

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

    def server_for_gpu(self, gpu_id: str) -> Server | None:
        """The first server entry built around this GPU, if any."""
        for server in self.section("servers").values():
            if isinstance(server, Server) and server.gpu == gpu_id:
                return server
        return None


def _bundled_raw() -> dict[str, dict[str, dict[str, Any]]]:
    raw: dict[str, dict[str, dict[str, Any]]] = {}
    for section, (filenames, _model) in SECTIONS.items():
        raw[section] = {}
        for filename in filenames:
            for item in load_data_file(filename)[section]:
                raw[section][item["id"]] = copy.deepcopy(item)
    return raw


def _merge(base: dict[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    """Field-level merge: nested mappings merge, everything else is replaced."""
    merged = dict(base)
    for key, value in update.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _merge(dict(merged[key]), value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _apply_overlay(raw: dict[str, dict[str, dict[str, Any]]], origins: dict[str, dict[str, str]],
                   path: Path) -> None:
    document = read_document(path)
    if not isinstance(document, Mapping):
        raise CatalogError("a catalog file must be a mapping of sections "
                           f"({', '.join(SECTIONS)}) to lists of entries", location=str(path))
    for section, items in document.items():
        if section not in SECTIONS:
            raise CatalogError(f"unknown section '{section}'; expected one of {', '.join(SECTIONS)}",
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

    Overlay files are YAML or JSON with the same sections as the bundled data, e.g.
    ``{"switches": [{"id": "sw_eth_th5", "price_usd": {"default": 80000}}]}``; an override needs
    only the fields it changes, plus ``source``/``date`` if it changes numbers.
    """
    raw = _bundled_raw()
    origins: dict[str, dict[str, str]] = {s: {i: "bundled" for i in raw[s]} for s in raw}
    for overlay in overlays:
        _apply_overlay(raw, origins, Path(overlay))
    entries: dict[str, dict[str, Entry]] = {}
    for section, (_filenames, model) in SECTIONS.items():
        entries[section] = {}
        for entry_id, item in raw[section].items():
            try:
                entries[section][entry_id] = model.model_validate(item)
            except ValidationError as exc:
                where = f"{origins[section][entry_id]}: {section}[id={entry_id}]"
                raise CatalogError(format_validation_error(exc), location=where) from None
    return Catalog(entries=entries, origins=origins)
