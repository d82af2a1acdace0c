"""The README's findings of the 2,000-point worked sweep, from a run of it (written between markers).

    python scripts/readme_sweep.py [--sweep-dir DIR]            # run the sweep (or resume DIR), rewrite the README
    python scripts/readme_sweep.py --sweep-dir DIR --check      # print the section only

The sweep is examples/sweeps/llama70b-space.yaml (2,000 compares, minutes on 2 cores); the section
is what ``fabricplan sweep report`` and the results' Parquet rows say: how many points recommend
each fabric and where the minority sits, the cost gap between the two RDMA fabrics, their step
times against kernel TCP's, and the overall Pareto front. scripts/screenshot_report.py calls
``write`` after it screenshots the sweep report, so one run refreshes both;
tests/report/test_screenshots.py checks the section against a fresh run (marked slow).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _sections import run_fabricplan, write_section  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BEGIN = "<!-- BEGIN sweep findings (scripts/readme_sweep.py) -->"
END = "<!-- END sweep findings -->"
SWEEP_FILE = "examples/sweeps/llama70b-space.yaml"
AXES = ("--x", "cluster.gpus", "--y", "catalog.switches.sw_ib_qm9700.price_usd")
NAMES = {"roce-v2": "RoCEv2", "infiniband-ndr": "InfiniBand NDR", "ethernet-tcp": "Ethernet/TCP"}


def _column(fabric: str, output: str) -> str:
    return f"{fabric.replace('-', '_')}__{output}"


def findings(report: dict, rows: list[dict]) -> str:
    """The section's bullets from the report's JSON document and the sweep's rows."""
    counts = sorted(report["recommended_counts"].items(), key=lambda kv: -kv[1])
    total = report["points"]
    leader, minority = counts[0][0], (counts[1][0] if len(counts) > 1 else None)
    lines = []
    head = f"**{NAMES[leader]} is recommended at {counts[0][1]:,} of the {total:,} points"
    if minority is None:
        lines.append(f"* {head}.**")
    else:
        prices = sorted({r["catalog_switches_sw_ib_qm9700_price_usd"] for r in rows})
        by_price = [(p, sum(r["recommended"] == "infiniband-ndr" for r in rows
                             if r["catalog_switches_sw_ib_qm9700_price_usd"] == p),
                     sum(r["catalog_switches_sw_ib_qm9700_price_usd"] == p for r in rows)) for p in prices]
        lines.append(f"* {head}, {NAMES[minority]} at {counts[1][1]:,}.** InfiniBand NDR's share follows the "
                     "QM9700's price: " + ", ".join(f"{n:,} of {m:,} points at ${p:,}" for p, n, m in by_price) + ".")
    ib, roce, tcp = (_column(f, "cost_per_useful_gpu_hour_usd") for f in ("infiniband-ndr", "roce-v2", "ethernet-tcp"))
    gaps = [r[roce] / r[ib] - 1 for r in rows]
    roce_cheaper = sum(g < 0 for g in gaps)
    close = sum(bool(r["close_call"]) for r in rows)
    lines.append(f"* **RoCEv2 is the cheaper per useful GPU-hour at {roce_cheaper:,} points, InfiniBand at "
                 f"{total - roce_cheaper:,}**: RoCEv2 costs {100 * min(gaps):+.1f} % to {100 * max(gaps):+.1f} % "
                 f"against InfiniBand; {close:,} points are close calls (no fabric best in 80 % of the Monte "
                 f"Carlo's draws), ranked by the numbers all the same. The report finds "
                 f"{sum(1 for c in report['crossovers'] if {c['fabric_a'], c['fabric_b']} == {'roce-v2', 'infiniband-ndr'})}"
                 " RoCEv2/InfiniBand crossovers along cluster size (over the QM9700 prices).")
    ib_s, roce_s, tcp_s = (_column(f, "step_time_s") for f in ("infiniband-ndr", "roce-v2", "ethernet-tcp"))
    rdma = max(abs(r[roce_s] / r[ib_s] - 1) for r in rows)
    sizes = sorted({r["cluster_gpus"] for r in rows})

    def at(size: int) -> list[dict]:
        return [r for r in rows if r["cluster_gpus"] == size]

    small, large = at(sizes[0]), at(sizes[-1])
    slow_small = max(r[tcp_s] / r[roce_s] - 1 for r in small)
    slow_large = max(r[tcp_s] / r[roce_s] - 1 for r in large)
    cheapest = min(large, key=lambda r: r[roce])
    lines.append(f"* **The Pareto chart says why the RDMA fabrics are close:** their step times are within "
                 f"{100 * rdma:.1f} % at every point ({sizes[-1]:,} GPUs: {cheapest[roce_s]:.3f} s vs "
                 f"{cheapest[ib_s]:.3f} s), while Ethernet/TCP is up to {100 * slow_small:.0f} % slower at "
                 f"{sizes[0]:,} GPUs and {100 * slow_large:.0f} % slower at {sizes[-1]:,} ({cheapest[tcp_s]:.2f} s), "
                 f"where it costs {cheapest[tcp] / cheapest[roce]:.1f}x RoCEv2 per useful GPU-hour at the cheapest "
                 f"prices ({cheapest[tcp]:.2f} vs {cheapest[roce]:.2f} USD; InfiniBand {cheapest[ib]:.2f}).")
    front = report["overall_front"]
    held = sorted({p["fabric"] for p in front})
    lines.append("  Step time is set by the cluster size (the staircase's steps); the price and oversubscription "
                 "axes move points up and down within a step. The overall front over all fabrics (`--json`: "
                 f"`overall_front`, {len(front)} points) holds {' and '.join(NAMES[f] for f in held)} points.")
    return "\n".join(textwrap.fill(line, width=100, subsequent_indent="  ", break_on_hyphens=False)
                     for line in lines)


def section(sweep_dir: Path) -> str:
    """The README section from the results in ``sweep_dir`` (``sweep report --json`` and the Parquet rows)."""
    import pyarrow.parquet as pq

    report = json.loads(run_fabricplan(["sweep", "report", str(sweep_dir), *AXES, "--json"]))
    rows = [r for r in pq.read_table(sweep_dir).to_pylist() if r["error"] is None]
    return f"{BEGIN}\n{findings(report, rows)}\n{END}\n"


def run(sweep_dir: Path) -> Path:
    """Run (or resume) the worked sweep into ``sweep_dir``."""
    run_fabricplan(["sweep", "run", SWEEP_FILE, "--out", str(sweep_dir)])
    return sweep_dir


def write(sweep_dir: Path) -> None:
    """Rewrite the README's section from the results in ``sweep_dir``."""
    write_section(README, BEGIN, END, section(sweep_dir))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweep-dir", type=Path, help="the sweep's results folder (kept; resumed if present)")
    parser.add_argument("--check", action="store_true", help="print the section; do not write")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="fabricplan-readme-sweep-") as work:
        sweep_dir = run(args.sweep_dir or Path(work) / "llama70b-space.sweep")
        if args.check:
            print(section(sweep_dir))
        else:
            write(sweep_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
