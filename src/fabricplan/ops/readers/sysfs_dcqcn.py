"""Reader for the MLNX_OFED DCQCN sysfs tree ``/sys/class/net/<if>/ecn/{roce_rp,roce_np}``.

Two input forms:

* a directory: the ``ecn`` directory itself, or a directory that contains ``ecn/`` (plus,
  optionally, copies of the interface's ``mtu`` and ``speed`` files);
* a captured dump: the output of ``grep -H -r . /sys/class/net/IF/ecn /sys/class/net/IF/mtu
  /sys/class/net/IF/speed``, one ``path:value`` per line.

Names follow MLNX_OFED ``en_sysfs.c``: ``roce_rp/enable/0..7``, ``roce_np/enable/0..7`` and the
integer parameters (``rpg_time_reset``, ``min_time_between_cnps``, ``cnp_dscp``…). Entries of
other protocols (``802.1.qau_rp``) and other files are ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from fabricplan.errors import InputError
from fabricplan.ops.model import Dcqcn
from fabricplan.ops.readers._common import parse_int, read_text

_PROTOCOLS = ("roce_rp", "roce_np")
# sysfs values are u32 firmware fields; anything larger is corrupt input.
_MAX_VALUE = 2**32 - 1


@dataclass
class SysfsData:
    """DCQCN state plus the interface's ``mtu``/``speed`` if they were captured."""

    dcqcn: Dcqcn | None
    mtu: int | None = None
    speed_mbps: int | None = None
    locations: dict[str, str] = field(default_factory=dict)


class _Builder:
    def __init__(self) -> None:
        self.enable: dict[str, dict[int, int]] = {p: {} for p in _PROTOCOLS}
        self.params: dict[str, dict[str, int]] = {p: {} for p in _PROTOCOLS}
        self.locations: dict[str, str] = {}
        self.mtu: int | None = None
        self.speed: int | None = None
        self.seen_ecn = False

    def add(self, path: str, value: str, where: str) -> None:
        parts = [p for p in path.replace("\\", "/").split("/") if p]
        if "ecn" in parts:
            rel = parts[len(parts) - 1 - parts[::-1].index("ecn") + 1:]
            self._add_ecn(rel, value, where)
        elif parts and parts[-1] == "mtu":
            self.mtu = parse_int(value, where, "mtu", 68, 65535)
            self.locations["mtu"] = where
        elif parts and parts[-1] == "speed":
            speed = parse_int(value, where, "speed", -1, 10**7)
            self.speed = speed if speed > 0 else None  # -1 = link down
            self.locations["speed"] = where

    def _add_ecn(self, rel: list[str], value: str, where: str) -> None:
        if not rel or rel[0] not in _PROTOCOLS:
            return
        self.seen_ecn = True
        proto = rel[0]
        if len(rel) == 3 and rel[1] == "enable":
            prio = parse_int(rel[2], where, "enable/<priority>", 0, 7)
            self.enable[proto][prio] = parse_int(value, where, f"{proto}/enable/{prio}", 0, 1)
            self.locations[f"{proto}/enable/{prio}"] = where
        elif len(rel) == 2:
            self.params[proto][rel[1]] = parse_int(value, where, f"{proto}/{rel[1]}", 0, _MAX_VALUE)
            self.locations[f"{proto}/{rel[1]}"] = where

    def build(self) -> SysfsData:
        dcqcn = None
        if self.seen_ecn:
            dcqcn = Dcqcn(
                rp_enabled=frozenset(p for p, v in self.enable["roce_rp"].items() if v),
                np_enabled=frozenset(p for p, v in self.enable["roce_np"].items() if v),
                rp=dict(self.params["roce_rp"]),
                np=dict(self.params["roce_np"]),
                locations=dict(self.locations),
            )
        return SysfsData(dcqcn=dcqcn, mtu=self.mtu, speed_mbps=self.speed, locations=dict(self.locations))


def parse_sysfs_dump(text: str, source: str, line_offset: int = 0) -> SysfsData:
    """Parse ``grep -H -r .`` output of the sysfs tree (``/sys/class/net/IF/ecn/roce_rp/rpg_gd:11``).

    Raises
    ------
    InputError
        A line without ``path:value``, a non-integer value, or a priority outside 0..7
        (location ``file:line``); or no ``ecn/`` entry at all.
    """
    builder = _Builder()
    lines = text.splitlines()
    for index, raw in enumerate(lines, start=1):
        where = f"{source}:{index + line_offset}"
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        path, sep, value = line.rpartition(":")
        if not sep or not path or "/" not in path:
            raise InputError(f"expected 'path:value' (grep -H -r output), got {line[:60]!r}", location=where)
        builder.add(path, value.strip(), where)
    if not builder.seen_ecn and builder.mtu is None and builder.speed is None:
        raise InputError("no ecn/roce_rp or ecn/roce_np entries found",
                         location=f"{source}:{len(lines) + line_offset}")
    return builder.build()


def read_sysfs_tree(path: Path | str) -> SysfsData:
    """Read a copied (or live) ``/sys/class/net/IF`` directory or its ``ecn`` subdirectory.

    Raises
    ------
    InputError
        Unreadable files or bad values (location = the file's path), or no ``ecn`` tree.
    """
    root = Path(path)
    if not root.is_dir():
        raise InputError("not a directory", location=str(root))
    ecn = root if root.name == "ecn" else root / "ecn"
    if not ecn.is_dir():
        raise InputError("no ecn/ directory (copy /sys/class/net/IF/ecn here)", location=str(root))
    builder = _Builder()
    for proto in _PROTOCOLS:
        base = ecn / proto
        if not base.is_dir():
            continue
        builder.seen_ecn = True
        for file in sorted(base.rglob("*")):
            if file.is_file():
                builder.add(str(file.relative_to(ecn.parent)), read_text(file).strip(), str(file))
    if not builder.seen_ecn:
        raise InputError("ecn/ holds neither roce_rp nor roce_np", location=str(ecn))
    for name in ("mtu", "speed"):
        file = ecn.parent / name
        if file.is_file():
            builder.add(name, read_text(file).strip(), str(file))
    return builder.build()
