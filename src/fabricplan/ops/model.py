"""The one QoS model of a lossless-Ethernet link: NIC side, switch-port side, and the link.

Readers fill these from real formats; lint rules read only these. Every object keeps
``locations``: field name -> where the value came from (``file:line`` or
``file:$.TABLE.key.field``), so findings and errors can point at the exact input.

Priorities, traffic classes (TC), priority groups (PG) and queues are integers 0..7.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class NicTc:
    """One traffic class as ``mlnx_qos`` prints it (``tc: 3 ratelimit: …, tsa: ets, bw: 50%``)."""

    tc: int
    tsa: str  # "ets", "strict" or "vendor"
    bw_percent: int
    priorities: tuple[int, ...]
    ratelimit: str = "unlimited"


@dataclass(slots=True)
class Dcqcn:
    """DCQCN state of one NIC port from the sysfs ``ecn/`` tree.

    ``rp_enabled``/``np_enabled`` are the priorities whose ``roce_rp/enable/N`` /
    ``roce_np/enable/N`` read 1; ``rp``/``np`` hold the integer parameters by sysfs name.
    """

    rp_enabled: frozenset[int] = frozenset()
    np_enabled: frozenset[int] = frozenset()
    rp: dict[str, int] = field(default_factory=dict)
    np: dict[str, int] = field(default_factory=dict)
    locations: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class NicQos:
    """QoS of one NIC port (host interface), from ``mlnx_qos -i IF`` plus sysfs."""

    name: str  # "host:if" (or the capture's name); what the cabling file refers to
    source: str
    trust: str | None = None  # "dscp" or "pcp"
    dcbx: str | None = None
    dscp2prio: dict[int, int] = field(default_factory=dict)  # dscp -> priority (only with dscp trust)
    pfc_enabled: frozenset[int] = frozenset()
    prio2buffer: tuple[int, ...] | None = None
    buffer_sizes: tuple[int, ...] | None = None  # receive buffer size per buffer [bytes]
    max_buffer_size: int | None = None
    cable_len_m: int | None = None
    tcs: dict[int, NicTc] = field(default_factory=dict)
    mtu: int | None = None
    speed_mbps: int | None = None
    dcqcn: Dcqcn | None = None
    locations: dict[str, str] = field(default_factory=dict)

    def tc_of_priority(self, priority: int) -> int | None:
        for tc in self.tcs.values():
            if priority in tc.priorities:
                return tc.tc
        return None

    def where(self, key: str) -> str:
        return self.locations.get(key, self.source)


@dataclass(slots=True)
class Scheduler:
    name: str
    type: str | None
    weight: int | None


@dataclass(slots=True)
class WredProfile:
    name: str
    ecn: str  # ecn_none (default), ecn_green, …, ecn_all
    green_enable: bool
    green_min_bytes: int | None
    green_max_bytes: int | None
    green_drop_probability: int | None


@dataclass(slots=True)
class BufferPool:
    name: str
    type: str | None
    mode: str | None
    size_bytes: int | None
    xoff_bytes: int | None


@dataclass(slots=True)
class BufferProfile:
    name: str
    pool: BufferPool | None
    size_bytes: int | None
    xon_bytes: int | None
    xoff_bytes: int | None
    dynamic_th: int | None
    static_th: int | None
    computed: bool = False  # "NULL": the dynamic buffer model computes the headroom itself

    @property
    def lossless(self) -> bool:
        """A PG profile is lossless when it reserves XOFF headroom (or SONiC computes it)."""
        return self.computed or (self.xoff_bytes is not None and self.xoff_bytes > 0)


@dataclass(slots=True)
class QueueConfig:
    scheduler: Scheduler | None = None
    wred: WredProfile | None = None


@dataclass(slots=True)
class PfcWatchdog:
    action: str | None
    detection_ms: int | None
    restoration_ms: int | None


@dataclass(slots=True)
class SwitchPortQos:
    """QoS of one switch port, with every config_db reference already resolved."""

    switch: str
    port: str
    source: str
    speed_mbps: int | None = None
    mtu: int | None = None
    admin_status: str | None = None
    lanes: int | None = None  # number of PORT.lanes (8-lane ports need more headroom)
    platform: str | None = None  # DEVICE_METADATA.localhost.platform
    hwsku: str | None = None  # DEVICE_METADATA.localhost.hwsku
    subtype: str | None = None  # DEVICE_METADATA.localhost.subtype (e.g. DualToR)
    has_qos_row: bool = False  # the port has its own PORT_QOS_MAP row
    dscp_to_tc: dict[int, int] | None = None
    dot1p_to_tc: dict[int, int] | None = None
    tc_to_pg: dict[int, int] | None = None
    tc_to_queue: dict[int, int] | None = None
    pfc_to_queue: dict[int, int] | None = None
    pfc_enable: frozenset[int] = frozenset()
    pfcwd_sw_enable: frozenset[int] | None = None
    queues: dict[int, QueueConfig] = field(default_factory=dict)
    buffer_pg: dict[int, BufferProfile] = field(default_factory=dict)
    buffer_queue: dict[int, BufferProfile] = field(default_factory=dict)
    cable_length_m: float | None = None
    pfc_wd: PfcWatchdog | None = None
    pfcwd_poll_ms: int | None = None
    buffer_model: str | None = None
    shared_headroom_pool: bool = False
    lossless_mtu: int | None = None
    small_packet_percentage: float | None = None
    locations: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.switch}:{self.port}"

    def where(self, key: str) -> str:
        return self.locations.get(key, self.source)

    def map_entry(self, attr: str, key: int) -> str:
        """Location of one entry of a resolved map, e.g. ``map_entry("dscp_to_tc", 26)``."""
        base = self.locations.get(f"{attr}[]")
        return f"{base}['{key}']" if base else self.where(attr)

    def queue_of_priority(self, priority: int) -> int:
        """Queue paused by PFC priority ``priority`` (MAP_PFC_PRIORITY_TO_QUEUE, else identity)."""
        if self.pfc_to_queue is not None and priority in self.pfc_to_queue:
            return self.pfc_to_queue[priority]
        return priority


@dataclass(slots=True)
class CablingEntry:
    nic: str
    switch_port: str  # "switch:port"
    length_m: float | None
    location: str


@dataclass(slots=True)
class Link:
    """One NIC port facing one switch port. Either side may be missing (not captured)."""

    nic: NicQos | None
    switch: SwitchPortQos | None
    cable_m: float | None = None  # physical length from the cabling file
    location: str | None = None  # cabling file line

    @property
    def name(self) -> str:
        left = self.nic.name if self.nic else "?"
        right = self.switch.name if self.switch else "?"
        return f"{left} <-> {right}"


@dataclass(slots=True)
class Fabric:
    """Everything linted together."""

    links: list[Link]
    nics: list[NicQos]
    switch_ports: list[SwitchPortQos]
    # The cabling file's rows (None: no --cabling file was given) and its path, so that links the
    # file names but no input matched are reported (LINK001/LINK002) instead of silently skipped.
    cabling: list[CablingEntry] | None = None
    cabling_source: str | None = None
