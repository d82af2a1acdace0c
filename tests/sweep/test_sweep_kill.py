"""A local run killed half-way (a real process, SIGKILL) loses at most its batch in flight; the re-run
computes only the points that are not on disk and leaves the finished part files as they were."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import pytest
from sweep_files import POINTS_200, write_sweep

from fabricplan.sweep.store import read_results
from project_paths import ROOT

BATCH = 5


def _run(path, out, *extra):
    return subprocess.Popen([sys.executable, "-m", "fabricplan.cli.app", "sweep", "run", str(path), "--out", str(out),
                             "--executor", "inprocess", "--batch-size", str(BATCH), "-q", *extra],
                            env={**os.environ, "PYTHONPATH": str(ROOT / "src")}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_killed_run_resumes_without_recomputing(tmp_path):
    axes = POINTS_200 | {"economics.energy_usd_per_kwh": [0.05, 0.1, 0.15, 0.2]}  # 400 points
    path, out = write_sweep(tmp_path, axes, name="kill"), tmp_path / "out"
    process = _run(path, out)
    deadline = time.monotonic() + 120
    while len(list(out.glob("part-*.parquet"))) < 20 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.communicate()
    assert process.returncode == -signal.SIGKILL  # killed, not finished
    parts = sorted(out.glob("part-*.parquet"))
    done, _ = read_results(out)
    assert 20 * BATCH <= done.num_rows < 400 and done.num_rows == len(parts) * BATCH  # whole batches only
    before = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in parts}

    resumed = _run(path, out, "--json")
    stdout, stderr = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, stderr
    import json

    summary = json.loads(stdout)
    assert summary["points_skipped"] == done.num_rows
    assert summary["points_computed"] == 400 - done.num_rows
    assert {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in out.glob("part-*.parquet")
            if p.name in before} == before
    final, _ = read_results(out)
    ids = final.column("point_id").to_pylist()
    assert len(ids) == len(set(ids)) == 400
    assert sorted(final.column("point_index").to_pylist()) == list(range(400))
    assert not list(out.glob(".part-*.tmp"))


@pytest.mark.parametrize("presses", [1, 2])
def test_ctrl_c_on_the_process_pool_stops_cleanly_and_keeps_finished_batches(tmp_path, presses):
    """One Ctrl-C: no new batch starts, those running finish and are written. Two: the workers end at
    once. Either way exit 130, one line saying where the finished batches are, whole batches only."""
    path, out = write_sweep(tmp_path, POINTS_200, name="interrupt"), tmp_path / "out"
    process = subprocess.Popen([sys.executable, "-m", "fabricplan.cli.app", "sweep", "run", str(path), "--out", str(out),
                                "--workers", "2", "--batch-size", str(BATCH), "-q"],
                               env={**os.environ, "PYTHONPATH": str(ROOT / "src")}, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while len(list(out.glob("part-*.parquet"))) < 4 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.02)
    for _ in range(presses):
        process.send_signal(signal.SIGINT)
    _stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    lines = stderr.strip().splitlines()
    assert lines[-1].startswith("interrupted: finished batches are saved in")
    if presses == 1:  # said when the press is seen: how many batches it waits for, and how to stop now
        assert re.fullmatch(r"stopping: [0-9]+ running batch(es)? finish and are saved; Ctrl-C again to stop now",
                            lines[-2]), lines
    assert "Traceback" not in stderr
    parts = sorted(out.glob("part-*.parquet"))
    done, _ = read_results(out)
    assert 4 * BATCH <= done.num_rows < 200 and done.num_rows == len(parts) * BATCH  # whole batches only
    assert not list(out.glob(".part-*.tmp"))


def _marked(mark: str) -> list[int]:
    """Pids of the processes whose environment carries ``mark`` (the run this test started, its
    workers and its resource tracker)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/environ", "rb") as handle:
                    if mark.encode() in handle.read():
                        found.append(int(entry))
            except OSError:
                continue
    return found


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="finds the run's processes in /proc")
def test_killed_pool_driver_takes_its_workers_so_its_pipe_ends(tmp_path):
    """`sweep run ... | tee log`: SIGKILL of the driver; its pool workers and the resource tracker
    go too, so the pipes reach end of file (the reader would otherwise wait for good)."""
    import threading
    import uuid

    mark = f"FABRICPLAN_TEST_RUN={uuid.uuid4().hex}"
    path, out = write_sweep(tmp_path, POINTS_200, name="piped"), tmp_path / "out"
    process = subprocess.Popen([sys.executable, "-m", "fabricplan.cli.app", "sweep", "run", str(path), "--out", str(out),
                                "--workers", "2", "--batch-size", str(BATCH)],
                               env={**os.environ, "PYTHONPATH": str(ROOT / "src"), mark.split("=")[0]: mark.split("=")[1]},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    ended = {name: threading.Event() for name in ("stdout", "stderr")}

    def drain(stream, name):
        while stream.read(4096):
            pass
        ended[name].set()

    for name in ended:
        threading.Thread(target=drain, args=(getattr(process, name), name), daemon=True).start()
    try:
        deadline = time.monotonic() + 120
        while not list(out.glob("part-*.parquet")) and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)  # the workers are computing once a part is written
        assert process.poll() is None, "the run ended before it could be killed"
        assert len(_marked(mark)) >= 3  # the driver and its two workers (and the resource tracker)
        process.send_signal(signal.SIGKILL)
        assert process.wait(timeout=60) == -signal.SIGKILL
        for name, event in ended.items():
            assert event.wait(timeout=120), f"{name} still open: {_marked(mark)} hold it"
        deadline = time.monotonic() + 120
        while _marked(mark) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _marked(mark)
    finally:
        for pid in _marked(mark):  # what this test started, should any be left
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
