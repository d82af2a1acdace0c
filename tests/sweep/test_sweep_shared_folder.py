"""Issue 31: one results folder, several runs. A running writer holds the folder's lock
(`.sweep.lock`); a second run into the same folder waits for it, then computes only what is left,
so every point is stored exactly once; temporary files a live writer owns are never removed; and
`sweep report` counts a point once even in a folder that holds it twice. Real processes; no
assumption about how fast anything runs (the waits poll with generous deadlines)."""

from __future__ import annotations

import fcntl
import os
import queue
import shutil
import subprocess
import sys
import threading
import time

import pyarrow.parquet as pq
from sweep_files import SMALL_AXES, write_sweep

from fabricplan.sweep.store import LOCK, read_results
from project_paths import ROOT

AXES_24 = SMALL_AXES | {"economics.energy_usd_per_kwh": [0.05, 0.1, 0.2, 0.3]}  # 3 x 2 x 4 points
DEADLINE_S = 300


def _start(path, out, *extra):
    return subprocess.Popen([sys.executable, "-m", "fabricplan.cli.app", "sweep", "run", str(path), "--out", str(out),
                             "--executor", "inprocess", "--batch-size", "2", "-q", "--json", *extra],
                            env={**os.environ, "PYTHONPATH": str(ROOT / "src")}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _raw_ids(out):
    """Every point id in the folder's part files, duplicates included (read_results drops them)."""
    return [i for part in sorted(out.glob("part-*.parquet"))
            for i in pq.read_table(part, columns=["point_id"]).column("point_id").to_pylist()]


def test_two_concurrent_runs_store_every_point_exactly_once(tmp_path):
    import json

    path, out = write_sweep(tmp_path, AXES_24, name="shared", draws=0), tmp_path / "out"
    first, second = _start(path, out), _start(path, out)
    results = [p.communicate(timeout=DEADLINE_S) for p in (first, second)]
    for process, (_stdout, stderr) in zip((first, second), results, strict=True):
        assert process.returncode == 0, stderr
        assert "Traceback" not in stderr
    computed = [json.loads(stdout)["points_computed"] for stdout, _ in results]
    assert sum(computed) == 24  # whichever ran first computed what it ran; the other only the rest
    ids = _raw_ids(out)
    assert len(ids) == len(set(ids)) == 24
    assert not list(out.glob(".part-*.tmp"))


def _lines(stream, into: queue.Queue) -> None:
    for line in stream:
        into.put(line)
    into.put(None)


def _start_waiting(path, out):
    """Start a run on ``out`` (whose lock someone else holds) and read its stderr until it says it
    waits: (process, the queue of its further stderr lines, the lines seen so far)."""
    waiting = _start(path, out)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=_lines, args=(waiting.stderr, lines), daemon=True).start()
    deadline = time.monotonic() + DEADLINE_S
    seen = []
    while not any(line.startswith("waiting: ") for line in seen):
        line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
        assert line is not None, seen  # the run ended without waiting
        seen.append(line)
    return waiting, lines, seen


def test_a_second_run_waits_for_the_writer_and_leaves_its_temporary_files(tmp_path):
    path, out = write_sweep(tmp_path, AXES_24, name="wait", draws=0), tmp_path / "out"
    started = _start(path, out, "--limit", "4")
    assert started.communicate(timeout=DEADLINE_S)[0] and started.returncode == 0
    assert len(_raw_ids(out)) == 4
    lock = os.open(out / LOCK, os.O_RDWR)
    fcntl.flock(lock, fcntl.LOCK_EX)  # this test is now the folder's live writer
    try:
        in_flight = out / ".part-000000099-live.parquet.abc123.tmp"
        in_flight.write_bytes(b"half a batch")
        waiting, lines, seen = _start_waiting(path, out)
        assert str(out) in seen[-1]
        assert in_flight.exists() and len(_raw_ids(out)) == 4  # nothing touched while the writer lives
    finally:
        os.close(lock)  # the writer ends
    stdout = waiting.stdout.read()
    assert waiting.wait(timeout=DEADLINE_S) == 0
    rest = []
    while (line := lines.get(timeout=DEADLINE_S)) is not None:
        rest.append(line)
    assert "Traceback" not in "".join(seen + rest)
    import json

    assert json.loads(stdout)["points_computed"] == 20
    assert not in_flight.exists()  # its writer is gone: a stale temporary file now
    ids = _raw_ids(out)
    assert len(ids) == len(set(ids)) == 24


def test_report_counts_a_point_stored_twice_once(tmp_path, cli):
    path, out = write_sweep(tmp_path, SMALL_AXES, name="twice", draws=0), tmp_path / "out"
    assert cli("sweep", "run", path, "--out", out, "--executor", "inprocess", "-q").code == 0
    for part in sorted(out.glob("part-*.parquet")):  # a folder written by two runs before the lock
        shutil.copy(part, part.with_name(part.name.replace("part-", "part-9")))
    assert len(_raw_ids(out)) == 12
    table, _ = read_results(out)
    assert table.num_rows == 6 and len(set(table.column("point_id").to_pylist())) == 6
    result = cli("sweep", "report", out, "--json")
    assert result.code == 0, result.err
    assert result.json()["points"] == 6


def test_ctrl_c_while_waiting_for_the_folder_stops_cleanly(tmp_path):
    import signal

    path, out = write_sweep(tmp_path, SMALL_AXES, name="stop", draws=0), tmp_path / "out"
    out.mkdir()
    lock = os.open(out / LOCK, os.O_RDWR | os.O_CREAT)
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        waiting, lines, seen = _start_waiting(path, out)
        waiting.send_signal(signal.SIGINT)
        assert waiting.wait(timeout=DEADLINE_S) == 130
    finally:
        os.close(lock)
    while (line := lines.get(timeout=DEADLINE_S)) is not None:
        seen.append(line)
    assert "Traceback" not in "".join(seen) and seen[-1].startswith("interrupted: "), seen
    assert not list(out.glob("part-*.parquet"))
