"""HDRM002 — NIC receive-buffer headroom covers the real cable (mlx5 formula).

The ConnectX driver sizes XOFF from ``Cable len`` (default 7 m, often left unchanged):
``xoff = (301 + 216*cable/100)*speed/1000 + 272*mtu/100`` and a lossless buffer must hold
``xoff + max_mtu + cell``. Fires when ``Cable len`` is shorter than the real cable (cabling file,
else the switch's CABLE_LENGTH) or when a buffer holding a PFC priority is smaller than needed.

Passing::

    100G, MTU 9000, cable 5 m, Cable len: 7 -> buffer 1 (prio 3) 130944 >= 56080 + 9216 + 128

Failing::

    Receive buffer size (bytes): 130944,40960,...   -> buffer 1 40960 < 65424
    Cable len: 7 on a 30 m cable                     -> mlnx_qos -i eth2 --cable_len 30
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from fabricplan.ops import headroom
from fabricplan.ops.lint.finding import Finding
from fabricplan.ops.lint.options import from_catalog
from fabricplan.ops.lint.rules._common import finding, interface
from fabricplan.ops.model import Link

ID = "HDRM002"
SEVERITY = "error"
SCOPE = "link"
TITLE = "NIC headroom (mlx5 formula) covers speed, real cable length and MTU"
OPTIONS: dict[str, str] = {
    "default_cable_len_m": "headroom.mlx5.default_cable_len_m",
    "max_mtu_bytes": "headroom.mlx5.max_mtu_bytes",
    "cell_size_bytes": "headroom.mlx5.cell_size_bytes",
}


def defaults(catalog: Any) -> dict[str, Any]:
    """Default options, from the catalog's ``ops_defaults`` (``OPTIONS``)."""
    return from_catalog(OPTIONS, catalog)


def check(link: Link, options: dict[str, Any], catalog: Any) -> Iterator[Finding]:
    nic, port = link.nic, link.switch
    if nic is None or not nic.pfc_enabled:
        return
    driver_cable = nic.cable_len_m if nic.cable_len_m is not None else options["default_cable_len_m"]
    real_cable = link.cable_m if link.cable_m is not None else (port.cable_length_m if port else None)
    if real_cable is not None and driver_cable < real_cable:
        yield finding(ID, link, f"NIC Cable len is {driver_cable} m but the cable is {real_cable:g} m: "
                      "the driver reserves too little headroom",
                      f"mlnx_qos -i {interface(nic)} --cable_len {math.ceil(real_cable)}",
                      {"nic": {"cable_len_m": driver_cable}, "cable_m": real_cable}, nic.where("cable_len_m"))
    speed = nic.speed_mbps or (port.speed_mbps if port else None)
    mtu = nic.mtu or (port.mtu if port else None)
    if speed is None or mtu is None or nic.buffer_sizes is None or nic.prio2buffer is None:
        return
    cable = max(driver_cable, math.ceil(real_cable)) if real_cable is not None else driver_cable
    need = headroom.mlx5_headroom(speed, cable, mtu, options["max_mtu_bytes"], options["cell_size_bytes"], catalog=catalog)
    for buffer in sorted({nic.prio2buffer[p] for p in nic.pfc_enabled}):
        size = nic.buffer_sizes[buffer]
        if size < need.size_bytes:
            sizes = list(nic.buffer_sizes)
            sizes[buffer] = need.size_bytes
            yield finding(ID, link,
                          f"NIC lossless buffer {buffer} is {size} B; {speed // 1000}G, {cable} m, MTU {mtu} needs "
                          f"{need.size_bytes} B (xoff {need.xoff_bytes} + max_mtu {options['max_mtu_bytes']} + cell)",
                          f"mlnx_qos -i {interface(nic)} --buffer_size {','.join(str(s) for s in sizes)}",
                          {"nic": {"buffer": buffer, "size": size, "speed_mbps": speed, "cable_len_m": cable, "mtu": mtu},
                           "required": {"xoff": need.xoff_bytes, "size": need.size_bytes, "model": "mlx5"}},
                          nic.where("buffer_sizes"))
