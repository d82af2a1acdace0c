"""The README's fleet example, from a `fabricplan fleet` run (written between markers).

    python scripts/readme_fleet.py            # rewrite the section in README.md
    python scripts/readme_fleet.py --check    # print it only

The run: the bundled job mix on 16,384 H100 (examples/fleets/mix-16k-h100.yaml), RoCE, a week
sampled at four instants, jobs placed at random (a scheduler that ignores the topology), at 80
columns. A second block compares the blast radius of the design styles on the same mix (RoCE,
each style pinned, the packed policy, two days at two instants). tests/report/test_readme_fleet.py
renders both again and fails when the README has drifted.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _sections import section_main  # noqa: E402

README = ROOT / "README.md"
BEGIN = "<!-- BEGIN fleet example (scripts/readme_fleet.py) -->"
END = "<!-- END fleet example -->"
DESIGNS_BEGIN = "<!-- BEGIN fleet designs (scripts/readme_fleet.py) -->"
DESIGNS_END = "<!-- END fleet designs -->"
STYLES = ("rail_optimized", "rail_only", "leaf_spine", "fat_tree", "multi_plane")
COMMAND = ("fleet", "examples/fleets/mix-16k-h100.yaml", "--fabric", "roce-v2", "--policy", "random",
           "--days", "7", "--samples", "4")


def render() -> tuple[str, list[str]]:
    from rich.console import Console

    import fabricplan as fp
    from fabricplan.report.fleet_output import fleet_renderable

    results = fp.fleet(ROOT / COMMAND[1], "roce-v2", policy="random", days=7, samples=4)
    console = Console(width=80, record=True, force_terminal=False, color_system=None)
    console.print(fleet_renderable(results))
    text = "\n".join(line.rstrip() for line in console.export_text().splitlines()).strip("\n")
    section = f"{BEGIN}\n```console\n$ fabricplan {' '.join(COMMAND)}\n{text}\n```\n{END}\n"
    return section, []


def render_designs() -> tuple[str, list[str]]:
    """The design styles' blast radius on the bundled mix (module docstring)."""
    import fabricplan as fp
    from fabricplan.catalog import default_catalog
    from fabricplan.fleet import run_fleet

    catalog = default_catalog()
    spec = fp.load_spec(ROOT / COMMAND[1])
    rows = ["| design (RoCE, packed) | tiers | switches | a leaf fails: jobs, GPUs stopped; jobs slowed | a NIC fails: "
            "GPUs stopped | a spine fails: jobs slowed, running jobs' pace | a core fails: jobs slowed, running jobs' "
            "pace |",
            "|---|---:|---:|---|---:|---|---|"]
    for style in STYLES:
        pinned = spec.model_copy(update={"topology": spec.topology.model_copy(update={"style": style})})
        design = fp.design(pinned, "roce-v2", catalog)
        result = run_fleet(design, pinned, catalog, policy="packed", days=2, samples=2, alternatives=False)
        effect = {f.component: f for f in result.failures}

        def slowed(component: str, effect: dict = effect) -> str:
            f = effect.get(component)
            return "no such tier" if f is None else f"{f.jobs_slowed:.1f}, {f.pace_degraded:.0%}"

        leaf, nic = effect["leaf"], effect["nic"]
        planes = f" ({design.size.planes} planes)" if design.size.planes > 1 else ""
        rows.append(f"| {style.replace('_', '-')}{planes} on {design.hardware.switch.id} | {design.size.tiers} | "
                    f"{design.size.total_switches:,} | {leaf.jobs_stopped:.2f}, {leaf.gpus_stopped:,.0f}; "
                    f"{leaf.jobs_slowed:.2f} | "
                    f"{nic.gpus_stopped:,.0f} | {slowed('spine')} | {slowed('core')} |")
    return f"{DESIGNS_BEGIN}\n" + "\n".join(rows) + f"\n{DESIGNS_END}\n", []


def main(argv: list[str]) -> int:
    code = section_main(__doc__.splitlines()[0], BEGIN, END, render, ["--output", str(README), *argv])
    return code or section_main(__doc__.splitlines()[0], DESIGNS_BEGIN, DESIGNS_END, render_designs,
                                ["--output", str(README), *argv])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
