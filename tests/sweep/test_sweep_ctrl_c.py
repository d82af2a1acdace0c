"""Ctrl-C while the process pool runs is counted by the pool loop, not raised inside
concurrent.futures: the batches already running are finished and handed back, then the run stops."""

from __future__ import annotations

import signal
import threading

import pytest
from sweep_files import POINTS_200, write_sweep

from fabricplan.sweep import load_sweep
from fabricplan.sweep.executors import BatchArgs, CtrlC, batch_size_for, run_process_pool


def test_ctrl_c_is_counted_not_raised_and_the_handler_comes_back():
    before = signal.getsignal(signal.SIGINT)
    with CtrlC() as ctrl_c:
        signal.raise_signal(signal.SIGINT)
        signal.raise_signal(signal.SIGINT)
        assert ctrl_c.presses == 2
    assert signal.getsignal(signal.SIGINT) is before
    with pytest.raises(KeyboardInterrupt):
        signal.raise_signal(signal.SIGINT)


def test_ctrl_c_leaves_an_ignored_sigint_and_other_threads_alone():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with CtrlC():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)
    seen = []

    def in_a_thread():
        with CtrlC():
            seen.append(signal.getsignal(signal.SIGINT))

    thread = threading.Thread(target=in_a_thread)
    thread.start()
    thread.join()
    assert seen == [previous]  # signal handlers belong to the main thread; nothing was replaced


def test_first_ctrl_c_finishes_the_running_batches_then_stops(tmp_path):
    sweep = load_sweep(write_sweep(tmp_path, POINTS_200))
    tasks = [(index, sweep.point_id(values), values) for index, values in sweep.points()]
    workers, size = 2, batch_size_for(len(tasks), 2, 5)
    batches = [tasks[i:i + size] for i in range(0, len(tasks), size)]
    args = BatchArgs(columns=sweep.columns, json_axes=frozenset())
    before = signal.getsignal(signal.SIGINT)
    got, carried_on, stopping = [], [], []
    results = run_process_pool(sweep.context, batches, args, workers, on_stopping=stopping.append)
    with pytest.raises(KeyboardInterrupt):
        for rows in results:
            got.append(rows)
            if len(got) == 2:
                signal.raise_signal(signal.SIGINT)
                carried_on.append(True)  # the press did not raise here, in the middle of the pool's work
    assert carried_on == [True]
    # After the press only batches already handed to a worker come back: at most the 2 x workers in
    # flight, and far fewer than the 40 batches of the sweep.
    # The batches it said were running all came back (with any that had finished beside the second).
    assert len(stopping) == 1 and 2 + stopping[0] <= len(got) <= 2 + 2 * workers
    assert all(len(rows) == size for rows in got)
    ids = [row["point_id"] for rows in got for row in rows]
    assert len(ids) == len(set(ids))
    assert signal.getsignal(signal.SIGINT) is before
