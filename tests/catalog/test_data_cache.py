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
