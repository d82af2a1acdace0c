"""Typed catalog entries. Every entry carries `source` and `date`; unknown keys are errors."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

PricePoint = Literal["low", "default", "high"]
#: Peak dense TFLOP/s per precision: positive, or null where the GPU lacks the precision.
PeakTflops = dict[str, Annotated[float, Field(gt=0)] | None]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class Range(Strict):
    """A value with a low/default/high range for sensitivity analysis (low/high default to it)."""

    low: float | None = Field(default=None, ge=0)
    default: float = Field(ge=0)
    high: float | None = Field(default=None, ge=0)

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


class Entry(Strict):
    id: str
    name: str = ""
    source: str = Field(min_length=3, description="Where the numbers come from")
    date: str = Field(description="When the source was published or read (YYYY, YYYY-MM or YYYY-MM-DD)")
    confidence: Literal["A", "B", "C"] | None = None
    notes: str | None = None

    @field_validator("date", mode="before")
    @classmethod
    def _date_as_text(cls, value: object) -> object:
        if isinstance(value, (dt.date, int)):
            return str(value)
        return value


class Switch(Entry):
    family: Literal["ethernet", "infiniband"]
    asic: str
    capacity_tbps: float = Field(gt=0)
    ports_by_speed_gbps: dict[int, int] = Field(description="Radix at each port speed (breakout)")
    logical_ports_per_cage: dict[int, int] = Field(default_factory=dict)
    port_to_port_latency_ns: float = Field(gt=0)
    power_w: float = Field(ge=0, description="Chassis power excluding optics")
    rack_units: int = Field(default=1, gt=0)
    price_usd: Range

    def radix_at(self, speed_gbps: int) -> int | None:
        return self.ports_by_speed_gbps.get(speed_gbps)


class Nic(Entry):
    families: list[Literal["ethernet", "infiniband"]]
    speed_gbps: int = Field(gt=0)
    rdma: bool = True
    power_w: float = Field(ge=0)
    price_usd: Range


class Optic(Entry):
    kind: Literal["transceiver", "cable", "fibre"]
    speed_gbps: int = Field(gt=0)
    logical_ports: int = Field(default=1, gt=0, description="Logical links one module serves")
    reach_m: float = Field(gt=0)
    power_w: float = Field(ge=0)
    price_usd: Range


class Gpu(Entry):
    architecture: str
    peak_dense_tflops: PeakTflops
    hbm_gbytes: float = Field(gt=0)
    hbm_bandwidth_tbytes_per_s: float | None = Field(default=None, gt=0)
    nvlink_bandwidth_gbytes_per_s: float = Field(ge=0)
    power_w: float = Field(gt=0)
    # Optional performance-model fields (perf); sources in the entry's `source` text.
    compute_capability: int | None = Field(
        default=None, gt=0, description="CUDA compute capability x10 (80 = sm80), for NCCL's tuner tables")
    nvlink_links: int | None = Field(default=None, ge=0, description="NVLink links per GPU")
    achievable_fraction_of_peak: float | None = Field(
        default=None, gt=0, le=1, description="Sustained share of peak dense FLOPs in transformer training")


class Server(Entry):
    gpu: str
    gpus_per_server: int = Field(gt=0)
    included_nics: int = Field(default=0, ge=0, description="Backend NICs included in the quoted price")
    included_nic: str | None = Field(default=None, description="Catalog id of the included NIC")
    power_w: float = Field(gt=0)
    price_usd: Range


class FabricHardware(Strict):
    switch: str
    nic: str
    switch_optic: str
    nic_optic: str
    interswitch_optic: str
    host_dac: str | None = None
    fibre: str | None = None


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

    @field_validator("date", mode="before")
    @classmethod
    def _date_as_text(cls, value: object) -> object:
        if isinstance(value, (dt.date, int)):
            return str(value)
        return value


class FabricProfile(Entry):
    family: Literal["ethernet", "infiniband"]
    transport: Literal["tcp", "rdma"]
    link_rate_gbps: int = Field(gt=0)
    effective_bandwidth_gbytes_per_s: float = Field(gt=0, description="Per-NIC achievable bandwidth")
    flow_control: Literal["none", "pfc", "credit"]
    congestion_control: Literal["tcp", "dcqcn", "ib_cc", "none"]
    routing: Literal["ecmp", "adaptive"]
    lossless: bool
    in_network_reduction: bool
    host_stack_latency_us: float = Field(gt=0)
    hardware: FabricHardware
    socket: SocketTransport | None = Field(
        default=None, description="NCCL socket transport settings (kernel TCP profiles only)")
    ops_fte_multiplier: float = Field(default=1.0, gt=0)


class Parameter(Entry):
    value: Range
    unit: str


class TransformerShape(BaseModel):
    """A transformer's dimensions as the FLOPs and step models read them (a preset or inline)."""

    layers: int = Field(gt=0)
    hidden: int = Field(gt=0, description="Model (embedding) dimension h")
    heads: int = Field(gt=0)
    kv_heads: int | None = Field(default=None, gt=0, description="Grouped-query KV heads; None = heads")
    ffn_hidden: int | None = Field(default=None, gt=0, description="FFN inner size; None = 4h")
    vocab: int = Field(gt=0, description="(Padded) vocabulary the FLOPs count uses")
    experts: int = Field(default=1, gt=0, description="MoE experts per layer (1 = dense)")
    experts_per_token: int = Field(default=1, gt=0, description="MoE top-k routing")
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
