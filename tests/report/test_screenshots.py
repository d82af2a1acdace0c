"""The README's screenshots show what their commands give today (scripts/screenshot_report.py, docs/img/screenshots.json).

PNG bytes are not reproducible, so each image is checked through the data it was rendered from: the
manifest keeps the SHA-256 of the command's JSON document, and these tests run the command again.
The sweep's 2,000 points take minutes: the default run recomputes a sample of its points, the slow
test the whole sweep (and the README's sweep findings)."""

from __future__ import annotations

import json
import re
import struct

import pytest

from project_paths import ROOT, load_script

SCRIPT = load_script("screenshot_report")
MANIFEST = json.loads((ROOT / "docs" / "img" / "screenshots.json").read_text(encoding="utf-8"))["reports"]
#: images of the README that are not reports (a benchmark's figure, docs/benchmarks.md)
NOT_REPORTS = {"docs/img/sim-benchmark.png"}


def _png_size(path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


def test_every_report_has_its_image_and_entry_and_the_readme_shows_them():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = set(re.findall(r"\]\((docs/img/[^)]+\.png)\)", readme)) - NOT_REPORTS
    assert shown == {entry["image"] for entry in MANIFEST.values()}
    assert set(MANIFEST) == {report.name for report in SCRIPT.REPORTS}
    for report in SCRIPT.REPORTS:
        entry = MANIFEST[report.name]
        assert entry["command"] == SCRIPT.shown(report.command), "run python scripts/screenshot_report.py"
        assert _png_size(ROOT / entry["image"]) == tuple(report.window)


@pytest.mark.parametrize("name", [r.name for r in SCRIPT.REPORTS if not r.slow])
def test_the_image_shows_what_the_command_gives_today(name, tmp_path):
    document = SCRIPT.run_report(SCRIPT.report(name), tmp_path / "report.html")
    assert (tmp_path / "report.html").stat().st_size > 0
    assert SCRIPT.data_sha256(document) == MANIFEST[name]["data_sha256"], \
        f"run python scripts/screenshot_report.py --only {name}"


def test_the_data_hash_ignores_wall_clock_figures_only():
    document = {"goodput_gbps": 88.5, "wall_s": 0.44, "jobs": [{"simulated_us_per_wall_s": 9.0, "fct_us": 1.0}]}
    same = {"goodput_gbps": 88.5, "wall_s": 4.26, "jobs": [{"simulated_us_per_wall_s": 1.0, "fct_us": 1.0}]}
    assert SCRIPT.data_sha256(document) == SCRIPT.data_sha256(same)
    assert SCRIPT.data_sha256(document) != SCRIPT.data_sha256({**document, "goodput_gbps": 88.6})


def test_the_sweep_sample_points_give_what_the_image_shows():
    # The sampled points of the worked sweep, computed again as `sweep run` computes them.
    from fabricplan.sweep.evaluate import evaluate_point
    from fabricplan.sweep.points import load_sweep

    sweep = load_sweep(ROOT / SCRIPT.SWEEP_FILE)
    points = dict(sweep.points())
    sample = MANIFEST["sweep-pareto"]["sample"]
    assert [row["point_index"] for row in sample] == list(SCRIPT.SWEEP_SAMPLE)
    for row in sample:
        out = evaluate_point(sweep.context, points[row["point_index"]])
        assert out["recommended"] == row["recommended"], row["point_index"]
        for fabric, cost in row["cost_per_useful_gpu_hour_usd"].items():
            assert out[f"{fabric}__cost_per_useful_gpu_hour_usd"] == pytest.approx(cost, rel=1e-9), fabric


@pytest.mark.slow
def test_the_whole_sweep_gives_the_image_and_the_readme_findings(tmp_path):
    sweep_dir = tmp_path / "llama70b-space.sweep"
    document = SCRIPT.run_report(SCRIPT.report("sweep-pareto"), tmp_path / "report.html", sweep_dir)
    assert SCRIPT.data_sha256(document) == MANIFEST["sweep-pareto"]["data_sha256"], \
        "run python scripts/screenshot_report.py --only sweep-pareto"
    module = load_script("readme_sweep")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    written = readme[readme.index(module.BEGIN):readme.index(module.END) + len(module.END)] + "\n"
    assert written == module.section(sweep_dir), "run python scripts/readme_sweep.py"
