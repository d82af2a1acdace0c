"""The README's table of the bundled examples' answers, from `compare` runs (written between markers).

    python scripts/readme_examples.py            # rewrite the table in README.md
    python scripts/readme_examples.py --check    # print it only

Each row is one `compare` of the example at the catalog's defaults (1,000 draws): the recommended
fabric and whether it is clear, the runner-up's gap, the design the search chose per fabric, the
smallest single change that flips the answer and any job re-laid to fit in memory.
tests/report/test_readme_examples.py renders it again and fails when the README has drifted.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _sections import section_main  # noqa: E402

README = ROOT / "README.md"
BEGIN = "<!-- BEGIN examples table (scripts/readme_examples.py) -->"
END = "<!-- END examples table -->"

#: (example file, scenario) in the order the README lists them.
EXAMPLES = (
    ("single-node-8-inference.yaml", "one 8-GPU node serving Llama-3 70B, fine-tuning beside it"),
    ("mid-128-h100-existing-ethernet.yaml", "128 H100, mid-size training next to an Ethernet estate"),
    ("mid-256-a100-100g-estate.yaml", "256 A100, a team owning 24 Tomahawk-3 switches at 100G (reuse them?)"),
    ("llama70b-1024-h100.yaml", "1,024 H100 training Llama-3 70B"),
    ("moe-alltoall-2048-h100.yaml", "2,048 H100, Mixtral 8x7B (NVIDIA's H100 recipe: TP 1, PP 4, EP 8)"),
    ("llama405b-16k-h100.yaml", "16,384 H100 pretraining Llama-3 405B"),
    ("gb200-nvl72.yaml", "4 GB200 NVL72 racks (288 GPUs, 72-GPU NVLink domains), Llama-3 70B"),
    ("inference-512-h100-disaggregated.yaml", "512 H100 serving: disaggregated chat, expert-parallel MoE, RL "
                                              "policy with weight updates"),
)


def _design(outcome) -> str:
    d = outcome.design
    if d is None or not d.tiers:
        return "no switches"
    owned = " owned (reused)" if d.reused else ""
    return (f"{d.style.replace('_', '-')}, {d.switch}{owned}, {d.tiers} tier{'s' if d.tiers > 1 else ''}, "
            f"{d.switches:,} switch{'es' if d.switches != 1 else ''}")


def row(report) -> str:
    """One example's answer in a sentence or three."""
    rec = report.recommendation
    outcomes = {f.fabric: f for f in report.fabrics}
    chosen = outcomes[rec.recommended]
    u = report.uncertainty
    share = f"best in {100 * u.fabrics[rec.recommended].probability_best:.0f} % of draws" if u else ""
    verdict = "a close call" if rec.close_call else "clear"
    others = [f for f in rec.ranking if f != rec.recommended]
    gaps = "; ".join(f"{f} {100 * (outcomes[f].cost_per_useful_gpu_hour_usd / chosen.cost_per_useful_gpu_hour_usd - 1):+.1f} %"
                     for f in others)
    text = f"{rec.recommended}, {verdict} ({share}); {gaps} per useful GPU-hour"
    text += "; designs: " + "; ".join(f"{f} {_design(o)}" for f, o in outcomes.items())
    flips = report.what_would_change
    if flips is not None and flips.smallest is not None:
        flip = flips.smallest
        text += f"; smallest flip: {flip.change} ({flip.new_leader} leads)"
    relaid = sorted({j.job for f in report.fabrics for j in f.jobs if j.memory_note})
    if relaid:
        text += f"; re-laid to fit in memory: {', '.join(relaid)}"
    return text


def render() -> tuple[str, list[str]]:
    from fabricplan.catalog import load_catalog
    from fabricplan.decide import compare
    from fabricplan.spec import load_spec

    catalog = load_catalog()
    lines = [BEGIN, "| example | scenario | answer (compare at the catalog's defaults) |", "|---|---|---|"]
    for name, scenario in EXAMPLES:
        report = compare(load_spec(ROOT / "examples" / name, catalog), catalog)
        lines.append(f"| `{name}` | {scenario} | {row(report)} |")
    lines.append(END)
    return "\n".join(lines) + "\n", []


if __name__ == "__main__":
    sys.exit(section_main(__doc__.splitlines()[0], BEGIN, END, render, ["--output", str(README), *sys.argv[1:]]))
