"""Issue 31: a results folder damaged on disk (a truncated, empty or folder part; a manifest that is a
list, `{}` or not JSON) or an `--out` that cannot be a folder (under a read-only folder, a symbolic
link loop). `sweep report` says so in one line naming the file (exit 2); `sweep run` resumes: it
sets the damaged file aside as `<name>.corrupt` with a one-line note and computes its points again,
so the folder ends with every point exactly once and no hand repair."""

from __future__ import annotations

import errno
import os
import re
import shutil
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sweep"))
from sweep_files import SMALL_AXES, write_sweep  # noqa: E402

from fabricplan.sweep.store import read_results  # noqa: E402


def _first_part(out: Path) -> Path:
    return sorted(out.glob("part-*.parquet"))[0]


def _truncate(out: Path) -> Path:
    part = _first_part(out)
    part.write_bytes(part.read_bytes()[: part.stat().st_size // 2])
    return part


def _empty(out: Path) -> Path:
    part = _first_part(out)
    part.write_bytes(b"")
    return part


def _folder(out: Path) -> Path:
    part = _first_part(out)
    part.unlink()
    part.mkdir()
    (part / "x.parquet").write_bytes(b"PAR1")
    return part


def _other_columns(out: Path) -> Path:
    import pyarrow as pa

    part = _first_part(out)
    pq.write_table(pa.table({"point_id": ["x"], "other": [1]}), part)
    return part


def _manifest(text: str):
    def damage(out: Path) -> Path:
        (out / "_sweep.json").write_text(text)
        return out / "_sweep.json"
    return damage


#: name -> (damage, what the one line says, points the damaged file held)
DAMAGE = {
    "truncated-part": (_truncate, r"cannot read this part file: .*(magic|footer|size)", 1),
    "empty-part": (_empty, r"cannot read this part file: Parquet file size is 0 bytes", 1),
    "part-is-a-folder": (_folder, r"not a part file \(a folder or a special file\)", 1),
    "part-other-columns": (_other_columns, r"this part's columns are not the manifest's", 1),
    "manifest-list": (_manifest("[1, 2]"), r"the sweep manifest is a JSON list, not an object", 0),
    "manifest-empty-object": (_manifest("{}"), r"the sweep manifest has no 'axes' dict", 0),
    "manifest-not-json": (_manifest("not json {"), r"cannot read the sweep manifest: Expecting value", 0),
    "manifest-empty": (_manifest(""), r"cannot read the sweep manifest: Expecting value", 0),
    "manifest-column-types": (_manifest('{"axes": {}, "fabrics": [], "outputs": [], "columns": {"point_id": 3}}'),
                              r"the sweep manifest's columns have unknown types \(point_id\)", 0),
    "manifest-missing-columns": (_manifest('{"axes": {"cluster.gpus": "cluster_gpus"}, "fabrics": ["ib"], '
                                           '"outputs": [], "columns": {"point_id": "string"}}'),
                                 r"the sweep manifest lacks the column\(s\) point_index, recommended, error, "
                                 r"cluster_gpus, ib__cost", 0),
    "manifest-axes-not-names": (_manifest('{"axes": {"a": 1}, "fabrics": [], "outputs": [], '
                                          '"columns": {"point_id": "string"}}'),
                                r"axes, fabrics and outputs are not all names", 0),
}


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished 6-point sweep (one point per part file) and its sweep file."""
    from fabricplan.cli.app import run

    folder = tmp_path_factory.mktemp("finished")
    path = write_sweep(folder, SMALL_AXES, name="damage", draws=0)
    assert run(["sweep", "run", str(path), "--out", str(folder / "out"), "--executor", "inprocess",
                "--batch-size", "1", "-q"]) == 0
    return path, folder / "out"


def _one_line(result, where: Path, pattern: str) -> None:
    assert result.code == 2, (result.out, result.err)
    assert len(result.err.strip().splitlines()) == 1, result.err
    assert "Traceback" not in result.err and str(where) in result.err
    assert re.search(pattern, result.err), result.err


@pytest.mark.parametrize("name", sorted(DAMAGE))
def test_report_on_a_damaged_folder_is_one_line_naming_the_file(cli, tmp_path, finished, name):
    damage, pattern, _points = DAMAGE[name]
    out = tmp_path / "out"
    shutil.copytree(finished[1], out)
    damaged = damage(out)
    _one_line(cli("sweep", "report", out), damaged, pattern)
    _one_line(cli("sweep", "report", out, "--json"), damaged, pattern)


@pytest.mark.parametrize("name", sorted(DAMAGE))
def test_run_sets_the_damaged_file_aside_and_computes_its_points_again(cli, tmp_path, finished, name):
    damage, pattern, points = DAMAGE[name]
    path, out = finished[0], tmp_path / "out"
    shutil.copytree(finished[1], out)
    damaged = damage(out)
    result = cli("sweep", "run", path, "--out", out, "--executor", "inprocess", "-q", "--json")
    assert result.code == 0, result.err
    notes = result.err.strip().splitlines()
    assert len(notes) == 1 and notes[0].startswith(f"note: {damaged}: ") and "Traceback" not in result.err, notes
    assert re.search(pattern, notes[0]) and f"set aside as {damaged.name}.corrupt" in notes[0], notes
    assert (out / f"{damaged.name}.corrupt").exists()
    assert result.json()["points_computed"] == points
    table, _ = read_results(out)
    raw = [i for part in out.glob("part-*.parquet") for i in pq.read_table(part).column("point_id").to_pylist()]
    assert table.num_rows == len(raw) == len(set(raw)) == 6  # every point exactly once
    assert cli("sweep", "report", out, "--json").code == 0


def test_manifest_of_another_sweep_is_not_rewritten(cli, tmp_path, finished):
    """A broken manifest beside parts of other columns: the folder is another sweep's, left as it is."""
    out = tmp_path / "out"
    shutil.copytree(finished[1], out)
    (out / "_sweep.json").write_text("{}")
    other = write_sweep(tmp_path, {"cluster.gpus": [512, 1024]}, name="other", draws=0)
    result = cli("sweep", "run", other, "--out", out, "--executor", "inprocess", "-q")
    _one_line(result, out / "_sweep.json", r"its parts have other columns than this sweep's")
    assert (out / "_sweep.json").read_text() == "{}" and not list(out.glob("*.corrupt"))


def test_out_under_a_read_only_folder_is_one_line(cli, tmp_path, monkeypatch, finished):
    locked = tmp_path / "read-only"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        (locked / "probe").touch()
    except PermissionError:
        pass
    else:  # root ignores the mode: the folder refuses as a read-only one would
        (locked / "probe").unlink()

        def refuse(self, *args, **kwargs):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(self))
        monkeypatch.setattr(Path, "mkdir", refuse)
    try:
        result = cli("sweep", "run", finished[0], "--out", locked / "out", "--executor", "inprocess", "-q")
    finally:
        locked.chmod(0o755)
    _one_line(result, locked / "out", r"cannot create the results folder: Permission denied")


def test_read_only_results_folder_is_one_line(cli, tmp_path, monkeypatch, finished):
    out = tmp_path / "out"
    shutil.copytree(finished[1], out)
    real_open = os.open

    def refuse(path, flags, *args, **kwargs):  # the lock file of a folder this user cannot write
        if str(path).endswith(".sweep.lock"):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real_open(path, flags, *args, **kwargs)
    monkeypatch.setattr(os, "open", refuse)
    result = cli("sweep", "run", finished[0], "--out", out, "--executor", "inprocess", "-q")
    _one_line(result, out / ".sweep.lock", r"cannot open the results folder's lock file: Permission denied")


@pytest.mark.parametrize("below", [False, True])
def test_out_in_a_symbolic_link_loop_is_one_line(cli, tmp_path, finished, below):
    loop = tmp_path / "loop"
    os.symlink(loop, loop)
    out = loop / "results" if below else loop
    _one_line(cli("sweep", "run", finished[0], "--out", out, "--executor", "inprocess", "-q"), out,
              r"cannot use the results path: Too many levels of symbolic links")
    _one_line(cli("sweep", "report", out), out, r"not a sweep results folder")


def test_out_a_dangling_link_is_one_line(cli, tmp_path, finished):
    out = tmp_path / "gone"
    os.symlink(tmp_path / "nowhere", out)
    _one_line(cli("sweep", "run", finished[0], "--out", out, "--executor", "inprocess", "-q"), out,
              r"symbolic link to nothing")
