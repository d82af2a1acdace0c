"""Access to the bundled data files under `fabricplan/catalog/data/`."""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

import yaml

from fabricplan.io import YAML_SAFE_LOADER

DATA_PACKAGE = "fabricplan.catalog"


@cache
def load_data_file(name: str) -> Any:
    """Parse one bundled YAML data file (e.g. ``"switches.yaml"``); cached, treat as read-only."""
    text = resources.files(DATA_PACKAGE).joinpath("data", name).read_text(encoding="utf-8")
    return yaml.load(text, Loader=YAML_SAFE_LOADER)  # bundled, trusted data: the fast path
