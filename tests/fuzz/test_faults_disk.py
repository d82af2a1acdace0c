"""Faults of the file system itself (issue 31): a really full disk (a small tmpfs) and a read-only
mount. Writes fail in one line naming the file, leave no temporary file and never clobber the file
that was there; `sweep run` on a full disk ends in one line (no traceback) and, once there is room,
a re-run completes the folder.

The mounts need root, so `.ci/run` makes them and names them in two environment variables:
``FABRICPLAN_TEST_FULL_DISK`` (an empty 8 MiB tmpfs the tests fill themselves) and
``FABRICPLAN_TEST_READ_ONLY`` (a read-only tmpfs holding ``cluster.yaml``). A variable set to a
path that is not a mount point fails the tests (CI must not skip them silently); without the
variables (a developer's machine) they are skipped with the reason, except in CI (``CI=true``).
Killed and interrupted runs and two runs sharing a folder are tests/sweep/test_sweep_kill.py and
test_sweep_shared_folder.py.
"""

from __future__ import annotations

import errno
import os
import shutil
import sys
import uuid
from pathlib import Path

import pytest

from fabricplan.errors import InputError
from fabricplan.io import write_text_atomic

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sweep"))
from sweep_files import SMALL_AXES, write_sweep  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SINGLE = ROOT / "examples" / "single-node-8-inference.yaml"
FULL_DISK_ENV = "FABRICPLAN_TEST_FULL_DISK"
READ_ONLY_ENV = "FABRICPLAN_TEST_READ_ONLY"


def _mount(variable: str) -> Path:
    """The mount point a variable names; skip (fail in CI) without it, fail when it is not mounted."""
    value = os.environ.get(variable)
    if not value:
        reason = f"{variable} is not set (.ci/run mounts a tmpfs and sets it; mounting needs root)"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(reason)
        pytest.skip(reason)
    path = Path(value)
    if not os.path.ismount(path):
        pytest.fail(f"{variable}={value} is not a mount point: the fault tests would not test a real file system")
    return path


@pytest.fixture
def full_disk():
    """(folder on the tmpfs, fill): ``fill()`` takes every free byte of the tmpfs (a filler file
    written until ENOSPC); ``room()`` deletes it again. Everything is removed afterwards."""
    folder = _mount(FULL_DISK_ENV) / f"test-{uuid.uuid4().hex[:12]}"
    folder.mkdir()
    filler = folder.parent / f"filler-{folder.name}"

    def fill() -> None:
        chunk = b"\0" * (64 * 1024)
        with open(filler, "wb", buffering=0) as handle:
            try:
                while True:
                    handle.write(chunk)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
        for size in (4096, 512, 1):  # the last partial blocks too
            try:
                with open(filler, "ab", buffering=0) as handle:
                    while True:
                        handle.write(b"\0" * size)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
        free = os.statvfs(folder)
        assert free.f_bavail * free.f_frsize < 4096, "the tmpfs did not fill"

    def room() -> None:
        filler.unlink(missing_ok=True)

    try:
        yield folder, fill, room
    finally:
        room()
        shutil.rmtree(folder, ignore_errors=True)


def _one_error_line(result, path) -> str:
    lines = result.err.strip().splitlines()
    assert "Traceback" not in result.out + result.err
    assert len(lines) == 1 and lines[0].startswith("error: "), result.err
    assert str(path) in lines[0], lines[0]
    return lines[0]


def _no_temporaries(folder: Path) -> None:
    left = [p.name for p in folder.rglob("*") if p.name.endswith(".tmp")]
    assert not left, left


def test_atomic_write_on_a_full_disk_keeps_the_previous_file(full_disk):
    folder, fill, _room = full_disk
    target = folder / "notes.txt"
    target.write_text("previous\n")
    fill()
    with pytest.raises(InputError) as caught:
        write_text_atomic(target, "new text\n" * 50_000, what="notes")
    assert str(target) in str(caught.value) and "No space left on device" in str(caught.value)
    assert "\n" not in str(caught.value)
    assert target.read_text() == "previous\n"
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]


def test_html_report_on_a_full_disk_is_one_line_and_keeps_the_previous_report(cli, full_disk):
    folder, fill, _room = full_disk
    report = folder / "report.html"
    assert cli("compare", SINGLE, "-q", "--quick", "--html", report).code == 0
    before = report.read_bytes()
    fill()
    result = cli("compare", SINGLE, "-q", "--quick", "--html", report)
    assert result.code == 2
    assert "No space left on device" in _one_error_line(result, report)
    assert report.read_bytes() == before
    assert sorted(p.name for p in folder.iterdir()) == ["report.html"]


def test_init_force_on_a_full_disk_keeps_the_spec(cli, full_disk):
    folder, fill, _room = full_disk
    spec = folder / "cluster.yaml"
    spec.write_text("name: mine\n")
    fill()
    result = cli("init", spec, "--force")
    assert result.code == 2
    _one_error_line(result, spec)
    assert spec.read_text() == "name: mine\n"
    _no_temporaries(folder)


def test_sweep_run_on_a_full_disk_stops_in_one_line_and_resumes(cli, full_disk, tmp_path):
    import pyarrow.parquet as pq

    folder, fill, room = full_disk
    sweep = write_sweep(tmp_path, {"cluster.gpus": [512, 1024, 2048]})  # 3 points
    out = folder / "out.sweep"
    fill()
    result = cli("sweep", "run", sweep, "--out", out, "--executor", "inprocess", "-q")
    assert result.code == 2
    assert "No space left on device" in _one_error_line(result, folder)
    if out.exists():
        _no_temporaries(out)
    room()
    again = cli("sweep", "run", sweep, "--out", out, "--executor", "inprocess", "-q")
    assert again.code == 0, again.err
    ids = [i for part in sorted(out.glob("part-*.parquet")) for i in pq.read_table(part).column("point_id").to_pylist()]
    assert len(ids) == 3 and len(set(ids)) == 3
    _no_temporaries(out)


@pytest.fixture
def read_only() -> Path:
    folder = _mount(READ_ONLY_ENV)
    assert (folder / "cluster.yaml").is_file(), f"{READ_ONLY_ENV} must hold cluster.yaml (.ci/run writes it)"
    return folder


@pytest.mark.parametrize("command", [
    ("init", "{ro}/cluster.yaml", "--force"),
    ("init", "{ro}/new.yaml"),
    ("compare", str(SINGLE), "-q", "--quick", "--html", "{ro}/report.html"),
    ("simulate", "incast", "--k", "4", "--senders", "4", "--plot", "{ro}/plot.html"),
    ("sweep", "run", "{sweep}", "--out", "{ro}/out.sweep", "--executor", "inprocess", "-q"),
])
def test_a_read_only_folder_is_one_line_and_changes_nothing(cli, read_only, tmp_path, command):
    sweep = write_sweep(tmp_path, SMALL_AXES)
    before = {p.name: p.read_bytes() for p in read_only.iterdir()}
    result = cli(*[a.replace("{ro}", str(read_only)).replace("{sweep}", str(sweep)) for a in command])
    assert result.code == 2
    line = _one_error_line(result, read_only)
    assert "Read-only file system" in line or "read-only" in line, line
    assert {p.name: p.read_bytes() for p in read_only.iterdir()} == before
