"""Shared CLI helpers: consoles, JSON output and error reporting."""

from __future__ import annotations

import json
import math
from typing import Any

from rich.console import Console

# Tables and reports go to stdout; progress and errors go to stderr so that `--json`
# leaves stdout holding one JSON document and nothing else. No console markup: spec, job and
# fabric names are user text, and "[/]" in one must print as-is, not raise rich's MarkupError.
stdout = Console(markup=False)
stderr = Console(stderr=True, markup=False)


def _plain(value: Any) -> Any:
    if hasattr(value, "model_dump") and not isinstance(value, type):  # pydantic models (not imported here)
        return _plain(value.model_dump(mode="json"))
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return value.item()
    return value


def to_json(value: Any) -> str:
    """Serialise models, dataclass-like dicts and numpy scalars into stable, sorted JSON."""
    return json.dumps(_plain(value), indent=2, sort_keys=True)


def emit_json(value: Any) -> None:
    print(to_json(value))
