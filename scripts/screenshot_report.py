"""Screenshots of every HTML report the README shows, with headless Chromium, and their manifest.

    python scripts/screenshot_report.py                        # every report: run, render, write docs/img/
    python scripts/screenshot_report.py --only compare fleet   # some of them
    python scripts/screenshot_report.py --sweep-dir DIR        # keep the sweep's results in DIR (resumable)
    python scripts/screenshot_report.py --page report.html --output x.png [--width W --height H]

Each report is made by the CLI (``python -m fabricplan.cli.app ...``), never by calling the report
code, so the script keeps working whatever renders the HTML. The command runs once with ``--html``
(or ``--plot``) and ``--json``: the page is screenshotted (``docs/img/<name>.png``, the first
window of the page) and the JSON document, the data the page was rendered from, is hashed (SHA-256
of its canonical form, with the run's wall-clock figures left out). ``docs/img/screenshots.json``
keeps, per image, the command, the window and that hash; tests/report/test_screenshots.py runs the
commands again and fails when an image no longer shows what the command gives today (PNG bytes are
not reproducible; the data is). The sweep's 2,000 points take minutes, so the manifest also keeps
a sample of its points (recommended fabric and costs), which the default test run recomputes; the
whole sweep is checked by the slow test. Running the sweep also rewrites the README's sweep figures
(scripts/readme_sweep.py).

Needs /usr/bin/chromium (or ``--chromium PATH``). The page is rendered offline: Chromium cannot
resolve any host name, so the PNG shows what a reader without network access sees.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _sections import run_fabricplan  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
IMAGES = ROOT / "docs" / "img"
MANIFEST = IMAGES / "screenshots.json"
SWEEP_FILE = "examples/sweeps/llama70b-space.yaml"
SWEEP_AXES = ("--x", "cluster.gpus", "--y", "catalog.switches.sw_ib_qm9700.price_usd")
#: point indices of the sweep whose rows the manifest keeps (every 250th of its 2,000)
SWEEP_SAMPLE = tuple(range(0, 2000, 250))
#: JSON keys that hold the run's own wall-clock figures (not data the page shows)
VOLATILE = frozenset({"wall_s", "simulated_us_per_wall_s", "seconds", "points_per_s"})


@dataclass(frozen=True)
class Report:
    """One screenshot: ``command`` writes the page to ``{html}`` (``{sweep}``: the sweep's results
    folder, filled by ``setup`` first); ``window`` (width, height) is the part of the page shown."""

    name: str
    title: str
    command: tuple[str, ...]
    window: tuple[int, int] = (1400, 2600)
    setup: tuple[str, ...] | None = None
    slow: bool = False


REPORTS: tuple[Report, ...] = (
    Report("compare-report", "compare, the 1,024-GPU example",
           ("compare", "examples/llama70b-1024-h100.yaml", "--html", "{html}")),
    Report("sweep-pareto", "sweep report of the 2,000-point worked example",
           ("sweep", "report", "{sweep}", *SWEEP_AXES, "--html", "{html}"), window=(1200, 700),
           setup=("sweep", "run", SWEEP_FILE, "--out", "{sweep}"), slow=True),
    Report("fleet-report", "fleet, the bundled job mix on RoCE",
           ("fleet", "examples/fleets/mix-16k-h100.yaml", "--fabric", "roce-v2", "--days", "2", "--samples", "2",
            "--html", "{html}"), window=(1400, 880)),
    Report("health-report", "health, a PFC storm",
           ("health", "--ethtool", "tests/fixtures/health/ethtool_storm.txt", "--hw-counters",
            "tests/fixtures/health/hw_counters_node01.txt", "--html", "{html}"), window=(1400, 1800)),
    Report("check-measured-report", "check-measured, a cluster whose NICs trained at 200G",
           ("check-measured", "tests/fixtures/measure/all_reduce_200g_nics_roce.log", "--spec",
            "tests/fixtures/measure/cluster_roce_2x8_h100.yaml", "--html", "{html}"), window=(1400, 1250)),
    Report("simulate-plot", "simulate --plot, a 64-to-1 incast with DCQCN and PFC",
           ("simulate", "incast", "--k", "16", "--senders", "64", "--flow-size", "1MB", "--cc", "dcqcn",
            "--pfc", "on", "--plot", "{html}"), window=(1400, 900)),
)


def report(name: str) -> Report:
    return next(r for r in REPORTS if r.name == name)


def fabricplan(args: list[str]) -> str:
    """Run ``fabricplan ARGS`` from the repository root; its stdout (exit 0 or 1: a verdict)."""
    return run_fabricplan(args)


def _fill(args: tuple[str, ...], **values: str) -> list[str]:
    return [arg.format(**values) if "{" in arg else arg for arg in args]


def shown(args: tuple[str, ...]) -> str:
    """The command as the manifest records it (``{html}`` as ``report.html``, ``{sweep}`` as its folder)."""
    return "fabricplan " + " ".join(_fill(args, html="report.html", sweep="llama70b-space.sweep"))


def without_volatile(value):
    """``value`` (a JSON document) without the keys in VOLATILE, at any depth."""
    if isinstance(value, dict):
        return {k: without_volatile(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [without_volatile(v) for v in value]
    return value


def data_sha256(document: dict) -> str:
    """SHA-256 of a JSON document's canonical text (sorted keys, no wall-clock figures)."""
    text = json.dumps(without_volatile(document), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def run_report(item: Report, html: Path, sweep_dir: Path | None = None) -> dict:
    """Run the report's command (its setup first): the page is written to ``html``; the JSON document."""
    values = {"html": str(html), "sweep": str(sweep_dir) if sweep_dir else ""}
    if item.setup is not None:
        fabricplan(_fill(item.setup, **values))
    return json.loads(fabricplan([*_fill(item.command, **values), "--json"]))


def sweep_sample(sweep_dir: Path) -> list[dict]:
    """The sampled points' rows (inputs, recommended fabric, cost per useful GPU-hour per fabric)."""
    import pyarrow.parquet as pq

    rows = {row["point_index"]: row for row in pq.read_table(sweep_dir).to_pylist()}
    columns = [c for c in next(iter(rows.values())) if c.endswith("__cost_per_useful_gpu_hour_usd")]
    return [{"point_index": i, "recommended": rows[i]["recommended"],
             "cost_per_useful_gpu_hour_usd": {c.split("__")[0]: rows[i][c] for c in columns}}
            for i in SWEEP_SAMPLE]


def entry(item: Report, document: dict) -> dict:
    """The manifest entry of a report whose run gave ``document``."""
    out = {"image": f"docs/img/{item.name}.png", "title": item.title, "command": shown(item.command),
           "window": list(item.window), "data_sha256": data_sha256(document), "slow": item.slow}
    if item.setup is not None:
        out["setup"] = shown(item.setup)
    return out


def read_manifest() -> dict:
    return json.loads(MANIFEST.read_text(encoding="utf-8")) if MANIFEST.exists() else {"reports": {}}


def write_manifest(manifest: dict) -> None:
    from fabricplan.io import write_text_atomic

    write_text_atomic(MANIFEST, json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
                      what="screenshot manifest")


def make(item: Report, work: Path, chromium: Path, sweep_dir: Path | None) -> dict:
    """Run, screenshot and describe one report."""
    from fabricplan.report.headless import screenshot

    html = work / f"{item.name}.html"
    if item.setup is not None:
        sweep_dir = sweep_dir or work / "llama70b-space.sweep"
    document = run_report(item, html, sweep_dir)
    screenshot(html, IMAGES / f"{item.name}.png", window=item.window, chromium=chromium)
    out = entry(item, document)
    if item.setup is not None:
        out["sample"] = sweep_sample(sweep_dir)
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import readme_sweep

        readme_sweep.write(sweep_dir)
    return out


def main(argv: list[str] | None = None) -> int:
    from fabricplan.report.headless import CHROMIUM, SCREENSHOT_WINDOW

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=[r.name for r in REPORTS], help="these reports only")
    parser.add_argument("--sweep-dir", type=Path, help="the sweep's results folder (kept; resumed if present)")
    parser.add_argument("--chromium", type=Path, default=CHROMIUM)
    parser.add_argument("--page", type=Path, help="screenshot this HTML file only (with --output)")
    parser.add_argument("--output", type=Path, help="with --page: the PNG to write")
    parser.add_argument("--width", type=int, default=SCREENSHOT_WINDOW[0])
    parser.add_argument("--height", type=int, default=SCREENSHOT_WINDOW[1])
    args = parser.parse_args(argv)
    if not args.chromium.exists():
        print(f"error: --chromium: Chromium not found at {args.chromium}", file=sys.stderr)
        return 2
    if args.page is not None:
        from fabricplan.report.headless import screenshot

        if not args.page.is_file() or args.output is None:
            print("error: --page: give an existing HTML file and --output PNG", file=sys.stderr)
            return 2
        print(screenshot(args.page, args.output, window=(args.width, args.height), chromium=args.chromium))
        return 0
    manifest = read_manifest()
    with tempfile.TemporaryDirectory(prefix="fabricplan-screenshots-") as work:
        for item in REPORTS:
            if args.only and item.name not in args.only:
                continue
            manifest["reports"][item.name] = make(item, Path(work), args.chromium, args.sweep_dir)
            write_manifest(manifest)
            print(manifest["reports"][item.name]["image"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
