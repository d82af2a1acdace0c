"""Output files are written atomically (one writer: fabricplan.io.atomic_output): a failure while
writing leaves the previous file byte for byte, removes the temporary file, and is one error line
with exit 2; new files are readable by the team (0644 under umask 022); a symbolic link, a FIFO or a
directory at the target is refused and left as it is."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

import pytest

from fabricplan.errors import InputError
from fabricplan.io import atomic_output, write_bytes_atomic, write_text_atomic

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


# --- the one atomic writer (fabricplan.io.atomic_output) -------------------------------------------


@contextlib.contextmanager
def umask(mask: int):
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_file_is_0644_under_umask_022_and_follows_the_umask(tmp_path):
    with umask(0o022):
        write_text_atomic(tmp_path / "a.html", "x")
        write_bytes_atomic(tmp_path / "b.parquet", b"x")
    with umask(0o002):
        write_text_atomic(tmp_path / "c.html", "x")
    with umask(0o077):
        write_text_atomic(tmp_path / "d.html", "x")
    assert [_mode(tmp_path / n) for n in ("a.html", "b.parquet", "c.html", "d.html")] == [0o644, 0o644, 0o664, 0o600]


def test_cli_outputs_are_0644_under_umask_022(cli, tmp_path):
    with umask(0o022):
        assert cli("init", tmp_path / "cluster.yaml").code == 0
        assert cli("compare", EXAMPLES / "single-node-8-inference.yaml", "-q", "--quick",
                   "--html", tmp_path / "r.html").code == 0
        assert cli("simulate", "incast", "--k", "4", "--senders", "2", "--max-time-ms", "1",
                   "--plot", tmp_path / "sim.html").code == 0
        fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "health"
        result = cli("health", "--rtt", fixtures / "rtt.csv", "--html", tmp_path / "h.html",
                     "--save-telemetry", tmp_path / "t.npz", "--fail-on", "never")
        assert result.code == 0, result.err
        measure = Path(__file__).resolve().parents[1] / "fixtures" / "measure"
        log, spec = measure / "all_reduce_200g_nics_roce.log", measure / "cluster_roce_2x8_h100.yaml"
        result = cli("calibrate", log, "--spec", spec, "--out", tmp_path / "overlay.yaml", "--no-cross-validation")
        assert result.code == 0, result.err
        assert cli("check-measured", log, "--spec", spec, "--html", tmp_path / "chart.html").code == 1  # below par
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == ["chart.html", "cluster.yaml", "h.html", "overlay.yaml", "r.html", "sim.html",
                       "t.npz"]  # and no temporary file
    assert {n: _mode(tmp_path / n) for n in written} == {n: 0o644 for n in written}


@pytest.mark.parametrize("failing", ["replace", "write", "fsync"])
def test_a_full_disk_at_any_step_leaves_no_temporary_and_the_old_file(tmp_path, monkeypatch, failing):
    path = tmp_path / "overlay.yaml"
    path.write_text("old\n")

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    if failing == "write":
        monkeypatch.setattr(os, "fdopen", DiskFull(limit=3))
    else:
        monkeypatch.setattr(os, failing, full)
    with pytest.raises(InputError) as caught:
        write_text_atomic(path, "new content\n" * 100, what="catalog overlay")
    message = str(caught.value)
    assert message.startswith(f"{path}: cannot write the catalog overlay: No space left on device")
    assert "\n" not in message
    assert path.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["overlay.yaml"]


def test_an_exception_in_the_body_removes_the_temporary_and_is_raised_as_it_is(tmp_path):
    path = tmp_path / "part.parquet"
    with pytest.raises(RuntimeError, match="the writer failed"), atomic_output(path, what="sweep part") as handle:
        handle.write(b"half")
        raise RuntimeError("the writer failed")
    assert list(tmp_path.iterdir()) == []


def test_a_symbolic_link_is_refused_and_left_as_it_is(tmp_path):
    target = tmp_path / "real.html"
    target.write_text("keep")
    link = tmp_path / "report.html"
    link.symlink_to(target)
    with pytest.raises(InputError) as caught:
        write_text_atomic(link, "new", what="HTML report")
    message = str(caught.value)
    assert "symbolic link" in message and str(link) in message and "\n" not in message
    assert link.is_symlink() and os.readlink(link) == str(target) and target.read_text() == "keep"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["real.html", "report.html"]
    dangling = tmp_path / "dangling.html"
    dangling.symlink_to(tmp_path / "nowhere")
    with pytest.raises(InputError, match="symbolic link"):
        write_text_atomic(dangling, "new")
    assert dangling.is_symlink() and not (tmp_path / "nowhere").exists()


def test_a_fifo_and_a_directory_are_refused_and_left_as_they_are(tmp_path):
    fifo = tmp_path / "out.html"
    os.mkfifo(fifo)
    with pytest.raises(InputError) as caught:  # refused without opening it (which would block)
        write_text_atomic(fifo, "new", what="HTML report")
    assert "a FIFO (named pipe), not a regular file" in str(caught.value) and "\n" not in str(caught.value)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    folder = tmp_path / "folder"
    folder.mkdir()
    with pytest.raises(InputError, match="a directory, not a regular file; give a file name"):
        write_bytes_atomic(folder, b"x")
    assert folder.is_dir() and sorted(p.name for p in tmp_path.iterdir()) == ["folder", "out.html"]


def test_cli_refuses_a_symlink_or_fifo_output_before_the_work(cli, tmp_path):
    fifo = tmp_path / "plot.html"
    os.mkfifo(fifo)
    result = cli("simulate", "incast", "--k", "4", "--senders", "2", "--plot", fifo)
    assert result.code == 2 and result.err.count("\n") == 1 and "FIFO" in result.err and str(fifo) in result.err
    link = tmp_path / "cluster.yaml"
    link.symlink_to(tmp_path / "elsewhere.yaml")
    result = cli("init", link, "--force")
    assert result.code == 2 and result.err.count("\n") == 1 and "symbolic link" in result.err
    assert link.is_symlink() and not (tmp_path / "elsewhere.yaml").exists()


@pytest.mark.parametrize("command", ["calibrate", "check-measured"])
@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_calibrate_out_and_check_measured_html_refuse_links_and_fifos(cli, tmp_path, command, kind):
    # issue 31: `calibrate --out` and `check-measured --html` wrote a fixed `<out>.tmp` and renamed it,
    # following a symlink at the target; both now go through fabricplan.io (checked before the fit)
    measure = Path(__file__).resolve().parents[1] / "fixtures" / "measure"
    log, spec = measure / "all_reduce_200g_nics_roce.log", measure / "cluster_roce_2x8_h100.yaml"
    target = tmp_path / ("overlay.yaml" if command == "calibrate" else "chart.html")
    elsewhere = tmp_path / "elsewhere"
    if kind == "symlink":
        elsewhere.write_text("keep me\n")
        target.symlink_to(elsewhere)
    else:
        os.mkfifo(target)
    flag = "--out" if command == "calibrate" else "--html"
    result = cli(command, log, "--spec", spec, flag, target)
    assert result.code == 2 and result.out == ""
    (line,) = result.err.strip().splitlines()
    assert str(target) in line and ("symbolic link" in line if kind == "symlink" else "FIFO" in line)
    if kind == "symlink":
        assert target.is_symlink() and elsewhere.read_text() == "keep me\n"
    else:
        assert stat.S_ISFIFO(target.lstat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted({target.name} | ({"elsewhere"} if kind == "symlink"
                                                                               else set()))


class CtrlCWhileWriting(DiskFull):
    """Like `DiskFull`, but the user presses Ctrl-C (KeyboardInterrupt) `limit` bytes into the file."""

    def __call__(self, fd, *args, **kwargs):
        handle = super().__call__(fd, *args, **kwargs)
        full_write = handle.write

        def write(data):
            try:
                return full_write(data)
            except OSError:
                raise KeyboardInterrupt from None

        handle.write = write  # type: ignore[method-assign]
        return handle


@pytest.mark.parametrize("command", [
    ("compare", str(EXAMPLES / "single-node-8-inference.yaml"), "-q", "--quick", "--html", "{out}"),
    ("simulate", "incast", "--k", "4", "--senders", "4", "--plot", "{out}"),
])
def test_ctrl_c_while_writing_exits_130_in_one_line_and_keeps_the_previous_file(tmp_path, monkeypatch, capsys,
                                                                                 command):
    from fabricplan.cli.app import main

    out = tmp_path / "report.html"
    out.write_text("previous")
    monkeypatch.setattr(os, "fdopen", CtrlCWhileWriting(limit=4096))
    monkeypatch.setattr("sys.argv", ["fabricplan", *(a.replace("{out}", str(out)) for a in command)])
    with pytest.raises(SystemExit) as stopped:
        main()
    captured = capsys.readouterr()
    assert stopped.value.code == 130
    assert captured.err.strip().splitlines()[-1] == "interrupted" and "Traceback" not in captured.err
    assert out.read_text() == "previous"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]  # the temporary is gone
