"""Assemble one :class:`NicQos` from a NIC capture (a directory or a single dump file).

Directory form (one NIC port)::

    gpu01_eth2/
      name            # optional: "gpu01:eth2" (default: the directory name)
      mlnx_qos.txt    # mlnx_qos -i eth2
      ecn/...         # cp -r /sys/class/net/eth2/ecn   (or sysfs.txt: grep -H -r . output)
      mtu, speed      # optional copies of /sys/class/net/eth2/{mtu,speed}

Dump-file form (``*.nic`` / ``*.nic.txt``), sections introduced by ``### `` marker lines::

    ### nic gpu01:eth2
    ### mlnx_qos
    <mlnx_qos -i eth2 output>
    ### sysfs
    <grep -H -r . /sys/class/net/eth2/ecn /sys/class/net/eth2/mtu /sys/class/net/eth2/speed>

A file without markers is read as bare ``mlnx_qos`` output named after the file.
A directory that holds neither ``mlnx_qos.txt`` nor ``name`` is scanned for NIC captures.
"""

from __future__ import annotations

import re
from pathlib import Path

from fabricplan.errors import InputError
from fabricplan.ops.model import NicQos
from fabricplan.ops.readers._common import read_text
from fabricplan.ops.readers.mlnx_qos import parse_mlnx_qos
from fabricplan.ops.readers.sysfs_dcqcn import SysfsData, parse_sysfs_dump, read_sysfs_tree

DUMP_SUFFIXES = (".nic", ".nic.txt")
_MARKER = re.compile(r"^###\s+(nic|mlnx_qos|sysfs)\b\s*(.*?)\s*$")
_NAME = re.compile(r"^[A-Za-z0-9_.:@/\-]+$")


def _check_name(name: str, location: str) -> str:
    if not _NAME.match(name):
        raise InputError(f"NIC name {name!r} must be like host:interface", location=location)
    return name


def _assemble(name: str, source: str, qos_text: str, qos_offset: int, sysfs: SysfsData | None) -> NicQos:
    qos = parse_mlnx_qos(qos_text, source, qos_offset)
    nic = NicQos(
        name=name,
        source=source,
        trust=qos.trust,
        dcbx=qos.dcbx,
        dscp2prio=qos.dscp2prio,
        pfc_enabled=qos.pfc_enabled,
        prio2buffer=qos.prio2buffer,
        buffer_sizes=qos.buffer_sizes,
        max_buffer_size=qos.max_buffer_size,
        cable_len_m=qos.cable_len_m,
        tcs=qos.tcs,
        locations=dict(qos.locations),
    )
    if sysfs is not None:
        nic.dcqcn = sysfs.dcqcn
        nic.mtu = sysfs.mtu
        nic.speed_mbps = sysfs.speed_mbps
        nic.locations.update(sysfs.locations)
    return nic


def read_nic_dump(path: Path) -> NicQos:
    """Read one dump file (see module docstring)."""
    text = read_text(path)
    source = str(path)
    lines = text.splitlines()
    sections: dict[str, tuple[int, int]] = {}  # kind -> (first line index, end index)
    name = None
    current: str | None = None
    for index, line in enumerate(lines):
        m = _MARKER.match(line)
        if not m:
            continue
        kind = m.group(1)
        if current is not None:
            sections[current] = (sections[current][0], index)
            current = None
        if kind == "nic":
            name = _check_name(m.group(2), f"{source}:{index + 1}")
        else:
            if kind in sections:
                raise InputError(f"section '### {kind}' appears twice", location=f"{source}:{index + 1}")
            sections[kind] = (index + 1, len(lines))
            current = kind
    stem = path.name
    for suffix in DUMP_SUFFIXES:
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    if not sections and name is None:
        return _assemble(path.stem, source, text, 0, None)
    if "mlnx_qos" not in sections:
        raise InputError("no '### mlnx_qos' section", location=f"{source}:{len(lines)}")
    start, end = sections["mlnx_qos"]
    qos_text = "\n".join(lines[start:end])
    sysfs = None
    if "sysfs" in sections:
        s_start, s_end = sections["sysfs"]
        sysfs = parse_sysfs_dump("\n".join(lines[s_start:s_end]), source, s_start)
    return _assemble(name or stem, source, qos_text, start, sysfs)


def read_nic_dir(path: Path) -> NicQos:
    """Read one NIC capture directory (see module docstring)."""
    qos_file = path / "mlnx_qos.txt"
    if not qos_file.is_file():
        raise InputError("no mlnx_qos.txt in NIC capture directory", location=str(path))
    name_file = path / "name"
    name = path.name
    if name_file.is_file():
        name = _check_name(read_text(name_file).strip(), f"{name_file}:1")
    sysfs: SysfsData | None = None
    if (path / "ecn").is_dir():
        sysfs = read_sysfs_tree(path)
    elif (path / "sysfs.txt").is_file():
        sysfs_file = path / "sysfs.txt"
        sysfs = parse_sysfs_dump(read_text(sysfs_file), str(sysfs_file))
    return _assemble(name, str(qos_file), read_text(qos_file), 0, sysfs)


def read_nic(path: Path | str) -> NicQos:
    """Read one NIC capture: a capture directory or a dump file."""
    p = Path(path)
    if p.is_dir():
        return read_nic_dir(p)
    if p.exists():
        return read_nic_dump(p)
    raise InputError("no such file or directory", location=str(p))


def _is_capture_dir(p: Path) -> bool:
    return (p / "mlnx_qos.txt").is_file()


def read_nics(paths: list[Path | str]) -> list[NicQos]:
    """Read every NIC capture named: files, capture directories, or folders of captures.

    Raises
    ------
    InputError
        For unusable captures, an empty folder, or two captures with the same NIC name.
    """
    nics: list[NicQos] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir() and not _is_capture_dir(p):
            found = sorted(
                c for c in p.iterdir()
                if (c.is_dir() and _is_capture_dir(c)) or (c.is_file() and c.name.endswith(DUMP_SUFFIXES))
            )
            if not found:
                raise InputError("folder holds no NIC captures (*.nic, *.nic.txt or dirs with mlnx_qos.txt)",
                                 location=str(p))
            nics.extend(read_nic(c) for c in found)
        else:
            nics.append(read_nic(p))
    seen: dict[str, str] = {}
    for nic in nics:
        if nic.name in seen:
            raise InputError(f"NIC {nic.name!r} captured twice (also in {seen[nic.name]})", location=nic.source)
        seen[nic.name] = nic.source
    return nics
