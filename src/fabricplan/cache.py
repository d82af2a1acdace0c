"""fabricplan's per-user disk cache: where it is, which files in it are trusted, and its size bound.

Three speed-ups keep entries here (each only ever a speed-up: a missing, unreadable or refused
entry is recomputed): the parsed and validated bundled catalog (``catalog/files.py``, pickles), the
load model's fluid runs (``sim/load.py``, JSON) and the ``sim`` efficiency model's cases
(``perf/sim_efficiency.py``, JSON under ``sim/``).

* **Where**: ``$FABRICPLAN_CACHE_DIR`` (``off`` turns every disk cache off), else the platform's
  user cache folder from ``platformdirs`` (``$XDG_CACHE_HOME/fabricplan`` or ``~/.cache/fabricplan``
  on Linux, ``~/Library/Caches/fabricplan`` on macOS, ``%LOCALAPPDATA%\\fabricplan\\Cache`` on Windows).
* **Trust**: a pickle runs code when it is loaded, so nothing is read from a folder or a file that
  someone else could have written. The folder must be a real folder (not a symbolic link) owned
  by the current user and not writable by group or others; otherwise one ``warning:`` line goes to
  stderr (once per process) and the disk cache is off for the run. Each entry is opened without
  following links and checked on the open file: a regular file owned by the current user, not
  writable by group or others; else it is not read and its value is recomputed (and rewritten as
  the user's own), with one warning line for the first such entry of a run. Folders are
  created 0700, entries written 0600 (whatever the umask), atomically (``io.atomic_output``).
  (Platforms without POSIX ownership, Windows, keep the folder in the user's own profile.)
* **Size**: the entries' disk usage (allocated blocks, as ``du`` counts them) is kept under
  :data:`MAX_CACHE_BYTES` (``$FABRICPLAN_CACHE_MAX_BYTES``, a size such as ``200MB``, overrides
  it): after writes, the least recently used entries (by modification time, which a read
  refreshes) are removed until the folder is at :data:`PRUNE_TO_FRACTION` of the bound. Only
  files named as entries are counted or removed, never anything else in the folder.

The bound is a program limit beside the code, not a catalog default: the catalog's own parsed form
lives in this cache, so the bound must be known before any catalog is read.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from pathlib import Path

CACHE_ENV = "FABRICPLAN_CACHE_DIR"
MAX_BYTES_ENV = "FABRICPLAN_CACHE_MAX_BYTES"
#: Program limit: the disk usage of the cache's entries (a bundled catalog is ~1 MB of pickles; a
#: simulator case or load point is one 4 KiB block, so ~15,000 of them).
MAX_CACHE_BYTES = 64 * 1024 * 1024
#: Pruning removes entries until their usage is at most this share of the bound (so that the next
#: few writes do not prune again).
PRUNE_TO_FRACTION = 0.8
#: Bytes written in a process between two prunes, as a share of the bound (the first write of a
#: process always prunes).
PRUNE_EVERY_FRACTION = 1 / 16
#: The names of cache entries (``<name>.<24 hex digits>.pickle|json``, or ``<24 hex>.json``).
ENTRY_NAME = re.compile(r"^(?:[\w.-]+\.)?[0-9a-f]{24}\.(?:pickle|json)$")
#: Subfolders holding entries (the ``sim`` efficiency model's cases).
SUBFOLDERS = ("sim",)

_warned: set[str] = set()
_written_since_prune: dict[str, int] = {}


def cache_dir() -> Path | None:
    """The cache folder (None: the disk cache is off); not created or checked here."""
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return None if configured.lower() == "off" else Path(configured)
    import platformdirs

    return Path(platformdirs.user_cache_dir("fabricplan", appauthor=False))


def warn(message: str, key: str | None = None) -> None:
    """One ``warning:`` line on stderr, once per process for each ``key`` (default: the message)."""
    key = message if key is None else key
    if key not in _warned:
        _warned.add(key)
        from fabricplan.errors import printable

        print(f"warning: {printable(message)}", file=sys.stderr)


def _untrusted(info: os.stat_result) -> str | None:
    """Why a folder or file with this ``lstat``/``fstat`` may hold someone else's bytes (None: it cannot)."""
    if not hasattr(os, "geteuid"):
        return None
    if info.st_uid != os.geteuid():
        return f"owned by another user (uid {info.st_uid})"
    writers = [who for bit, who in ((stat.S_IWGRP, "group"), (stat.S_IWOTH, "others")) if info.st_mode & bit]
    if writers:
        return f"writable by {' and '.join(writers)} (mode {stat.S_IMODE(info.st_mode):04o})"
    return None


def trusted_folder(folder: Path, *, create: bool = False) -> bool:
    """Whether entries may be read from (and written to) ``folder``: a real folder of the current
    user, not writable by group or others (created 0700 when ``create``). A folder that is not is
    refused with one warning line; one that does not exist (and is not created) is just not used.
    Checked at every use (one ``lstat``), so a folder opened to others later is refused from then on."""
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        if not create:
            return False
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            info = os.lstat(folder)
        except OSError:
            return False  # a read-only home: the cache only costs its speed-up
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode):
        warn(f"cache folder {folder} is not a folder (a symbolic link or a file): not used; fabricplan "
             f"recomputes (set {CACHE_ENV} to a folder of your own)")
        return False
    why = _untrusted(info)
    if why is not None:
        warn(f"cache folder {folder} is {why}: not used, since a planted cache file could run code; "
             f"fabricplan recomputes (chmod 700 it if it is yours, or set {CACHE_ENV} to a folder of your own)")
        return False
    return True


def _base_of(path: Path) -> Path:
    """The cache folder an entry belongs to (its folder, or the one above a subfolder)."""
    return path.parent.parent if path.parent.name in SUBFOLDERS else path.parent


def read_bytes(path: Path | None) -> bytes | None:
    """The bytes of the cache entry at ``path``, or None (no entry, caching off, an untrusted folder
    or file: the caller recomputes). A read counts as a use for the size bound."""
    if path is None or not trusted_folder(_base_of(path)) or (path.parent != _base_of(path)
                                                              and not trusted_folder(path.parent)):
        return None
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        why = "not a regular file" if not stat.S_ISREG(info.st_mode) else _untrusted(info)
        if why is not None:
            warn(f"cache entry {path} is {why}: not read, since a planted cache file could run code; "
                 "fabricplan recomputes it (and any other such entry, without another warning)",
                 key=f"entry:{_base_of(path)}")
            return None
        with os.fdopen(fd, "rb") as handle:
            fd = -1
            data = handle.read()
    except OSError:
        return None
    finally:
        if fd >= 0:
            os.close(fd)
    try:
        os.utime(path)  # least recently used = oldest modification time
    except OSError:
        pass
    return data


def write_bytes(path: Path | None, data: bytes) -> None:
    """Store a cache entry (0600, atomically) if its folder is trusted, then keep the cache within
    its bound (:func:`prune`); a failure only costs the speed-up."""
    if path is None:
        return
    base = _base_of(path)
    if not trusted_folder(base, create=True) or (path.parent != base and not trusted_folder(path.parent, create=True)):
        return
    from fabricplan.errors import InputError
    from fabricplan.io import write_bytes_atomic

    try:
        write_bytes_atomic(path, data, what="cache entry", mode=0o600)
    except (OSError, InputError):  # a read-only home or a full disk only costs the speed-up
        return
    key = str(base)
    limit = max_bytes()
    written = _written_since_prune.get(key)
    total = (written or 0) + len(data)
    if written is None or total >= limit * PRUNE_EVERY_FRACTION:
        prune(base, limit)
        total = 0
    _written_since_prune[key] = total


def max_bytes() -> int:
    """The size bound: ``$FABRICPLAN_CACHE_MAX_BYTES`` (a size: ``200MB``, ``1GiB``) or :data:`MAX_CACHE_BYTES`;
    an unreadable setting is one warning line and the default."""
    configured = os.environ.get(MAX_BYTES_ENV)
    if not configured:
        return MAX_CACHE_BYTES
    from fabricplan.errors import InputError
    from fabricplan.units import parse_bytes

    try:
        return parse_bytes(configured, MAX_BYTES_ENV, lo=0, hi=2**50, noun="cache size")
    except InputError as exc:
        warn(f"{exc}; the cache keeps its default bound")
        return MAX_CACHE_BYTES


def usage(info: os.stat_result) -> int:
    """Bytes an entry takes on disk: its allocated blocks where the platform says (``du``), else its size."""
    blocks = getattr(info, "st_blocks", None)
    return int(blocks) * 512 if blocks is not None else int(info.st_size)


def entries(folder: Path) -> list[tuple[Path, os.stat_result]]:
    """Every cache entry (by name, :data:`ENTRY_NAME`) in ``folder`` and its subfolders, with its ``lstat``."""
    found = []
    for place in (folder, *(folder / sub for sub in SUBFOLDERS)):
        try:
            with os.scandir(place) as listing:
                for item in listing:
                    if ENTRY_NAME.match(item.name):
                        try:
                            info = item.stat(follow_symlinks=False)
                        except OSError:
                            continue
                        if stat.S_ISREG(info.st_mode):
                            found.append((Path(item.path), info))
        except OSError:
            continue
    return found


def prune(folder: Path, limit: int) -> int:
    """Remove the least recently used entries of ``folder`` until their disk usage is at most
    :data:`PRUNE_TO_FRACTION` x ``limit``, when it is above ``limit``; returns the bytes freed."""
    found = entries(folder)
    total = sum(usage(info) for _path, info in found)
    if total <= limit:
        return 0
    target = limit * PRUNE_TO_FRACTION
    freed = 0
    for path, info in sorted(found, key=lambda item: (item[1].st_mtime, item[0].name)):
        if total - freed <= target:
            break
        try:
            path.unlink()
        except OSError:
            continue
        freed += usage(info)
    return freed
