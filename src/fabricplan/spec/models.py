"""The cluster spec: what the user writes in cluster.yaml."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, PositiveInt, PrivateAttr, Tag, model_validator

from fabricplan.catalog.models import (
    MAX_BANDWIDTH_GBYTES_PER_S,
    MAX_DEVICE_POWER_W,
    MAX_HBM_GBYTES,
    MAX_RADIX,
    OpticsBasis,
    PeakTflops,
)
from fabricplan.spec.job import JobSpec
from fabricplan.spec.serving import ServingJobSpec

TopologyStyle = Literal["rail_optimized", "leaf_spine", "fat_tree", "rail_only", "multi_plane"]
Maturity = Literal["none", "basic", "experienced", "expert"]
DEFAULT_FABRICS = ("ethernet-tcp", "roce-v2", "infiniband-ndr")
#: Network capex categories a support contract can cover (cost.bom.CATEGORIES).
SupportCategory = Literal["switches", "nics", "optics", "cables"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class GpuInline(Strict):
    """A GPU not in the catalog, described inline."""

    id: str = "custom-gpu"
    architecture: str = "hopper"
    peak_dense_tflops: PeakTflops = Field(description="e.g. {bf16: 989, fp8: 1979}")
    hbm_gbytes: float = Field(gt=0, le=MAX_HBM_GBYTES, description="GPU memory [GB] (at most 10^5)")
    nvlink_bandwidth_gbytes_per_s: float = Field(ge=0, le=MAX_BANDWIDTH_GBYTES_PER_S)
    power_w: float = Field(gt=0, le=MAX_DEVICE_POWER_W)
    compute_capability: int | None = Field(
        default=None, gt=0, le=1000,
        description="CUDA compute capability x10 (80 = sm80, 90 = sm90), selects NCCL's tuner tables; "
                    "None = from architecture")
    nvlink_links: int | None = Field(
        default=None, ge=0, le=1000,
        description="NVLink links per GPU (NCCL's intra-node bandwidth = links x its per-link rate); "
                    "None = nvlink_bandwidth_gbytes_per_s / per-link rate of the architecture")
    achievable_fraction_of_peak: float | None = Field(
        default=None, gt=0, le=1,
        description="Sustained share of peak dense FLOPs in transformer training (step-time model); "
                    "None = perf default")


class Cluster(Strict):
    gpu: str | GpuInline = Field(description="Catalog GPU id (fabricplan catalog list gpus) or inline numbers")
    gpus: PositiveInt = Field(le=10_000_000, description="Total GPUs (at most 10 million: a sanity bound, "
                                                         "five times the largest 4-tier radix-64 fabric)")
    gpus_per_node: PositiveInt = Field(default=8, le=1024, description="GPUs per node (at most 1,024, a sanity "
                                                                       "bound; an NVL72 rack is 72)")
    scale_up_domain: PositiveInt | None = Field(
        default=None, le=10_000_000, description="GPUs in one NVLink island; None = gpus_per_node")
    nics_per_node: PositiveInt = Field(default=8, le=1024,
                                       description="Backend (scale-out) NICs per node (at most 1,024)")
    nvlink_domain_gpus: PositiveInt | None = Field(
        default=None, le=1024,
        description="GPUs in one multi-node NVLink domain whose NVLink switches join several nodes (hosts of "
                    "gpus_per_node GPUs and nics_per_node NICs each), e.g. 72 for GB200/GB300 NVL72 with "
                    "gpus_per_node 4; a multiple of gpus_per_node, and gpus a multiple of it (whole domains). "
                    "None = one node is one NVLink domain")
    nic_speed_gbps: Literal[100, 200, 400, 800] | None = Field(
        default=None, description="Per-NIC port speed; None = each fabric's own link rate")
    server: str | None = Field(default=None, description="Catalog server id; None = the one for the GPU")
    include_servers: bool = Field(default=True, description="Price servers to report the network share")
    grow_to_gpus: PositiveInt | None = Field(
        default=None, le=10_000_000,
        description="Planned growth: the fabric is designed for this many GPUs (its switch tiers, so growing needs "
                    "no new tier or re-cabling of the existing ones) and the first phase (`gpus`) is what is "
                    "costed and modelled; None = no planned growth. At least `gpus`, a multiple of gpus_per_node")

    @model_validator(mode="after")
    def _shape(self) -> Cluster:
        if self.gpus % self.gpus_per_node:
            raise ValueError(
                f"gpus ({self.gpus}) must be a multiple of gpus_per_node ({self.gpus_per_node})")
        nvl = self.nvlink_domain_gpus
        if nvl is not None:
            if nvl % self.gpus_per_node:
                raise ValueError(f"nvlink_domain_gpus ({nvl}) must be a multiple of gpus_per_node "
                                 f"({self.gpus_per_node}): an NVLink domain holds whole hosts")
            if self.gpus % nvl:
                raise ValueError(f"gpus ({self.gpus}) must be a multiple of nvlink_domain_gpus ({nvl}): the "
                                 "cluster is built of whole NVLink domains (racks)")
            if self.scale_up_domain is not None and self.scale_up_domain > nvl:
                raise ValueError(f"scale_up_domain ({self.scale_up_domain}) exceeds nvlink_domain_gpus ({nvl})")
            if self.grow_to_gpus is not None and self.grow_to_gpus % nvl:
                raise ValueError(f"grow_to_gpus ({self.grow_to_gpus}) must be a multiple of nvlink_domain_gpus "
                                 f"({nvl})")
        domain = self.scale_up_domain
        if domain is not None:
            if domain % self.gpus_per_node:
                raise ValueError(f"scale_up_domain ({domain}) must be a multiple of gpus_per_node "
                                 f"({self.gpus_per_node})")
            if domain > self.gpus:
                raise ValueError(f"scale_up_domain ({domain}) exceeds gpus ({self.gpus})")
        grow = self.grow_to_gpus
        if grow is not None and (grow < self.gpus or grow % self.gpus_per_node):
            raise ValueError(f"grow_to_gpus ({grow}) must be at least gpus ({self.gpus}) and a multiple of "
                             f"gpus_per_node ({self.gpus_per_node})")
        return self

    @property
    def nodes(self) -> int:
        return self.gpus // self.gpus_per_node

    @property
    def scale_up_gpus(self) -> int:
        return self.scale_up_domain or self.nvlink_domain_gpus or self.gpus_per_node

    @property
    def domain_gpus(self) -> int:
        """GPUs NCCL treats as one node: the NVLink domain (several hosts on NVL72), else a node."""
        return self.nvlink_domain_gpus or self.gpus_per_node

    @property
    def domain_nics(self) -> int:
        """Scale-out NICs of one NVLink domain: every host's NICs (72 on a GB200 NVL72 rack)."""
        return self.nics_per_node * (self.domain_gpus // self.gpus_per_node)

    @property
    def domains(self) -> int:
        return self.gpus // self.domain_gpus


class Topology(Strict):
    style: TopologyStyle = "rail_optimized"
    tiers: Literal["auto", 1, 2, 3, 4] = "auto"
    oversubscription: list[float] = Field(
        default_factory=lambda: [1.0, 1.0],
        description="Down:up ratio per tier, [leaf, spine]; 1.0 = non-blocking (at most 1,000:1)",
        min_length=1, max_length=2)
    reserved_leaf_ports: int = Field(default=0, ge=0, le=MAX_RADIX,
                                     description="Leaf ports kept for management/UFM")
    planes: int = Field(default=2, ge=2, le=8,
                        description="multi_plane only: independent planes; each NIC has one port on each, at "
                                    "1/planes of its speed (Alibaba HPN: 2 x 200G per 400G NIC)")

    @property
    def plane_count(self) -> int:
        """The planes the fabric is built of: ``planes`` for a multi-plane style, else 1."""
        return self.planes if self.style == "multi_plane" else 1

    @model_validator(mode="after")
    def _ratios(self) -> Topology:
        for index, ratio in enumerate(self.oversubscription):
            if ratio < 1.0:
                raise ValueError(f"oversubscription[{index}] must be >= 1.0 (down:up), got {ratio}")
            if ratio > 1000.0:
                raise ValueError(f"oversubscription[{index}] must be at most 1000 (down:up), got {ratio}")
        return self


class FabricChoice(Strict):
    """A fabric profile with optional hardware overrides (catalog ids)."""

    profile: str
    switch: str | None = None
    nic: str | None = None
    switch_optic: str | None = None
    nic_optic: str | None = None
    interswitch_optic: str | None = None
    sharp: bool | None = Field(
        default=None, description="SHARP in-network reduction (NCCL CollNet) on or off; None = as installed "
                                  "(the profile's option default: off for InfiniBand)")
    adaptive_routing: bool | None = Field(
        default=None, description="Adaptive routing on or off; None = as installed (the profile's option default)")
    reuse_estate: int | None = Field(
        default=None, ge=0, description="Build this fabric on estate.switches[i], the team's owned switches (the "
                                        "design search tries each entry of the same family by itself)")

    def options(self) -> dict[str, bool]:
        """The options this choice sets (SHARP, adaptive routing), leaving the others as installed."""
        return {name: value for name in ("sharp", "adaptive_routing") if (value := getattr(self, name)) is not None}


class Economics(Strict):
    horizon_years: float = Field(default=4.0, gt=0, le=20)
    price_point: Literal["low", "default", "high"] = "default"
    # Upper bounds are sanity bounds (the catalog's PARAMETER_BOUNDS, with the same reasons).
    energy_usd_per_kwh: float | None = Field(
        default=None, ge=0, le=10, description="None = catalog default; at most 10 (the dearest retail "
                                               "electricity is below 1 USD/kWh)")
    pue: float | None = Field(default=None, ge=1.0, le=3.0)
    colo_usd_per_kw_month: float | None = Field(default=None, ge=0, le=10_000,
                                                description="At most 10,000 (wholesale rents are ~100-200)")
    include_colocation: bool = True
    support_fraction_per_year: float | None = Field(default=None, ge=0, le=1)
    fte_cost_usd_per_year: float | None = Field(
        default=None, ge=0, le=10_000_000, description="At most 10 million (fully loaded costs are ~0.2-0.4 million)")
    optics_basis: OpticsBasis | None = Field(
        default=None, description="Price every fabric's optics and cables at this basis: 'vendor' (the switch "
                                  "vendor's qualified parts, e.g. NVIDIA LinkX) or 'third_party'; None = each "
                                  "fabric's catalog default (costs.optics_basis)")
    optics_basis_by_fabric: dict[str, OpticsBasis] = Field(
        default_factory=dict, description="Per fabric profile id, its optics basis (overrides optics_basis)")
    support_covers: list[SupportCategory] | None = Field(
        default=None, min_length=1,
        description="Network capex categories the support contract covers; None = switches and NICs, with optics "
                    "and cables covered by the catalog's support_covers_optics_share / support_covers_cables_share")


class Operations(Strict):
    maturity: Maturity = Field(default="basic", description="The team's lossless-Ethernet / RDMA skill")
    existing_ethernet: bool = Field(default=False, description="An Ethernet estate and team already exist")
    topology_aware_scheduling: bool = False
    scheduler_policy: Literal["packed", "first_fit", "random"] | None = Field(
        default=None, description="How the fleet's scheduler places jobs (fabricplan fleet): packed (topology-aware, "
                                  "fewest leaf groups), first_fit (lowest free nodes) or random; None = packed with "
                                  "topology_aware_scheduling, random without")
    checkpoint_interval_minutes: float | None = Field(
        default=None, gt=0, le=1e6, description="Checkpoint interval; None = Daly's optimum from the failure rate")
    checkpoint_write_minutes: float | None = Field(
        default=None, ge=0, le=1e4, description="Minutes a checkpoint stalls training; None = catalog default")
    restart_minutes: float | None = Field(
        default=None, ge=0, le=1e5, description="Minutes from an interruption to training again; None = catalog")


class OwnedSwitches(Strict):
    """Switches a team already owns and could reuse as a backend (issue 29)."""

    model: str = Field(description="Catalog switch id (e.g. sw_eth_th4)")
    count: PositiveInt = Field(le=100_000, description="How many the team owns")
    speed_gbps: PositiveInt = Field(le=1600, description="The speed their ports run at (e.g. 100 for a 100G estate)")
    ports_free: PositiveInt | None = Field(
        default=None, le=MAX_RADIX, description="Ports free on each at that speed; None = all of them")


class Estate(Strict):
    """What the team owns: switches it could reuse (each entry a design the search tries: reuse costs no
    capex for the owned switches, but runs at their speed and within their count and free ports)."""

    switches: list[OwnedSwitches] = Field(min_length=1, max_length=16)
    cabling: bool = Field(default=False, description="The cables and optics between the owned switches are owned too")


class Constraints(Strict):
    latency_sla_us: float | None = Field(default=None, gt=0, le=1e6,
                                         description="Small-message latency SLA [us] (at most one second)")


class Phase(Strict):
    """A period of the horizon with its own job mix (training this year, serving next): the jobs that
    name it share the cluster during it."""

    name: str = Field(min_length=1, max_length=80)
    hours_share: float = Field(gt=0, le=1, description="Share of the horizon's hours in this phase")


def _job_kind(value: object) -> str:
    """The union tag of a ``jobs[]`` entry: ``Serving`` for ``kind: serving``, else ``Training`` (the
    default kind; the tags are CamelCase so error paths drop them: ``io._is_union_tag``)."""
    kind = value.get("kind", "training") if isinstance(value, dict) else getattr(value, "kind", "training")
    return "Serving" if kind == "serving" else "Training"


#: A job of the mix: training (``JobSpec``) or serving (``ServingJobSpec``), told apart by ``kind``.
AnyJob = Annotated[Annotated[JobSpec, Tag("Training")] | Annotated[ServingJobSpec, Tag("Serving")],
                   Discriminator(_job_kind)]


class ClusterSpec(Strict):
    """A cluster to plan: hardware, topology, fabrics to compare, economics, operations and jobs."""

    name: str = "cluster"
    cluster: Cluster
    topology: Topology = Field(default_factory=Topology)
    fabrics: list[str | FabricChoice] = Field(default_factory=lambda: list(DEFAULT_FABRICS), min_length=1)
    economics: Economics = Field(default_factory=Economics)
    operations: Operations = Field(default_factory=Operations)
    constraints: Constraints = Field(default_factory=Constraints)
    estate: Estate | None = Field(default=None, description="Owned switches the design search may reuse")
    phases: list[Phase] = Field(default_factory=list, max_length=32,
                                description="Periods of the horizon, each with the jobs that name it; none = one")
    jobs: list[AnyJob] = Field(default_factory=list)
    #: The file the spec was read from (set by load_spec), so errors found later name it.
    _source: str | None = PrivateAttr(default=None)

    @model_validator(mode="before")
    @classmethod
    def _empty_sections(cls, data: object) -> object:
        # A YAML section left with only comments parses as null: treat it as "all defaults".
        if isinstance(data, dict):
            return {k: v for k, v in data.items()
                    if not (v is None and k in ("topology", "economics", "operations", "constraints", "jobs"))}
        return data

    @model_validator(mode="after")
    def _jobs_fit(self) -> ClusterSpec:
        for job in self.jobs:
            if job.gpus is not None and job.gpus > self.cluster.gpus:
                raise ValueError(f"job '{job.name}' asks for {job.gpus} GPUs; the cluster has {self.cluster.gpus}")
        names = [phase.name for phase in self.phases]
        if len(set(names)) != len(names):
            raise ValueError(f"phases names a phase twice: {names}")
        hours = sum(phase.hours_share for phase in self.phases)
        if hours > 1.0 + 1e-9:
            raise ValueError(f"phase hours shares add up to {hours:.3g}; they must not exceed 1")
        for index, job in enumerate(self.jobs):
            if self.phases and job.phase not in names:
                raise ValueError(f"jobs[{index}].phase: '{job.phase}' is not one of the phases ({', '.join(names)})")
            if not self.phases and job.phase is not None:
                raise ValueError(f"jobs[{index}].phase: '{job.phase}' names a phase, but the spec has no phases")
        for phase in names or [None]:
            total = sum(job.share for job in self.jobs if job.phase == phase)
            if total > 1.0 + 1e-9:
                where = f" in phase '{phase}'" if phase else ""
                raise ValueError(f"job shares{where} add up to {total:.3g}; they must not exceed 1")
        names = [choice if isinstance(choice, str) else choice.profile for choice in self.fabrics]
        if len(set(names)) != len(names):
            raise ValueError(f"fabrics lists a profile twice: {names}")
        return self

    def time_share(self, job) -> float:
        """The share of the horizon's cluster time spent on ``job``: its share within its phase times the
        phase's hours share (its share alone without phases)."""
        if not self.phases:
            return job.share
        return job.share * next(p.hours_share for p in self.phases if p.name == job.phase)

    def phase_spec(self, phase: str) -> ClusterSpec:
        """The spec during one phase: its jobs alone, no phases (what runs side by side then)."""
        return self.model_copy(update={"phases": [], "jobs": [job.model_copy(update={"phase": None})
                                                               for job in self.jobs if job.phase == phase]})

    def fabric_choices(self) -> list[FabricChoice]:
        return [FabricChoice(profile=c) if isinstance(c, str) else c for c in self.fabrics]

    @property
    def style_pinned(self) -> bool:
        """The spec writes ``topology.style`` itself, so the design search keeps it."""
        return "style" in self.topology.model_fields_set

    def open_design(self) -> ClusterSpec:
        """The same spec with ``topology.style`` left to the design search (the rest of the
        topology section as written)."""
        if not self.style_pinned:
            return self
        written = {name: getattr(self.topology, name) for name in self.topology.model_fields_set if name != "style"}
        return self.model_copy(update={"topology": Topology(**written)})
