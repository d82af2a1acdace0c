"""A real multi-node Ray cluster for the tests: a head and a worker node started as separate
processes with `ray start` (as a user would), in their own temporary folder, home and ports.

Stopping never runs `ray stop` (it ends every Ray process of the machine, other users' too): it
ends only the processes whose command line names this cluster's temporary folder, and their
children. Start-up waits poll with generous limits (a loaded machine is slow, never wrong).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

#: Program limits of the polls (a wait that ends early when the cluster is up; no test asserts a time).
START_TIMEOUT_S = 300
STOP_TIMEOUT_S = 60
POLL_S = 1.0
#: Ray's command line: beside this interpreter (a virtual environment), else on the PATH.
RAY = (str(Path(sys.executable).with_name("ray")) if Path(sys.executable).with_name("ray").exists()
       else shutil.which("ray") or "ray")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class RayCluster:
    """A running cluster: its address, folder and the environment its nodes were started with."""

    address: str
    temp_dir: Path
    env: dict[str, str] = field(repr=False)
    log: list[str] = field(default_factory=list, repr=False)

    def stop(self) -> None:
        stop_processes_naming(self.temp_dir)
        shutil.rmtree(self.temp_dir, ignore_errors=True)


def _ray(args: list[str], env: dict[str, str], log: list[str]) -> None:
    result = subprocess.run([RAY, *args], env=env, capture_output=True, text=True, timeout=START_TIMEOUT_S)
    log.append(f"$ ray {' '.join(args)}\n{result.stdout}\n{result.stderr}")
    if result.returncode != 0:
        raise RuntimeError(f"ray {args[0]} {args[1]} failed ({result.returncode}):\n{result.stderr[-3000:]}")


def _cpus(address: str, env: dict[str, str]) -> float:
    """CPUs the cluster reports (`ray status`), 0 when it does not answer yet."""
    result = subprocess.run([RAY, "status", f"--address={address}"], env=env, capture_output=True, text=True,
                            timeout=START_TIMEOUT_S)
    match = re.search(r"/([\d.]+) CPU", result.stdout)
    return float(match.group(1)) if result.returncode == 0 and match else 0.0


def start_cluster(head_env: dict[str, str], worker_env: dict[str, str], cpus_per_node: int = 1) -> RayCluster:
    """A head (``head_env``) and one worker node (``worker_env``) on this machine, each with
    ``cpus_per_node`` CPUs and every port chosen free; returns once the cluster has both nodes' CPUs."""
    # Ray's session folder holds unix sockets: a short path (the limit is ~107 bytes).
    temp_dir = Path(tempfile.mkdtemp(prefix="fpray-", dir="/tmp"))
    port = free_port()
    address = f"127.0.0.1:{port}"
    cluster = RayCluster(address=address, temp_dir=temp_dir, env=head_env)
    common = ["--node-ip-address=127.0.0.1", f"--num-cpus={cpus_per_node}", "--disable-usage-stats"]
    try:
        _ray(["start", "--head", f"--port={port}", *common, "--include-dashboard=false",
              f"--dashboard-port={free_port()}",
              f"--dashboard-agent-listen-port={free_port()}", f"--temp-dir={temp_dir}"], head_env, cluster.log)
        _ray(["start", f"--address={address}", *common, f"--dashboard-agent-listen-port={free_port()}"],
             worker_env, cluster.log)
        deadline = time.monotonic() + START_TIMEOUT_S
        while _cpus(address, worker_env) < 2 * cpus_per_node:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the Ray cluster at {address} did not report both nodes")
            time.sleep(POLL_S)
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _processes() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, command line) of every process now."""
    out = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        out[int(entry.name)] = (parent, command)
    return out


def processes_naming(folder: Path) -> set[int]:
    """The processes whose command line names ``folder``, and all their descendants."""
    table = _processes()
    found = {pid for pid, (_, command) in table.items() if str(folder) in command and pid != os.getpid()}
    grew = True
    while grew:
        children = {pid for pid, (parent, _) in table.items() if parent in found} - found
        found |= children
        grew = bool(children)
    return found


def _alive(pids: set[int]) -> set[int]:
    """Those of ``pids`` still running (a zombie counts as gone)."""
    running = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z":
            running.add(pid)
    return running


def stop_processes_naming(folder: Path) -> None:
    """SIGTERM, then after a grace period SIGKILL, to :func:`processes_naming` ``folder``: the
    processes found first are followed by pid (a raylet's renamed children outlive their parent's
    name), with any that started meanwhile."""
    targets: set[int] = set()
    for sig in (signal.SIGTERM, signal.SIGKILL):
        targets = _alive(targets | processes_naming(folder))
        for pid in targets:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + STOP_TIMEOUT_S / 2
        while _alive(targets) and time.monotonic() < deadline:
            time.sleep(POLL_S / 4)
        if not _alive(targets | processes_naming(folder)):
            return
