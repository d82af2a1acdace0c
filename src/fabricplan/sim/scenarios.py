"""Scenarios of `fabricplan simulate`: incast, permutation, all-reduce, all-to-all on a fat tree.

Conventions (docs/simulator.md, so that results compare with packet-level simulators; docs/simulator.md):
host ``h`` sits on leaf ``h // (k/2)``; an incast of N sends from hosts ``k/2 .. k/2+N-1`` (the next
leaves) to host 0, and one *victim* flow of the same size goes from the next host, ``k/2+N``, to
host 1 (same receiving leaf, different port) when that host exists; a permutation is a seeded
random derangement over all hosts; an all-reduce is one ring (host i sends ``2 (H-1)/H x size``
to host ``(i+1) mod H``); an all-to-all sends ``size/(H-1)`` from every host to every other; all
flows start at t = 0; links have the catalog's propagation (1 us) and switches store and forward;
packets carry 4,096 B of payload plus 64 B of headers; a flow completes when its last byte is
acknowledged. Several comma-separated scenarios are jobs sharing the fabric.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from fabricplan.errors import InputError
from fabricplan.sim.network import Flows, Network, fat_tree
from fabricplan.units import check_bytes, parse_bytes

SCENARIOS = ("incast", "permutation", "allreduce", "alltoall")
ROUTINGS = ("ecmp", "adaptive", "spray")
#: Program limits: flows one simulate run may hold; paths one sprayed flow is split over (a fluid
#: split over 16 evenly spaced equal-cost paths loads each tier's links as evenly as one over all).
MAX_FLOWS = 100_000
MAX_SPRAY_PATHS = 16
#: Program limits: the seed (numpy's seeds are unsigned; 32 bits as most tools take) and the queue
#: pairs per connection (NCCL_IB_QPS_PER_CONNECTION accepts up to 128).
MAX_SEED = 2 ** 32 - 1
MAX_QPS = 128


def route(network: Network, src, dst, routing: str, seed: int, qps: int = 1) -> tuple[Flows, np.ndarray]:
    """Ordered paths for flows ``src[i] -> dst[i]`` as (sub)flows: ``(flows, owner)``, where
    ``owner[j]`` is the flow subflow ``j`` belongs to and its size is the flow's share.

    The equal-cost paths come from :func:`fabricplan.sim.routing.path_tables` (the flow-level
    simulator's tables). ``ecmp``: each of the connection's ``qps`` queue pairs is hashed (seeded)
    onto one path and carries ``1/qps`` of the bytes (as :func:`fabricplan.sim.routing.route`);
    ``adaptive``: each QP in turn takes the path whose busiest link is least loaded so far
    (flowlet adaptive routing); ``spray``: an even split over the paths (at most
    ``MAX_SPRAY_PATHS`` evenly spaced ones), per-packet spraying as a fluid.
    """
    from fabricplan.sim.routing import path_tables

    if routing not in ROUTINGS:
        raise InputError(f"must be one of {', '.join(ROUTINGS)}, got '{routing}'", location="--routing")
    if int(qps) != qps or not 1 <= qps <= MAX_QPS:
        raise InputError(f"must be a whole number of queue pairs in 1..{MAX_QPS}, got {qps}", location="--qps")
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    n = len(src)
    simple, pair, padded, row_count = path_tables(network, src, dst)
    dummy = network.n_links
    count = row_count[pair]
    # ordered paths: host uplink, the shared switch path, host downlink (the tables leave the host
    # links of single-homed hosts out; multi-homed hosts' rows are whole paths already)
    h_max = padded.shape[2]
    links = np.full((n, padded.shape[1], h_max + 2), dummy, dtype=np.int64)
    links[:, :, 1:h_max + 1] = padded[pair]
    real = np.arange(padded.shape[1])[None, :] < count[:, None]
    if simple.any():
        up = network.link_ids(src[simple], network.leaf_of(src[simple]))
        down = network.link_ids(network.leaf_of(dst[simple]), dst[simple])
        links[simple, :, 0] = np.where(real[simple], up[:, None], dummy)
        links[simple, :, h_max + 1] = np.where(real[simple], down[:, None], dummy)
    rng = np.random.default_rng(seed)
    weight = np.zeros(links.shape[:2])
    rows = np.arange(n)
    if routing == "spray":
        spread = np.minimum(count, MAX_SPRAY_PATHS)
        offset = (rng.random(n) * count).astype(np.int64)
        for j in range(int(spread.max())):
            use = j < spread
            pick = (offset + j * (count // spread)) % count
            weight[rows[use], pick[use]] += 1.0 / spread[use]
    elif routing == "ecmp":
        choice = np.minimum((rng.random((n, qps)) * count[:, None]).astype(np.int64), count[:, None] - 1)
        np.add.at(weight, (np.repeat(rows, qps), choice.ravel()), 1.0 / qps)
    else:
        load = np.zeros(dummy + 1)
        for i in rng.permutation(n):
            table = links[i, :count[i]]
            for _ in range(qps):
                cost = load[table]
                cost[table == dummy] = -np.inf
                busiest = cost.max(axis=1)
                best = np.flatnonzero(busiest == busiest.min())
                j = int(best[int(rng.integers(len(best)))])
                load[table[j]] += 1.0 / qps
                load[dummy] = 0.0
                weight[i, j] += 1.0 / qps
    owner, path = np.nonzero(weight > 0)
    chosen = links[owner, path]
    keep = chosen != dummy
    lengths = keep.sum(axis=1)
    ptr = np.zeros(len(owner) + 1, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    flows = Flows(src=src[owner], dst=dst[owner], size_bytes=weight[owner, path], start_us=np.zeros(len(owner)),
                  path_ptr=ptr, path_links=chosen[keep])
    return flows, owner


@dataclass
class Job:
    name: str
    src: np.ndarray
    dst: np.ndarray
    size_bytes: np.ndarray
    victim: np.ndarray  # bool per flow


def build_job(name: str, network: Network, k: int, senders: int | None, size: float, seed: int) -> Job:
    """The flows of one scenario under the module's conventions."""
    H = network.n_hosts
    if name == "incast":
        n = 16 if senders is None else senders
        leaf = network.leaf_of(np.arange(H))
        # the next hosts in order that are not under the receiver's leaf (on a k-ary fat tree:
        # hosts k/2 .. k/2+N-1); the victim is the host after them, sending to the receiver's neighbour
        # (a one-switch fabric has no other leaf: then the receiver's neighbours send)
        neighbours = np.flatnonzero(leaf == leaf[0])[1:]
        others = np.flatnonzero(leaf != leaf[0])
        if not len(others):
            others, neighbours = neighbours[1:], neighbours[:1]
        if n < 1:
            raise InputError(f"must be a whole number of senders >= 1, got {n}", location="--senders")
        if n > len(others):
            raise InputError(f"an incast of {n} needs {n} hosts besides the receiver's leaf; the network has "
                             f"{len(others)} (raise --k or --hosts, or lower --senders)", location="--senders")
        src = others[:n].tolist()
        dst = [0] * n
        victim = [False] * n
        if n < len(others) and len(neighbours):
            src.append(int(others[n]))
            dst.append(int(neighbours[0]))
            victim.append(True)
        return Job(name, np.array(src), np.array(dst), np.full(len(src), size), np.array(victim))
    if H < 2:
        raise InputError(f"the {name} scenario needs at least 2 hosts", location="--hosts")
    if name == "permutation":
        rng = np.random.default_rng(seed)
        while True:
            perm = rng.permutation(H)
            if not np.any(perm == np.arange(H)):
                break
        return Job(name, np.arange(H), perm, np.full(H, size), np.zeros(H, bool))
    if name == "allreduce":
        src = np.arange(H)
        return Job(name, src, (src + 1) % H, np.full(H, 2 * (H - 1) / H * size), np.zeros(H, bool))
    if name == "alltoall":
        s, d = np.meshgrid(np.arange(H), np.arange(H), indexing="ij")
        keep = s != d
        n = int(keep.sum())
        return Job(name, s[keep], d[keep], np.full(n, size / (H - 1)), np.zeros(n, bool))
    raise InputError(f"must be one of {', '.join(SCENARIOS)} (comma-separated for several jobs), got '{name}'",
                     location="scenario")


@dataclass
class ScenarioResult:
    """A run of one or more jobs sharing the fabric, with what the document reports."""

    network: Network
    jobs: list[Job]
    fluid: object                    # FluidResult
    owner: np.ndarray                # per simulated (sub)flow: its flow index over all jobs
    job_of_flow: np.ndarray          # per flow: its job index
    settings: dict = field(default_factory=dict)

    def flow_fct_us(self) -> np.ndarray:
        """Per flow (subflows of a sprayed flow joined): completion time, nan if not done."""
        n = len(self.job_of_flow)
        fct = np.full(n, -np.inf)
        np.maximum.at(fct, self.owner, np.where(self.fluid.done, self.fluid.fct_us, -np.inf))
        done = np.ones(n, bool)
        np.logical_and.at(done, self.owner, self.fluid.done)
        return np.where(done, fct, np.nan)

    def flow_ideal_us(self) -> np.ndarray:
        n = len(self.job_of_flow)
        ideal = np.full(n, -np.inf)
        np.maximum.at(ideal, self.owner, self.fluid.ideal_fct_us)
        return ideal

    def document(self) -> dict:
        return scenario_document(self)


def node_name(network: Network, node: int) -> str:
    """h<i> for hosts, leaf<i>/spine<i>/core<i> for switches (index within the tier)."""
    tier = int(network.node_tier[node])
    if tier == 0:
        return f"h{node}"
    first = int(np.flatnonzero(network.node_tier == tier)[0])
    return f"{('leaf', 'spine', 'core')[tier - 1]}{node - first}"


def _stats(values: np.ndarray) -> dict:
    values = values[np.isfinite(values)]
    if values.size == 0:
        return {"mean": None, "p50": None, "p99": None, "max": None}
    return {"mean": float(values.mean()), "p50": float(np.percentile(values, 50)),
            "p99": float(np.percentile(values, 99)), "max": float(values.max())}


def jain(values: np.ndarray) -> float | None:
    """Jain's fairness index (sum x)^2 / (n sum x^2) (Jain, Chiu, Hawe, DEC-TR-301, 1984)."""
    values = values[np.isfinite(values)]
    if values.size == 0 or not np.any(values > 0):
        return None
    return float(values.sum() ** 2 / (values.size * (values ** 2).sum()))


def pause_spread_hops(result) -> int:
    """The farthest hop, counted back from a flow's last link, whose link was paused (0: none)."""
    fl = result.fluid
    flows = fl.flows
    P = fl.n_priorities
    spread = 0
    e_flow = flows.flow_of_entry()
    qid = flows.path_links * P + fl.priority[e_flow]
    paused = fl.pause_us[qid] > 0
    if not paused.any():
        return 0
    hop = np.arange(len(qid)) - flows.path_ptr[:-1][e_flow]
    back = (np.diff(flows.path_ptr)[e_flow] - 1) - hop
    spread = int(back[paused].max()) + 1
    return spread


def scenario_document(result: ScenarioResult) -> dict:
    """The JSON document of `fabricplan simulate` (keys documented in docs/simulator.md)."""
    fl = result.fluid
    net = result.network
    cfg = fl.config
    fct = result.flow_fct_us()
    ideal = result.flow_ideal_us()
    n_flows = len(result.job_of_flow)
    size = np.zeros(n_flows)
    victim = np.zeros(n_flows, bool)
    offset = 0
    for job in result.jobs:
        size[offset:offset + len(job.src)] = job.size_bytes
        victim[offset:offset + len(job.src)] = job.victim
        offset += len(job.src)
    P = fl.n_priorities
    queues = np.flatnonzero(fl.pause_us > 0)
    order = queues[np.argsort(-fl.pause_us[queues], kind="stable")]
    pauses = {}
    for qid in order:
        link = int(qid) // P
        name = f"{node_name(net, int(net.link_src[link]))}->{node_name(net, int(net.link_dst[link]))}"
        if P > 1:
            name += f":p{int(qid) % P}"
        pauses[name] = float(fl.pause_us[qid])
    credit_queues = np.flatnonzero(fl.credit_wait_us > 0)
    pkt = cfg.packet_bytes
    jobs = {}
    for j, job in enumerate(result.jobs):
        mine = (result.job_of_flow == j) & ~victim
        done = np.isfinite(fct[mine])
        makespan = float(np.nanmax(fct[mine])) if done.any() else float("nan")
        goodput = float(size[mine][done].sum() * 8 / (makespan * 1e3)) if done.any() and makespan > 0 else 0.0
        throughput = size[mine] * 8 / (fct[mine] * 1e3)
        entry = {"flows": int(mine.sum()), "completed": int(done.sum()), "fct_us": _stats(fct[mine]),
                 "goodput_gbps": goodput, "jain_fairness": jain(throughput)}
        if victim[result.job_of_flow == j].any():
            v = np.flatnonzero((result.job_of_flow == j) & victim)[0]
            entry["victim_fct_us"] = None if not np.isfinite(fct[v]) else float(fct[v])
            entry["victim_slowdown"] = None if not np.isfinite(fct[v]) else float(fct[v] / ideal[v])
        jobs[job.name if job.name not in jobs else f"{job.name}#{j}"] = entry
    main = ~victim
    done_all = np.isfinite(fct[main])
    makespan_all = float(np.nanmax(fct[main])) if done_all.any() else float("nan")
    drops = float(fl.dropped_bytes.sum())
    # payload delivered per flow (its subflows joined), also of flows still running at the time limit
    delivered = np.zeros(n_flows)
    np.add.at(delivered, result.owner, fl.delivered_bytes * (cfg.payload_bytes / cfg.packet_bytes))
    delivered = np.minimum(delivered, size)
    complete = bool(np.isfinite(fct).all())
    for j, name in enumerate(jobs):
        if not np.isfinite(fct[result.job_of_flow == j]).all():
            jobs[name]["goodput_gbps"] = None  # not a result: the job had not finished at the time limit
    doc = {
        "scenario": ",".join(job.name for job in result.jobs),
        "settings": result.settings,
        "complete": complete,
        "incomplete": None if complete else incomplete_note(result, delivered, size, victim),
        "flows": int(main.sum()),
        "completed": int(done_all.sum()),
        "fct_us": _stats(fct[main]),
        # goodput of the finished run; None when flows were still running at the time limit
        # (see delivered_gbps_in_window for what moved until then)
        "goodput_gbps": (float(size[main][done_all].sum() * 8 / (makespan_all * 1e3)) if done_all.any() else 0.0)
        if complete else None,
        "delivered_gbps_in_window": float(delivered[main].sum() * 8 / (fl.sim_time_us * 1e3))
        if fl.sim_time_us > 0 else 0.0,
        "jain_fairness": jain(size[main] * 8 / (fct[main] * 1e3)),
        "victim_slowdown": next((e["victim_slowdown"] for e in jobs.values() if "victim_slowdown" in e), None),
        "pfc_pause_us": pauses,
        "pfc_paused_ports": len(pauses),
        "pause_spread_hops": pause_spread_hops(result),
        "credit_wait_us_total": float(fl.credit_wait_us.sum()),
        "credit_blocked_ports": int(credit_queues.size),
        "ecn_marks": float(fl.ecn_marks.sum()),
        "cnps": float(fl.cnps.sum()),
        "drops_bytes": drops,
        "drops_packets": drops / pkt,
        "tcp_timeouts": int(fl.timeouts.sum()),
        "lossless": bool(drops == 0),
        "max_queue_kb": float(fl.max_queue_bytes.max() / 1e3),
        "jobs": jobs,
        "simulated_us": fl.sim_time_us,
        "wall_s": fl.wall_s,
        "simulated_us_per_wall_s": fl.sim_time_us / fl.wall_s if fl.wall_s > 0 else None,
        "model": "fluid (time-stepped; docs/simulator.md lists what it leaves out)",
    }
    return doc


def incomplete_note(result: ScenarioResult, delivered: np.ndarray, size: np.ndarray, victim: np.ndarray) -> dict:
    """What stopped an unfinished run: the time limit, its flag, what was done, and a limit that
    would let it finish at the pace so far (the simulated time scaled by bytes to go, 25 % spare)."""
    fl = result.fluid
    main = ~victim
    done = int(np.isfinite(result.flow_fct_us()[main]).sum())
    limit_ms = fl.config.max_time_us / 1e3
    fraction = float(delivered.sum() / size.sum()) if size.sum() > 0 else 0.0
    needed_ms = limit_ms / fraction * 1.25 if fraction > 0 else limit_ms * 10
    suggest_ms = float(f"{needed_ms:.2g}") if needed_ms < 100 else float(math.ceil(needed_ms / 10) * 10)
    return {"limit": "max_time_ms", "flag": "--max-time-ms", "max_time_ms": limit_ms,
            "flows_done": done, "flows": int(main.sum()), "delivered_fraction": fraction,
            "suggested_max_time_ms": max(suggest_ms, limit_ms * 1.5)}


def incomplete_line(doc: dict) -> str | None:
    """One line for an unfinished run (None when it finished): the limit, its flag, how to raise it."""
    note = doc.get("incomplete")
    if not note:
        return None
    return (f"incomplete: the simulation stopped at the {note['flag']} limit of {note['max_time_ms']:g} ms with "
            f"{note['flows_done']}/{note['flows']} flows done ({note['delivered_fraction'] * 100:.0f} % of the bytes "
            f"delivered); the numbers above are partial. Raise it, e.g. {note['flag']} "
            f"{note['suggested_max_time_ms']:g}")


def summary_lines(doc: dict) -> list[str]:
    """A short text summary of a simulate document."""
    f = doc["fct_us"]

    def num(x, fmt="{:.1f}"):
        return "-" if x is None else fmt.format(x)

    if doc["goodput_gbps"] is None:
        goodput = (f"n/a (unfinished; {doc['delivered_gbps_in_window']:.1f} Gb/s delivered over the "
                   f"{doc['simulated_us'] / 1e3:g} ms simulated)")
    else:
        goodput = f"{doc['goodput_gbps']:.1f} Gb/s"
    lines = [f"{doc['scenario']}: {doc['completed']}/{doc['flows']} flows done in {doc['simulated_us']:.0f} us "
             f"simulated ({doc['wall_s']:.2f} s wall)" + ("" if doc["complete"] else
                                                         " - INCOMPLETE: stopped at the --max-time-ms limit"),
             f"  FCT us   mean {num(f['mean'])}  p50 {num(f['p50'])}  p99 {num(f['p99'])}  max {num(f['max'])}",
             f"  goodput  {goodput}   Jain {num(doc['jain_fairness'], '{:.3f}')}   "
             f"victim slowdown {num(doc['victim_slowdown'], '{:.2f}')}",
             f"  PFC      {doc['pfc_paused_ports']} ports paused, spread {doc['pause_spread_hops']} hops   "
             f"ECN marks {doc['ecn_marks']:.0f}  CNPs {doc['cnps']:.0f}",
             f"  drops    {doc['drops_packets']:.0f} packets   TCP timeouts {doc['tcp_timeouts']}   "
             f"credit-blocked ports {doc['credit_blocked_ports']}"]
    for name, job in doc["jobs"].items():
        if len(doc["jobs"]) > 1:
            lines.append(f"  job {name}: {job['completed']}/{job['flows']} done, p99 FCT "
                         f"{num(job['fct_us']['p99'])} us, goodput {num(job['goodput_gbps'])} Gb/s")
    return lines


#: How a fabric profile's flow and congestion control map onto the fluid model's --cc and --pfc.
PROFILE_CC = {("pfc", "dcqcn"): ("dcqcn", True), ("credit", "ib_cc"): ("ib-cc", True),
              ("credit", "none"): ("ib-credit", True), ("none", "tcp"): ("tcp", False),
              ("none", "none"): ("none", False), ("pfc", "none"): ("none", True)}

#: How the fluid model's (--cc, --pfc) read as a fabric's flow and congestion control.
MECHANISM_NAMES = {("dcqcn", True): "RoCE lossless (PFC + DCQCN)", ("none", True): "RoCE lossless (PFC, no CC)",
                   ("none", False): "RoCE lossy (no PFC, no CC)", ("ib-cc", True): "InfiniBand (credits + IB CC)",
                   ("ib-credit", True): "InfiniBand (credits, no CC)", ("tcp", False): "TCP (lossy)"}


def profile_cc(profile) -> tuple[str, bool]:
    """The fluid model's (--cc, --pfc) for a fabric profile's flow and congestion control."""
    return PROFILE_CC.get((profile.flow_control, profile.congestion_control), ("none", False))


def design_case(spec_path, fabric: str | None, catalog) -> dict:
    """The network and the --cc/--pfc/--routing defaults of a spec's design for one of its fabrics
    (the spec's first fabric unless ``fabric`` names another of its profiles)."""
    from fabricplan.design import resolve
    from fabricplan.sim.fabric import design_network
    from fabricplan.spec import load_spec

    spec = load_spec(spec_path, catalog)
    choices = {choice.profile: choice for choice in spec.fabric_choices()}
    if not choices:
        raise InputError("the spec names no fabrics", location=str(spec_path))
    name = fabric or next(iter(choices))
    if name not in choices:
        raise InputError(f"the spec's fabrics are {', '.join(choices)}, got '{name}'", location="--fabric")
    design = resolve(spec, catalog, choices[name])
    if design.size.tiers == 0:  # one node: NVLink carries everything, no scale-out link to simulate
        raise InputError(f"the design of {name} has no scale-out network ({design.size.nodes} node; NVLink "
                         "carries all GPU traffic), so there is nothing to simulate; give a spec of 2 or more "
                         "nodes, or --k for a generic fat tree", location=str(spec_path))
    profile = catalog.fabric(design.fabric)
    cc, pfc = profile_cc(profile)
    routing = profile.routing if profile.routing in ROUTINGS else "ecmp"
    network = design_network(design.size, link_gbps=design.hardware.port_speed_gbps, catalog=catalog)
    return {"network": network, "cc": cc, "pfc": pfc, "routing": routing, "fabric": design.fabric}


def _qps(qps: int | None, catalog) -> int:
    """Queue pairs per connection: the flag, else ``perf_defaults.nccl_ib_qps_per_connection``."""
    from fabricplan.sim.params import sim_parameter

    return int(sim_parameter("nccl_ib_qps_per_connection", catalog)) if qps is None else qps


def run_scenarios(scenario: str, *, k: int = 16, tiers: int = 2, link_gbps: float | None = None,
                  hosts: int | None = None, senders: int | None = None, flow_size="1MB", routing: str = "ecmp",
                  cc: str = "dcqcn", pfc: str | bool = "on", pfc_xoff_kb: float | None = None,
                  pfc_xon_kb: float | None = None, mtu: int | None = None, link_latency_us: float | None = None,
                  seed: int = 1, max_time_ms: float = 50.0, step_us: float | None = None,
                  loop_delay_us: float | None = None, qps: int | None = None, record: bool = False,
                  network: Network | None = None, catalog) -> ScenarioResult:
    """Build the fat tree and the jobs, route, run the fluid model and return the result."""
    from fabricplan.sim.fluid import MAX_STEPS, fluid_config, simulate_fluid

    names = [s.strip().lower() for s in str(scenario).split(",") if s.strip()]
    if not names:
        raise InputError("name a scenario: incast, permutation, allreduce or alltoall", location="scenario")
    pfc_on = pfc if isinstance(pfc, bool) else {"on": True, "off": False}.get(str(pfc).lower())
    if pfc_on is None:
        raise InputError(f"must be on or off, got '{pfc}'", location="--pfc")
    if mtu is not None and mtu <= 0:
        raise InputError(f"must be > 0 bytes, got {mtu}", location="--mtu")
    if not math.isfinite(max_time_ms) or max_time_ms <= 0:
        raise InputError(f"must be > 0 ms, got {max_time_ms:g}", location="--max-time-ms")
    if link_latency_us is not None and not (math.isfinite(link_latency_us) and 0 <= link_latency_us <= 1e6):
        raise InputError(f"must be in 0..1,000,000 us, got {link_latency_us:g}", location="--link-latency-us")
    if not 0 <= seed <= MAX_SEED:
        raise InputError(f"must be a whole number in 0..{MAX_SEED:,}, got {seed}", location="--seed")
    size = (parse_bytes(flow_size, "--flow-size", noun="flow size") if isinstance(flow_size, str)
            else check_bytes(flow_size, "--flow-size", noun="flow size"))
    if network is None:
        network = fat_tree(k, tiers, link_gbps=link_gbps, link_latency_us=link_latency_us, hosts=hosts,
                           catalog=catalog)
    config = fluid_config(catalog, cc=cc, pfc=pfc_on, step_us=step_us, payload_bytes=mtu,
                          pfc_xoff_bytes=None if pfc_xoff_kb is None else pfc_xoff_kb * 1e3,
                          pfc_xon_bytes=None if pfc_xon_kb is None else pfc_xon_kb * 1e3,
                          max_time_us=max_time_ms * 1e3, extra_loop_delay_us=loop_delay_us)
    steps = config.max_time_us / config.step_us
    if steps > MAX_STEPS:
        raise InputError(f"{max_time_ms:g} ms in steps of {config.step_us:g} us is {steps:,.0f} steps, more than the "
                         f"simulator's {MAX_STEPS:,}; lower --max-time-ms or raise --step-us",
                         location="--max-time-ms, --step-us")
    jobs = [build_job(name, network, k, senders, float(size), seed + i) for i, name in enumerate(names)]
    src = np.concatenate([j.src for j in jobs])
    dst = np.concatenate([j.dst for j in jobs])
    sizes = np.concatenate([j.size_bytes for j in jobs])
    job_of_flow = np.concatenate([np.full(len(j.src), i) for i, j in enumerate(jobs)])
    if len(src) > MAX_FLOWS:
        raise InputError(f"{len(src)} flows exceed the simulator's limit of {MAX_FLOWS}; lower --hosts",
                         location="--hosts")
    shares, owner = route(network, src, dst, routing, seed, qps=_qps(qps, catalog))
    flows = Flows(src=shares.src, dst=shares.dst, size_bytes=sizes[owner] * shares.size_bytes,
                  start_us=shares.start_us, path_ptr=shares.path_ptr, path_links=shares.path_links)
    if record:
        steps = max(1, int(config.max_time_us / config.step_us / 20000))
        config = config.with_values(record_every=steps)
    fluid = simulate_fluid(network, flows, config)
    settings = {"k": k, "tiers": int(network.node_tier.max()), "hosts": network.n_hosts, "link_gbps": float(network.capacity_gbps[0]),
                "link_latency_us": float(network.latency_us[0]), "routing": routing, "qps": _qps(qps, catalog), "cc": config.cc,
                "pfc": config.uses_pfc, "lossless": config.lossless, "flow_size_bytes": size, "seed": seed,
                "step_us": config.step_us, "packet_payload_bytes": config.payload_bytes,
                "packet_header_bytes": config.header_bytes, "senders": senders if senders is not None else 16}
    return ScenarioResult(network=network, jobs=jobs, fluid=fluid, owner=owner, job_of_flow=job_of_flow,
                          settings=settings)
