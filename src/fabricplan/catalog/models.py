"""Typed catalog entries. Every entry carries `source` and `date`; unknown keys are errors."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

PricePoint = Literal["low", "default", "high"]
#: Whose optics a fabric is priced with: the switch vendor's qualified parts, or third-party (MSA) parts.
OpticsBasis = Literal["vendor", "third_party"]
OPTICS_BASES: tuple[OpticsBasis, ...] = ("vendor", "third_party")

# Sanity bounds. They are not defaults and no model uses them as numbers: they reject typos and
# absurd magnitudes (1e20 m cables, 1e300 TFLOP/s) that would otherwise overflow, divide by zero
# or rank a fabric on an infinite cost. Each is orders of magnitude beyond any real part.
#: Largest value of any price or catalog parameter (USD 10^12 is beyond any cluster's budget).
MAX_CATALOG_VALUE = 1e12
#: Peak dense TFLOP/s of one GPU: 10^6 (one exaFLOP/s) is ~100x a B200's FP4 peak; 0.1 below any
#: accelerator the step model is meant for.
MAX_PEAK_TFLOPS, MIN_PEAK_TFLOPS = 1e6, 0.1
#: Power of one device [W]: 10^6 W = a megawatt.
MAX_DEVICE_POWER_W = 1e6
#: Reach of an optic or cable [m]: 10^6 m = 1,000 km, beyond coherent ZR+ optics (~120 km at 400G).
MAX_REACH_M = 1e6
#: Link/port speed [Gb/s]: 10^5 = 100 Tb/s, 60x today's fastest 1.6T port.
MAX_SPEED_GBPS = 100_000
#: Ports of one switch at one speed (radix): 65,536, 128x today's largest breakout radix.
MAX_RADIX = 65_536
#: Latency [us]: 10^6 us = one second.
MAX_LATENCY_US = 1e6
#: Memory of one GPU [GB]: 10^5 GB = 100 TB (today: 192 GB).
MAX_HBM_GBYTES = 1e5
#: Bandwidth [GB/s]: 10^6 GB/s = 1 PB/s (NVLink 5: 1,800 GB/s per GPU).
MAX_BANDWIDTH_GBYTES_PER_S = 1e6

Tflops = Annotated[float, Field(ge=MIN_PEAK_TFLOPS, le=MAX_PEAK_TFLOPS,
                                description="TFLOP/s (sanity bounds 0.1 .. 10^6)")]
#: Peak dense TFLOP/s per precision: positive, or null where the GPU lacks the precision.
PeakTflops = dict[str, Tflops | None]


_DATE_TEXT = re.compile(r"(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?")


def check_date_text(value: str) -> str:
    """A real date written YYYY, YYYY-MM or YYYY-MM-DD (years 1900..2100); ValueError otherwise."""
    text = value.strip() if isinstance(value, str) else ""
    match = _DATE_TEXT.fullmatch(text)
    valid = False
    if match:
        year, month, day = (int(part) if part else 1 for part in match.groups())
        try:
            valid = 1900 <= dt.date(year, month, day).year <= 2100
        except ValueError:  # month 13, 31 April, ...
            valid = False
    if not valid:
        raise ValueError(f"date must be a real date written YYYY, YYYY-MM or YYYY-MM-DD (1900-2100), got {value!r}")
    return text


def plain(node: Any) -> Any:
    """A model (and the models inside lists, tuples and mappings) as plain dicts and lists, like
    ``model_dump()`` of these field-only models but without building a serializer: the catalog's
    models are built lazily (``defer_build``) and a dump must not build them."""
    if isinstance(node, BaseModel):
        fields = node.__dict__
        if set(fields) == {"root"} and hasattr(type(node), "__pydantic_root_model__"):
            return plain(fields["root"])
        return {key: plain(value) for key, value in fields.items()}
    if isinstance(node, Mapping):
        return {key: plain(value) for key, value in node.items()}
    if isinstance(node, list):
        return [plain(value) for value in node]
    if isinstance(node, tuple):
        return tuple(plain(value) for value in node)
    return node


class Strict(BaseModel):
    # defer_build: a model's validator is built on its first validation, not at import; a command
    # that reads only the bundled catalog unpickles validated objects and never builds them.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, defer_build=True)


class Spread(Strict):
    """How far the numbers of a block (an entry, a sourced block, a parameter) may be off: every
    catalog number carries a range (ARCHITECTURE.md "Every number has a range").

    A number of the block is covered, in this order, by

    * ``ranges``: explicit ``[low, high]`` from its sources, keyed by the number's dotted path inside
      the block (``power_w``, ``value``, ``compute.hbm.tbytes_per_s``; a key covers the paths below it);
    * ``exact``: ``true`` (every number of the block) or a list of such keys: definitions, physical
      constants, unit conversions, specification counts (ports, reach classes), constants copied from
      source code, and settings that are choices rather than estimates;
    * ``relative``: a stated confidence, ``value x (1 -/+ relative)``, for single-source values and
      estimates.

    A :class:`Range` with both ``low`` and ``high`` carries its own range (from its sources);
    ``reason`` says where the ranges come from or why a number is exact.
    """

    exact: bool | list[str] = False
    relative: float | None = Field(default=None, gt=0, le=1, description="Stated confidence: +/- this share")
    ranges: dict[str, tuple[float, float]] = Field(default_factory=dict,
                                                   description="[low, high] from the sources, by path in the block")
    reason: str = Field(min_length=3, description="Where the ranges come from, or why a number is exact")

    @field_validator("ranges")
    @classmethod
    def _ordered(cls, value: dict[str, tuple[float, float]]) -> dict[str, tuple[float, float]]:
        for key, (low, high) in value.items():
            if low > high:
                raise ValueError(f"ranges.{key}: low ({low:g}) must not exceed high ({high:g})")
        return value

    def bounds(self, sub: str, value: float) -> tuple[float, float, str] | None:
        """``(low, high, kind)`` of the number at ``sub`` (its dotted path inside the block) with this
        ``value``; kind ``"source"``, ``"exact"`` or ``"confidence"``; None when not covered."""
        def under(keys) -> bool:
            return any(sub == key or sub.startswith(key + ".") for key in keys)

        for key, (low, high) in self.ranges.items():
            if sub == key or sub.startswith(key + "."):
                return low, high, "source"
        if self.exact is True or (isinstance(self.exact, list) and under(self.exact)):
            return value, value, "exact"
        if self.relative is not None:
            return value * (1 - self.relative), value * (1 + self.relative), "confidence"
        return None


class Range(Strict):
    """A value with a low/default/high range for sensitivity analysis (low/high default to it)."""

    low: float | None = Field(default=None, ge=0, le=MAX_CATALOG_VALUE)
    default: float = Field(ge=0, le=MAX_CATALOG_VALUE, description="At most 10^12 (a sanity bound)")
    high: float | None = Field(default=None, ge=0, le=MAX_CATALOG_VALUE)

    @model_validator(mode="after")
    def _ordered(self) -> Range:
        if self.low is not None and self.low > self.default:
            raise ValueError(f"low ({self.low}) must not exceed default ({self.default})")
        if self.high is not None and self.high < self.default:
            raise ValueError(f"high ({self.high}) must not be below default ({self.default})")
        return self

    def at(self, point: PricePoint) -> float:
        """The value at a price point; a missing low/high falls back to the default."""
        value = {"low": self.low, "default": self.default, "high": self.high}[point]
        return self.default if value is None else value


def _date_as_text(value: object) -> object:
    """YAML reads an unquoted 2024-06-01 as a date and 2024 as an int: keep dates as text."""
    if isinstance(value, (dt.date, int)):
        return str(value)
    return value


class Entry(Strict):
    id: str
    name: str = ""
    source: str = Field(min_length=3, description="Where the numbers come from")
    date: str = Field(description="When the source was published or read (YYYY, YYYY-MM or YYYY-MM-DD)")
    confidence: Literal["A", "B", "C"] | None = None
    notes: str | None = None
    spread: Spread | None = Field(default=None, description="Ranges of the entry's numbers (Spread)")

    _date_text = field_validator("date", mode="before")(_date_as_text)
    _real_date = field_validator("date")(check_date_text)


class Switch(Entry):
    family: Literal["ethernet", "infiniband"]
    asic: str
    capacity_tbps: float = Field(gt=0, le=MAX_SPEED_GBPS)
    ports_by_speed_gbps: dict[Annotated[int, Field(gt=0, le=MAX_SPEED_GBPS)],
                              Annotated[int, Field(gt=0, le=MAX_RADIX)]] = Field(
        description="Radix at each port speed (breakout)")
    logical_ports_per_cage: dict[int, Annotated[int, Field(gt=0, le=64)]] = Field(default_factory=dict)
    port_to_port_latency_ns: float = Field(gt=0, le=MAX_LATENCY_US * 1000)
    power_w: float = Field(ge=0, le=MAX_DEVICE_POWER_W, description="Chassis power excluding optics")
    rack_units: int = Field(default=1, gt=0, le=100)
    price_usd: Range

    def radix_at(self, speed_gbps: int) -> int | None:
        return self.ports_by_speed_gbps.get(speed_gbps)

    def ports_per_cage(self, speed_gbps: int) -> int:
        """Logical ports one front-panel cage breaks out to at ``speed_gbps`` (1 when not given)."""
        return (self.logical_ports_per_cage or {}).get(speed_gbps, 1)


class Nic(Entry):
    families: list[Literal["ethernet", "infiniband"]]
    speed_gbps: int = Field(gt=0, le=MAX_SPEED_GBPS)
    rdma: bool = True
    sold_separately: bool = Field(
        default=True, description="False for a NIC that comes only with a cloud instance (AWS EFA): never picked "
                                  "for a fabric that does not name it")
    power_w: float = Field(ge=0, le=MAX_DEVICE_POWER_W)
    price_usd: Range


class Optic(Entry):
    kind: Literal["transceiver", "cable", "fibre"]
    speed_gbps: int = Field(gt=0, le=MAX_SPEED_GBPS)
    logical_ports: int = Field(default=1, gt=0, le=64, description="Logical links one module serves")
    reach_m: float = Field(gt=0, le=MAX_REACH_M, description="Reach [m]; at most 1,000 km (a sanity bound)")
    power_w: float = Field(ge=0, le=MAX_DEVICE_POWER_W)
    price_usd: Range
    basis: OpticsBasis = Field(
        default="third_party",
        description="Whose part this is: 'vendor' (the switch vendor's own qualified part, e.g. NVIDIA LinkX) "
                    "or 'third_party' (an MSA-compatible module or cable coded for the platform)")
    third_party_part: str | None = Field(
        default=None, description="For a vendor part: the catalog id of the third-party part of the same class "
                                  "(form factor, reach class) that the third-party optics basis prices instead")

    @model_validator(mode="after")
    def _third_party_of_vendor(self) -> Optic:
        if self.third_party_part is not None and self.basis != "vendor":
            raise ValueError("third_party_part names the third-party equivalent of a vendor part: set basis: vendor")
        return self


class Sourced(Strict):
    """A block of measured numbers with its own source and date."""

    source: str = Field(min_length=3, description="Where the numbers come from")
    date: str = Field(description="When the source was published or read (YYYY, YYYY-MM or YYYY-MM-DD)")
    spread: Spread | None = None

    @field_validator("date", mode="before")
    @classmethod
    def _date(cls, value: object) -> str:
        return check_date_text(str(value))


#: A curve point: (x, y), x ascending.
CurvePoint = tuple[Annotated[float, Field(gt=0, le=1e21)], Annotated[float, Field(gt=0, le=1e6)]]


def _ascending(points: list[tuple[float, float]], what: str) -> list[tuple[float, float]]:
    if not points:
        raise ValueError(f"{what} needs at least one point")
    xs = [x for x, _ in points]
    if any(b <= a for a, b in zip(xs, xs[1:])):
        raise ValueError(f"{what} points must be in strictly ascending order of their first number")
    return points


class SustainedScale(Sourced):
    """Sustained over burst throughput of the same kernels on the same GPU [-]: what a curve measured
    in short bursts (a few iterations, below the seconds power-limited clocks take to settle) is
    scaled by for back-to-back operation, as in training."""

    factor: float = Field(gt=0, le=1, description="Sustained / burst throughput of the same GEMMs")


class GemmCurve(Sourced):
    """Dense GEMM efficiency by size: (GEMM FLOPs 2·M·N·K, measured fraction of the dense peak),
    ascending; interpolated in log(FLOPs) between points and held flat outside them. ``sustained``:
    the scale for a curve measured in bursts (None: measured sustained, as after 10,000 warm-ups)."""

    points: list[CurvePoint]
    sustained: SustainedScale | None = None

    @field_validator("points")
    @classmethod
    def _points(cls, value: list) -> list:
        value = _ascending(value, "gemm_efficiency")
        if any(y > 1 for _, y in value):
            raise ValueError("a GEMM efficiency is a fraction of peak (at most 1)")
        return value


class AttentionCurve(Sourced):
    """Attention kernel throughput fwd+bwd [TFLOP/s] by sequence length (sequence, TFLOP/s),
    in the kernel benchmark's FLOP convention (``perf/compute.py`` ``attention_flops``)."""

    head_dim: int = Field(gt=0, le=4096, description="Head dimension of the measurement")
    causal: bool
    points: list[CurvePoint]

    @field_validator("points")
    @classmethod
    def _points(cls, value: list) -> list:
        return _ascending(value, "attention")


class HbmRate(Sourced):
    """Sustained HBM bandwidth of memory-bound kernels [TB/s] (a STREAM-type measurement)."""

    tbytes_per_s: float = Field(gt=0, le=MAX_BANDWIDTH_GBYTES_PER_S)


class GpuCompute(Strict):
    """Per-operation compute data of a GPU (``perf/compute.py``), each block with source and date:
    GEMM efficiency curves by dtype (fp16 falls back to bf16), attention throughput by kernel
    (``flash``, ``unfused``) and the sustained HBM bandwidth."""

    gemm_efficiency: dict[str, GemmCurve]
    attention: dict[Literal["flash", "unfused"], AttentionCurve]
    hbm: HbmRate


class Gpu(Entry):
    architecture: str
    peak_dense_tflops: PeakTflops
    hbm_gbytes: float = Field(gt=0, le=MAX_HBM_GBYTES)
    hbm_bandwidth_tbytes_per_s: float | None = Field(default=None, gt=0, le=MAX_BANDWIDTH_GBYTES_PER_S)
    nvlink_bandwidth_gbytes_per_s: float = Field(ge=0, le=MAX_BANDWIDTH_GBYTES_PER_S)
    power_w: float = Field(gt=0, le=MAX_DEVICE_POWER_W)
    # Optional performance-model fields (perf); sources in the entry's `source` text.
    compute_capability: int | None = Field(
        default=None, gt=0, le=1000, description="CUDA compute capability x10 (80 = sm80), for NCCL's tuner tables")
    nvlink_links: int | None = Field(default=None, ge=0, le=1000, description="NVLink links per GPU")
    achievable_fraction_of_peak: float | None = Field(
        default=None, gt=0, le=1,
        description="Optional override: one flat share of peak dense FLOPs for all compute (the "
                    "pre-per-operation model); set, it replaces the per-operation model of `compute`")
    compute: GpuCompute | None = Field(
        default=None, description="Per-operation compute data (GEMM curves, attention, HBM); None = the "
                                  "flat achievable fraction (override or perf default)")


class Server(Entry):
    gpu: str
    gpus_per_server: int = Field(gt=0, le=1024)
    gpus_per_host: int | None = Field(
        default=None, gt=0, le=1024,
        description="GPUs per host (compute tray) when one priced unit holds several hosts, e.g. 4 in a GB200 "
                    "NVL72 rack; None = gpus_per_server")
    nvlink_domain_gpus: int | None = Field(
        default=None, gt=0, le=1024,
        description="GPUs in one NVLink domain (NVLink switches joining several hosts: 72 on NVL72); "
                    "None = gpus_per_server")
    included_nics: int = Field(default=0, ge=0, le=1024, description="Backend NICs included in the quoted price")
    included_nic: str | None = Field(default=None, description="Catalog id of the included NIC")
    power_w: float = Field(gt=0, le=MAX_DEVICE_POWER_W)
    price_usd: Range


class LinkMedium(Strict):
    """One way to build a link: a cable (DAC/ACC/AOC: ``switch_end`` names it, no transceivers and
    no fibre) or a pair of transceivers joined by fibre (``switch_end`` at the switch, ``far_end`` at
    the other end: the NIC for host links, another switch for switch-to-switch links, where None
    means the same optic as ``switch_end``). The medium's reach is the shortest of its parts."""

    switch_end: str
    far_end: str | None = None


class FabricHardware(Strict):
    switch: str
    nic: str
    switch_optic: str
    nic_optic: str
    interswitch_optic: str
    host_dac: str | None = None
    fibre: str | None = None
    host_media: list[LinkMedium] = Field(
        default_factory=list,
        description="Candidate media for NIC-leaf links; cost picks the cheapest whose reach covers the "
                    "floor-plan run (cost/floorplan.py). Empty = the fixed host_dac / switch_optic + nic_optic")
    interswitch_media: list[LinkMedium] = Field(
        default_factory=list,
        description="Candidate media for switch-to-switch links, chosen per tier by reach. Empty = interswitch_optic")


class FabricCosts(Strict):
    """What a fabric costs beyond its parts, each a low/default/high range (sensitivity, Monte Carlo):
    support contracts, fabric-management licences, operations staffing and how often its network
    parts interrupt a job relative to the catalog's rates. ``source``/``date`` cover the block."""

    support_fraction_per_year: Range = Field(description="Vendor support per year as a share of network capex")
    licence_usd_per_node_year: Range = Field(
        default_factory=lambda: Range(default=0.0),
        description="Fabric-manager licences (e.g. UFM Enterprise with the SHARP aggregation manager) per server per year")
    ops_fte_multiplier: Range = Field(description="Network staff relative to the baseline staffing curve")
    network_failure_multiplier: Range = Field(
        default_factory=lambda: Range(default=1.0),
        description="Switch/NIC/link interruption rates relative to the catalog's failure_rate_* parameters")
    optics_basis: OpticsBasis | None = Field(
        default=None, description="The optics basis a fresh purchase of this fabric is priced at (vendor-qualified "
                                  "or third-party; the spec's economics.optics_basis overrides it). None: the parts "
                                  "the profile lists, as listed")
    source: str = Field(min_length=3)
    date: str
    spread: Spread | None = None

    _date_text = field_validator("date", mode="before")(_date_as_text)
    _real_date = field_validator("date")(check_date_text)

    @field_validator("support_fraction_per_year")
    @classmethod
    def _fraction(cls, value: Range) -> Range:
        if max(value.at("low"), value.at("default"), value.at("high")) > 1:
            raise ValueError("a support fraction is a share of capex per year (at most 1)")
        return value

    @field_validator("ops_fte_multiplier", "network_failure_multiplier")
    @classmethod
    def _multiplier(cls, value: Range) -> Range:
        if max(value.at("low"), value.at("default"), value.at("high")) > 100:
            raise ValueError("at most 100 (a sanity bound: no source puts any fabric at even 10x another)")
        return value


class SocketTransport(Strict):
    """How NCCL's socket network runs on a kernel-TCP fabric profile (``perf/socket_transport.py``).

    ``variant``: ``kernel`` = NCCL's built-in Socket transport (payload bounced through pinned host
    memory and kernel socket buffers); ``gpudirect_tcpx`` = Google's GPUDirect-TCPX / devmem TCP
    plugin (payload stays in GPU memory, the receiving GPU unpacks scattered pages, NCCL doubles the
    channels). ``nthreads``/``nsocks_per_thread`` are ``NCCL_SOCKET_NTHREADS`` and
    ``NCCL_NSOCKS_PERTHREAD`` (None = NCCL's automatic choice by NIC vendor).
    docs/reference/socket_transport.md §2, §5.
    """

    variant: Literal["kernel", "gpudirect_tcpx"]
    nic_vendor: Literal["generic", "aws_ena", "gcp_gvnic"] = "generic"
    nthreads: int | None = Field(default=None, ge=0, description="NCCL_SOCKET_NTHREADS (None = auto)")
    nsocks_per_thread: int | None = Field(default=None, ge=0, description="NCCL_NSOCKS_PERTHREAD (None = auto)")
    per_flow_cap_gbps: float | None = Field(default=None, gt=0, description="Cloud cap per 5-tuple flow")
    mtu_bytes: int = Field(default=9000, ge=576, le=9216, description="IP MTU of the host links")
    gpu_nic_share_pcie_uplink: bool = Field(
        default=True, description="GPU and NIC sit behind one PCIe switch uplink (HGX/DGX 'PIX')")
    source: str = Field(min_length=3)
    date: str
    spread: Spread | None = None

    _date_text = field_validator("date", mode="before")(_date_as_text)
    _real_date = field_validator("date")(check_date_text)


class FabricOption(Strict):
    """A feature of a fabric the operator turns on or off (SHARP, adaptive routing): what a freshly
    installed cluster runs (``default``), what it needs (``requires``: software, managers, licences)
    and its yearly licence per server when on. The profile's ``in_network_reduction`` / ``routing``
    say what the switches can do; the option says whether the built fabric does it
    (``fabricplan.design.hardware.effective_profile``; a spec's ``fabrics[].sharp`` /
    ``fabrics[].adaptive_routing`` override the default)."""

    default: bool = Field(description="On in a freshly installed cluster")
    requires: str = Field(min_length=3, description="Prerequisites (software, manager, licence, settings)")
    licence_usd_per_node_year: Range = Field(
        default_factory=lambda: Range(default=0.0),
        description="Licence per server per year while the option is on, beyond the profile's costs block")
    source: str = Field(min_length=3)
    date: str
    spread: Spread | None = None

    _date_text = field_validator("date", mode="before")(_date_as_text)
    _real_date = field_validator("date")(check_date_text)


#: The options a fabric profile may carry, each acting on one capability field of the profile.
FABRIC_OPTIONS = ("sharp", "adaptive_routing")


class FabricProfile(Entry):
    family: Literal["ethernet", "infiniband"]
    transport: Literal["tcp", "rdma"]
    link_rate_gbps: int = Field(gt=0, le=MAX_SPEED_GBPS)
    effective_bandwidth_gbytes_per_s: float = Field(gt=0, le=MAX_BANDWIDTH_GBYTES_PER_S,
                                                    description="Per-NIC achievable bandwidth")
    flow_control: Literal["none", "pfc", "credit"]
    congestion_control: Literal["tcp", "dcqcn", "ib_cc", "none"]
    routing: Literal["ecmp", "adaptive"]
    lossless: bool
    in_network_reduction: bool
    host_stack_latency_us: float = Field(gt=0, le=MAX_LATENCY_US)
    hardware: FabricHardware
    socket: SocketTransport | None = Field(
        default=None, description="NCCL socket transport settings (kernel TCP profiles only)")
    ops_fte_multiplier: float | None = Field(
        default=None, gt=0, le=100,
        description="Network staff relative to the baseline (None = 1.0; profiles with a costs block set "
                    "costs.ops_fte_multiplier instead); at most 100 (a sanity bound: no source puts any fabric's "
                    "operations at even 10x another's)")
    costs: FabricCosts | None = Field(
        default=None, description="Support, licences, staffing and failure multipliers with ranges; when set, "
                                  "its ops_fte_multiplier replaces the plain one")
    options: dict[Literal["sharp", "adaptive_routing"], FabricOption] = Field(
        default_factory=dict,
        description="Operator options (SHARP needs in_network_reduction, adaptive routing routing: adaptive): "
                    "default as installed, prerequisites, licence. A capability without an option is always on")

    @model_validator(mode="after")
    def _options_need_capability(self) -> FabricProfile:
        if "sharp" in self.options and not self.in_network_reduction:
            raise ValueError("a sharp option needs in_network_reduction: true (switches that can aggregate)")
        if "adaptive_routing" in self.options and self.routing != "adaptive":
            raise ValueError("an adaptive_routing option needs routing: adaptive (switches that can route adaptively)")
        return self

    def option_on(self, name: str, chosen: bool | None = None) -> bool:
        """Whether option ``name`` is on in the built fabric: ``chosen`` if given, else the option's
        default; a capability without an option entry is on; an absent capability is off."""
        capable = self.in_network_reduction if name == "sharp" else self.routing == "adaptive"
        if not capable:
            return False
        option = self.options.get(name)
        if chosen is not None:
            return bool(chosen)
        return True if option is None else option.default

    @model_validator(mode="after")
    def _one_staffing_multiplier(self) -> FabricProfile:
        if self.costs is not None and self.ops_fte_multiplier is not None:
            raise ValueError("set costs.ops_fte_multiplier (a low/default/high range) instead of ops_fte_multiplier "
                             "when the profile has a costs block")
        return self

    def fte_multiplier(self, point: PricePoint = "default") -> float:
        """Network staff relative to the baseline: the costs block's range at ``point``, else the plain value."""
        if self.costs is not None:
            return self.costs.ops_fte_multiplier.at(point)
        return 1.0 if self.ops_fte_multiplier is None else self.ops_fte_multiplier


class Parameter(Entry):
    value: Range
    unit: str


#: Chinese, Japanese and Korean characters and punctuation (CJK symbols, ideographs, fullwidth forms,
#: Hangul): a title holding any of them needs an English translation beside it (`Source.title_en`).
CJK_CHARACTERS = "\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"


def has_cjk(text: str) -> bool:
    """Whether `text` holds a Chinese, Japanese or Korean character."""
    return re.search(f"[{CJK_CHARACTERS}]", text) is not None


class Quote(Strict):
    """A passage quoted in the original language, with fabricplan's English translation."""

    text: str = Field(min_length=1, description="The passage as the citation quotes it")
    text_en: str = Field(min_length=1, description="Its English translation")


class Source(Entry):
    """A publication the catalog or the decision rules cite (``sources.yaml``): its title in the
    original language and, for a title not in English, the English translation readers see beside it.
    ``name`` is the short English label citations use ("[S1] <name> (<date>)"); ``source`` says where
    the bibliographic record was read."""

    title: str = Field(min_length=1, description="The title as published, in its own language")
    title_en: str | None = Field(default=None, description="English translation of the title (required "
                                                            "when the title is not in English)")
    language: str = Field(default="en", pattern=r"^[a-z]{2}(-[A-Za-z]+)?$",
                          description="The title's language (BCP 47, e.g. zh, en)")
    publisher: str = Field(min_length=1, description="Who published it (blog, vendor, journal)")
    url: str | None = None
    quotes: list[Quote] = Field(default_factory=list, description="Passages the rules and decision.yaml quote "
                                                                  "in the original, each with its translation")

    @model_validator(mode="after")
    def _translated(self) -> Source:
        if (has_cjk(self.title) or self.language != "en") and not (self.title_en or "").strip():
            raise ValueError(f"title_en: source {self.id}'s title {self.title!r} is not in English; give its "
                             "English translation in title_en")
        if self.title_en is not None and has_cjk(self.title_en):
            raise ValueError(f"title_en: source {self.id}'s translation holds CJK characters")
        return self

    def label(self) -> str:
        """How a citation names it: "[S1] RoCE vs InfiniBand for ML training clusters (2026-04-12)"."""
        return f"[{self.id}] {self.name or self.title_en or self.title} ({self.date})"


class TransformerShape(BaseModel):
    """A transformer's dimensions as the FLOPs and step models read them (a preset or inline)."""

    # Upper bounds are sanity bounds, ~100x beyond the largest published models (Llama 3 405B:
    # 126 layers, h = 16,384, 128 heads, FFN 53,248, vocabulary 128,256; DeepSeek-V3: 256 experts).
    layers: int = Field(gt=0, le=10_000, description="Transformer layers (at most 10,000)")
    hidden: int = Field(gt=0, le=1_000_000, description="Model (embedding) dimension h (at most 10^6)")
    heads: int = Field(gt=0, le=100_000, description="Attention heads (at most 10^5)")
    kv_heads: int | None = Field(default=None, gt=0, le=100_000,
                                 description="Grouped-query KV heads; None = heads")
    ffn_hidden: int | None = Field(default=None, gt=0, le=10_000_000,
                                   description="FFN inner size; None = 4h (at most 10^7)")
    vocab: int = Field(gt=0, le=100_000_000, description="(Padded) vocabulary the FLOPs count uses (at most 10^8)")
    experts: int = Field(default=1, gt=0, le=100_000, description="MoE experts per layer (1 = dense; at most 10^5)")
    experts_per_token: int = Field(default=1, gt=0, le=100_000, description="MoE top-k routing")
    gated_ffn: bool = Field(default=False, description="SwiGLU-style FFN with three matrices")

    @model_validator(mode="after")
    def _consistent(self) -> TransformerShape:
        if self.hidden % self.heads:
            raise ValueError(f"hidden ({self.hidden}) must be divisible by heads ({self.heads})")
        if self.kv_heads is not None and self.heads % self.kv_heads:
            raise ValueError(f"heads ({self.heads}) must be divisible by kv_heads ({self.kv_heads})")
        if self.experts_per_token > self.experts:
            raise ValueError(f"experts_per_token ({self.experts_per_token}) exceeds experts ({self.experts})")
        return self


class ModelPreset(Entry, TransformerShape):
    """A transformer preset for the training step-time model (``models.yaml``)."""
