"""The fleet: arrivals, placement policies, the shared fabric (issue 28)."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest
import yaml

import fabricplan as fp
from fabricplan.catalog import default_catalog
from fabricplan.errors import InputError
from fabricplan.fleet.arrivals import JobKind, arrival_rate_per_hour, draw_arrivals, mean_duration_hours
from fabricplan.fleet.interference import job_traffic, paces
from fabricplan.fleet.schedule import Layout, schedule
from fabricplan.sim.fabric import clos_network
from tests.project_paths import EXAMPLES

MIX = EXAMPLES / "fleets" / "mix-16k-h100.yaml"


@pytest.fixture(scope="module")
def catalog():
    return default_catalog()


@pytest.fixture(scope="module")
def small_mix(tmp_path_factory) -> Path:
    """The bundled mix at 2,048 GPUs (256 nodes): 512-, 128-, 32- and 8-GPU jobs."""
    document = yaml.safe_load(MIX.read_text())
    document["cluster"]["gpus"] = 2048
    for job, gpus in zip(document["jobs"], (512, 128, 32, 8)):
        job["gpus"] = gpus
    big = document["jobs"][0]
    big.update(pp=4, virtual_pipeline_stages=1, global_batch_sequences=256)
    document["jobs"][1]["global_batch_sequences"] = 128
    document["jobs"][2].update(pp=1, global_batch_sequences=64)
    path = tmp_path_factory.mktemp("fleet") / "mix-2048.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def _layout(nodes: int, per_leaf: int) -> Layout:
    leaf = np.arange(nodes) // per_leaf
    return Layout(leaf_of_node=leaf, pod_of_node=np.zeros(nodes, dtype=np.int64))


def test_poisson_rate_gives_the_share_as_offered_load(catalog):
    """Little's law: busy nodes = rate x nodes x mean duration = share x cluster nodes."""
    kind = JobKind("small", nodes=1, gpus=8, share=0.3, duration_hours=2.0, pattern="ring")
    sigma = 1.0
    rate = float(arrival_rate_per_hour(kind.share, 64, kind.nodes, mean_duration_hours(kind.duration_hours, sigma)))
    assert rate == pytest.approx(0.3 * 64 / (2.0 * np.exp(0.5)))
    arrivals = draw_arrivals([kind], 64, start_hours=-50.0, end_hours=5000.0, sigma=sigma, seed=3)
    timeline = schedule(arrivals, [kind], _layout(64, 8), "first_fit", end_hours=5000.0)
    start = np.clip(timeline.start_hours, 0, 5000.0)
    end = np.clip(timeline.end_hours, 0, 5000.0)
    busy = np.maximum(end - start, 0).sum() / (5000.0 * 64)
    assert busy == pytest.approx(0.3, rel=0.08)  # no queueing at 30 % load of 1-node jobs
    assert np.all(timeline.start_hours[np.isfinite(timeline.start_hours)] >= arrivals.arrive_hours[
        np.isfinite(timeline.start_hours)])


def test_packed_policy_fills_one_leaf_group_first_fit_takes_the_lowest_nodes():
    kind = JobKind("j", nodes=4, gpus=32, share=0.5, duration_hours=1.0, pattern="ring")
    layout = _layout(32, 8)
    from fabricplan.fleet.arrivals import Arrivals

    # two jobs: the first of 6 nodes (leaf 0 keeps 2 free), then one of 4: packed puts it on leaf 1
    arrivals = Arrivals(kind=np.array([0, 1]), arrive_hours=np.array([0.0, 0.1]), duration_hours=np.array([5.0, 5.0]))
    kinds = [JobKind("six", 6, 48, 0.5, 1.0, "ring"), kind]
    packed = schedule(arrivals, kinds, layout, "packed", end_hours=10.0)
    assert layout.leaves_spanned(packed.nodes[0]) == 1 and layout.leaves_spanned(packed.nodes[1]) == 1
    first = schedule(arrivals, kinds, layout, "first_fit", end_hours=10.0)
    assert list(first.nodes[1]) == [6, 7, 8, 9]  # straddles leaves 0 and 1
    assert layout.leaves_spanned(first.nodes[1]) == 2


def test_a_user_policy_is_called_and_checked():
    layout = _layout(16, 4)
    from fabricplan.fleet.arrivals import Arrivals

    arrivals = Arrivals(kind=np.array([0]), arrive_hours=np.array([0.0]), duration_hours=np.array([1.0]))
    kinds = [JobKind("j", 4, 32, 0.5, 1.0, "ring")]

    def last_nodes(free, n, layout, rng):
        return np.flatnonzero(free)[-n:]

    line = schedule(arrivals, kinds, layout, last_nodes, end_hours=2.0)
    assert list(line.nodes[0]) == [12, 13, 14, 15]

    def broken(free, n, layout, rng):
        return np.array([0, 0, 1, 2])

    with pytest.raises(InputError, match="distinct free node ids"):
        schedule(arrivals, kinds, layout, broken, end_hours=2.0)


def test_conservation_on_the_shared_fabric(catalog):
    """No connection above its NIC's line rate, no link above its capacity, every connection moves."""
    network = clos_network(64, 8, 4, link_gbps=400.0, catalog=catalog)
    settings = {"channels_per_nic": 2, "peers": 4, "channels_per_peer": 1}
    rng = np.random.default_rng(0)
    nodes = rng.permutation(64)
    jobs = [job_traffic("ring", nodes[:24], 1, **settings), job_traffic("all_to_all", nodes[24:40], 1, **settings),
            job_traffic("ring", nodes[40:41], 1, **settings)]
    result = paces(network, jobs, routing="ecmp", qps=1, seed=0)
    assert np.all(result.rate_gbps > 0)
    assert np.all(result.rate_gbps <= 400.0 * (1 + 1e-9))
    src = np.concatenate([j.src for j in jobs])
    out_per_host = np.bincount(src, weights=result.rate_gbps, minlength=64)
    assert out_per_host.max() <= 400.0 * (1 + 1e-9)
    assert np.all(result.shared <= result.alone + 1e-12)  # others can only take bandwidth away
    assert result.shared[2] == 1.0 and result.bottleneck_tier[2] == "none"  # one node: no network traffic
    spray = paces(network, jobs[:2], routing="spray", qps=1, seed=0)
    assert spray.shared.min() > result.shared[:2].min()  # spraying removes the hash collisions


def test_same_seed_same_fleet_and_packed_never_worse_than_random(small_mix, catalog):
    spec = fp.load_spec(small_mix)
    design = fp.design(spec, "roce-v2")
    from fabricplan.fleet import run_fleet

    one = run_fleet(design, spec, catalog, policy="random", routing="ecmp", days=4, samples=3, seed=5)
    two = run_fleet(design, spec, catalog, policy="random", routing="ecmp", days=4, samples=3, seed=5)
    assert asdict(one) == asdict(two)
    other = run_fleet(design, spec, catalog, policy="random", routing="ecmp", days=4, samples=3, seed=6,
                      alternatives=False)
    assert asdict(other) != asdict(one)
    for seed in (5, 6, 7):
        random = run_fleet(design, spec, catalog, policy="random", routing="ecmp", days=4, samples=3, seed=seed,
                           alternatives=False)
        packed = run_fleet(design, spec, catalog, policy="packed", routing="ecmp", days=4, samples=3, seed=seed,
                           alternatives=False)
        assert packed.mean_pace >= random.mean_pace - 1e-12
        assert max(k.leaves_over_fewest for k in packed.kinds) <= min(
            k.leaves_over_fewest for k in random.kinds if k.nodes > 1)
    assert one.alternatives["policy packed"] >= one.mean_pace
    assert one.alternatives["routing adaptive"] >= one.mean_pace


def test_fleet_cli_json_and_errors(small_mix, capsys):
    from fabricplan.cli.app import run

    assert run(["fleet", str(small_mix), "--fabric", "roce-v2", "--days", "2", "--samples", "2", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["kind"] == "fleet" and document["version"] == fp.__version__
    result = document["fabrics"]["roce-v2"]
    assert len(result["samples"]) == 2 and {k["name"] for k in result["kinds"]} == {
        "llama3-405b-pretrain", "llama3-70b-train", "llama3-70b-finetune", "llama3-8b-experiment"}
    assert run(["fleet", str(small_mix), "--policy", "best"]) == 2
    assert "unknown scheduler policy 'best'" in capsys.readouterr().err
    assert run(["fleet", str(EXAMPLES / "single-node-8-inference.yaml")]) == 2
    assert "one node" in capsys.readouterr().err


def test_fleet_terminal_fits_80_columns(small_mix):
    from rich.console import Console

    from fabricplan.report.fleet_output import fleet_renderable

    results = fp.fleet(small_mix, "roce-v2", days=2, samples=2, policy="random")
    console = Console(width=80, record=True, force_terminal=False)
    console.print(fleet_renderable(results))
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "llama3-70b-finetune" in text and "with policy packed" in text


def test_a_spine_failure_slows_but_does_not_stop_an_aligned_job(catalog):
    from fabricplan.fleet.failures import component_units, stranded_hosts, without

    network = clos_network(64, 8, 4, link_gbps=400.0, catalog=catalog)  # 2 tiers, 4 spines
    settings = {"channels_per_nic": 2, "peers": 4, "channels_per_peer": 1}
    aligned = [job_traffic("ring", np.arange(32), 1, **settings)]  # four whole leaves, rank order
    spine = int(component_units(network, "spine")[0])
    assert len(stranded_hosts(network, "spine", spine)) == 0  # no host loses its only uplink
    for routing in ("ecmp", "adaptive"):
        before = paces(network, aligned, routing=routing, qps=1).shared[0]
        after = paces(without(network, switches=[spine]), aligned, routing=routing, qps=1).shared[0]
        assert 0 < after <= before
    # the same job, every flow crossing the spines (random ranks), loses a quarter of its uplinks
    scattered = [job_traffic("ring", np.random.default_rng(0).permutation(64)[:32], 1, **settings)]
    spray = paces(without(network, switches=[spine]), scattered, routing="spray", qps=1).shared[0]
    assert spray < 1.0


def test_a_leaf_failure_stops_the_jobs_under_it(catalog):
    from fabricplan.fleet.failures import component_units, stranded_hosts

    network = clos_network(64, 8, 4, link_gbps=400.0, catalog=catalog)
    leaf = int(component_units(network, "leaf")[2])
    assert sorted(stranded_hosts(network, "leaf", leaf)) == list(range(16, 24))
    assert list(stranded_hosts(network, "nic", 5)) == [5]


def test_nccl_transport_timeout_and_failure_rates():
    from fabricplan.fleet.failures import failures_per_month, nccl_transport_timeout_s

    assert nccl_transport_timeout_s(4.096, 20, 7) == pytest.approx(4.096e-6 * 2**20 * 8)  # ~34 s
    assert failures_per_month(512, 9.2, 1.0) == pytest.approx(512 * 9.2e-6 * 730)


def test_adaptive_routing_is_never_worse_than_spraying_after_a_cable_failure(catalog):
    """The balancer's steps overshoot when a failed uplink leaves some leaf pairs one path short;
    it keeps the best split it saw, so it cannot end below the even split it starts from."""
    from fabricplan.fleet.failures import component_units, without

    network = clos_network(256, 16, 16, link_gbps=400.0, catalog=catalog)
    settings = {"channels_per_nic": 2, "peers": 4, "channels_per_peer": 1}
    order = np.random.default_rng(0).permutation(256)
    jobs = [job_traffic("ring", order[i * 32:(i + 1) * 32], 1, **settings) for i in range(8)]
    degraded = without(network, cables=[int(component_units(network, "fabric_link")[5])])
    adaptive = paces(degraded, jobs, routing="adaptive", qps=1).shared
    spray = paces(degraded, jobs, routing="spray", qps=1).shared
    assert adaptive.min() >= spray.min() - 1e-9
    assert spray.min() == pytest.approx(15 / 16)  # one of the 16 uplinks of a leaf is gone


def test_fleet_failures_in_the_result(small_mix, catalog):
    spec = fp.load_spec(small_mix)
    from fabricplan.fleet import run_fleet

    result = run_fleet(fp.design(spec, "infiniband-ndr"), spec, catalog, policy="packed", days=3, samples=2,
                       alternatives=False)
    effects = {f.component: f for f in result.failures}
    assert {"nic", "host_link", "leaf", "fabric_link"} <= set(effects)
    assert effects["nic"].jobs_stopped <= 1.0 and effects["fabric_link"].jobs_stopped == 0.0
    assert effects["leaf"].gpus_stopped >= effects["nic"].gpus_stopped
    assert all(0 < f.pace_degraded <= 1.0 for f in result.failures)
    assert all(f.survives_reroute for f in result.failures)  # SHIELD's ms recovery < NCCL's ~34 s


def test_shared_fabric_step_lengthens_only_the_exposed_data_parallel_time():
    from fabricplan.perf.step import StepResult
    from fabricplan.plan.fleet import shared_fabric_step

    base = StepResult(job="j", fabric="f", model="m", gpus=64, tp=8, pp=1, dp=8, cp=1, ep=1, micro_batches=4,
                      step_time_s=10.0, compute_s=8.0, bubble_s=0.0,
                      exposed_comm_s={"tp": 0.5, "dp": 1.0, "pp": 0.5}, total_comm_s={"tp": 1.0, "dp": 3.0},
                      model_flops_per_step=1e15, hardware_flops_per_step=1e15, mfu=0.5, hfu=0.5,
                      tokens_per_step=1000, tokens_per_s=100.0, gpu_hours_for_budget=50.0, token_budget=1e6)
    slowed = shared_fabric_step(base, 1.5)
    assert slowed.step_time_s == pytest.approx(10.5)  # + 1.0 s x 0.5; TP and PP are not the fleet's traffic
    assert slowed.exposed_comm_s["dp"] == pytest.approx(1.5) and slowed.exposed_comm_s["tp"] == 0.5
    assert slowed.mfu == pytest.approx(0.5 * 10 / 10.5) and slowed.tokens_per_s == pytest.approx(100 * 10 / 10.5)
    assert slowed.gpu_hours_for_budget == pytest.approx(50 * 10.5 / 10)
    assert shared_fabric_step(base, 1.0) is base


def test_whole_cluster_jobs_run_no_fleet(catalog):
    from fabricplan.plan.fleet import interference, shares_the_cluster

    spec = fp.load_spec(EXAMPLES / "llama70b-1024-h100.yaml")
    assert not shares_the_cluster(spec)
    assert interference(spec, catalog, fp.design(spec, "roce-v2")) == ({}, "")


def test_compare_prices_the_fleet_interference_of_a_scattered_mix(small_mix, tmp_path):
    from fabricplan.plan import Plan

    document = yaml.safe_load(small_mix.read_text())
    document["operations"]["scheduler_policy"] = "random"
    document["fabrics"] = ["roce-v2"]
    path = tmp_path / "mix-random.yaml"
    path.write_text(yaml.safe_dump(document))
    with_fleet = fp.compare(path, quick=True)
    without = fp.compare(path, quick=True, plan=Plan(fleet=False))
    shared, alone = with_fleet.fabrics[0], without.fabrics[0]
    assert float(shared.weighted_gpu_utilisation) < float(alone.weighted_gpu_utilisation)
    assert float(shared.cost_per_useful_gpu_hour_usd) > float(alone.cost_per_useful_gpu_hour_usd)
    assert any(note.startswith("Shared fabric (roce-v2): fleet of") for note in with_fleet.notes)
    assert not any(note.startswith("Shared fabric") for note in without.notes)


def test_fleet_html_report(small_mix, tmp_path, capsys):
    from fabricplan.cli.app import run

    out = tmp_path / "fleet.html"
    assert run(["fleet", str(small_mix), "--fabric", "roce-v2", "--days", "2", "--samples", "2", "--policy",
                "random", "--html", str(out)]) == 0
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and "roce-v2: pace of each job kind" in page
    assert "llama3-70b-finetune" in page and "leaf groups spanned" in page and "fewest possible" in page
    assert run(["fleet", str(small_mix), "--html", str(tmp_path)]) == 2  # a directory: refused before the run
    assert "fleet report" in capsys.readouterr().err


def test_a_reroute_slower_than_nccls_timeout_stops_the_jobs_the_part_carried(small_mix, catalog):
    from fabricplan.fleet import run_fleet

    spec = fp.load_spec(small_mix)
    design = fp.design(spec, "roce-v2")
    quick = run_fleet(design, spec, catalog, policy="random", days=3, samples=2, alternatives=False)
    slow_catalog = catalog.with_values({"perf_defaults.parameters.fleet_reroute_seconds_ethernet.value": 60.0})
    slow = run_fleet(design, spec, slow_catalog, policy="random", days=3, samples=2, alternatives=False)
    by = {f.component: f for f in quick.failures}
    slow_by = {f.component: f for f in slow.failures}
    assert by["spine"].survives_reroute and by["spine"].jobs_stopped == 0
    assert not slow_by["spine"].survives_reroute and slow_by["spine"].jobs_stopped > 0  # scattered jobs cross spines
    assert slow_by["nic"].jobs_stopped == by["nic"].jobs_stopped  # host-side parts do not reroute


def test_the_placement_picture_puts_each_node_of_a_running_job_in_its_leaf_group(small_mix, catalog):
    from fabricplan.fleet import run_fleet
    from fabricplan.report.fleet_plot import occupancy_grid

    spec = fp.load_spec(small_mix)
    result = run_fleet(fp.design(spec, "roce-v2"), spec, catalog, policy="packed", days=2, samples=2,
                       alternatives=False, with_failures=False)
    grid, names = occupancy_grid(result)
    busy = next(s for s in result.samples if s.t_hours == result.snapshot_hours).busy_nodes
    assert int(np.sum(~np.isnan(grid))) == busy  # every busy node drawn once, the free ones blank
    assert names == [k.name for k in result.kinds]
    assert grid.shape[0] == len(set(result.leaf_of_node))


@pytest.mark.parametrize(("args", "where"), [
    (["--days", "0"], "--days"), (["--days", "1e9"], "--days"), (["--samples", "0"], "--samples"),
    (["--seed", "-1"], "--seed"), (["--qps", "100000"], "--qps"), (["--routing", "bogus"], "--routing"),
    (["--fabric", "nope"], "--fabric")])
def test_fleet_bad_options_are_one_line_and_exit_2(small_mix, capsys, args, where):
    from fabricplan.cli.app import run

    assert run(["fleet", str(small_mix), *args]) == 2
    err = capsys.readouterr().err
    assert where in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_mix_that_would_draw_millions_of_runs_is_refused(small_mix, catalog):
    from fabricplan.fleet import run_fleet

    document = yaml.safe_load(small_mix.read_text())
    for job in document["jobs"]:
        job["duration_hours"] = 0.001  # 3.6 s runs: tens of millions over a month
    spec = fp.ClusterSpec.model_validate(document)
    with pytest.raises(InputError, match="job runs would arrive"):
        run_fleet(fp.design(spec, "roce-v2"), spec, catalog, days=30, samples=1)
