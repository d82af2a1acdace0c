"""The sweep store writes through the one atomic writer: parts and the manifest are readable by the
team (0644 under umask 022), a part is whole or absent when the disk fills, and a resumed run then
computes exactly the batch that was lost."""

from __future__ import annotations

import errno
import os
import stat

import pytest
from sweep_files import SMALL_AXES, write_sweep

from fabricplan.errors import InputError
from fabricplan.sweep import load_sweep
from fabricplan.sweep.run import run_sweep
from fabricplan.sweep.store import read_results


def test_parts_and_manifest_are_0644_under_umask_022(tmp_path):
    sweep = load_sweep(write_sweep(tmp_path, SMALL_AXES))
    old = os.umask(0o022)
    try:
        run_sweep(sweep, tmp_path / "out", executor="inprocess", batch_size=2)
    finally:
        os.umask(old)
    files = sorted((tmp_path / "out").iterdir())
    assert [p.name for p in files if not p.name.startswith("part-")] == [".sweep.lock", "_sweep.json"]  # the lock: issue 31
    assert len([p for p in files if p.name.startswith("part-")]) == 3  # and no temporary file
    assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in files} == {p.name: 0o644 for p in files}


def test_a_full_disk_on_a_part_leaves_no_part_and_the_rerun_computes_only_it(tmp_path, monkeypatch):
    sweep = load_sweep(write_sweep(tmp_path, SMALL_AXES))
    out = tmp_path / "out"
    real_replace = os.replace
    renamed = []

    def replace(src, dst):
        if str(dst).endswith(".parquet"):
            if len(renamed) == 1:  # the second part meets a full disk
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            renamed.append(dst)
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(InputError, match="cannot write the sweep part: No space left on device; nothing was changed"):
        run_sweep(sweep, out, executor="inprocess", batch_size=2)
    monkeypatch.setattr(os, "replace", real_replace)
    names = sorted(p.name for p in out.iterdir())
    assert names[:2] == [".sweep.lock", "_sweep.json"] and len(names) == 3 and names[2].startswith("part-")  # no temporary
    assert len(read_results(out)[0]) == 2
    again = run_sweep(sweep, out, executor="inprocess", batch_size=2)
    assert (again.points_computed, again.points_skipped) == (4, 2)
    table, _ = read_results(out)
    assert sorted(table.column("point_id").to_pylist()) == sorted(set(table.column("point_id").to_pylist()))
    assert len(table) == 6


def test_a_stale_temporary_of_a_killed_run_is_removed_on_open(tmp_path):
    sweep = load_sweep(write_sweep(tmp_path, SMALL_AXES))
    out = tmp_path / "out"
    run_sweep(sweep, out, executor="inprocess", limit=2)
    (out / ".part-000000002-abcdef123456.parquet.0123456789ab.tmp").write_bytes(b"half a part")
    (out / "._sweep.json.0123456789ab.tmp").write_bytes(b"{")
    run_sweep(sweep, out, executor="inprocess")
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]
    assert len(read_results(out)[0]) == 6
