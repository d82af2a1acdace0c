"""Benchmark: lint a 2,048-port RoCE fabric (64 SONiC leaf config_db files + 2,048 NIC dumps).

Run by hand: ``python benchmarks/bench_lint.py [--switches 64] [--ports 32] [--repeat 3]``.
Generates the fabric in a temporary directory from the good test fixture (so it should lint
clean), then times reading + linting through the same code path as ``fabricplan lint --json``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import tempfile
import time
from pathlib import Path

from fabricplan.cli.app import run

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "ops" / "good"


def _switch_db(template: dict, name: str, ports: list[str]) -> dict:
    src = "Ethernet0"
    db = json.loads(json.dumps({k: v for k, v in template.items()}))
    db["DEVICE_METADATA"]["localhost"]["hostname"] = name
    for table in ("PORT", "PORT_QOS_MAP", "PFC_WD"):
        row = template[table][src]
        db[table] = {k: v for k, v in template[table].items() if k == "GLOBAL"}
        for port in ports:
            db[table][port] = dict(row)
    for table in ("QUEUE", "BUFFER_PG", "BUFFER_QUEUE"):
        rows = {k.split("|", 1)[1]: v for k, v in template[table].items() if k.startswith(src + "|")}
        db[table] = {f"{port}|{idx}": dict(v) for port in ports for idx, v in rows.items()}
    db["CABLE_LENGTH"] = {"AZURE": {port: "5m" for port in ports}}
    return db


def generate(root: Path, switches: int, ports_per_switch: int) -> tuple[Path, Path, Path]:
    template = json.loads((FIXTURE / "switches/leaf01/config_db.json").read_text())
    nic_template = (FIXTURE / "nics/gpu02_eth2.nic").read_text()
    sw_dir, nic_dir = root / "switches", root / "nics"
    sw_dir.mkdir()
    nic_dir.mkdir()
    links = ["links:"]
    ports = [f"Ethernet{4 * i}" for i in range(ports_per_switch)]
    host = 0
    for s in range(switches):
        leaf = f"leaf{s + 1:02d}"
        (sw_dir / leaf).mkdir()
        (sw_dir / leaf / "config_db.json").write_text(json.dumps(_switch_db(template, leaf, ports), indent=4))
        for port in ports:
            host += 1
            name = f"gpu{host:04d}:eth2"
            (nic_dir / f"gpu{host:04d}_eth2.nic").write_text(nic_template.replace("### nic gpu02:eth2", f"### nic {name}"))
            links += [f"  - nic: {name}", f"    switch: {leaf}:{port}", "    length_m: 5"]
    cabling = root / "cabling.yaml"
    cabling.write_text("\n".join(links) + "\n")
    return nic_dir, sw_dir, cabling


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--switches", type=int, default=64)
    parser.add_argument("--ports", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=3)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        nic_dir, sw_dir, cabling = generate(root, opts.switches, opts.ports)
        generated = time.perf_counter() - t0
        n_ports = opts.switches * opts.ports
        size_mb = sum(f.stat().st_size for f in root.rglob("*") if f.is_file()) / 1e6
        timings = []
        for _ in range(opts.repeat):
            out, err = io.StringIO(), io.StringIO()
            t0 = time.perf_counter()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = run(["lint", "--nic", str(nic_dir), "--switch", str(sw_dir), "--cabling", str(cabling), "--json"])
            timings.append(time.perf_counter() - t0)
            summary = json.loads(out.getvalue())["summary"]
        print(f"fabric: {opts.switches} switches x {opts.ports} ports = {n_ports} links, "
              f"{n_ports} NIC dumps, {size_mb:.1f} MB of input (generated in {generated:.1f} s)")
        print(f"fabricplan lint --json: exit {code}, {summary['links']} links, "
              f"{summary['error']} errors, {summary['warning']} warnings")
        print(f"wall time over {opts.repeat} runs: best {min(timings):.2f} s, "
              f"mean {sum(timings) / len(timings):.2f} s "
              f"({platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()
