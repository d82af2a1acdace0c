"""Loading a spec from YAML/JSON and checking its catalog references."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from fabricplan.catalog import Catalog
from fabricplan.errors import InputError
from fabricplan.io import format_validation_error, read_document
from fabricplan.spec.models import ClusterSpec


def parse_spec(document: Any, where: str = "spec") -> ClusterSpec:
    """Validate an already-parsed document into a ClusterSpec (one-line error naming the field)."""
    if not isinstance(document, Mapping):
        kind = type(document).__name__
        raise InputError(f"expected a mapping with a 'cluster' section at the top level, got {kind}",
                         location=where)
    try:
        return ClusterSpec.model_validate(document)
    except ValidationError as exc:
        raise InputError(format_validation_error(exc), location=where) from None


def check_references(spec: ClusterSpec, catalog: Catalog) -> None:
    """Every catalog id the spec names must exist (the catalog may include user overlays)."""
    if isinstance(spec.cluster.gpu, str):
        catalog.gpu(spec.cluster.gpu, field="cluster.gpu")
    if spec.cluster.server is not None:
        catalog.server(spec.cluster.server, field="cluster.server")
    lookups = {"switch": catalog.switch, "nic": catalog.nic, "switch_optic": catalog.optic,
               "nic_optic": catalog.optic, "interswitch_optic": catalog.optic}
    for index, choice in enumerate(spec.fabric_choices()):
        catalog.fabric(choice.profile, field=f"fabrics[{index}]")
        for name, lookup in lookups.items():
            value = getattr(choice, name)
            if value is not None:
                lookup(value, field=f"fabrics[{index}].{name}")


def load_spec(path: str | Path, catalog: Catalog | None = None) -> ClusterSpec:
    """Read a cluster spec file; with a catalog, also check the ids it names."""
    spec = parse_spec(read_document(path), where=str(path))
    if catalog is not None:
        check_references(spec, catalog)
    return spec
