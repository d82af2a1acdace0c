"""The same scenarios in ns-3 (packet level) and in fabricplan's fluid simulator: speed and results.

Run: ``PYTHONPATH=src python benchmarks/bench_ns3.py [--quick] [--speed-only] [--out tests/fixtures/ns3/runs.json]``
(``--speed-only``: the speed cases alone, replacing those rows of the ``--out`` file).
Needs ns-3's C++ libraries and headers (Debian ``apt-get install libns3-dev``, ns-3.37) and g++;
``benchmarks/ns3/fabric_tcp.cc`` is compiled once into ``$TMPDIR/fabricplan-ns3/``.

What is the same in both: fabricplan builds the scenario (``fabricplan.sim.scenarios``: the k-ary
fat tree, who sends to whom, ECMP paths hashed per flow with the same seed) and writes it out; the
ns-3 program builds the same nodes and cables (100 Gb/s, 1 us, point-to-point, store and forward),
installs each flow's path as static host routes (ACKs follow the reverse path), and runs every flow
as one TCP connection (NewReno + SACK, IW 10, 4,096-B segments, min RTO 200 ms, an ACK per
segment) through a 375 KB drop-tail FIFO per egress port (``sim_switch_buffer_bytes_per_port``).
fabricplan runs ``--cc tcp`` (lossy, Reno-like windows) on the same flows, with its compiled step loop
when numba is installed (``sim/fluid_tcp_kernel.py``; best of 3, so its one-off compile or cache load
is not counted, as ns-3's compile is not). Both report per-flow
completion times; speed is simulated microseconds per wall second of each simulator's run loop
(ns-3: ``Simulator::Run``; fabricplan: ``simulate_fluid``), set-up and routing excluded for both
and reported beside. Two rows pair ns-3 DCTCP (RED step marking at 65 KB) with fabricplan's DCQCN + PFC on the
same traffic (ns-3 mainline has neither DCQCN nor PFC): a busy, loss-free reference for speed.

Cases: speed runs of long flows (1 GB) over the same simulated window in both (a 64-to-1 incast
on a k=16 two-tier fat tree, plus the convention's victim flow, 20 ms; permutations on 8 .. 1,024
hosts for 0.25 ms, for growth with hosts: ns-3's cost is linear in packets, ~70 s per 1.6 GB
here); then 1 MB flows to completion (the incast, permutations of 128 and 1,024 hosts, and an incast sweep of N = 1 .. 64 senders: the TCP incast collapse point). ``--out`` writes every
run's numbers as JSON (the fixture ``scripts/validate_ns3.py`` and ``tests/sim/test_ns3_validation.py`` read; this script is how it was made).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from fabricplan.catalog import load_catalog
from fabricplan.sim.scenarios import run_scenarios

CATALOG = load_catalog()  # the bundled numbers: both simulators run the scenario they describe

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "ns3" / "fabric_tcp.cc"
NS3_LIBS = ["ns3-core", "ns3-network", "ns3-internet", "ns3-point-to-point", "ns3-applications",
            "ns3-traffic-control"]


def ns3_binary() -> Path:
    """Compile benchmarks/ns3/fabric_tcp.cc against the system's ns-3 (once per source change)."""
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:12]  # one binary per source version
    out = Path(tempfile.gettempdir()) / "fabricplan-ns3" / f"fabric_tcp-{digest}"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["g++", "-O2", "-std=c++17", "-o", str(out), str(SOURCE)]
                       + [f"-l{lib}" for lib in NS3_LIBS], check=True)
    return out


def ns3_version() -> str:
    try:
        return subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libns3-dev"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def write_scenario(result, path: Path) -> None:
    """The network, the flows and their paths as static routes (file format: fabric_tcp.cc)."""
    net = result.network
    flows = result.fluid.flows
    lines = [f"nodes {net.n_nodes} {net.n_hosts}"]
    for link in range(net.n_links):
        a, b = int(net.link_src[link]), int(net.link_dst[link])
        if a < b:
            lines.append(f"link {a} {b} {net.capacity_gbps[link]:g} {net.latency_us[link]:g}")
    nxt: dict[tuple[int, int], int] = {}

    def nodes_of(i):
        links = flows.path(i)
        return [int(net.link_src[x]) for x in links] + [int(net.link_dst[links[-1]])]

    paths = [nodes_of(i) for i in range(flows.n_flows)]
    # data routes first (toward each flow's receiver), then ACK routes (reverse paths) where free;
    # up-down paths make the union loop-free (a switch's route toward a host goes down once it is an
    # ancestor of the host)
    for reverse in (False, True):
        for p in paths:
            q = p[::-1] if reverse else p
            dst = q[-1]
            for a, b in zip(q[1:-1], q[2:]):
                nxt.setdefault((a, dst), b)
    lines += [f"route {a} {d} {b}" for (a, d), b in nxt.items()]
    for i in range(flows.n_flows):
        payload = int(round(result.fluid.wire_bytes[i] / (1 + result.fluid.config.header_bytes
                                                          / result.fluid.config.payload_bytes)))
        lines.append(f"flow {i} {int(flows.src[i])} {int(flows.dst[i])} {payload} {flows.start_us[i]:g}")
    lines += multipath_hops(net)
    path.write_text("\n".join(lines) + "\n")


def multipath_hops(net) -> list[str]:
    """``hops`` lines for per-packet routing in ns-3 (``--routing spray|adaptive``): at every switch,
    toward every host, the next hops of the up-down paths: down to the one child above the host
    when the switch is an ancestor of it, else every uplink (a folded Clos: any parent leads on)."""
    tier = net.node_tier
    children: dict[int, list[int]] = {}
    parents: dict[int, list[int]] = {}
    for a, b in zip(net.link_src.tolist(), net.link_dst.tolist()):
        if tier[b] > tier[a]:
            parents.setdefault(a, []).append(b)
            children.setdefault(b, []).append(a)
    below: dict[int, set[int]] = {h: {h} for h in range(net.n_hosts)}
    for t in range(1, int(tier.max()) + 1):
        for node in np.flatnonzero(tier == t).tolist():
            below[node] = set().union(*(below[c] for c in children.get(node, [])))
    lines = []
    for node in range(net.n_hosts, net.n_nodes):
        down = {h: c for c in children.get(node, []) for h in below[c]}
        for host in range(net.n_hosts):
            nxt = [down[host]] if host in down else sorted(parents.get(node, []))
            lines.append(f"hops {node} {host} " + " ".join(map(str, nxt)))
    return lines


def run_ns3(result, cc: str = "newreno", max_time_ms: float = 3000.0, routing: str = "static",
            dup_thresh: int = 3, buffer_bytes: int | None = None) -> dict:
    """Run the scenario of a fabricplan result in ns-3; per-flow FCT (nan: not done) and bytes received."""
    binary = ns3_binary()
    with tempfile.TemporaryDirectory() as tmp:
        scen = Path(tmp) / "scenario.txt"
        write_scenario(result, scen)
        start = time.perf_counter()
        proc = subprocess.run([str(binary), f"--input={scen}", f"--cc={cc}", f"--maxTimeMs={max_time_ms:g}",
                               f"--routing={routing}", f"--dupThresh={dup_thresh}",
                               f"--buffer={int(buffer_bytes or result.network.buffer_bytes[0])}",
                               # the catalog's TCP and packet settings, as the fluid run used them
                               f"--minRtoMs={result.fluid.config.tcp_min_rto_us / 1e3:g}",
                               f"--segment={int(result.fluid.config.payload_bytes)}",
                               f"--iw={int(result.fluid.config.tcp_initial_window_segments)}"],
                              capture_output=True, text=True, check=True)
        total = time.perf_counter() - start
    fct, got, totals = [], [], {}
    for line in proc.stdout.splitlines():
        parts = line.split()
        if parts[0] == "fct":
            fct.append(float(parts[2]))
            got.append(float(parts[3]))
        else:
            totals[parts[0]] = float(parts[1])
    fct = np.array(fct)
    fct[fct < 0] = np.nan
    return {"fct_us": fct, "received_bytes": np.array(got), "wall_s": totals["wall_s"], "setup_s": totals["setup_s"], "process_s": total,
            "simulated_us": totals["simulated_us"], "drops_packets": totals["drops"], "marks": totals["marks"]}


def _stats(fct: np.ndarray) -> dict:
    done = fct[np.isfinite(fct)]
    if not len(done):
        return {"mean": None, "p50": None, "p99": None, "max": None}
    return {"mean": float(done.mean()), "p50": float(np.percentile(done, 50)),
            "p99": float(np.percentile(done, 99)), "max": float(done.max())}


def compare_case(label: str, repeats: int, cc_ns3: str = "newreno", max_time_ms: float = 3000.0, cc_fp: str = "tcp",
                 pfc_fp: str = "off", **kwargs) -> dict:
    """One scenario in both simulators, both stopped at ``max_time_ms`` at the latest; fabricplan
    best of ``repeats``, ns-3 once (it is slower)."""
    best = None
    for _ in range(repeats):
        start = time.perf_counter()
        res = run_scenarios(cc=cc_fp, pfc=pfc_fp, max_time_ms=max_time_ms, catalog=CATALOG, **kwargs)
        total = time.perf_counter() - start
        if best is None or res.fluid.wall_s < best[0].fluid.wall_s:
            best = (res, total)
    res, total = best
    doc = res.document()
    main = ~np.concatenate([j.victim for j in res.jobs])
    fp_fct = res.flow_fct_us()
    ns = run_ns3(res, cc=cc_ns3, max_time_ms=max_time_ms)
    size = np.concatenate([j.size_bytes for j in res.jobs])

    def goodput(fct):
        f = fct[main]
        done = np.isfinite(f)
        return float(size[main][done].sum() * 8 / (np.nanmax(f) * 1e3)) if done.any() else 0.0

    row = {
        "case": label, "settings": {k: (v if not isinstance(v, np.generic) else v.item()) for k, v in kwargs.items()},
        "hosts": res.network.n_hosts, "flows": int(main.sum()), "max_time_ms": max_time_ms,
        "fabricplan": {"cc": cc_fp, "pfc": pfc_fp, "fct_us": _stats(fp_fct[main]), "goodput_gbps": goodput(fp_fct),
                       "completed": int(np.isfinite(fp_fct[main]).sum()), "drops_packets": doc["drops_packets"],
                       "tcp_timeouts": doc["tcp_timeouts"],
                       "received_gbps": float(res.fluid.delivered_bytes[main].sum() / (1 + res.fluid.config.header_bytes
                                              / res.fluid.config.payload_bytes) * 8 / (res.fluid.sim_time_us * 1e3)),
                       "simulated_us": res.fluid.sim_time_us,
                       "wall_s": res.fluid.wall_s, "total_wall_s": total},
        "ns3": {"cc": cc_ns3, "fct_us": _stats(ns["fct_us"][main]), "goodput_gbps": goodput(ns["fct_us"]),
                "completed": int(np.isfinite(ns["fct_us"][main]).sum()), "drops_packets": ns["drops_packets"],
                "ecn_marks": ns["marks"],
                "received_gbps": float(ns["received_bytes"][main].sum() * 8 / (ns["simulated_us"] * 1e3)),
                "simulated_us": ns["simulated_us"], "wall_s": ns["wall_s"],
                "setup_s": ns["setup_s"], "process_s": ns["process_s"]},
    }
    f, n = row["fabricplan"], row["ns3"]
    f["us_per_wall_s"] = f["simulated_us"] / f["wall_s"]
    n["us_per_wall_s"] = n["simulated_us"] / n["wall_s"]
    row["speed_ratio"] = f["us_per_wall_s"] / n["us_per_wall_s"]
    fm, nm = f["fct_us"]["mean"], n["fct_us"]["mean"]
    print(f"| {label} | {row['hosts']} | {row['flows']} | {f['simulated_us']:.0f} / {f['wall_s']:.2f} s "
          f"= {f['us_per_wall_s']:.0f} | {n['simulated_us']:.0f} / {n['wall_s']:.2f} s = {n['us_per_wall_s']:.0f} "
          f"| {row['speed_ratio']:.0f}x | {fm if fm is None else round(fm)} / {nm if nm is None else round(nm)} "
          f"| {f['goodput_gbps']:.1f} / {n['goodput_gbps']:.1f} |", flush=True)
    return row


#: Flow-level (max-min) simulator rows: (label, ns-3 --routing, buffer bytes per port, duplicate-ACK
#: threshold). The 128-host k=8 3-tier permutation of 1 MB flows, ECMP paths as in the runs above.
#: Per-packet routing reorders packets: its runs take a reordering-tolerant threshold (as RACK in
#: Linux, or RDMA NICs that place out-of-order packets), else TCP's spurious fast retransmits, not
#: the routing, set the FCT. The ECMP run gets a 10 MB buffer: no loss, so no 200 ms timeouts
#: (the row above shows them) and the routing's collisions alone set its FCT.
FLOW_LEVEL = [("ecmp", "static", 10_000_000, 3), ("adaptive", "adaptive", 375_000, 100),
              ("spray", "spray", 375_000, 100)]


def flow_level_runs() -> dict:
    """ns-3 runs of the permutation for the flow-level simulator's check (FLOW_LEVEL)."""
    res = run_scenarios("permutation", k=8, tiers=3, flow_size="1MB", cc="tcp", pfc="off", max_time_ms=1,
                        catalog=CATALOG)
    rows = []
    for routing, ns3_routing, buffer, dup in FLOW_LEVEL:
        ns = run_ns3(res, routing=ns3_routing, dup_thresh=dup, buffer_bytes=buffer)
        rows.append({"routing": routing, "ns3_routing": ns3_routing, "buffer_bytes": buffer, "dup_ack_threshold": dup,
                     "fct_us": _stats(ns["fct_us"]), "completed": int(np.isfinite(ns["fct_us"]).sum()),
                     "drops_packets": ns["drops_packets"], "wall_s": ns["wall_s"]})
        print(routing, rows[-1]["fct_us"], flush=True)
    return {"scenario": {"scenario": "permutation", "k": 8, "tiers": 3, "flow_size": "1MB", "seed": 1},
            "ns3": f"ns-3 {ns3_version()} (Debian libns3-dev), benchmarks/ns3/fabric_tcp.cc --routing",
            "made_by": "PYTHONPATH=src python benchmarks/bench_ns3.py --flow-level --out tests/fixtures/ns3/runs.json",
            "date": time.strftime("%Y-%m-%d"), "tcp": "NewReno + SACK, IW 10, 4,096-B segments, min RTO 200 ms",
            "runs": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the 1,024-host and incast-sweep cases")
    parser.add_argument("--out", type=Path, default=None, help="write every run as JSON (the validation fixture)")
    parser.add_argument("--speed-only", action="store_true",
                        help="run only the speed cases; with --out, replace those rows of the existing file and "
                             "keep its other runs")
    parser.add_argument("--flow-level", action="store_true",
                        help="run only the flow-level simulator's routing rows (FLOW_LEVEL); with --out, store "
                             "them under 'flow_level' and keep the other runs")
    args = parser.parse_args(argv)
    if args.flow_level:
        block = flow_level_runs()
        if args.out:
            doc = json.loads(args.out.read_text())
            doc["flow_level"] = block
            args.out.write_text(json.dumps(doc, indent=1, default=float) + "\n")
        return 0
    print(f"ns-3 {ns3_version()} (libns3-dev), fabricplan fluid model --cc tcp; speed = simulated us per wall s")
    print("| case | hosts | flows | fabricplan sim us / wall = us per s | ns-3 sim us / wall = us per s | ratio "
          "| FCT mean us fp / ns-3 | goodput Gb/s fp / ns-3 |")
    print("|---|---|---|---|---|---|---|---|")
    rows = []
    # speed: identical long flows (1 GB, none finishes) over the same simulated window in both
    long = "1GB"
    rows.append(compare_case("speed: incast 64-to-1, TCP, 20 ms", 3, max_time_ms=20, scenario="incast", k=16,
                             tiers=2, senders=64, flow_size=long))
    rows.append(compare_case("speed: incast 64-to-1, ns-3 DCTCP vs fabricplan DCQCN+PFC, 5 ms", 3, cc_ns3="dctcp",
                             cc_fp="dcqcn", pfc_fp="on", max_time_ms=5, scenario="incast", k=16, tiers=2,
                             senders=64, flow_size=long))
    grow = [(4, 2), (8, 2), (16, 2), (8, 3)] + ([] if args.quick else [(12, 3), (16, 3)])
    for k, tiers in grow:
        rows.append(compare_case(f"speed: permutation k={k} {tiers}-tier, TCP, 0.25 ms", 3, max_time_ms=0.25,
                                 scenario="permutation", k=k, tiers=tiers, flow_size=long))
    if args.speed_only:
        if args.out:
            doc = json.loads(args.out.read_text())
            fresh = {r["case"]: r for r in rows}
            doc["runs"] = [fresh.pop(r["case"], r) for r in doc["runs"]] + list(fresh.values())
            doc["speed_rows"] = (f"re-run {time.strftime('%Y-%m-%d')} with --speed-only (load average "
                                 f"{os.getloadavg()[0]:.1f} at the end); the other runs as of {doc['date']}")
            args.out.write_text(json.dumps(doc, indent=1, default=float) + "\n")
        return 0
    # results: 1 MB flows to completion
    rows.append(compare_case("incast 64-to-1, 1 MB, k=16 2-tier, TCP", 1, scenario="incast", k=16, tiers=2,
                             senders=64, flow_size="1MB"))
    rows.append(compare_case("incast 64-to-1, 1 MB, ns-3 DCTCP vs fabricplan DCQCN+PFC", 1, cc_ns3="dctcp",
                             cc_fp="dcqcn", pfc_fp="on", scenario="incast", k=16, tiers=2, senders=64,
                             flow_size="1MB"))
    for k, tiers in ((8, 3),) + (() if args.quick else ((16, 3),)):
        rows.append(compare_case(f"permutation, 1 MB, k={k} {tiers}-tier, TCP", 1, scenario="permutation", k=k,
                                 tiers=tiers, flow_size="1MB"))
    if not args.quick:
        for n in (1, 2, 4, 8, 16, 24, 32, 48, 64):
            rows.append(compare_case(f"incast sweep {n}-to-1, 1 MB each, TCP", 1, scenario="incast", k=16, tiers=2,
                                     senders=n, flow_size="1MB"))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        doc = {"made_by": "PYTHONPATH=src python benchmarks/bench_ns3.py --out " + str(args.out),
               "ns3": f"ns-3 {ns3_version()} (Debian libns3-dev), benchmarks/ns3/fabric_tcp.cc",
               "date": time.strftime("%Y-%m-%d"), "machine": f"{os.cpu_count()} cores, shared", "runs": rows}
        args.out.write_text(json.dumps(doc, indent=1, default=float) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
