"""The per-user cache of parsed bundled data files: a speed-up that can never change a result."""

from __future__ import annotations

import pickle

import yaml

from fabricplan.catalog import files
from fabricplan.io import YAML_SAFE_LOADER

NAME = "switches.yaml"


def _text() -> str:
    from importlib import resources

    return resources.files(files.DATA_PACKAGE).joinpath("data", NAME).read_text(encoding="utf-8")


def _parsed() -> object:
    return yaml.load(_text(), Loader=YAML_SAFE_LOADER)


def _load_fresh(monkeypatch, folder) -> object:
    monkeypatch.setenv(files.CACHE_ENV, str(folder))
    files.load_data_file.cache_clear()
    try:
        return files.load_data_file(NAME)
    finally:
        files.load_data_file.cache_clear()


def test_first_load_writes_the_parsed_file_and_the_second_reads_it(monkeypatch, tmp_path):
    assert _load_fresh(monkeypatch, tmp_path) == _parsed()
    [entry] = tmp_path.glob(f"{NAME}.*.pickle")
    assert pickle.loads(entry.read_bytes()) == _parsed()
    # a planted (different) value under the same key is what the next load returns: the cache is read
    entry.write_bytes(pickle.dumps({"switches": []}))
    assert _load_fresh(monkeypatch, tmp_path) == {"switches": []}


def test_the_key_follows_the_text(monkeypatch, tmp_path):
    monkeypatch.setenv(files.CACHE_ENV, str(tmp_path))
    assert files.cache_file(NAME, "a: 1\n") != files.cache_file(NAME, "a: 2\n")
    assert files.cache_file(NAME, _text()) == files.cache_file(NAME, _text())


def test_a_corrupt_or_unwritable_cache_falls_back_to_parsing(monkeypatch, tmp_path):
    assert _load_fresh(monkeypatch, tmp_path) == _parsed()
    [entry] = tmp_path.glob(f"{NAME}.*.pickle")
    entry.write_bytes(b"\x80not a pickle")
    assert _load_fresh(monkeypatch, tmp_path) == _parsed()
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("x")
    assert _load_fresh(monkeypatch, blocked / "cache") == _parsed()  # cannot create it: still parses


def test_off_disables_the_cache(monkeypatch, tmp_path):
    monkeypatch.setenv(files.CACHE_ENV, "off")
    assert files.cache_dir() is None and files.cache_file(NAME, "x") is None
    files.load_data_file.cache_clear()
    try:
        assert files.load_data_file(NAME) == _parsed()
    finally:
        files.load_data_file.cache_clear()


# --- validated objects (entries and documents), read back without building validators ----------

def _validated_fresh(monkeypatch, folder):
    from fabricplan.catalog import catalog as catalog_module

    monkeypatch.setenv(files.CACHE_ENV, str(folder))
    for cached in (files.load_data_file, catalog_module._bundled, catalog_module._bundled_document):
        cached.cache_clear()
    try:
        return catalog_module._bundled(), catalog_module._bundled_document("nccl_tuner")
    finally:
        for cached in (files.load_data_file, catalog_module._bundled, catalog_module._bundled_document):
            cached.cache_clear()


def test_validated_catalog_round_trips_through_the_cache(monkeypatch, tmp_path):
    first_entries, first_tuner = _validated_fresh(monkeypatch, tmp_path)
    assert len(list(tmp_path.glob("entries.validated.*.pickle"))) == 1
    assert len(list(tmp_path.glob("nccl_tuner.validated.*.pickle"))) == 1
    again_entries, again_tuner = _validated_fresh(monkeypatch, tmp_path)
    assert again_entries.entries == first_entries.entries and again_tuner == first_tuner
    # the second load came from the cache: a planted value under the same key is what it returns
    [entry] = tmp_path.glob("nccl_tuner.validated.*.pickle")
    entry.write_bytes(pickle.dumps("planted"))
    assert _validated_fresh(monkeypatch, tmp_path)[1] == "planted"


def test_validated_cache_key_follows_the_model_code(monkeypatch, tmp_path):
    _validated_fresh(monkeypatch, tmp_path)
    [entry] = tmp_path.glob("nccl_tuner.validated.*.pickle")
    entry.write_bytes(pickle.dumps("planted"))
    files._schema_key.cache_clear()
    monkeypatch.setattr(files, "SCHEMA_MODULES", (*files.SCHEMA_MODULES, "files.py"))
    try:
        _entries, tuner = _validated_fresh(monkeypatch, tmp_path)
    finally:
        files._schema_key.cache_clear()
    assert tuner != "planted"  # other model code: another key, validated afresh


def test_corrupt_validated_entry_falls_back_to_validation(monkeypatch, tmp_path):
    _entries, tuner = _validated_fresh(monkeypatch, tmp_path)
    [entry] = tmp_path.glob("nccl_tuner.validated.*.pickle")
    entry.write_bytes(b"not a pickle")
    assert _validated_fresh(monkeypatch, tmp_path)[1] == tuner


def test_plain_equals_model_dump_for_every_bundled_model():
    from fabricplan.catalog import default_catalog
    from fabricplan.catalog.catalog import DOCUMENTS, SECTIONS
    from fabricplan.catalog.models import plain

    catalog = default_catalog()
    for section in SECTIONS:
        for entry in catalog.section(section).values():
            assert plain(entry) == entry.model_dump(), (section, entry.id)
    for name in DOCUMENTS:
        document = catalog.documents[name]
        assert plain(document) == document.model_dump(), name
