"""Access to the bundled data files under `fabricplan/catalog/data/`.

Parsing the bundled YAML is the largest single cost of loading the catalog (~15-20 ms of a
~0.45 s command: libyaml's parser, PyYAML's Python constructor), so the parsed form of each file
is kept in a per-user cache, keyed by a hash of the file's text, the loader, PyYAML's and Python's
versions: an edited file, another PyYAML or another Python never reads a stale entry. The cache
is :mod:`fabricplan.cache` (``$FABRICPLAN_CACHE_DIR``, else the platform's user cache folder;
``FABRICPLAN_CACHE_DIR=off`` turns it off; its size bounded). Entries are pickles, which run code
when loaded, so one is read only from a folder and a file of the current user that nobody else can
write (``cache.read_bytes``; otherwise one warning line and the YAML is parsed again). It is
written atomically and only ever read back as a speed-up: an unreadable, corrupt, refused or
unwritable cache falls back to parsing the YAML. Only the package's own data files are cached,
never user input.

The bundled entries and documents are also cached *validated* (:func:`load_validated`): the
catalog's pydantic models are built lazily (``defer_build``), and a command that reads only the
bundled catalog unpickles the validated objects without ever building their validators (~50 ms of
class construction). That key adds the text of the modules that define the models and pydantic's
version, so a changed model never reads an entry validated by the old one.
"""

from __future__ import annotations

import hashlib
import pickle
import sys
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from fabricplan import cache as disk_cache
from fabricplan.cache import CACHE_ENV, cache_dir  # noqa: F401 - CACHE_ENV: read here by the tests
from fabricplan.io import YAML_SAFE_LOADER

DATA_PACKAGE = "fabricplan.catalog"


def cache_file(name: str, text: str) -> Path | None:
    """The cache entry of bundled file ``name`` with this ``text`` (None: caching is off)."""
    folder = cache_dir()
    if folder is None:
        return None
    key = hashlib.sha256("\0".join((text, YAML_SAFE_LOADER.__name__, yaml.__version__,
                                    sys.version)).encode("utf-8")).hexdigest()[:24]
    return folder / f"{name}.{key}.pickle"


def _read_cached(path: Path | None) -> Any:
    """The value of a trusted cache entry (:func:`fabricplan.cache.read_bytes`), None otherwise."""
    data = disk_cache.read_bytes(path)
    if data is None:
        return None
    try:
        return pickle.loads(data)  # noqa: S301 - only the current user's own entry (module docstring)
    except Exception:  # noqa: BLE001 - any unreadable entry only costs the speed-up
        return None


def _write_cached(path: Path | None, data: Any) -> None:
    disk_cache.write_bytes(path, pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL))


#: The modules whose code decides what a validated catalog object is (the validated cache's key).
SCHEMA_MODULES = ("models.py", "documents.py", "catalog.py")


@cache
def _schema_key() -> str:
    import pydantic

    package = Path(__file__).parent
    texts = [(package / name).read_text(encoding="utf-8") for name in SCHEMA_MODULES]
    return hashlib.sha256("\0".join([*texts, pydantic.VERSION]).encode("utf-8")).hexdigest()


def data_text(name: str) -> str:
    """The text of one bundled data file."""
    return resources.files(DATA_PACKAGE).joinpath("data", name).read_text(encoding="utf-8")


def load_validated(label: str, filenames: tuple[str, ...], build: Any) -> Any:
    """``build()`` (validated catalog objects made from the bundled ``filenames``), cached per user
    under ``label`` and keyed by the files' texts, the schema modules, pydantic's and Python's
    versions. An unreadable cache only costs the speed-up; the result is treated as read-only."""
    entry = cache_file(f"{label}.validated", "\0".join([*map(data_text, filenames), _schema_key()]))
    value = _read_cached(entry)
    if value is None:
        value = build()
        _write_cached(entry, value)
    return value


@cache
def load_data_file(name: str) -> Any:
    """Parse one bundled YAML data file (e.g. ``"switches.yaml"``); cached, treat as read-only."""
    text = data_text(name)
    entry = cache_file(name, text)
    data = _read_cached(entry)
    if data is None:
        data = yaml.load(text, Loader=YAML_SAFE_LOADER)  # bundled, trusted data: the fast path
        _write_cached(entry, data)
    return data
