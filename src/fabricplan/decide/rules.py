"""The rules half of the decision: the seeds' rules of thumb as small, cited, overridable units.

A rule is a constraint (it rules fabrics out: the latency SLA, lossless Ethernet without the skills)
or advice: the seeds' claim, shown beside the numbers with its citation and where its subject acts
in the chain (``mechanism``). Advice never votes: the numbers rank (fabricplan.decide.recommend).

Each rule is a function ``RuleContext -> RuleResult`` registered in ``RULES``. Its thresholds are
catalog parameters (``catalog/data/decision.yaml``, each with the seed sentence it encodes), so a
user overrides them with ``--catalog``. Seeds: [S1] the RoCE-vs-InfiniBand article (2026-04-12),
[S2] the enterprise Ethernet/RoCE/InfiniBand guide: entries of the catalog's ``sources`` (their
titles as published with the English translation), summarised in docs/reference/README.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from fabricplan.catalog import Catalog
from fabricplan.decide.models import FabricOutcome, RuleResult
from fabricplan.spec import ClusterSpec

ALLREDUCE_KINDS = ("dp", "tp")  # gradient and tensor-parallel reductions


@dataclass(frozen=True)
class RuleContext:
    spec: ClusterSpec
    catalog: Catalog
    outcomes: dict[str, FabricOutcome]

    @property
    def gpus(self) -> int:
        return self.spec.cluster.gpus

    def threshold(self, name: str) -> float:
        return self.catalog.parameter(name).value.at("default")

    def cite(self, source_id: str) -> str:
        """How a citation names a catalog source (``sources.yaml``): "[S1] <name> (<date>)"."""
        return self.catalog.get("sources", source_id).label()

    def fabrics(self, *, family: str | None = None, transport: str | None = None,
                lossless: bool | None = None) -> list[str]:
        """Fabric ids in the comparison that match the profile filters."""
        chosen = []
        for fabric_id in self.outcomes:
            profile = self.catalog.fabric(fabric_id)
            if family is not None and profile.family != family:
                continue
            if transport is not None and profile.transport != transport:
                continue
            if lossless is not None and profile.lossless != lossless:
                continue
            chosen.append(fabric_id)
        return chosen

    @property
    def roce(self) -> list[str]:
        return self.fabrics(family="ethernet", transport="rdma")

    @property
    def ethernet(self) -> list[str]:
        return self.fabrics(family="ethernet")

    @property
    def infiniband(self) -> list[str]:
        return self.fabrics(family="infiniband")


Rule = Callable[[RuleContext], RuleResult]
#: A citation's source mark: "[S1]", the id of a `sources` entry of the catalog.
CITED_SOURCE = re.compile(r"\[(S\d+)\]")


def cited_source_ids(citations: list[str]) -> list[str]:
    """The catalog source ids the citations name ("[S1]" -> "S1"), in order of first mention."""
    return list(dict.fromkeys(m.group(1) for citation in citations for m in CITED_SOURCE.finditer(citation)))


def single_node(ctx: RuleContext) -> RuleResult:
    """SCALE001: one 8-GPU node keeps its traffic on NVLink; Ethernet/RoCE is enough."""
    limit = ctx.threshold("rule_single_node_max_gpus")
    fired = ctx.gpus <= limit
    return RuleResult(
        id="SCALE001", title="Single node: Ethernet or RoCE", kind="scale",
        mechanism="in the numbers: the step-time model keeps a single node's collectives on NVLink, so the fabric "
                  "changes no step time there",
        citation=f"{ctx.cite('S1')}, decision framework: 单节点8卡以下…优先选择RoCE; {ctx.cite('S2')}, scenario 1",
        thresholds={"max_gpus": limit}, fired=fired, favours=ctx.ethernet if fired else [],
        message=(f"{ctx.gpus} GPUs fit in one node: collectives stay on NVLink and the scale-out fabric "
                 "carries almost nothing" if fired else f"{ctx.gpus} GPUs span more than one node"))


def roce_tco_band(ctx: RuleContext) -> RuleResult:
    """SCALE002: below ~100 GPUs RoCE has the TCO advantage."""
    limit = ctx.threshold("rule_roce_tco_advantage_below_gpus")
    fired = ctx.gpus < limit
    return RuleResult(
        id="SCALE002", title="Below ~100 GPUs RoCE has the TCO advantage", kind="scale",
        mechanism="in the numbers: the cost model prices every fabric's design at this size",
        citation=f"{ctx.cite('S1')}, TCO: 对于百卡以下规模的训练集群，RoCE的TCO优势明显",
        thresholds={"below_gpus": limit}, fired=fired, favours=ctx.roce if fired else [],
        message=f"{ctx.gpus} GPUs is {'below' if fired else 'not below'} the ~{limit:g}-GPU band")


def allreduce_share(outcomes: dict[str, FabricOutcome]) -> float:
    """Share of the job mix's communication time spent in all-reduce-style collectives (DP, TP),
    weighted by job share and averaged over the fabrics compared (so the order they are listed in
    does not matter)."""
    shares = []
    for outcome in outcomes.values():
        total = sum(job.share * sum(job.comm_s.values()) for job in outcome.jobs)
        reduce = sum(job.share * sum(job.comm_s.get(k, 0.0) for k in ALLREDUCE_KINDS) for job in outcome.jobs)
        shares.append(reduce / total if total > 0 else 0.0)
    return sum(shares) / len(shares) if shares else 0.0


def infiniband_allreduce(ctx: RuleContext) -> RuleResult:
    """SCALE003: above ~256 GPUs with frequent all-reduce (or SHARP), InfiniBand."""
    limit = ctx.threshold("rule_infiniband_allreduce_above_gpus")
    heavy = ctx.threshold("rule_allreduce_heavy_share")
    share = allreduce_share(ctx.outcomes)
    fired = ctx.gpus > limit and share >= heavy and bool(ctx.infiniband)
    return RuleResult(
        id="SCALE003", title="Above ~256 GPUs with frequent all-reduce: InfiniBand", kind="scale",
        mechanism="in the numbers: the step-time model times every all-reduce on each fabric's design",
        citation=f"{ctx.cite('S1')}, decision framework: 超过256卡…建议采用InfiniBand，尤其当…频繁的all-reduce同步或使用SHARP",
        thresholds={"above_gpus": limit, "allreduce_share": heavy}, fired=fired,
        favours=ctx.infiniband if fired else [],
        message=(f"{ctx.gpus} GPUs ({'above' if ctx.gpus > limit else 'not above'} ~{limit:g}) and "
                 f"{100 * share:.0f} % of communication time in all-reduce-style collectives "
                 f"({'at least' if share >= heavy else 'below'} {100 * heavy:.0f} %)"))


def infiniband_operations(ctx: RuleContext) -> RuleResult:
    """SCALE004: above ~500 GPUs InfiniBand's operations efficiency offsets its hardware premium."""
    limit = ctx.threshold("rule_infiniband_ops_efficiency_above_gpus")
    fired = ctx.gpus > limit and bool(ctx.infiniband)
    return RuleResult(
        id="SCALE004", title="Above ~500 GPUs InfiniBand's operations efficiency pays", kind="scale",
        mechanism="not modelled beyond staffing: no source quantifies the operations benefit; each fabric's "
                  "staffing (fabrics.yaml costs) and failure multipliers are what the numbers use",
        citation=f"{ctx.cite('S1')}, TCO: 超过五百卡时，InfiniBand的运维效率和性能稳定性带来的隐性收益通常能够抵消硬件成本差距",
        thresholds={"above_gpus": limit}, fired=fired, favours=ctx.infiniband if fired else [],
        message=(f"{ctx.gpus} GPUs is {'above' if ctx.gpus > limit else 'not above'} ~{limit:g}; the seed's "
                 "operations benefit is not quantified by any source, so fabricplan's opex does not include it"))


def latency_sla(ctx: RuleContext) -> RuleResult:
    """SLA001: fabrics whose small-message latency misses the SLA are ruled out."""
    sla = ctx.spec.constraints.latency_sla_us
    if sla is None:
        return RuleResult(id="SLA001", title="Latency SLA", kind="sla", fired=False, role="constraint",
                          citation=f"{ctx.cite('S1')}, business SLA: 延迟敏感的训练任务…InfiniBand的确定性延迟表现更可靠",
                          message="no latency SLA given (constraints.latency_sla_us)")
    latencies = {f: o.small_message_latency_us for f, o in ctx.outcomes.items()}
    missing = [f for f, value in latencies.items() if value > sla]
    shown = ", ".join(f"{f} {v:.2f} us" for f, v in latencies.items())
    return RuleResult(
        id="SLA001", title="Latency SLA", kind="sla", thresholds={"latency_sla_us": sla}, role="constraint",
        mechanism="a constraint: fabrics whose modelled small-message latency misses the SLA are ruled out",
        citation=f"{ctx.cite('S1')}, business SLA: 延迟敏感的训练任务…InfiniBand的确定性延迟表现更可靠",
        fired=bool(missing), excludes=missing,
        favours=[],
        message=f"SLA {sla:g} us; modelled small-message latency across the fabric: {shown}")


def small_models(ctx: RuleContext) -> RuleResult:
    """WORK001: a mix (over the next 12-24 months) mostly of small/medium models runs well on RoCE."""
    limit = ctx.threshold("rule_small_model_max_params_billion")
    majority = ctx.threshold("rule_small_model_mix_share")
    first = next(iter(ctx.outcomes.values()))
    total = sum(job.share for job in first.jobs)
    small = sum(job.share for job in first.jobs if job.params_billion <= limit)
    share = small / total if total > 0 else 0.0
    fired = bool(first.jobs) and share >= majority
    return RuleResult(
        id="WORK001", title="Mostly small and medium models: RoCE is sufficient", kind="workload",
        mechanism="in the numbers: the step-time model runs each job of the mix on each fabric",
        citation=(f"{ctx.cite('S1')}, business SLA: 对于推理或中小模型训练，RoCE的性能已足够; "
                  f"{ctx.cite('S2')}, step 1: 先确定未来 12 到 24 个月的主要任务类型"),
        thresholds={"max_params_billion": limit, "min_share_of_mix": majority}, fired=fired,
        favours=ctx.roce if fired else [], disfavours=ctx.infiniband if fired else [],
        message=(f"{100 * share:.0f} % of the job mix's time is on models of at most {limit:g}B parameters"
                 if first.jobs else "no jobs given"))


def existing_estate(ctx: RuleContext) -> RuleResult:
    """EST001: an existing Ethernet estate makes RoCE the balanced route below extreme scale."""
    limit = ctx.threshold("rule_estate_extreme_scale_gpus")
    owned = ctx.spec.estate is not None
    has_estate = ctx.spec.operations.existing_ethernet or owned
    fired = has_estate and ctx.gpus <= limit
    if not has_estate:
        message = "no existing Ethernet estate declared (operations.existing_ethernet)"
    elif fired:
        message = f"an Ethernet estate and team exist and {ctx.gpus} GPUs is not extreme scale (<= {limit:g})"
    else:
        message = (f"an Ethernet estate exists, but at {ctx.gpus} GPUs (> {limit:g}) compatibility alone "
                   "should not decide (misjudgement 2)")
    return RuleResult(
        id="EST001", title="Existing Ethernet estate: RoCE is the balanced route", kind="estate",
        mechanism=("in the numbers: the design search prices reusing the estate's owned switches (no capex for "
                   "them, their speed, count and free ports) beside a new backend; the team's skills are its "
                   "operations maturity" if owned else
                   "not modelled without an estate: give estate.switches (the owned switches) and the design search "
                   "prices their reuse; the team's skills are its operations maturity"),
        citation=f"{ctx.cite('S2')}, step 3: 已在大规模以太网上积累深厚…RoCE 往往是更平衡的路线",
        thresholds={"extreme_scale_gpus": limit}, fired=fired,
        favours=(ctx.roce or ctx.ethernet) if fired else [], message=message)


def operations_maturity(ctx: RuleContext) -> RuleResult:
    """OPS001: lossless Ethernet needs a team that keeps PFC/ETS/ECN/DCQCN aligned end to end."""
    maturity = ctx.spec.operations.maturity
    lossless_ethernet = ctx.fabrics(family="ethernet", lossless=True)
    fired = maturity == "none"
    citation = (f"{ctx.cite('S1')}, congestion control: 任何一端的配置不一致…RDMA直接断开连接…训练任务中断; "
                f"{ctx.cite('S2')}, hidden condition 3 (运维成熟度) and FAQ: 团队也不打算做精细网络调优…传统以太网可能已经足够")
    if fired:
        message = ("no lossless-Ethernet/RDMA operations skill: a PFC/ECN mismatch drops packets and RDMA "
                   "drops the connection, killing the job; plain Ethernet or InfiniBand's subnet manager "
                   "needs less tuning")
    else:
        message = f"operations maturity '{maturity}' can run a lossless fabric"
    return RuleResult(
        id="OPS001", title="Operations maturity for lossless Ethernet", kind="operations", citation=citation,
        role="constraint",
        mechanism=(f"a constraint at maturity 'none'; the maturity also acts through staffing "
                   f"(maturity_fte_multiplier_{maturity} on every fabric's operations staff)"),
        fired=fired, excludes=lossless_ethernet if fired else [], message=message)


def step_time_spread(outcomes: dict[str, FabricOutcome]) -> float:
    """Largest relative difference in weighted GPU utilisation between any two fabrics."""
    values = [o.weighted_gpu_utilisation for o in outcomes.values()]
    return (max(values) - min(values)) / max(values) if values and max(values) > 0 else 0.0


def network_matters(ctx: RuleContext) -> RuleResult:
    """MIX001: when the fabrics hardly change the step time, cost alone decides."""
    limit = ctx.threshold("rule_network_matters_min_spread")
    spread = step_time_spread(ctx.outcomes)
    fired = spread < limit
    # No fabric is favoured by name: the rule notes that cost dominates; the numbers rank anyway.
    return RuleResult(
        id="MIX001", title="The fabric barely changes the step time: cost decides", kind="workload",
        mechanism="in the numbers: cost per useful GPU-hour already weighs the small utilisation spread",
        citation=f"{ctx.cite('S2')}, hidden condition 1 (任务通信模式): 只有当任务本身高度依赖跨节点同步时，网络投入才更容易转化为训练提速",
        thresholds={"min_utilisation_spread": limit}, fired=fired,
        message=(f"GPU utilisation differs by {100 * spread:.2f} % between the best and worst fabric"
                 + ("; the ranking is by cost in effect" if fired else "")))


def scheduling(ctx: RuleContext) -> RuleResult:
    """SCHED001: without topology-aware scheduling, a large fabric's gains are not stable."""
    limit = ctx.threshold("rule_scheduling_min_gpus")
    fired = not ctx.spec.operations.topology_aware_scheduling and ctx.gpus >= limit
    return RuleResult(
        id="SCHED001", title="Topology-aware scheduling", kind="scheduling",
        mechanism="in the numbers: operations.topology_aware_scheduling sets the job placement the step-time "
                  "model runs (jobs straddling leaf groups without it)",
        citation=f"{ctx.cite('S2')}, hidden condition 2 (平台调度能力): 调度器无法感知…节点拓扑…任务仍然可能被放到错误的位置",
        thresholds={"min_gpus": limit}, fired=fired,
        favours=[f for f in ctx.outcomes if ctx.catalog.fabric(f).routing == "adaptive"] if fired else [],
        message=("no topology-aware scheduler at this size: jobs will straddle leaf groups and hash "
                 "collisions grow; the numbers assume rail-aligned placement, adaptive routing is more forgiving"
                 if fired else "placement is topology-aware or the cluster is small"))


RULES: tuple[Rule, ...] = (
    single_node, roce_tco_band, infiniband_allreduce, infiniband_operations, latency_sla, small_models,
    existing_estate, operations_maturity, network_matters, scheduling,
)


def evaluate_rules(spec: ClusterSpec, catalog: Catalog, outcomes: dict[str, FabricOutcome]) -> list[RuleResult]:
    """Run every registered rule on the numbers."""
    context = RuleContext(spec=spec, catalog=catalog, outcomes=outcomes)
    return [rule(context) for rule in RULES]
