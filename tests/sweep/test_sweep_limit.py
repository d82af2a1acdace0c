"""Issue 31: `--limit 1` of a 10-million-point sweep makes the points it runs, not 10 million tasks
(counted: the point ids the run hashes; no timing)."""

from __future__ import annotations

from sweep_files import write_sweep

from fabricplan.sweep import load_sweep
from fabricplan.sweep.points import Sweep
from fabricplan.sweep.run import run_sweep
from fabricplan.sweep.store import read_results

#: 216 x 216 x 214 = 9,984,384 points.
BIG = {"economics.energy_usd_per_kwh": {"low": 0.01, "high": 1.0, "steps": 216},
       "economics.pue": {"low": 1.0, "high": 2.0, "steps": 216},
       "catalog.switches.sw_ib_qm9700.price_usd": {"low": 30000, "high": 70000, "steps": 214}}


def _counting(monkeypatch) -> list[int]:
    made = [0]
    real = Sweep.point_id

    def point_id(self, values):
        made[0] += 1
        return real(self, values)
    monkeypatch.setattr(Sweep, "point_id", point_id)
    return made


def test_limit_one_of_ten_million_points_makes_only_the_points_it_runs(tmp_path, monkeypatch):
    sweep = load_sweep(write_sweep(tmp_path, BIG, name="big", draws=0))
    assert sweep.total == 9_984_384
    made = _counting(monkeypatch)
    first = run_sweep(sweep, tmp_path / "out", executor="inprocess", limit=1)
    assert (first.points_computed, first.points_now, made[0]) == (1, 1, 1)
    assert (first.points_kept, first.points_skipped) == (sweep.total, None)  # no filters: the total; the rest not looked at
    made[0] = 0
    second = run_sweep(sweep, tmp_path / "out", executor="inprocess", limit=2)
    assert (second.points_computed, made[0]) == (2, 3)  # past the one done, two new
    table, _ = read_results(tmp_path / "out")
    assert sorted(table.column("point_index").to_pylist()) == [0, 1, 2]


def test_limit_with_filters_leaves_the_kept_count_open(tmp_path, monkeypatch):
    sweep = load_sweep(write_sweep(tmp_path, BIG, name="filtered", draws=0, filters=["economics.pue >= 1.5"]))
    made = _counting(monkeypatch)
    summary = run_sweep(sweep, tmp_path / "out", executor="inprocess", limit=1)
    assert (summary.points_computed, summary.points_kept, summary.points_skipped, made[0]) == (1, None, None, 1)


def test_limit_past_the_last_point_counts_everything(tmp_path):
    small = {"cluster.gpus": [512, 1024], "catalog.switches.sw_ib_qm9700.price_usd": [30000, 50000]}
    sweep = load_sweep(write_sweep(tmp_path, small, name="small", draws=0))
    run_sweep(sweep, tmp_path / "out", executor="inprocess", limit=3)
    summary = run_sweep(sweep, tmp_path / "out", executor="inprocess", limit=5)
    assert (summary.points_computed, summary.points_kept, summary.points_skipped) == (1, 4, 3)


def test_limit_one_says_what_it_runs(cli, tmp_path):
    path, out = write_sweep(tmp_path, BIG, name="said", draws=0), tmp_path / "out"
    result = cli("sweep", "run", path, "--out", out, "-e", "inprocess", "--limit", "1")
    assert result.code == 0, result.err
    assert f"said: 9,984,384 points; the first 1 not yet in {out} to run now (--limit) on inprocess" in result.err
    document = cli("sweep", "run", path, "--out", out, "-e", "inprocess", "--limit", "1", "-q", "--json").json()
    assert (document["points_computed"], document["points_now"], document["points_skipped"]) == (1, 1, None)
