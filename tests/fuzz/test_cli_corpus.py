"""The CLI's own fuzz corpus (issue 31): one table of argv -> expected exit code for every command,
run in-process. For each row: no traceback, the exit code expected, no raw control byte anywhere in
the output (a file, host or scenario name holding ESC is printed escaped, as ``\\x1b``), and for a
refusal (exit 2) exactly one ``error:`` line on stderr naming the flag, file or field it expects.

Placeholders in a row: ``{ex}`` the examples folder, ``{fx}`` tests/fixtures, ``{d}`` a folder of
bad inputs made once for the module (``BAD_FILES``), ``{E}`` the ESC character. A new command gets
rows here; a new refusal of an existing one can too (the table is the list of what must hold).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ESC = "\x1b"
SPEC = "{ex}/llama70b-1024-h100.yaml"
SINGLE = "{ex}/single-node-8-inference.yaml"
GOOD_OPS = "{fx}/ops/good"

#: Bad inputs, written once into the module's folder: name -> text (bytes for non-UTF-8).
BAD_FILES: dict[str, str | bytes] = {
    f"bad{ESC}[31m.yaml": "cluster: [\n",
    "empty.yaml": "",
    "binary.yaml": b"\x00\xff\xfe",
    "control.yaml": "name: x\x1b[2J\n",
    "list.yaml": "- 1\n- 2\n",
    "escaped-name.json": '{"name": "a\\u001b[31mb", "cluster": {"gpu": "h100-sxm", "gpus": 16}}',
    "rtt-esc.csv": "time,src,dst,rtt_us\n" + "".join(f"{t},h{ESC}[31mA,hB,5\n" for t in range(5)),
    "overlay-rai.yaml": "perf_defaults: {parameters: {dcqcn_rai_mbps: {value: 1e300, source: a test, "
                        "date: 2024-01}}}\n",
    "overlay-rai-high.yaml": "perf_defaults: {parameters: {dcqcn_rai_mbps: {value: 50000000, source: a test, "
                             "date: 2024-01}}}\n",
    "overlay-share.yaml": "perf_defaults: {parameters: {tp_overlap_efficiency: {value: 1e300, source: a test, "
                          "date: 2024-01}}}\n",
    "overlay-gpu.yaml": "gpus: [{id: h100-sxm, hbm_gbytes: 1, source: a test, date: 2024-01}]\n",
    "lint-asic.yaml": "rules:\n  HDRM001:\n    asic: no-such-asic\n",
    "lint-asic-settings.yaml": "settings:\n  asic: no-such-asic\n",
    "sweep-draws.yaml": "name: s\nbase: {ex}/llama70b-1024-h100.yaml\naxes: {cluster.gpus: [512]}\n"
                        "draws: 1000000000000\n",
}

# (argv, exit code, what the one error line names: a flag, a file or a field; None for exit 0)
CORPUS: list[tuple[list[str], int, str | None]] = [
    # --- init, schema, catalog
    (["init", "{d}"], 2, "{d}"),
    (["init", "{d}/new{E}.yaml"], 0, None),
    (["schema", "--json", "extra"], 2, "extra"),
    (["schema", "--json"], 0, None),
    (["catalog", "show", "no{E}such"], 2, "no\\x1bsuch"),
    (["catalog", "list", "nosection"], 2, "nosection"),
    (["catalog", "list"], 0, None),
    # --- topology, cost: bad spec files and overlays
    (["topology", "missing{E}.yaml"], 2, "missing\\x1b.yaml"),
    (["topology", "{d}/bad{E}[31m.yaml"], 2, "bad\\x1b[31m.yaml:2:1"),
    (["topology", "{d}/empty.yaml"], 2, "empty.yaml"),
    (["topology", "{d}/binary.yaml"], 2, "binary.yaml:1"),
    (["topology", "{d}/control.yaml"], 2, "control.yaml"),
    (["topology", "{d}/list.yaml"], 2, "list.yaml"),
    (["topology", "{d}"], 2, "{d}"),
    (["topology", "{d}/escaped-name.json"], 2, "escaped-name.json:1:"),
    (["cost", SPEC, "--price-point", "cheap"], 2, "--price-point"),
    (["cost", SPEC, "--catalog", "{d}/bad{E}[31m.yaml"], 2, "bad\\x1b[31m.yaml"),
    (["cost", SPEC, "--catalog", "{d}/overlay-share.yaml"], 2,
     "overlay-share.yaml: perf_defaults: (top level): parameters.tp_overlap_efficiency"),
    # --- collective, step
    (["collective", "--op", "all_reduce", "--size", "1e30"], 2, "--size"),
    (["collective", "--op", "bogus", "--size", "1MB"], 2, "op"),
    (["collective", "--op", "all_reduce", "--size", "1MB", "--gpus", "0"], 2, "gpus"),
    (["collective", "--op", "all_reduce", "--size", "1MB", "--gpus", "99999999999999"], 2, "gpus"),
    (["collective", "--op", "all_reduce", "--size", "1MB", "--fabric", "x{E}y"], 2, "x\\x1by"),
    (["collective", "--op", "all_reduce", "--size", "1MB", "--nic-speed", "1e300G"], 2, "--nic-speed"),
    (["collective", "--op", "all_reduce", "--sweep-sizes", "8B:1e30"], 2, "--sweep-sizes"),
    (["collective", "--op", "all_reduce", "--size", "1MB", "--nics-per-gpu", "99999999"], 2, "nics-per-node"),
    (["collective", "--op", "all_reduce", "--size", "1MB"], 0, None),
    (["step", SPEC, "--fabric", "x{E}y"], 2, "--fabric"),
    (["step", SPEC, "--nccl-version", "9.9.9"], 2, "nccl_version"),
    # --- compare
    (["compare", SPEC, "--draws", "-1"], 2, "--draws"),
    (["compare", SPEC, "--draws", "99999999999"], 2, "--draws"),
    (["compare", SPEC, "--seed", "-5"], 2, "--seed"),
    (["compare", SPEC, "--efficiency-model", "nope"], 2, "--efficiency-model"),
    (["compare", SPEC, "--html", "{d}"], 2, "{d}"),
    (["compare", SINGLE, "--quick", "-q"], 0, None),
    (["compare", SPEC, "--quick", "-q", "--catalog", "{d}/overlay-gpu.yaml"], 2,
     "set by {d}/overlay-gpu.yaml: gpus[id=h100-sxm].hbm_gbytes"),
    # --- lint, headroom
    (["lint"], 2, "--nic"),
    (["lint", "--nic", "no{E}dir"], 2, "no\\x1bdir"),
    (["lint", "--switch", "{d}/binary.yaml"], 2, "binary.yaml:1"),
    (["lint", "--switch", "{d}/empty.yaml"], 2, "empty.yaml"),
    (["lint", "--nic", GOOD_OPS + "/nics", "--switch", GOOD_OPS + "/switches", "--cabling",
      GOOD_OPS + "/cabling.yaml", "--config", "{d}/lint-asic.yaml"], 2, "lint-asic.yaml:$.rules.HDRM001.asic"),
    (["lint", "--nic", GOOD_OPS + "/nics", "--switch", GOOD_OPS + "/switches", "--cabling",
      GOOD_OPS + "/cabling.yaml", "--config", "{d}/lint-asic-settings.yaml"], 2,
     "lint-asic-settings.yaml:$.settings.asic"),
    (["lint", "--nic", GOOD_OPS + "/nics", "--switch", GOOD_OPS + "/switches", "--fail-on", "bogus"], 2,
     "--fail-on"),
    (["headroom", "--speed", "1e300G", "--cable", "5m", "--mtu", "9100"], 2, "--speed"),
    (["headroom", "--speed", "400G", "--cable", "1e30m", "--mtu", "9100"], 2, "--cable"),
    (["headroom", "--speed", "400G", "--cable", "5m", "--mtu", "99999999999"], 2, "--mtu"),
    (["headroom", "--speed", "400G", "--cable", "5m", "--mtu", "9100", "--model", "sonic", "--asic", "x{E}y"], 2,
     "--asic"),
    (["headroom", "--speed", "400G", "--cable", "5m", "--mtu", "9100", "--model", "sonic", "--lanes", "999"], 2,
     "--lanes"),
    (["headroom", "--speed", "400G", "--cable", "5m", "--mtu", "9100"], 0, None),
    # --- health (files)
    (["health"], 2, "health"),
    (["health", "--ethtool", "no{E}file"], 2, "no\\x1bfile"),
    (["health", "--ethtool", "{d}/binary.yaml"], 2, "binary.yaml:1"),
    (["health", "--rtt", "{d}/rtt-esc.csv"], 2, "rtt-esc.csv:2"),
    (["health", "--telemetry", "{d}/binary.yaml"], 2, "binary.yaml"),
    (["health", "--prom-text", "{d}/empty.yaml"], 2, "empty.yaml"),
    (["health", "--rtt", "{fx}/health/rtt.csv", "--expected-rtt-us", "inf"], 2, "--expected-rtt-us"),
    (["health", "--prometheus", "http://127.0.0.1:1", "--start", "garbage"], 2, "--start"),
    (["health", "--prometheus", "http://127.0.0.1:1", "--step", "1e300s"], 2, "--step"),
    (["health", "--prometheus", "http://127.0.0.1:1", "--watch", "0s"], 2, "--watch"),
    (["health", "--jobs", "{d}/binary.yaml", "--rtt", "{fx}/health/rtt.csv"], 2, "binary.yaml:1"),
    # --- calibrate, check-measured
    (["calibrate", "no{E}log"], 2, "no\\x1blog"),
    (["calibrate", "{d}/binary.yaml"], 2, "binary.yaml"),
    (["calibrate", "{d}/empty.yaml"], 2, "empty.yaml"),
    (["check-measured", "{d}/binary.yaml", "--spec", SPEC], 2, "binary.yaml"),
    (["check-measured", "{fx}/measure/all_reduce_200g_nics_roce.log", "--spec", "no{E}spec"], 2, "no\\x1bspec"),
    (["check-measured", "{fx}/measure/ib_write_bw_ndr.log", "--spec", SPEC, "--threshold", "nan"], 2,
     "--threshold"),
    # --- sweep
    (["sweep", "run", "no{E}sweep"], 2, "no\\x1bsweep"),
    (["sweep", "run", "{d}/binary.yaml"], 2, "binary.yaml:1"),
    (["sweep", "run", "{d}/sweep-draws.yaml", "--out", "{d}/out.sweep", "-q"], 2, "sweep-draws.yaml: draws"),
    (["sweep", "report", "no{E}dir"], 2, "no\\x1bdir"),
    (["sweep", "report", "{d}"], 2, "{d}"),
    (["sweep", "schema", "extra"], 2, "extra"),
    (["sweep", "schema"], 0, None),
    # --- fleet
    (["fleet", SPEC, "--days", "1e300"], 2, "--days"),
    (["fleet", SPEC, "--samples", "99999999999"], 2, "--samples"),
    (["fleet", SPEC, "--seed", "-1"], 2, "--seed"),
    (["fleet", SPEC, "--qps", "0"], 2, "--qps"),
    (["fleet", SPEC, "--policy", "x{E}y"], 2, "--policy"),
    # --- dcqcn: every parameter bounded (issue 31)
    (["dcqcn", "--flows", "x", "--delay-us", "1"], 2, "--flows"),
    (["dcqcn", "--flows", "99999999999", "--delay-us", "10"], 2, "--flows"),
    (["dcqcn", "--flows", "8", "--delay-us", "1e300"], 2, "--delay-us"),
    (["dcqcn", "--flows", "8", "--delay-us", "10", "--link", "1e300G"], 2, "--link"),
    (["dcqcn", "--flows", "8", "--delay-us", "10", "--link", "1e300"], 2, "--link"),
    (["dcqcn", "--flows", "8", "--delay-us", "10", "--rai-mbps", "1e300"], 2, "--rai-mbps"),
    (["dcqcn", "--flows", "8", "--delay-us", "10", "--alpha-interval-us", "1e300"], 2, "--alpha-interval-us"),
    (["dcqcn", "--flows", "8", "--delay-us", "10", "--cnp-interval-us", "1e300"], 2, "--cnp-interval-us"),
    (["dcqcn", "--flows", "8", "--delay-us", "10", "--fast-recovery", "1e9"], 2, "--fast-recovery"),
    (["dcqcn", "--flows", "8", "--delay-us", "10", "--fast-recovery", "0.5"], 2, "--fast-recovery"),
    (["dcqcn", "--flows", "8", "--delay-us", "10", "--byte-counter-bytes", "1e300"], 2, "--byte-counter-bytes"),
    (["dcqcn", "--flows", "8", "--delay-us", "10", "--catalog", "{d}/overlay-rai.yaml"], 2,
     "overlay-rai.yaml: perf_defaults: (top level): parameters.dcqcn_rai_mbps"),
    (["dcqcn", "--flows", "8", "--delay-us", "10", "--catalog", "{d}/overlay-rai-high.yaml"], 2,
     "overlay-rai-high.yaml: perf_defaults.parameters.dcqcn_rai_mbps.value"),
    (["dcqcn", "--flows", "2", "--delay-us", "1e6", "--link", "100", "--fast-recovery", "1",
      "--byte-counter-bytes", "1e10", "--rate-timer-us", "1e5"], 2, "--byte-counter-bytes"),
    (["dcqcn", "--flows", "8", "--delay-us", "10"], 0, None),
    # --- simulate: every flag bounded, memory refused before allocating (issue 31)
    (["simulate", "incast", "--step-us", "1e-12"], 2, "--step-us"),
    (["simulate", "incast", "--step-us", "1e9"], 2, "--step-us"),
    (["simulate", "incast", "--seed", "-1"], 2, "--seed"),
    (["simulate", "incast", "--flow-size", "1e30MB"], 2, "--flow-size"),
    (["simulate", "incast", "--link-latency-us", "inf"], 2, "--link-latency-us"),
    (["simulate", "incast", "--mtu", "99999999"], 2, "--mtu"),
    (["simulate", "incast", "--qps", "99999"], 2, "--qps"),
    (["simulate", "incast", "--senders", "0"], 2, "--senders"),
    (["simulate", "incast", "--max-time-ms", "1e9"], 2, "--max-time-ms"),
    (["simulate", "incast", "--k", "100000"], 2, "--k"),
    (["simulate", "incast", "--k", "100000", "--hosts", "10"], 2, "--k"),
    (["simulate", "alltoall", "--k", "8", "--step-us", "0.01", "--link-latency-us", "1000", "--max-time-ms", "1"], 2,
     "--step-us, --link-latency-us: the simulation state would take"),
    (["simulate", "incast", "--spec", SINGLE], 2, "single-node-8-inference.yaml"),
    (["simulate", "incast", "--spec", "{d}/bad{E}[31m.yaml"], 2, "bad\\x1b[31m.yaml"),
    (["simulate", "inc{E}ast"], 2, "scenario"),
]

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@pytest.fixture(scope="module")
def bad_inputs(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("corpus")
    for name, content in BAD_FILES.items():
        target = folder / name
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content.replace("{ex}", str(ROOT / "examples")))
    return folder


def _filled(text: str, folder: Path) -> str:
    return (text.replace("{ex}", str(ROOT / "examples")).replace("{fx}", str(ROOT / "tests" / "fixtures"))
            .replace("{d}", str(folder)).replace("{E}", ESC))


def _id(row: tuple[list[str], int, str | None]) -> str:
    return " ".join(row[0]).replace(ESC, "ESC").replace("{ex}/", "").replace("{fx}/", "").replace("{d}/", "")[:70]


@pytest.mark.parametrize("row", CORPUS, ids=[_id(r) for r in CORPUS])
def test_corpus_row(cli, bad_inputs, monkeypatch, row):
    argv, code, names = row
    monkeypatch.chdir(bad_inputs)  # relative names (missing files, init targets) land in the folder
    result = cli(*[_filled(a, bad_inputs) for a in argv])
    text = result.out + result.err
    assert "Traceback" not in text, text
    assert not _CONTROL.search(text.replace("\n", "").replace("\t", "")), repr(text[-300:])
    assert result.code == code, (result.code, result.err[-500:])
    if code == 2:
        lines = result.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), result.err
        assert _filled(names, bad_inputs).replace(ESC, "\\x1b") in lines[0], lines[0]


def test_every_command_has_rows():
    """Each top-level command of the app appears in the corpus (a new command needs its rows)."""
    from fabricplan.cli.app import COMMAND_MODULES

    covered = {argv[0] for argv, _code, _names in CORPUS}
    assert set(COMMAND_MODULES) <= covered, sorted(set(COMMAND_MODULES) - covered)
