"""Bad sweep files and flags: one line on stderr naming the file and the field path, exit 2."""

from __future__ import annotations

import sys

import pytest
import yaml

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1] / "sweep"))
from sweep_files import BASE, SMALL_AXES, write_sweep  # noqa: E402

CASES = {
    "spec-typo": ({"axes": {"cluster.gpu_count": [8]}}, r"axes\.cluster\.gpu_count\[0\]: 8 does not apply: .*gpu_count"),
    "catalog-typo": ({"axes": {"catalog.switches.nope.price_usd": [1]}},
                     r"axes\.catalog\.switches\.nope\.price_usd\[0\]: .*no 'nope'"),
    "bad-value": ({"axes": {"cluster.gpus": [1024, 1001]}}, r"axes\.cluster\.gpus\[1\]: 1001 does not apply: .*multiple"),
    "duplicate": ({"axes": {"cluster.gpus": [1024, 1024]}}, r"axes\.cluster\.gpus\[1\]: value 1024 is listed twice"),
    "range": ({"axes": {"cluster.gpus": {"low": 2048, "high": 1024, "steps": 2}}}, r"high \(1024\) is below low"),
    "empty-axes": ({"axes": {}}, r"axes: .*at least 1"),
    "empty-axis": ({"axes": {"cluster.gpus": []}}, r"axes\.cluster\.gpus: an axis needs at least one value"),
    "zip-length": ({"axes": SMALL_AXES | {"jobs.0.tp": [8]}, "zip": [["cluster.gpus", "jobs.0.tp"]]},
                   r"zip\[0\]: zipped axes need equal lengths"),
    "zip-unknown": ({"axes": SMALL_AXES, "zip": [["cluster.gpus", "cluster.nodes"]]},
                    r"zip\[0\]: 'cluster.nodes' is not an axis"),
    "filter-shape": ({"axes": SMALL_AXES, "filters": ["cluster.gpus"]}, r"filters\[0\]: a filter is"),
    "filter-path": ({"axes": SMALL_AXES, "filters": ["cluster.gpuz > 3"]},
                    r"filters\[0\]: 'cluster.gpuz' is neither an axis"),
    "filter-types": ({"axes": SMALL_AXES, "filters": ["cluster.gpus > abc"]},
                     r"filters 'cluster.gpus > abc': cannot compare 512 > 'abc'"),
    # a filter's right-hand side goes through the bounded reader too (issue 31): an alias bomb
    # and deep nesting are refused in one line, not a MemoryError or RecursionError
    "filter-alias-bomb": ({"axes": SMALL_AXES, "filters": ["cluster.gpus == [&a [1,1,1,1,1,1,1,1,1,1], " + ", ".join(
        f"&{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]" for i in range(8)) + "]"]},
        r"filters\[0\](:1:\d+)?: more than 1,000,000 values once YAML aliases are expanded"),
    "filter-deep": ({"axes": SMALL_AXES, "filters": ["cluster.gpus == " + "[" * 5000 + "]" * 5000]},
                    r"filters\[0\](:1:\d+)?: nested more than 100 levels deep"),
    "unknown-key": ({"axes": SMALL_AXES, "axis": {}}, r"axis: unknown field.*`fabricplan sweep schema`"),
    "efficiency": ({"axes": SMALL_AXES, "efficiency_model": "nope"}, r"nope"),
    "draws-negative": ({"axes": SMALL_AXES, "draws": -3}, r"draws: Input should be greater than or equal to 0 \(got -3\)"),
    "draws-huge": ({"axes": SMALL_AXES, "draws": 1e12},  # capped as `compare --draws` (issue 31)
                   r"draws: Input should be less than or equal to 1000000 \(got 1000000000000"),
    "draws-text": ({"axes": SMALL_AXES, "draws": "many"}, r"draws: .*integer"),
    "too-many": ({"axes": {"cluster.gpus": [8 * k for k in range(1, 4)],
                           "economics.energy_usd_per_kwh": {"low": 0.01, "high": 1, "steps": 100000},
                           "economics.pue": {"low": 1.0, "high": 2.0, "steps": 100000}}}, r"at most 10,000,000"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_sweep_file_is_one_line(cli, tmp_path, name):
    fields, pattern = CASES[name]
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({"name": "bad", "base": str(BASE), **fields}))
    result = cli("sweep", "run", path, "--out", tmp_path / "out", "--executor", "inprocess", "-q")
    assert result.code == 2, result.out
    assert len(result.err.strip().splitlines()) == 1, result.err
    assert str(path) in result.err
    assert __import__("re").search(pattern, result.err), result.err
    assert not (tmp_path / "out").exists()


def test_missing_base_names_it(cli, tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({"base": "nowhere.yaml", "axes": SMALL_AXES}))
    result = cli("sweep", "run", path, "-q")
    assert result.code == 2 and "nowhere.yaml" in result.err and len(result.err.strip().splitlines()) == 1


@pytest.mark.parametrize("args, message", [
    (("--executor", "dask"), "--executor: unknown executor 'dask'; choose one of inprocess, process, ray"),
    (("--ray-address", "127.0.0.1:6379"), "--ray-address: --ray-address needs --executor ray"),
])
def test_bad_flags(cli, tmp_path, args, message):
    result = cli("sweep", "run", write_sweep(tmp_path, SMALL_AXES), *args, "-q")
    assert result.code == 2 and result.err.strip() == f"error: {message}"


def test_ray_missing_says_how_to_install(cli, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    result = cli("sweep", "run", write_sweep(tmp_path, SMALL_AXES), "--executor", "ray", "-q")
    assert result.code == 2
    assert result.err.strip() == 'error: --executor ray needs Ray: pip install "fabricplan[ray]"'


def test_appending_other_axes_is_refused(cli, tmp_path):
    out = tmp_path / "out"
    assert cli("sweep", "run", write_sweep(tmp_path, SMALL_AXES), "--out", out, "-e", "inprocess", "-q").code == 0
    other = write_sweep(tmp_path, {"cluster.gpus": [512]}, name="other")
    result = cli("sweep", "run", other, "--out", out, "-e", "inprocess", "-q")
    assert result.code == 2 and len(result.err.strip().splitlines()) == 1
    assert "holds a sweep with other columns" in result.err and str(out) in result.err


def test_report_of_a_folder_that_is_not_a_sweep(cli, tmp_path):
    result = cli("sweep", "report", tmp_path)
    assert result.code == 2 and "not a sweep results folder" in result.err


def test_report_unknown_axis(cli, tmp_path):
    out = tmp_path / "out"
    cli("sweep", "run", write_sweep(tmp_path, SMALL_AXES), "--out", out, "-e", "inprocess", "-q")
    result = cli("sweep", "report", out, "--x", "cluster.nodes")
    assert result.code == 2 and result.err.strip().startswith("error: --x: 'cluster.nodes' is not an axis")



def test_pyarrow_missing_says_how_to_install(cli, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    result = cli("sweep", "run", write_sweep(tmp_path, SMALL_AXES), "-e", "inprocess", "--out", tmp_path / "out", "-q")
    assert result.code == 2
    assert result.err.strip() == 'error: the sweep results need pyarrow: pip install "fabricplan[sweep]"'
