"""Benchmark: `fabricplan health` on 2,048 RoCE ports x 24 h at 15 s resolution, from files.

Run by hand: ``python benchmarks/bench_health.py [--ports 2048] [--hours 24] [--step 15] [--repeat 3]``.

Generates, per port, the counters the checks read (rx_prio3_pause_duration, rx_prio3_pause,
tx_prio3_pause, rx_discards_phy, tx_vport_rdma_unicast_packets, packet_seq_err, np_cnp_sent,
link_down_events_phy: 8 counters, 5,760 readings each at 15 s over 24 h), with a PFC storm on one
port in 64 and a retransmit burst on another, and saves them as the ``.npz`` that
``--save-telemetry`` writes. Times ``fabricplan health --telemetry FILE --json`` end to end
(read + evaluate + JSON) in-process, and (``--text-ports N``) the same evaluation from ethtool
text snapshots of N ports, to give the text readers' throughput. With ``--model`` (default) also
against the design of examples/mid-128-h100-existing-ethernet.yaml (roce-v2): ``--load 0.6`` (one
simulator run), and from byte counters (``tx/rx_bytes_phy`` added, each port at its own load from
5 to 90 %, so every load bucket is simulated once: the worst case).
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

import numpy as np

from fabricplan.cli.app import run
from fabricplan.ops.telemetry import Series, Telemetry, save_npz

COUNTERS = (("rx_pause_duration", 3), ("rx_pause", 3), ("tx_pause", 3), ("rx_discards_phy", None),
            ("tx_vport_rdma_unicast_packets", None), ("packet_seq_err", None), ("np_cnp_sent", None),
            ("link_down_events_phy", None))


SPEC = Path(__file__).resolve().parents[1] / "examples" / "mid-128-h100-existing-ethernet.yaml"
LINK_BYTES_PER_S = 400e9 / 8  # the roce-v2 design of SPEC: 400 Gb/s ports


def generate(ports: int, hours: float, step_s: float, seed: int = 15, byte_counters: bool = False
             ) -> tuple[Telemetry, int]:
    rng = np.random.default_rng(seed)
    n = int(hours * 3600 / step_s)
    t = 1796112000.0 + np.arange(n) * step_s
    series = []
    for p in range(ports):
        host, dev = f"gpu{p // 8:04d}", f"mlx5_{p % 8}"
        slopes = {"rx_pause_duration": rng.uniform(0, 2000, n), "rx_pause": rng.uniform(0, 5, n),
                  "tx_pause": np.zeros(n), "rx_discards_phy": np.zeros(n),
                  "tx_vport_rdma_unicast_packets": rng.uniform(0.9e6, 1.1e6, n),
                  "packet_seq_err": rng.uniform(0, 5, n), "np_cnp_sent": rng.uniform(0, 500, n),
                  "link_down_events_phy": np.zeros(n)}
        if p % 64 == 1:  # a 2-minute PFC storm
            slopes["rx_pause_duration"][n // 2:n // 2 + 8] = 1e6
        if p % 64 == 2:  # a retransmit burst: 0.05 %
            slopes["packet_seq_err"][n // 3:n // 3 + 20] = 500
        counters = COUNTERS
        if byte_counters:  # each port at its own load, 5-90 % of 400 Gb/s: every load bucket is used
            load = 0.05 + 0.85 * (p % 97) / 96
            slopes["tx_bytes_phy"] = rng.uniform(0.95, 1.05, n) * load * LINK_BYTES_PER_S
            slopes["rx_bytes_phy"] = rng.uniform(0.95, 1.05, n) * load * LINK_BYTES_PER_S * 0.9
            counters = COUNTERS + (("tx_bytes_phy", None), ("rx_bytes_phy", None))
        for counter, prio in counters:
            values = np.concatenate(([0.0], np.cumsum(np.round(slopes[counter][1:] * step_s))))
            series.append(Series(counter, host, dev, "1", prio, t, values, "bench"))
    return Telemetry(series, ["bench"]), n


def _ethtool_text(telemetry: Telemetry, ports: int) -> str:
    by_port: dict[str, list[Series]] = {}
    for s in telemetry.series:
        by_port.setdefault(s.entity, []).append(s)
    out = []
    for entity in list(by_port)[:ports]:
        group = by_port[entity]
        host, rest = entity.split(":")
        dev = rest.split("/")[0]
        for i, ts in enumerate(group[0].t_s):
            out.append(f"# time={ts:.0f} host={host} device=eth{dev[-1]} rdma={dev}/1\nNIC statistics:\n")
            for s in group:
                name = s.counter if s.priority is None else s.counter.replace("_", f"_prio{s.priority}_", 1)
                out.append(f"     {name}: {s.values[i]:.0f}\n")
    return "".join(out)


def _time(args: list[str], parse: bool = True) -> tuple[float, int, dict]:
    from fabricplan.sim import load

    load._MEMO.clear()  # every timed run pays for its own simulator runs
    sink = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(sink):
        code = run(args)
    if code not in (0, 1):
        raise SystemExit(f"fabricplan {' '.join(args)} exited {code}")
    return time.perf_counter() - start, code, json.loads(sink.getvalue()) if parse else {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ports", type=int, default=2048)
    parser.add_argument("--hours", type=float, default=24.0)
    parser.add_argument("--step", type=float, default=15.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--model", action=argparse.BooleanOptionalAction, default=True,
                        help="also time --spec (against the model): with --load, and with byte counters")
    parser.add_argument("--text-ports", type=int, default=4)  # 4 ports x 24 h of ethtool text is ~8 MB (10 MiB a file)
    args = parser.parse_args()
    telemetry, n = generate(args.ports, args.hours, args.step)
    values = sum(len(s.values) for s in telemetry.series)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fabric.npz"
        save_npz(telemetry, str(path))
        size_mb = os.path.getsize(path) / 1e6
        del telemetry
        times, text_times = [], []
        for _ in range(args.repeat):
            seconds, code, doc = _time(["health", "--telemetry", str(path), "--json"])
            times.append(seconds)
            text_times.append(_time(["health", "--telemetry", str(path)], parse=False)[0])
        found = sorted({(f["rule"]) for f in doc["findings"]})
        print(f"{args.ports:,} ports x {n:,} readings ({args.hours:g} h at {args.step:g} s), {len(COUNTERS)} counters "
              f"per port = {values:,} values; .npz {size_mb:,.0f} MB")
        print(f"health --telemetry (text report): best {min(text_times):.2f} s, median "
              f"{sorted(text_times)[len(text_times) // 2]:.2f} s of {args.repeat}")
        print(f"health --telemetry --json: best {min(times):.2f} s, median {sorted(times)[len(times) // 2]:.2f} s "
              f"of {args.repeat} (exit {code}; findings {doc['summary']['error']} errors, "
              f"{doc['summary']['warning']} warnings: {', '.join(found)}; "
              f"{doc['summary']['ports_with_findings']} ports)")
        if args.model:
            spec = ["--spec", str(SPEC), "--fabric", "roce-v2"]
            loaded, _n = generate(args.ports, args.hours, args.step, byte_counters=True)
            bytes_path = Path(tmp) / "fabric_bytes.npz"
            save_npz(loaded, str(bytes_path))
            del loaded
            for label, extra, source in (("--load 0.6", ["--load", "0.6"], path),
                                         ("load from byte counters (10 counters a port, each port at 5-90 %)", [],
                                          bytes_path)):
                # cold: an empty simulator cache (every load bucket simulated); warm: the cache of that run
                cold_dir = Path(tempfile.mkdtemp(dir=tmp))
                previous = os.environ.get("FABRICPLAN_CACHE_DIR")
                os.environ["FABRICPLAN_CACHE_DIR"] = str(cold_dir)
                try:
                    cold = _time(["health", "--telemetry", str(source), "--json", *spec, *extra])
                    warm = [_time(["health", "--telemetry", str(source), "--json", *spec, *extra])
                            for _ in range(args.repeat)]
                finally:
                    if previous is None:
                        os.environ.pop("FABRICPLAN_CACHE_DIR", None)
                    else:
                        os.environ["FABRICPLAN_CACHE_DIR"] = previous
                doc = cold[2]
                runs = len(doc["model"]["expected"])
                print(f"health --telemetry --json --spec, {label}: {runs} simulator run{'s' if runs != 1 else ''}; "
                      f"cold cache {cold[0]:.2f} s; warm best {min(x[0] for x in warm):.2f} s, median "
                      f"{sorted(x[0] for x in warm)[len(warm) // 2]:.2f} s of {args.repeat} "
                      f"(MODEL001 findings: {len([f for f in doc['findings'] if f['rule'] == 'MODEL001'])})")
        if args.text_ports:
            small, _n = generate(args.text_ports, args.hours, args.step)
            text = Path(tmp) / "ethtool.txt"
            text.write_text(_ethtool_text(small, args.text_ports))
            seconds, _code, _doc = _time(["health", "--ethtool", str(text), "--json"])
            readings = args.text_ports * len(COUNTERS) * _n
            print(f"from ethtool text: {args.text_ports} ports ({text.stat().st_size / 1e6:.1f} MB) in {seconds:.2f} s "
                  f"= {readings / seconds:,.0f} readings/s")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python "
          f"{platform.python_version()}, numpy {np.__version__}")


if __name__ == "__main__":
    main()
