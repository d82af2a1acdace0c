"""`health --jobs`: each job's hosts as Slurm writes them (issue 30): `node[01-16]` is node01 ..
node16 (python-hostlist), not the shell pattern that matched node6 and missed node01."""

from __future__ import annotations

import pytest

from fabricplan.errors import InputError
from fabricplan.ops.health.engine import _jobs_of, read_jobs
from project_paths import ROOT

FIX = ROOT / "tests" / "fixtures" / "health"
STORM = ("health", "--ethtool", FIX / "ethtool_storm.txt", "--perfquery", FIX / "perfquery.txt", "--fail-on", "never")


class _Port:
    def __init__(self, host: str) -> None:
        self.host, self.name = host, f"{host}:mlx5_0/1"


def _jobs_file(tmp_path, text: str):
    path = tmp_path / "jobs.yaml"
    path.write_text(text)
    return path


def test_a_slurm_range_is_its_zero_padded_hosts(tmp_path):
    jobs = read_jobs(_jobs_file(tmp_path, 'jobs:\n  train: ["node[01-16]"]\n'))
    assert jobs["train"] == [f"node{n:02d}" for n in range(1, 17)]
    matched = _jobs_of([_Port(h) for h in ("node01", "node16", "node6", "node17")], [], jobs)
    assert set(matched) == {"node01:mlx5_0/1", "node16:mlx5_0/1"}  # node6 is not node06; node17 is outside


def test_a_nodelist_string_lists_and_patterns(tmp_path):
    jobs = read_jobs(_jobs_file(tmp_path, 'jobs:\n  a: "gpu[1-4,7],sw1"\n  b: [login01, "eval*"]\n'))
    assert jobs["a"] == ["gpu1", "gpu2", "gpu3", "gpu4", "gpu7", "sw1"]
    matched = _jobs_of([_Port(h) for h in ("gpu7", "gpu5", "eval-03", "login01")], [], jobs)
    assert matched == {"gpu7:mlx5_0/1": ["a"], "eval-03:mlx5_0/1": ["b"], "login01:mlx5_0/1": ["b"]}


def test_a_bad_hostlist_is_one_line_naming_the_job(tmp_path):
    path = _jobs_file(tmp_path, 'jobs:\n  train: "node[01-"\n')
    with pytest.raises(InputError, match=r"jobs\.train: 'node\[01-' is not a Slurm hostlist"):
        read_jobs(path)


def test_health_names_the_slurm_job_on_each_port(cli, tmp_path):
    path = _jobs_file(tmp_path, 'jobs:\n  train: "node[01-16]"\n  eval: [sw1]\n')
    out = cli(*STORM, "--jobs", path).out
    assert "node01:mlx5_0/1  (job: train)" in out and "node09:lid1719/1  (job: train)" in out
    assert "sw1:lid3/1  (job: eval)" in out
    ports = {p["entity"]: p for p in cli(*STORM, "--jobs", path, "--json").json()["ports"]}
    assert ports["node01:mlx5_0/1"]["jobs"] == ["train"]
    bad = cli(*STORM, "--jobs", _jobs_file(tmp_path, 'jobs:\n  x: "n[1-100000000]"\n'))
    assert bad.code == 2 and bad.err.count("\n") == 1 and "jobs.x" in bad.err
