"""The per-user disk cache (`fabricplan.cache`): a planted pickle never runs, a folder or entry
others can write is refused with one warning line (and the value recomputed), and the folder's
size stays within its bound, least recently used entries going first (issue 31)."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from fabricplan import cache

ROOT = Path(__file__).resolve().parents[2]
LOAD = ("from fabricplan.catalog import load_catalog\n"
        "catalog = load_catalog()\n"
        "print(catalog.content_sha256())\n")


class _Planted:
    """A pickle that, when loaded, creates the folder ``marker`` (what an attacker's code would do)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.mkdir, (str(self.marker),))


def _run(folder: Path, code: str = LOAD) -> subprocess.CompletedProcess:
    env = {**os.environ, cache.CACHE_ENV: str(folder), "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)


def _warnings(result: subprocess.CompletedProcess) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("warning:")]


def _plant(folder: Path, marker: Path, *, mode: int | None = None, uid: int | None = None) -> list[Path]:
    """Every pickle entry in ``folder`` replaced by the marker pickle (same names), with ``mode``/``uid``."""
    planted = sorted(folder.glob("*.pickle"))
    assert planted, list(folder.iterdir())
    for entry in planted:
        entry.write_bytes(pickle.dumps(_Planted(marker)))
        if mode is not None:
            entry.chmod(mode)
        if uid is not None:
            os.chown(entry, uid, -1)
    return planted


@pytest.fixture
def warm(tmp_path):
    """A cache folder the catalog has filled (0700, entries 0600), and the first run's output."""
    folder = tmp_path / "cache"
    first = _run(folder)
    assert first.returncode == 0 and not _warnings(first), first.stderr
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    assert {oct(p.stat().st_mode & 0o777) for p in folder.glob("*.pickle")} == {"0o600"}
    return folder, first.stdout


def test_the_users_own_entries_are_read_back(warm):
    folder, out = warm
    before = {p.name: p.read_bytes() for p in folder.glob("*.pickle")}
    again = _run(folder)
    assert again.returncode == 0 and again.stdout == out and not _warnings(again)
    assert {p.name: p.read_bytes() for p in folder.glob("*.pickle")} == before


def test_a_planted_pickle_writable_by_others_does_not_run(warm, tmp_path):
    folder, out = warm
    marker = tmp_path / "owned"
    _plant(folder, marker, mode=0o666)
    result = _run(folder)
    assert not marker.exists()  # the attacker's code did not run
    assert result.returncode == 0 and result.stdout == out, result.stderr  # recomputed, same catalog
    (line,) = _warnings(result)
    assert "writable by group and others (mode 0666)" in line and "not read" in line
    # the recomputed entries replaced the planted ones: the next run is clean
    assert {oct(p.stat().st_mode & 0o777) for p in folder.glob("*.pickle")} == {"0o600"}
    clean = _run(folder)
    assert not _warnings(clean) and not marker.exists()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown to another user needs root")
def test_a_planted_pickle_owned_by_another_user_does_not_run(warm, tmp_path):
    folder, out = warm
    marker = tmp_path / "owned"
    _plant(folder, marker, mode=0o600, uid=65534)
    result = _run(folder)
    assert not marker.exists()
    assert result.returncode == 0 and result.stdout == out
    (line,) = _warnings(result)
    assert "owned by another user (uid 65534)" in line


def test_a_world_writable_cache_folder_is_not_used(warm, tmp_path):
    folder, out = warm
    marker = tmp_path / "owned"
    _plant(folder, marker)  # the user's own mode and owner: only the folder says they may be planted
    folder.chmod(0o777)
    listing = sorted(p.name for p in folder.iterdir())
    result = _run(folder)
    assert not marker.exists()
    assert result.returncode == 0 and result.stdout == out
    (line,) = _warnings(result)
    assert f"cache folder {folder} is writable by group and others (mode 0777)" in line
    assert sorted(p.name for p in folder.iterdir()) == listing  # nothing written there either


def test_a_symbolic_link_as_entry_or_folder_is_not_followed(tmp_path):
    folder = tmp_path / "c"
    folder.mkdir(mode=0o700)
    target = tmp_path / "elsewhere.json"
    target.write_text("{}")
    entry = folder / ("a" * 24 + ".json")
    entry.symlink_to(target)
    assert cache.read_bytes(entry) is None
    linked = tmp_path / "linked"
    linked.symlink_to(folder)
    assert cache.trusted_folder(linked) is False


def _entry(folder: Path, index: int, mtime: float, size: int = 1000, sub: str = "") -> Path:
    place = folder / sub if sub else folder
    place.mkdir(mode=0o700, exist_ok=True)
    path = place / f"case.{index:024x}.json"
    path.write_bytes(b"x" * size)
    path.chmod(0o600)
    os.utime(path, (mtime, mtime))
    return path


def test_prune_removes_the_least_recently_used_entries_first(tmp_path):
    folder = tmp_path / "c"
    folder.mkdir(mode=0o700)
    paths = [_entry(folder, i, 1_000_000 + i, sub="sim" if i % 3 == 0 else "") for i in range(10)]
    other = folder / "notes.txt"
    other.write_text("not an entry")
    os.utime(other, (1, 1))
    assert cache.read_bytes(paths[0]) == b"x" * 1000  # a read makes entry 0 the most recently used
    each = cache.usage(paths[1].stat())
    freed = cache.prune(folder, limit=6 * each)  # over the bound: down to 0.8 x 6 = 4.8 entries
    kept = [p for p in paths if p.exists()]
    assert kept == [paths[0], paths[7], paths[8], paths[9]]
    assert freed == 6 * each
    assert other.exists()  # only entries are counted or removed
    assert cache.prune(folder, limit=6 * each) == 0  # within the bound: nothing more goes


def test_writes_keep_the_folder_within_its_bound(tmp_path, monkeypatch):
    folder = tmp_path / "c"
    monkeypatch.setattr(cache, "_written_since_prune", {})
    probe = _entry(tmp_path / "probe", 0, 1.0)
    each = cache.usage(probe.stat())
    limit = 10 * each
    monkeypatch.setenv(cache.MAX_BYTES_ENV, str(limit))
    written = []
    for i in range(60):
        path = folder / f"point.{i:024x}.json"
        cache.write_bytes(path, b"y" * 1000)
        os.utime(path, (2_000_000 + i, 2_000_000 + i))  # a clear order of use, whatever the clock's resolution
        written.append(path)
    cache.prune(folder, cache.max_bytes())  # the writes prune every 1/16 of the bound; the last ones may wait
    on_disk = cache.entries(folder)
    assert sum(cache.usage(info) for _p, info in on_disk) <= limit
    assert written[-1].exists() and not written[0].exists()
    assert len(on_disk) <= 10


def test_a_bad_size_setting_is_one_warning_and_the_default(monkeypatch, capsys):
    monkeypatch.setenv(cache.MAX_BYTES_ENV, "lots")
    monkeypatch.setattr(cache, "_warned", set())
    assert cache.max_bytes() == cache.MAX_CACHE_BYTES
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("warning: FABRICPLAN_CACHE_MAX_BYTES:")


def test_the_default_folder_is_the_platforms_user_cache(monkeypatch, tmp_path):
    monkeypatch.delenv(cache.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    if sys.platform.startswith("linux"):
        assert cache.cache_dir() == tmp_path / "fabricplan"
    monkeypatch.setenv(cache.CACHE_ENV, "off")
    assert cache.cache_dir() is None
