"""`--executor ray` on a real local Ray cluster started by the run (single node on loopback, 2 CPUs,
150 MB object store, no dashboard, a temporary folder): a 200-point sweep gives the same rows as the
local process pool."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest
from sweep_files import POINTS_200, write_sweep

from fabricplan.sweep.store import read_results

ray = pytest.importorskip("ray")


def rows(folder):
    table, _ = read_results(folder)
    return {row["point_id"]: row for row in table.to_pylist()}


def test_ray_rows_equal_the_local_executors(cli, tmp_path):
    path = write_sweep(tmp_path, POINTS_200, name="ray200")
    # Ray's session folder holds unix sockets: a short path (the limit is ~107 bytes).
    ray_dir = tempfile.mkdtemp(prefix="fpray-", dir="/tmp")
    mode_before = os.environ.get("RAY_AUTH_MODE")
    try:
        on_ray = cli("sweep", "run", path, "--executor", "ray", "--workers", "2", "--ray-temp-dir", ray_dir,
                     "--out", tmp_path / "ray", "--json", "-q")
    finally:
        shutil.rmtree(ray_dir, ignore_errors=True)
    assert on_ray.code == 0, on_ray.err
    summary = on_ray.json()
    assert (summary["points_computed"], summary["points_failed"], summary["workers"]) == (200, 0, 2)
    assert summary["ray_nodes"] == ["127.0.0.1"]  # one node, on loopback
    assert summary["batches_written"] == 200 // summary["batch_size"] + (200 % summary["batch_size"] > 0) > 1
    assert not ray.is_initialized()  # the local Ray this run started is stopped again
    assert os.environ.get("RAY_AUTH_MODE") == mode_before  # its token mode (Ray's local default) is put back
    local = cli("sweep", "run", path, "--out", tmp_path / "local", "--json", "-q")
    assert local.code == 0 and local.json()["executor"] == "process"
    on_ray_rows, local_rows = rows(tmp_path / "ray"), rows(tmp_path / "local")
    assert len(on_ray_rows) == 200 and on_ray_rows == local_rows
