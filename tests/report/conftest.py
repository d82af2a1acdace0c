"""A realistic synthetic `CompareReport` for the renderer tests.

The cost part is genuine (the real cost model on a small spec); the performance, rules,
crossovers, scale curve and sensitivity are made up but internally consistent: utilisation is
compute / step time, cost per useful GPU-hour is TCO / (GPU-hours x weighted utilisation), and the
scale curve at the cluster's size equals the fabrics' own numbers.
"""

from __future__ import annotations

import pytest

from fabricplan.catalog import load_catalog
from fabricplan.cost import cost
from fabricplan.decide.models import (
    CompareReport,
    Crossover,
    FabricOutcome,
    JobOutcome,
    Recommendation,
    RuleResult,
    ScalePoint,
    SensitivityRow,
)
from fabricplan.spec import parse_spec

FABRICS = ("ethernet-tcp", "roce-v2", "infiniband-ndr")
GPUS = 256
HOURS_PER_YEAR = 8760
PEAK_MFU_AT_FULL_UTILISATION = 0.55
SMALL_MESSAGE_LATENCY_US = {"ethernet-tcp": 28.0, "roce-v2": 5.6, "infiniband-ndr": 3.9}

# (job, share, GPUs, tokens per step): step parts per fabric as (compute, bubble, {kind: exposed seconds}).
JOBS = {
    "llama3-70b-pretrain": (0.7, 256, 16.8e6, {
        "ethernet-tcp": (10.0, 0.9, {"tp": 0.2, "pp": 0.5, "dp": 2.6}),
        "roce-v2": (10.0, 0.9, {"tp": 0.1, "pp": 0.2, "dp": 0.4}),
        "infiniband-ndr": (10.0, 0.9, {"tp": 0.08, "pp": 0.15, "dp": 0.27}),
    }),
    "mixtral-8x22b-moe": (0.3, 128, 4.2e6, {
        "ethernet-tcp": (3.8, 0.3, {"ep": 1.6, "dp": 0.4}),
        "roce-v2": (3.8, 0.3, {"ep": 0.35, "dp": 0.15}),
        "infiniband-ndr": (3.8, 0.3, {"ep": 0.25, "dp": 0.1}),
    }),
}

SCALE_GPUS = (64, 128, 256, 512, 1024, 2048, 4096, 8192)
SCALE_CURVES = {  # cost per useful GPU-hour; the 256-GPU point is replaced by the computed value
    "ethernet-tcp": (3.05, 3.45, None, 4.30, 4.45, 4.60, 4.80, 5.00),
    "roce-v2": (3.20, 3.25, None, 3.33, 3.36, 3.38, 3.41, 3.44),
    "infiniband-ndr": (3.15, 3.10, None, 3.20, 3.28, 3.40, 3.52, 3.60),
}

RULES = [
    RuleResult(id="scale.small-cluster", title="Small clusters rarely need RDMA", kind="scale",
               citation="fabricplan docs/decision-rules.md §1", thresholds={"max_gpus": 64}, fired=False,
               favours=["ethernet-tcp"], message="256 GPUs is above the 64-GPU small-cluster threshold."),
    RuleResult(id="workload.moe-alltoall", title="MoE all-to-all needs low-latency RDMA", kind="workload",
               citation="DeepSeek-V3 technical report (2024), §3.2", thresholds={"ep_share": 0.1}, fired=True,
               favours=["roce-v2", "infiniband-ndr"], disfavours=["ethernet-tcp"],
               message="mixtral-8x22b-moe spends 26% of its step in exposed expert-parallel all-to-all on TCP."),
    RuleResult(id="sla.tail-latency", title="Tight tail-latency SLA favours InfiniBand", kind="sla",
               citation="NVIDIA, InfiniBand vs Ethernet for AI (2023)", fired=False,
               favours=["infiniband-ndr"], message="No tail-latency SLA in the spec."),
    RuleResult(id="estate.ethernet-ops", title="An Ethernet-only operations team favours RoCE", kind="estate",
               citation="Meta, RDMA over Ethernet for Distributed AI Training at Meta Scale, SIGCOMM 2024",
               fired=True, favours=["roce-v2"], message="The spec's estate is Ethernet-only: no InfiniBand skills."),
    RuleResult(id="operations.lossless-maturity", title="Lossless Ethernet needs PFC/ECN tuning skills",
               kind="operations", citation="Microsoft, RDMA over Commodity Ethernet at Scale, SIGCOMM 2016",
               fired=False, disfavours=["roce-v2"], message="Operations maturity is 'high': PFC tuning is in reach."),
    RuleResult(id="check.tcp-exposed-comm", title="TCP exposes too much communication", kind="check",
               citation="fabricplan docs/performance.md", thresholds={"max_exposed_comm_share": 0.25}, fired=True,
               excludes=["ethernet-tcp"], message="ethernet-tcp exposes 26.2% of the MoE step (limit 25%)."),
]

CROSSOVERS = [
    Crossover(fabric_a="ethernet-tcp", fabric_b="roce-v2", gpus=128, leader_below="ethernet-tcp",
              leader_above="roce-v2", note="TCP's exposed all-reduce grows with the data-parallel degree."),
    Crossover(fabric_a="ethernet-tcp", fabric_b="infiniband-ndr", gpus=128, leader_below="ethernet-tcp",
              leader_above="infiniband-ndr", note="Same cause as ethernet-tcp vs roce-v2."),
    Crossover(fabric_a="roce-v2", fabric_b="infiniband-ndr", gpus=2048, leader_below="infiniband-ndr",
              leader_above="roce-v2", note="InfiniBand needs a third switch tier from 2,048 GPUs at radix 64."),
]

SENSITIVITY = [
    SensitivityRow(factor="switch prices", low_label="-30%", high_label="+30%", winner_low="infiniband-ndr",
                   winner_high="infiniband-ndr", flips=False,
                   metric_change_low={"ethernet-tcp": -0.016, "roce-v2": -0.016, "infiniband-ndr": -0.009},
                   metric_change_high={"ethernet-tcp": 0.016, "roce-v2": 0.016, "infiniband-ndr": 0.009}),
    SensitivityRow(factor="optics prices", low_label="-30%", high_label="+30%", winner_low="infiniband-ndr",
                   winner_high="infiniband-ndr", flips=False,
                   metric_change_low={"ethernet-tcp": -0.009, "roce-v2": -0.009, "infiniband-ndr": -0.009},
                   metric_change_high={"ethernet-tcp": 0.009, "roce-v2": 0.009, "infiniband-ndr": 0.009}),
    SensitivityRow(factor="energy price", low_label="$0.06/kWh", high_label="$0.18/kWh",
                   winner_low="infiniband-ndr", winner_high="infiniband-ndr", flips=False,
                   metric_change_low={"ethernet-tcp": -0.02, "roce-v2": -0.02, "infiniband-ndr": -0.02},
                   metric_change_high={"ethernet-tcp": 0.04, "roce-v2": 0.04, "infiniband-ndr": 0.04}),
    SensitivityRow(factor="exposed communication (model error)", low_label="-50%", high_label="+50%",
                   winner_low="infiniband-ndr", winner_high="infiniband-ndr", flips=False,
                   metric_change_low={"ethernet-tcp": -0.15, "roce-v2": -0.03, "infiniband-ndr": -0.02},
                   metric_change_high={"ethernet-tcp": 0.20, "roce-v2": 0.04, "infiniband-ndr": 0.03}),
    SensitivityRow(factor="InfiniBand price premium", low_label="list", high_label="+40%",
                   winner_low="infiniband-ndr", winner_high="roce-v2", flips=True,
                   metric_change_low={"ethernet-tcp": 0.0, "roce-v2": 0.0, "infiniband-ndr": 0.0},
                   metric_change_high={"ethernet-tcp": 0.0, "roce-v2": 0.0, "infiniband-ndr": 0.08}),
    SensitivityRow(factor="operations FTE for lossless Ethernet", low_label="0.5x", high_label="2x",
                   winner_low="infiniband-ndr", winner_high="infiniband-ndr", flips=False,
                   metric_change_low={"ethernet-tcp": 0.0, "roce-v2": -0.01, "infiniband-ndr": 0.0},
                   metric_change_high={"ethernet-tcp": 0.0, "roce-v2": 0.03, "infiniband-ndr": 0.0}),
]


def _job(name: str, share: float, gpus: int, tokens_per_step: float, parts) -> JobOutcome:
    compute, bubble, comm = parts
    step = compute + bubble + sum(comm.values())
    utilisation = compute / step
    return JobOutcome(
        job=name, share=share, gpus=gpus, step_time_s=step, compute_s=compute, bubble_s=bubble,
        exposed_comm_s=comm, exposed_comm_share=sum(comm.values()) / step, gpu_utilisation=utilisation,
        mfu=utilisation * PEAK_MFU_AT_FULL_UTILISATION, tokens_per_s=tokens_per_step / step, token_budget=None,
        run_gpu_hours=None, run_cost_usd=None)


def _catalog():
    """The bundled catalog with InfiniBand's NVIDIA LinkX optics at their third-party twins' prices:
    the synthetic story below has InfiniBand cheapest per useful GPU-hour at 256 GPUs."""
    catalog = load_catalog()
    values = {}
    for optic_id in catalog.section("optics"):
        twin = optic_id.removesuffix("_nv")
        if twin != optic_id and twin in catalog.section("optics"):
            price = catalog.optic(twin).price_usd
            values[f"optics.{optic_id}.price_usd"] = {"low": price.low, "default": price.default, "high": price.high}
    return catalog.with_values(values)


def make_report(spec_name: str = "mid-256-h100", job_names: dict[str, str] | None = None) -> CompareReport:
    """The synthetic report; `job_names` renames jobs (to test escaping of user text)."""
    job_names = job_names or {}
    spec = parse_spec({"name": spec_name, "cluster": {"gpu": "h100-sxm", "gpus": GPUS, "include_servers": True},
                       "fabrics": list(FABRICS)})
    costs = {fabric.fabric: fabric for fabric in cost(spec, _catalog()).fabrics}
    outcomes = []
    for fabric_id in FABRICS:
        fabric_cost = costs[fabric_id]
        jobs = [_job(job_names.get(name, name), share, gpus, tokens, per_fabric[fabric_id])
                for name, (share, gpus, tokens, per_fabric) in JOBS.items()]
        utilisation = sum(job.share * job.gpu_utilisation for job in jobs)
        gpu_hours = GPUS * HOURS_PER_YEAR * fabric_cost.horizon_years
        tco = fabric_cost.cluster_tco_usd
        outcomes.append(FabricOutcome(
            fabric=fabric_id, name=fabric_cost.fabric_name, family=fabric_id.split("-")[0], cost=fabric_cost,
            jobs=jobs, weighted_gpu_utilisation=utilisation,
            weighted_mfu=sum(job.share * job.mfu for job in jobs),
            small_message_latency_us=SMALL_MESSAGE_LATENCY_US[fabric_id], gpu_hours_total=gpu_hours,
            useful_gpu_hours=gpu_hours * utilisation, tco_usd=tco, tco_basis="cluster",
            cost_per_useful_gpu_hour_usd=tco / (gpu_hours * utilisation)))
    ranked = sorted(outcomes, key=lambda outcome: outcome.cost_per_useful_gpu_hour_usd)
    for rank, outcome in enumerate(ranked, start=1):
        outcome.rank = rank
    ranking = [outcome.fabric for outcome in ranked]
    by_id = {outcome.fabric: outcome for outcome in outcomes}
    scale = [ScalePoint(gpus=gpus, cost_per_useful_gpu_hour_usd={
        fabric: by_id[fabric].cost_per_useful_gpu_hour_usd if gpus == GPUS else curve[index]
        for fabric, curve in SCALE_CURVES.items()}) for index, gpus in enumerate(SCALE_GPUS)]
    recommendation = Recommendation(
        ranking=ranking, recommended=ranking[0],
        reasons=[f"{ranking[0]} has the lowest cost per useful GPU-hour "
                 f"(${by_id[ranking[0]].cost_per_useful_gpu_hour_usd:.2f}).",
                 "Rule workload.moe-alltoall favours an RDMA fabric for the MoE job."],
        why_not={"roce-v2": "5% dearer per useful GPU-hour at 256 GPUs; leads only from 2,048 GPUs.",
                 "ethernet-tcp": "Excluded by check.tcp-exposed-comm: 26% of the MoE step is exposed all-to-all."},
        disagreements=["Rule estate.ethernet-ops favours roce-v2, but infiniband-ndr is cheaper per useful "
                       "GPU-hour."],
        close_call=False)
    return CompareReport(
        spec_name=spec_name, gpus=GPUS, horizon_years=costs[FABRICS[0]].horizon_years, fabrics=outcomes,
        rules=RULES, recommendation=recommendation, crossovers=CROSSOVERS, scale_curve=scale,
        sensitivity=SENSITIVITY, notes=["Performance numbers are synthetic (test fixture)."])


@pytest.fixture(scope="session")
def compare_report() -> CompareReport:
    return make_report()
