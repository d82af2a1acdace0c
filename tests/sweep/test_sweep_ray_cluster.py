"""`sweep run --ray-address` against a real two-node Ray cluster a user started with `ray start`:
a head and a worker node, separate processes, one CPU each, on this machine.

The cluster uses newer Ray's token authentication the way it comes by default: the token is in the
nodes' `~/.ray/auth_token` (a temporary home), the head turns token mode on because it finds it
(`RAY_AUTH_MODE` unset), and the worker node sets `RAY_AUTH_MODE=token` as Ray requires to join.
A driver with the token in its usual place and `RAY_AUTH_MODE` unset connects (Ray's own
`ray.init(address=...)` would be refused) and gets the process pool's rows; a driver without the
token, or with a wrong one, gets one error line saying what to set. A second cluster without token
authentication is used as it is. Each sweep runs as its own process (its environment is the
user's shell); a cluster is stopped by ending only its own processes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ray_cluster import RAY, start_cluster
from sweep_files import SMALL_AXES, write_sweep

from fabricplan.catalog.files import cache_dir
from fabricplan.sweep.ray_auth import token_source
from fabricplan.sweep.store import read_results
from project_paths import ROOT

pytest.importorskip("ray")
pytestmark = pytest.mark.skipif(shutil.which(RAY) is None, reason="Ray's command line (ray) is not installed")

TOKEN = "5f3c9a1e7b2d4c6e8f0a1b3c5d7e9f21"  # a token of Ray's form (32 hex digits), this test's own
RUN_TIMEOUT_S = 900  # program limit of one sweep process (a hung run fails the test instead of the suite)


def clean_env(home: Path) -> dict[str, str]:
    """This environment without any Ray address or authentication setting, with ``home`` as HOME and
    fabricplan's data cache where it is now (so the nodes' workers find it warm)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAY_AUTH", "RAY_ADDRESS"))}
    cache = cache_dir()
    env.update(HOME=str(home), PYTHONPATH=str(ROOT / "src"), FABRICPLAN_CACHE_DIR=str(cache) if cache else "off")
    return env


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    home = tmp_path_factory.mktemp("ray-home")
    (home / ".ray").mkdir()
    (home / ".ray" / "auth_token").write_text(TOKEN)
    env = clean_env(home)
    started = start_cluster(head_env=env, worker_env={**env, "RAY_AUTH_MODE": "token"})
    try:
        yield started, home
    finally:
        started.stop()


@pytest.fixture(scope="module")
def open_cluster(tmp_path_factory):
    """A cluster without token authentication (``RAY_AUTH_MODE=disabled`` on both nodes), as older Ray
    ran every cluster."""
    env = {**clean_env(tmp_path_factory.mktemp("ray-open-home")), "RAY_AUTH_MODE": "disabled"}
    started = start_cluster(head_env=env, worker_env=env)
    try:
        yield started
    finally:
        started.stop()


def sweep(path: Path, out: Path, address: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fabricplan.cli.app", "sweep", "run", str(path), "--out", str(out),
                           "--executor", "ray", "--ray-address", address, "--json", "-q"],
                          env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)


def rows(folder: Path) -> dict[str, dict]:
    table, _ = read_results(folder)
    return {row["point_id"]: row for row in table.to_pylist()}


def test_a_driver_with_the_token_where_ray_keeps_it_gets_the_process_pool_rows(cluster, cli, tmp_path):
    ray_cluster, home = cluster
    path = write_sweep(tmp_path, SMALL_AXES, name="cluster", draws=0)
    on_ray = sweep(path, tmp_path / "ray", ray_cluster.address, clean_env(home))
    assert on_ray.returncode == 0, on_ray.stderr[-3000:]
    summary = json.loads(on_ray.stdout)
    assert (summary["executor"], summary["points_computed"], summary["points_failed"]) == ("ray", 6, 0)
    local = cli("sweep", "run", path, "--out", tmp_path / "local", "--json", "-q")
    assert local.code == 0 and local.json()["executor"] == "process"
    on_ray_rows, local_rows = rows(tmp_path / "ray"), rows(tmp_path / "local")
    assert len(on_ray_rows) == 6 and on_ray_rows == local_rows


def test_a_cluster_without_token_authentication_is_used_as_it_is(open_cluster, cli, tmp_path):
    # the driver has a token in its home (as after a local `--executor ray` run): not sent, not needed
    home = tmp_path / "home"
    (home / ".ray").mkdir(parents=True)
    (home / ".ray" / "auth_token").write_text(TOKEN)
    path = write_sweep(tmp_path, SMALL_AXES, name="open", draws=0)
    on_ray = sweep(path, tmp_path / "ray", open_cluster.address, clean_env(home))
    assert on_ray.returncode == 0, on_ray.stderr[-3000:]
    local = cli("sweep", "run", path, "--out", tmp_path / "local", "--json", "-q")
    assert local.code == 0
    assert rows(tmp_path / "ray") == rows(tmp_path / "local") and len(rows(tmp_path / "local")) == 6


@pytest.mark.parametrize(("extra", "expected"), [
    ({}, "asks for an authentication token and none is set: set RAY_AUTH_TOKEN"),
    ({"RAY_AUTH_TOKEN": "0" * 32}, "refuses the authentication token from RAY_AUTH_TOKEN: set RAY_AUTH_TOKEN"),
    ({"RAY_AUTH_MODE": "disabled"}, "RAY_AUTH_MODE is 'disabled': set it to token"),
])
def test_a_driver_the_cluster_refuses_gets_one_line_saying_what_to_set(cluster, tmp_path, extra, expected):
    ray_cluster, _ = cluster
    path = write_sweep(tmp_path, SMALL_AXES, name="refused", draws=0)
    empty_home = tmp_path / "home"
    empty_home.mkdir()
    result = sweep(path, tmp_path / "out", ray_cluster.address, {**clean_env(empty_home), **extra})
    assert result.returncode == 2, result.stderr[-3000:]
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: --ray-address ")
    assert expected in result.stderr and "ray get-auth-token" in result.stderr
    assert not (tmp_path / "out" / "part-00000.parquet").exists()


def test_the_token_is_looked_for_where_ray_looks(tmp_path):
    assert token_source({"RAY_AUTH_TOKEN": "x", "RAY_AUTH_TOKEN_PATH": "/t"}, tmp_path) == "RAY_AUTH_TOKEN"
    assert token_source({"RAY_AUTH_TOKEN_PATH": "/t"}, tmp_path) == "RAY_AUTH_TOKEN_PATH (/t)"
    assert token_source({}, tmp_path) is None
    (tmp_path / ".ray").mkdir()
    (tmp_path / ".ray" / "auth_token").write_text(TOKEN)
    assert token_source({}, tmp_path) == str(tmp_path / ".ray" / "auth_token")
