"""Output files are written atomically: a failure while writing leaves the previous file byte for
byte, removes the temporary file, and is one error line with exit 2."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from fabricplan.errors import InputError
from fabricplan.io import write_text_atomic

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


class DiskFull:
    """Patches `os.fdopen` so writes of the temporary file stop with ENOSPC after `limit` bytes."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.real = os.fdopen

    def __call__(self, fd, *args, **kwargs):
        handle = self.real(fd, *args, **kwargs)
        limit = self.limit
        real_write = handle.write
        written = [0]

        def write(text: str) -> int:
            room = limit - written[0]
            if len(text) > room:
                real_write(text[:max(0, room)])
                handle.flush()
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            written[0] += len(text)
            return real_write(text)

        handle.write = write  # type: ignore[method-assign]
        return handle


def test_a_full_disk_leaves_the_previous_html_report_intact(cli, tmp_path, monkeypatch):
    report = tmp_path / "report.html"
    first = cli("compare", EXAMPLES / "single-node-8-inference.yaml", "-q", "--quick", "--html", report)
    assert first.code == 0 and report.stat().st_size > 1000
    before = report.read_bytes()
    monkeypatch.setattr(os, "fdopen", DiskFull(limit=4096))  # the disk fills 4 KB into the new report
    second = cli("compare", EXAMPLES / "llama70b-1024-h100.yaml", "-q", "--quick", "--html", report)
    assert second.code == 2
    assert second.err.count("\n") == 1 and second.err.startswith("error: ")
    assert str(report) in second.err and "No space left on device" in second.err
    assert report.read_bytes() == before  # byte for byte
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]  # no temporary file left


def test_a_full_disk_leaves_an_existing_spec_intact_on_init_force(cli, tmp_path, monkeypatch):
    spec = tmp_path / "cluster.yaml"
    spec.write_text("name: mine\n")
    monkeypatch.setattr(os, "fdopen", DiskFull(limit=100))
    result = cli("init", spec, "--force")
    assert result.code == 2 and result.err.count("\n") == 1
    assert spec.read_text() == "name: mine\n"
    assert [p.name for p in tmp_path.iterdir()] == ["cluster.yaml"]


def test_write_text_atomic_replaces_and_keeps_the_mode(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old")
    path.chmod(0o640)
    write_text_atomic(path, "new ü")
    assert path.read_text(encoding="utf-8") == "new ü" and (path.stat().st_mode & 0o777) == 0o640


@pytest.mark.parametrize("where", ["missing/out.html", "."])
def test_write_text_atomic_refuses_bad_targets(tmp_path, monkeypatch, where):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError) as caught:
        write_text_atomic(Path(where), "x", what="HTML report")
    assert "HTML report" in str(caught.value) and where in str(caught.value)


def test_an_unwritable_folder_is_one_line(cli, tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only folders")
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        result = cli("init", folder / "cluster.yaml")
    finally:
        folder.chmod(0o700)
    assert result.code == 2 and result.err.count("\n") == 1 and "Permission denied" in result.err


@pytest.mark.parametrize("flag,value,expected", [
    ("--draws", "-5", "greater than or equal to 0"),
    ("--draws", "abc", "valid integer"),
    ("--draws", "100000000", "less than or equal to"),
    ("--seed", "-1", "greater than or equal to 0"),
])
def test_compare_monte_carlo_flags_reject_bad_values(cli, flag, value, expected):
    result = cli("compare", "examples/mid-128-h100-existing-ethernet.yaml", "--quick", flag, value)
    assert result.code == 2
    assert flag in result.err and expected in result.err
    assert "Traceback" not in result.err and result.err.count("\n") == 1
