"""Typed models of the catalog's document-shaped data files.

``perf_defaults.yaml``, ``nccl_tuner.yaml`` and ``ops_defaults.yaml`` are nested documents rather
than lists of entries; each is validated into one model here (``models.yaml`` is an entry list,
:class:`fabricplan.catalog.models.ModelPreset`). Every number keeps the ``source`` and ``date`` it
has in the file; unknown keys are errors.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal, Union

from pydantic import AfterValidator, BeforeValidator, Discriminator, Field, PrivateAttr, RootModel, Tag, model_validator

from fabricplan.catalog.models import Spread, Strict, check_date_text


def _date_as_text(value: object) -> object:
    if isinstance(value, (dt.date, int)):
        return str(value)
    return value


#: When a source was published or read (YYYY, YYYY-MM or YYYY-MM-DD); YAML dates become text.
DateText = Annotated[str, BeforeValidator(_date_as_text), AfterValidator(check_date_text)]
Source = Annotated[str, Field(min_length=3, description="Where the numbers come from")]


# --- perf_defaults.yaml -------------------------------------------------------------------------

def _number_text_as_number(value: object) -> object:
    """A value written as text that reads as a number (YAML 1.1 reads ``1e300`` and ``.5e1`` as
    text) is that number, so the bounds below apply to it; an id stays text."""
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return value
    return value


class PerfParameter(Strict):
    """One constant of the performance models: a number, a table by compute capability, or an id."""

    value: Annotated[float | dict[int, float] | str, BeforeValidator(_number_text_as_number)]
    unit: str
    source: Source
    date: DateText
    spread: Spread | None = None


#: Sanity bounds of perf_defaults numbers (not defaults): a share ("..._efficiency", "..._fraction")
#: lies in 0..1; any other number is non-negative and at most 10^12 (e.g. 2 GiB of reserved memory
#: is 2.1e9), so that an overlay cannot overflow a model or turn a time negative.
MAX_PERF_VALUE = 1e12


def _check_perf_value(name: str, value: float) -> None:
    share = name.endswith(("_efficiency", "_fraction", "_fraction_of_peak"))
    highest = 1.0 if share else MAX_PERF_VALUE
    if not 0 <= value <= highest:
        what = "a share between 0 and 1" if share else f"a number between 0 and {MAX_PERF_VALUE:g}"
        raise ValueError(f"parameters.{name}: must be {what}, got {value:g}")


class PerfDefaults(Strict):
    """``perf_defaults.yaml``: named constants of the performance models."""

    parameters: dict[str, PerfParameter]

    @model_validator(mode="after")
    def _bounded(self) -> PerfDefaults:
        for name, item in self.parameters.items():
            values = item.value.values() if isinstance(item.value, dict) else [item.value]
            for value in values:
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    _check_perf_value(name, float(value))
        return self


# --- nccl_tuner.yaml ----------------------------------------------------------------------------

Triple = Annotated[list[float], Field(min_length=3, max_length=3, description="[1 node, 2 nodes, >2 nodes]")]
ProtocolRow = Annotated[list[float], Field(min_length=3, max_length=3, description="[LL, LL128, Simple]")]
Architecture = Literal["volta", "ampere", "hopper", "blackwell"]
Protocol = Literal["ll", "ll128", "simple"]
NetProtocol = Literal["ll", "ll128"]
Algorithm = Literal["tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"]
PerArchTriple = dict[Architecture, Triple]


class RingPlateau(Strict):
    condition: Literal["bytes_per_channel_rank", "nranks_over_16_times_65536"]
    min_bytes: int = Field(ge=0)
    threshold_compute_capability: int = Field(ge=0)
    factor_below: float = Field(gt=0)
    factor_at_or_above: float = Field(gt=0)


class RingLlFactor(Strict):
    multinode_or_reduce: float = Field(gt=0)
    other: float = Field(gt=0)


class RingLl128Factor(Strict):
    ppn_at_least_2: float = Field(gt=0)
    ppn_below_2: float = Field(gt=0)


class TreeLl128Factor(Strict):
    single_node: float = Field(gt=0)
    multi_node: float = Field(gt=0)


class TreeAbsoluteCap(Strict):
    more_than_2_nodes: float = Field(gt=0)
    up_to_2_nodes: float = Field(gt=0)
    more_than_2_nodes_ampere_ll128: float = Field(gt=0)
    up_to_2_nodes_ampere_ll128: float = Field(gt=0)


class Launch(Strict):
    """NCCL's launch shape for small messages (channels and threads)."""

    max_threads: dict[Protocol, int]
    slow_ring_simple_threads: int = Field(gt=0)
    pci_bw_gbytes_per_s: float = Field(gt=0)
    thread_threshold_bytes: dict[Protocol, int]
    collnet_simple_thread_threshold_bytes: int = Field(gt=0)
    all_threads_algorithms: list[Algorithm]
    source: Source
    date: DateText
    spread: Spread | None = None


class TunerVersion(Strict):
    """The tuner constants of one NCCL release (latencies in us, bandwidths in GB/s)."""

    source: Source
    date: DateText
    spread: Spread | None = None
    algorithms: list[Algorithm]
    base_latency_us: dict[Algorithm, ProtocolRow]
    hw_latency_us: dict[Literal["nvlink", "pci", "net"], dict[Algorithm, Triple]]
    ll_max_bw: PerArchTriple | None
    per_channel_max_ring_ll128_bw: PerArchTriple | None
    per_channel_max_tree_ll128_bw: PerArchTriple | None
    per_channel_max_tree_bw: PerArchTriple | None
    per_channel_max_nvls_tree_bw: PerArchTriple | None
    nvls_efficiency: dict[Architecture, float] | None
    ll128_per_channel_cap_by_collective: dict[str, float] | None = None
    tree_absolute_cap: TreeAbsoluteCap | None = None
    tree_correction_factor: dict[Protocol, list[float]]
    tree_correction_max_log_size: int = Field(ge=0)
    intra_ll_latency_multiplier_multinode: float = Field(gt=0)
    net_overhead_us: dict[Literal["intel", "amd"], float] | None
    net_overhead_simple_multiplier: float | None
    allreduce_inter_steps: Literal["nodes", "nodes_minus_one"]
    inter_latency_rule: Literal["add", "replace", "hw_only"]
    ppn1_uses_tree_net_latency: bool
    collnet_arity_latency_us: float = Field(ge=0)
    collnet_chain_adds_inter_latency: bool
    nvls_latency_rule: Literal["intra_plus_inter", "base_only"] | None
    pat_log_latency_divisor: float | None = Field(gt=0)
    pat_linear_latency_us_per_rank: float | None = Field(ge=0)
    ring_plateau: RingPlateau
    arch_bus_bw_cap: dict[Architecture, float]
    ring_ll_factor: RingLlFactor
    ring_ll_capped_by_ll_max_bw: bool
    ring_ll128_factor: RingLl128Factor
    ring_ll128_cap: Literal["per_channel_arch", "per_channel_collective"]
    tree_factor: float = Field(gt=0)
    tree_cap: Literal["per_channel_arch", "absolute"]
    tree_ll_divisor: float = Field(gt=0)
    tree_ll_capped_by_ll_max_bw: bool
    tree_ll128_factor: TreeLl128Factor
    tree_ll128_cap: Literal["tree_ll128_per_channel_arch", "per_channel_collective_times_7_9"]
    pat_factor: float | None = Field(gt=0)
    collnet_direct_sm90_factor: float = Field(gt=0)
    collnet_chain_factor: float = Field(gt=0)
    collnet_ll_factor: float | None = Field(default=None, gt=0)
    collnet_direct_allgather_inter_factor: float | None = Field(
        default=None, gt=0, description="CollNet Direct ReduceScatter/AllGather (NCCL 2.20+): algbw = ppn x "
                                        "min(bwIntra, factor x bwInter); None: the release has no CollNet for them")
    nvls_rule: Literal["2.30", "2.19", "2.17"] | None
    nvls_algbw_ratio: float | Literal["nranks_over_nsteps"] | None
    tree_algbw_ratio: float = Field(gt=0)
    tree_ll128_cap_multiplier: float | None = Field(default=None, gt=0)
    ll128_compute_capabilities: list[int]
    max_channels: int = Field(default=32, gt=0, le=1024, description="MAXCHANNELS (src/include/device.h)")
    launch: Launch


class TreeLl128Depth(Strict):
    base: float
    per_log2_node: float
    per_rank_per_node: float


class TreeLl128Halving(Strict):
    factor: float = Field(gt=0)
    floor_bytes: int = Field(gt=0)


class ChunkHalving(Strict):
    """One of NCCL's chunk-halving loops: halve while ``bytes / (ops x chunk) < depth x factor`` and
    ``chunk > floor_bytes`` (enqueue.cc ``computeColl``)."""

    factor: float = Field(gt=0)
    floor_bytes: int = Field(gt=0)


class NetworkSteps(Strict):
    """Store-and-forward of LL/LL128 steps at network hops (``nccl_tuner.network_step_delay_us``) and the
    chunk NCCL moves per network step (``nccl_tuner.network_chunk_bytes``)."""

    step_data_bytes: dict[NetProtocol, int]
    wire_bytes_per_data_byte: dict[NetProtocol, float]
    grain_bytes: dict[NetProtocol, int]
    ring_min_chunk_divisor: dict[NetProtocol, int]
    tree_min_chunk_divisor: dict[NetProtocol, int]
    tree_ll128_depth: TreeLl128Depth
    tree_ll128_halving: list[TreeLl128Halving]
    simple_step_bytes: int = Field(gt=0)
    ring_simple_chunk_steps: int = Field(gt=0)
    tree_simple_halving: list[ChunkHalving]
    nvls_tree_halving: list[ChunkHalving]
    nvls_tree_many_nodes: int = Field(gt=0)
    nvls_tree_many_nodes_chunk_bytes: int = Field(gt=0)
    source: Source
    date: DateText
    spread: Spread | None = None


class NcclTuner(Strict):
    """``nccl_tuner.yaml``: NCCL's tuner constants per release, plus its topology constants."""

    default_version: str
    nvlink_bw_per_link_gbytes_per_s: dict[int, float]
    nvlink_bw_source: Source
    nvlink_bw_date: DateText
    architecture_compute_capability: dict[str, int]
    architecture_compute_capability_source: Source
    architecture_compute_capability_date: DateText
    network_steps: NetworkSteps
    versions: dict[str, TunerVersion]
    spread: Spread | None = Field(default=None, description="Ranges of the top-level tables (NVLink, architectures)")
    # version -> plain constants mapping, filled by perf.nccl_tuner.tuner_constants (models are immutable)
    _constants: dict[str, dict[str, Any]] = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _default_version_exists(self) -> NcclTuner:
        if self.default_version not in self.versions:
            raise ValueError(f"default_version '{self.default_version}' is not one of the versions "
                             f"({', '.join(self.versions)})")
        if not self.nvlink_bw_per_link_gbytes_per_s:
            raise ValueError("nvlink_bw_per_link_gbytes_per_s must list at least one compute capability")
        return self


# --- ops_defaults.yaml --------------------------------------------------------------------------

# Scalars, lists and tables; vendor lookup tables (rows of numbers) and maps (platform -> ASIC) nest.
OpsScalar = Union[bool, int, float, str]
OpsValue = Union[OpsScalar, list[Any], dict[Union[int, str], Union[int, float]], dict[Union[int, str], Any]]


class OpsEntry(Strict):
    """One default number of fabricplan.ops, with its unit (in the key or here) and source."""

    value: OpsValue
    unit: str | None = None
    note: str | None = None
    source: Source
    date: DateText
    spread: Spread | None = None


def _ops_node_kind(node: Any) -> str:
    if isinstance(node, OpsEntry) or (isinstance(node, dict) and "value" in node):
        return "OpsEntry"
    return "OpsGroup"


class OpsGroup(RootModel[dict[str, Annotated[Union[Annotated[OpsEntry, Tag("OpsEntry")],
                                                   Annotated["OpsGroup", Tag("OpsGroup")]],
                                             Discriminator(_ops_node_kind)]]]):
    """Named entries and sub-groups (a mapping with ``value`` is an entry, any other a group)."""

    model_config = {"frozen": True}


class OpsDefaults(Strict):
    """``ops_defaults.yaml``: headroom calculator, lint, DCQCN and telemetry-health defaults."""

    headroom: OpsGroup
    lint: OpsGroup
    dcqcn: OpsGroup
    health: OpsGroup
