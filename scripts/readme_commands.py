"""The figures the README and the docs quote from runs, each from a run of the command that gives it.

    python scripts/readme_commands.py            # rewrite every generated part of README.md and docs/*.md
    python scripts/readme_commands.py --check    # exit 1 and name the parts that have drifted

Three forms, each owned by this script (tests/report/test_readme_commands.py renders them again
and fails when a document has drifted):

* a command block: ``<!-- BEGIN command NAME (scripts/readme_commands.py) -->`` ... ``<!-- END
  command NAME -->`` around a console block of ``$ fabricplan ARGS`` and what the command printed at
  80 columns, whole or abridged to some of its lines (``...`` where lines were left out);
* a table: ``<!-- BEGIN table NAME (scripts/readme_commands.py) -->`` ... ``<!-- END table NAME
  -->``, a Markdown table built from ``--json`` documents;
* an inline figure in prose: ``<!-- fig NAME -->VALUE<!-- /fig -->`` (the comment is invisible
  on GitHub), where VALUE is a number, a fabric or a short sentence taken from a ``--json``
  document of a command named in ``FIGURES`` (the catalog's counts and the latency table read the
  bundled catalog through the package's own functions).

A figure whose name the script does not know is an error, so no quoted run figure is left unchecked
by a typo. Every ``--json`` document comes from the CLI (``python -m fabricplan.cli.app ... --json``),
so the figures are what a user running the command gets.
"""

from __future__ import annotations

import functools
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _sections import run_fabricplan  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: the documents whose generated parts this script owns
DOCUMENTS = (README, ROOT / "docs" / "calibration.md", ROOT / "docs" / "network-engineers.md",
             ROOT / "docs" / "performance.md")

MID128 = "examples/mid-128-h100-existing-ethernet.yaml"
ESTATE = "examples/mid-256-a100-100g-estate.yaml"
GPT3_96 = "tests/fixtures/layouts/gpt3-175b-96-h100.yaml"
MEASURED = ("tests/fixtures/measure/all_reduce_200g_nics_roce.log", "--spec",
            "tests/fixtures/measure/cluster_roce_2x8_h100.yaml")


@dataclass(frozen=True)
class Command:
    """A command block: the arguments of ``fabricplan``, and which of its output lines to show.

    ``parts``: ``None`` for the whole output, else the parts shown (``excerpt``), joined by ``...``.
    ``mask``: (regular expression, replacement) applied to the output, for what differs between
    runs of the same inputs (a wall-clock time)."""

    args: tuple[str, ...]
    parts: tuple[tuple[int | str, int | str], ...] | None = None
    mask: tuple[tuple[str, str], ...] = ()
    document: Path = README
    exit_codes: tuple[int, ...] = (0,)


#: name -> the command block
COMMANDS: dict[str, Command] = {
    "collective-100g": Command(("collective", "--op", "all_reduce", "--size", "8GiB", "--gpus", "16", "--gpu",
                                "a100-sxm-80gb", "--fabric", "roce-v2", "--nic-speed", "100G", "--nics-per-gpu",
                                "2")),
    "compare-mid128": Command(("compare", MID128), parts=((0, "bold green"), ("╭─ Recommendation", "│ Why not the others:"),
                                                          ("╰─", 1), ("Uncertainty:", "Designs considered"),
                                                          ("What would change", "option:")),
                              exit_codes=(0, 1)),
    "cost-mid128": Command(("cost", MID128), parts=((0, "Links by reach"),)),
    "headroom-400g": Command(("headroom", "--speed", "400G", "--cable", "30m", "--mtu", "9216")),
    "headroom-400g-engineers": Command(("headroom", "--speed", "400G", "--cable", "30m", "--mtu", "9216"),
                                       document=ROOT / "docs" / "network-engineers.md"),
    "health-storm": Command(("health", "--ethtool", "tests/fixtures/health/ethtool_storm.txt", "--hw-counters",
                             "tests/fixtures/health/hw_counters_node01.txt"),
                            parts=((0, 3), ("  WARNING RETX001", 2)), exit_codes=(0, 1)),
    "check-measured-200g": Command(("check-measured", *MEASURED), parts=((0, 2),), exit_codes=(0, 1)),
    "check-measured-200g-causes": Command(("check-measured", *MEASURED), parts=((0, 2), ("Likely causes", 7)),
                                          exit_codes=(0, 1), document=ROOT / "docs" / "calibration.md"),
    "calibrate-hdr": Command(("calibrate", "tests/fixtures/measure/all_reduce_debug_2x8_a100_hdr.log", "--fabric",
                              "infiniband-hdr"), parts=((0, 2), ("Residuals per row", 1)),
                             document=ROOT / "docs" / "calibration.md"),
    "lint-broken": Command(("lint", "--nic", "tests/fixtures/ops/good/nics/gpu01_eth2", "--nic",
                            "tests/fixtures/ops/broken/nic_buffer_too_small/nics/gpu02_eth2.nic", "--nic",
                            "tests/fixtures/ops/good/nics/gpu03_eth2.nic", "--switch",
                            "tests/fixtures/ops/broken/pfc_mismatch/switches/leaf01/config_db.json", "--cabling",
                            "tests/fixtures/ops/good/cabling.yaml"), exit_codes=(1,),
                           document=ROOT / "docs" / "network-engineers.md"),
    "dcqcn-40g": Command(("dcqcn", "--flows", "10", "--delay-us", "85", "--link", "40G")),
    "simulate-incast": Command(("simulate", "incast", "--k", "16", "--senders", "64", "--flow-size", "1MB",
                                "--cc", "dcqcn", "--pfc", "on"),
                               mask=((r"\([0-9.]+ s wall\)", "(… s wall)"),)),
    "step-gpt3-96": Command(("step", GPT3_96, "--fabric", "infiniband-ndr"),
                            document=ROOT / "docs" / "performance.md"),
    "step-serving": Command(("step", "examples/inference-512-h100-disaggregated.yaml", "--fabric", "roce-v2",
                             "--fabric", "ethernet-tcp")),
}


@functools.cache
def _output(args: tuple[str, ...], exit_codes: tuple[int, ...] = (0,), stdin: str | None = None) -> str:
    """What ``fabricplan ARGS`` prints on stdout (the exit code must be one of ``exit_codes``; ``stdin``:
    the text on its standard input, for a spec given as ``-``)."""
    return run_fabricplan(args, exit_codes, stdin)


def run(args: tuple[str, ...], exit_codes: tuple[int, ...] = (0,)) -> str:
    """What ``fabricplan ARGS`` prints at 80 columns, trailing spaces removed."""
    out = _output(tuple(args), tuple(exit_codes))
    return "\n".join(line.rstrip() for line in out.splitlines()).strip("\n")


@functools.cache
def document(*args: str, stdin: str | None = None) -> dict:
    """The ``--json`` document of ``fabricplan ARGS`` (exit 0 or 1: a verdict is still a document)."""
    return json.loads(_output((*args, "--json"), (0, 1), stdin))


@functools.cache
def pinned(spec: str, style: str) -> str:
    """The text of the spec file ``spec`` with ``topology.style`` set to ``style`` (for ``SPEC -``)."""
    import yaml

    data = yaml.safe_load((ROOT / spec).read_text(encoding="utf-8"))
    data.setdefault("topology", {})["style"] = style
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def _start(lines: list[str], first: int | str, after: int) -> int:
    if isinstance(first, int):
        return first
    found = next((i for i, line in enumerate(lines) if i >= after and line.startswith(first)), None)
    if found is None:
        raise ValueError(f"no line starting with {first!r} in the output")
    return found


def excerpt(lines: list[str], parts: tuple[tuple[int | str, int | str], ...]) -> list[str]:
    """The lines of ``parts``, ``...`` between and after them where lines were left out. A part is (its
    first line, its length): the first line by index or by the text it starts with; the length as a
    number of lines or as the text the first line after the part starts with."""
    out: list[str] = []
    end = 0
    for first, length in parts:
        start = _start(lines, first, end)
        stop = start + length if isinstance(length, int) else _start(lines, length, start + 1)
        if out and start > end:
            out.append("...")
        out.extend(lines[start:stop])
        end = stop
    if end < len(lines):
        out.append("...")
    return out


def markers(name: str, kind: str = "command") -> tuple[str, str]:
    """The BEGIN and END markers of a generated part (``kind``: command or table)."""
    return f"<!-- BEGIN {kind} {name} (scripts/readme_commands.py) -->", f"<!-- END {kind} {name} -->"


def shown(args: tuple[str, ...]) -> str:
    """The command line as the README shows it, wrapped under 100 characters with ``\\``."""
    words, lines, line = ["$", "fabricplan", *args], [], ""
    for word in words:
        if line and len(line) + len(word) + 1 > 96:
            lines.append(line + " \\")
            line = "     "
        line = f"{line} {word}" if line.strip() else f"{line}{word}"
    return "\n".join(lines + [line])


def command_output(command: Command) -> str:
    """The command's output as shown: masked, then abridged."""
    text = run(command.args, command.exit_codes)
    for pattern, replacement in command.mask:
        text = re.sub(pattern, replacement, text)
    lines = text.splitlines()
    if command.parts is not None:
        lines = excerpt(lines, command.parts)
    return "\n".join(lines)


def block(name: str) -> str:
    begin, end = markers(name)
    command = COMMANDS[name]
    return f"{begin}\n```\n{shown(command.args)}\n{command_output(command)}\n```\n{end}"


# --- inline figures ------------------------------------------------------------------------------


def pct(share: float, digits: int = 1) -> str:
    """A share as a percentage with a space before the sign, as the README writes them (0.118 -> 11.8 %)."""
    return f"{100 * share:.{digits}f} %"


def _fabric(doc: dict, fabric: str) -> dict:
    return next(f for f in doc["fabrics"] if f["fabric"] == fabric)


def _job(doc: dict, fabric: str, job: str) -> dict:
    return next(j for j in _fabric(doc, fabric)["jobs"] if j["job"] == job)


def _compare(spec: str = MID128) -> dict:
    return document("compare", spec)


def _recommended(doc: dict) -> dict:
    return _fabric(doc, doc["recommendation"]["recommended"])


def _runner_up(doc: dict) -> dict:
    return _fabric(doc, doc["recommendation"]["ranking"][1])


def _gap(doc: dict, fabric: str) -> float:
    """How much more ``fabric`` costs per useful GPU-hour than the recommended one (a share)."""
    return _fabric(doc, fabric)["cost_per_useful_gpu_hour_usd"] / _recommended(doc)["cost_per_useful_gpu_hour_usd"] - 1


def _verdict(doc: dict) -> str:
    rec = doc["recommendation"]
    share = pct(doc["uncertainty"]["fabrics"][rec["recommended"]]["probability_best"], 0)
    kind = "a close call" if rec["close_call"] else "a clear numeric winner"
    return f"{rec['recommended']} is the cheapest per useful GPU-hour in {share} of the draws, {kind}"


def _step(spec: str, fabric: str) -> dict:
    return document("step", spec, "--fabric", fabric)["results"][0]


def _exposed_share(doc: dict, fabric: str, job: str) -> float:
    return _job(doc, fabric, job)["exposed_comm_share"]


#: name -> a function of nothing giving the figure's text (each reads ``--json`` documents)
FIGURES: dict[str, Callable[[], str]] = {
    "mid128-verdict": lambda: _verdict(_compare()),
    "mid128-runner-up": lambda: (f"{_runner_up(_compare())['fabric']} is "
                                 f"{pct(_gap(_compare(), _runner_up(_compare())['fabric']))} dearer"),
    "mid128-tcp-ft-exposed": lambda: pct(_exposed_share(_compare(), "ethernet-tcp", "llama3-8b-finetune")),
    "mid128-tcp-70b-exposed": lambda: pct(_exposed_share(_compare(), "ethernet-tcp", "llama3-70b-train")),
    "mid128-tcp-utilisation-gap": lambda: (
        f"{100 * (_recommended(_compare())['weighted_gpu_utilisation'] - _fabric(_compare(), 'ethernet-tcp')['weighted_gpu_utilisation']):.1f}"
        " points"),
    "mid128-tcp-tco": lambda: pct(1 - _fabric(_compare(), "ethernet-tcp")["tco_usd"]
                                  / _recommended(_compare())["tco_usd"], 1),
    "mid128-tcp-gap": lambda: pct(_gap(_compare(), "ethernet-tcp")),
    "estate-exposed": lambda: pct(_fabric(_compare(ESTATE), "roce-v2")["jobs"][0]["exposed_comm_share"]),
    "estate-gap": lambda: pct(_gap(_compare(ESTATE), "infiniband-ndr")),
    "gpt3-96-step": lambda: f"{_step(GPT3_96, 'infiniband-ndr')['step_time_s']:.1f} s",
    "gpt3-96-mfu": lambda: pct(_step(GPT3_96, "infiniband-ndr")["mfu"]),
}

FIGURE = re.compile(r"<!-- fig ([a-z0-9-]+) -->(.*?)<!-- /fig -->", re.DOTALL)


@functools.cache
def figure(name: str) -> str:
    if name not in FIGURES:
        raise KeyError(f"unknown figure {name!r} (scripts/readme_commands.py FIGURES)")
    return FIGURES[name]()


# --- rendering -----------------------------------------------------------------------------------

def _share(price_point: str, style: str) -> dict[str, float]:
    """Network share of cluster capex per fabric of the 128-GPU example with ``style`` pinned."""
    doc = document("cost", "-", "--price-point", price_point, stdin=pinned(MID128, style))
    return {f["fabric"]: f["network_share_of_cluster_capex"] for f in doc["fabrics"]}


SHARE_ROWS = (("low", "rail_optimized"), ("default", "rail_optimized"), ("high", "rail_optimized"),
              ("default", "leaf_spine"))
SHARE_FABRICS = (("ethernet-tcp", "Ethernet TCP"), ("roce-v2", "RoCEv2"), ("infiniband-ndr", "InfiniBand NDR"))


def network_share_table() -> str:
    """The seed's network-share claim against ``cost`` at each price point and style (README)."""
    lines = ["| price point | style | " + " | ".join(name for _, name in SHARE_FABRICS) + " |",
             "|---|---|" + "---|" * len(SHARE_FABRICS)]
    for price_point, style in SHARE_ROWS:
        share = _share(price_point, style)
        label = {"rail_optimized": "rail-optimised", "leaf_spine": "leaf-spine (ToR, DAC)"}[style]
        lines.append(f"| {price_point} | {label} | " + " | ".join(pct(share[f]) for f, _ in SHARE_FABRICS) + " |")
    return "\n".join(lines)


def _share_range(fabric: str, style: str = "rail_optimized") -> str:
    values = [_share(p, s)[fabric] for p, s in SHARE_ROWS if s == style]
    return f"{100 * min(values):.1f}–{pct(max(values))}"


FIGURES.update({
    "share-roce-rail": lambda: _share_range("roce-v2"),
    "share-ib-rail": lambda: _share_range("infiniband-ndr"),
    "share-ib-leaf-spine": lambda: pct(_share("default", "leaf_spine")["infiniband-ndr"]),
})

def _send_recv(fabric: str) -> dict:
    """``collective`` of an 8-byte send/recv between two 8-GPU nodes on ``fabric``."""
    return document("collective", "--op", "send_recv", "--size", "8B", "--gpus", "16", "--fabric", fabric)


def _quick(spec: str) -> dict:
    """``compare --quick --draws 0``: the point estimate only (goodput and designs need no draws)."""
    return document("compare", spec, "--quick", "--draws", "0")


def _goodput(spec: str) -> str:
    job = _recommended(_quick(spec))["jobs"][0]
    return f"{100 * job['goodput']:.0f} %"


def _interruptions(spec: str) -> str:
    return f"{_recommended(_quick(spec))['jobs'][0]['interruptions_per_day']:.1f}"


def _longest_run(spec: str) -> tuple[float, str, str]:
    """The longest cable run of any fabric's design of ``spec`` (metres, fabric, tier)."""
    runs = [(m["run_m"], f["fabric"], m["tier"], m["medium"]) for f in document("cost", spec)["fabrics"]
            for m in f["link_media"]]
    return max(runs)


def _catalog_numbers() -> str:
    """How many numbers the bundled catalog holds and how their ranges are given (catalog/spread.py)."""
    from collections import Counter

    sys.path.insert(0, str(ROOT / "src"))
    from fabricplan.catalog import load_catalog
    from fabricplan.catalog.spread import numbers

    found = list(numbers(load_catalog()))
    kinds = Counter(number.kind for number in found)
    return (f"~{round(len(found), -2):,} numbers ({kinds['source']:,} ranged from sources, "
            f"{kinds['confidence']:,} by stated confidence, the rest exact)")


LATENCY_CLAIMS = (("infiniband-ndr", "0.5–1 µs"), ("roce-v2", "1–3 µs"), ("ethernet-tcp", "–"))
HOP_CLASSES = ("same_leaf", "same_pod", "cross_core")


@functools.cache
def _latencies(fabric: str) -> tuple[float, ...]:
    """One-way 8-byte latency of ``fabric`` on its default switch per hop class [us] (perf/latency.py)."""
    sys.path.insert(0, str(ROOT / "src"))
    from fabricplan.catalog import load_catalog
    from fabricplan.perf.latency import point_to_point_latency

    catalog = load_catalog()
    profile = catalog.fabric(fabric)
    ns = catalog.switch(profile.hardware.switch).port_to_port_latency_ns
    return tuple(point_to_point_latency(profile, ns, hop, catalog=catalog).total_us for hop in HOP_CLASSES)


def _latency_table() -> str:
    """One-way 8-byte latency per fabric and hop class, against the seed's claims (README)."""
    lines = ["| fabric | seed claim | same leaf | same pod (3 switches) | across core (5 switches) |",
             "|---|---|---:|---:|---:|"]
    for fabric, claim in LATENCY_CLAIMS:
        lines.append(f"| {fabric} | {claim} | " + " | ".join(f"{c:.2f} µs" for c in _latencies(fabric)) + " |")
    return "\n".join(lines)


def _latency_range(fabric: str) -> str:
    """The one-way 8-byte latency of ``fabric`` from one leaf to across the core (the table's row)."""
    return f"{_latencies(fabric)[0]:.1f}–{_latencies(fabric)[-1]:.1f} µs"


def _verdict_line(*args: str) -> str:
    """The verdict ``check-measured ARGS`` prints first (its wrapped lines joined)."""
    lines = run(("check-measured", *args), (0, 1)).splitlines()
    return " ".join(line.strip() for line in lines[:lines.index(next(x for x in lines if x.startswith("all-reduce")))])


FIGURES.update({
    "slow-host-verdict": lambda: _verdict_line("tests/fixtures/measure/all_reduce_slow_host_roce.log", "--spec",
                                               "tests/fixtures/measure/cluster_roce_2x8_h100.yaml"),
    "catalog-numbers": _catalog_numbers,
    "ib-latency-range": lambda: _latency_range("infiniband-ndr"),
    "goodput-1024": lambda: _goodput("examples/llama70b-1024-h100.yaml"),
    "goodput-16k": lambda: _goodput("examples/llama405b-16k-h100.yaml"),
    "interruptions-16k": lambda: _interruptions("examples/llama405b-16k-h100.yaml"),
    "run-16k": lambda: "{1}'s {2} runs, {0:.0f} m, on {3}".format(*_longest_run(
        "examples/llama405b-16k-h100.yaml")).replace("leaf_spine", "leaf-spine"),
    "run-1024": lambda: f"{_longest_run('examples/llama70b-1024-h100.yaml')[0]:.0f} m",
    "tcp-per-nic": lambda: f"{_send_recv('ethernet-tcp')['per_nic_bandwidth_gbytes_per_s']:.1f} GB/s",
    "rdma-per-nic": lambda: "{:.0f}–{:.0f}".format(*sorted(
        _send_recv(f)["per_nic_bandwidth_gbytes_per_s"] for f in ("infiniband-ndr", "roce-v2"))),
    "send-recv-8b": lambda: (f"InfiniBand {_send_recv('infiniband-ndr')['time_us']:.2f} µs, "
                             f"RoCE {_send_recv('roce-v2')['time_us']:.2f} µs, "
                             f"TCP {_send_recv('ethernet-tcp')['time_us']:.1f} µs"),
})

#: name -> (document, a function giving the table's Markdown)
TABLES: dict[str, tuple[Path, Callable[[], str]]] = {
    "network-share": (README, network_share_table),
    "latency": (README, _latency_table),
}


def _replace(text: str, path: Path, begin: str, end: str, section: Callable[[], str]) -> str:
    if begin not in text or end not in text:
        raise ValueError(f"{path.name}: no {begin} ... {end} (scripts/readme_commands.py owns it)")
    start, stop = text.index(begin), text.index(end) + len(end)
    return text[:start] + section() + text[stop:]


def render(text: str, path: Path = README) -> str:
    """``text`` (the document at ``path``) with every generated part it owns rendered again."""
    for name, command in COMMANDS.items():
        if command.document == path:
            text = _replace(text, path, *markers(name), lambda name=name: block(name))
    for name, (where, table) in TABLES.items():
        if where == path:
            begin, end = markers(name, "table")
            text = _replace(text, path, begin, end, lambda b=begin, e=end, t=table: f"{b}\n{t().rstrip()}\n{e}")
    return FIGURE.sub(lambda m: f"<!-- fig {m.group(1)} -->{figure(m.group(1))}<!-- /fig -->", text)


def drifted() -> list[str]:
    """The documents whose generated parts are not what the commands give today."""
    return [str(path.relative_to(ROOT)) for path in DOCUMENTS
            if render(path.read_text(encoding="utf-8"), path) != path.read_text(encoding="utf-8")]


def main(argv: list[str]) -> int:
    if "--check" in argv:
        stale = drifted()
        for name in stale:
            print(f"drifted: {name}", file=sys.stderr)
        return 1 if stale else 0
    from fabricplan.io import write_text_atomic

    for path in DOCUMENTS:
        text = path.read_text(encoding="utf-8")
        new = render(text, path)
        if new != text:
            write_text_atomic(path, new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
