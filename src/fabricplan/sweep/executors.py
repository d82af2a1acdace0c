"""Where batches of points run: in this process, a local process pool (default), or a Ray cluster.

Every executor runs the same function (:func:`fabricplan.sweep.evaluate.run_batch`) on the same
batches, so the rows are identical whichever runs them. Each yields the rows of a batch as soon as
it finishes (in any order); the caller writes each batch as one part file.

* ``inprocess``: one batch after another here (no start-up, no copying).
* ``process``: ``concurrent.futures.ProcessPoolExecutor`` (spawned workers). The point context
  (base spec and catalog, ~50 kB pickled) goes to each worker once, through the pool's initializer;
  a task carries only its batch's point values. A worker ends when the driver is gone, even killed
  (``_die_with``), so nothing holds the driver's stdout after it. Ctrl-C is counted (:class:`CtrlC`) and acted on
  between waits: the first starts no new batch and finishes those running, a second ends the workers.
* ``ray``: ``ray.put`` puts the context in the object store once; each task gets its reference and
  the worker fetches and unpickles it once per worker process (kept by reference id). At most
  ``2 x workers`` batches are in flight, so a large sweep does not queue every task at once. A
  cluster with token authentication gets the token where Ray keeps it (:mod:`fabricplan.sweep.ray_auth`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any

from fabricplan.errors import InputError
from fabricplan.sweep.evaluate import Task, run_batch
from fabricplan.sweep.points import PointContext

EXECUTORS = ("inprocess", "process", "ray")
RAY_INSTALL_HINT = '--executor ray needs Ray: pip install "fabricplan[ray]"'
#: Program limits of a local Ray started for a try: its object store and no dashboard.
LOCAL_RAY_OBJECT_STORE_BYTES = 150 * 1024 * 1024
LOOPBACK_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
#: Program limit: how long the reachability probe of a --ray-address waits for its TCP connection
#: (Ray's own connect retries for minutes when nothing listens there).
RAY_PROBE_TIMEOUT_S = 5.0


def _is_host_port(address: str) -> bool:
    """``host:port`` (a GCS address), not ``ray://`` (Ray Client) or ``auto``."""
    host, sep, port = address.rpartition(":")
    return bool(sep and host and port.isdigit()) and "://" not in address


def probe_ray_address(address: str) -> None:
    """Refuse, in one line and at once, a ``host:port`` (or ``ray://host:port``) address where nothing
    accepts a TCP connection; ``auto`` and other forms are left to Ray."""
    import socket

    target = address.removeprefix("ray://")
    host, sep, port = target.rpartition(":")
    if not sep or not port.isdigit() or not host:
        return
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=RAY_PROBE_TIMEOUT_S):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise InputError(f"cannot reach a Ray cluster there ({reason}); start one with `ray start --head` or "
                         "leave --ray-address out for a local one", location=f"--ray-address {address}") from None


@dataclass(frozen=True)
class BatchArgs:
    """What stays the same for every batch of a run (columns, JSON-encoded axes)."""

    columns: dict[str, str]
    json_axes: frozenset[str]


Rows = list[dict[str, Any]]


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def batch_size_for(points: int, workers: int, requested: int | None) -> int:
    """Points per task: as asked, else enough batches for ~8 per worker (so the pool balances and a
    killed run loses little) and at most 200 points per batch (~3 s of compares without draws, ~14 s
    with the catalog's 1,000: README, "Sweep throughput")."""
    if requested is not None:
        return requested
    return max(1, min(200, -(-points // (8 * max(1, workers)))))


def run_inprocess(context: PointContext, batches: Sequence[list[Task]], args: BatchArgs) -> Generator[Rows, None, None]:
    for batch in batches:
        yield run_batch(context, batch, args.columns, args.json_axes)


# --- local process pool -----------------------------------------------------------------------------

_WORKER: dict[str, Any] = {}


#: How often a pool worker looks whether its driver is still there (program timing, not a model number).
PARENT_POLL_S = 0.5


def _init_worker(context: PointContext, args: BatchArgs, driver: int | None = None) -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the driver's to handle: it stops the pool
    _WORKER["context"], _WORKER["args"] = context, args
    if driver is not None:
        _die_with(driver)


def _die_with(driver: int) -> None:
    """End this worker when its driver process is gone (SIGKILL leaves no time to stop the pool).

    The workers hold both ends of the pool's queues, so a dead driver does not close their input;
    left running they would keep the driver's stdout and stderr open (``sweep run | tee log`` would
    never end) and, through them, the resource tracker. A daemon thread compares the parent's pid
    with the driver's (a dead driver's children are re-parented), also right now, in case the
    driver died while this worker was starting."""
    import threading
    import time

    def watch() -> None:
        while os.getppid() == driver:
            time.sleep(PARENT_POLL_S)
        os._exit(1)

    if os.getppid() != driver:
        os._exit(1)
    threading.Thread(target=watch, name="fabricplan-driver-watch", daemon=True).start()


def _pool_batch(batch: list[Task]) -> Rows:
    args: BatchArgs = _WORKER["args"]
    return run_batch(_WORKER["context"], batch, args.columns, args.json_axes)


class CtrlC:
    """Ctrl-C while a pool runs, counted rather than raised wherever the main thread happens to be.

    A KeyboardInterrupt raised inside ``concurrent.futures``' own bookkeeping (half-way through
    ``wait()`` taking the futures' locks, or through ``submit``) can leave a lock held, and the
    pool's manager thread then blocks on it for good: the run printed "interrupted" and never
    exited. So the handler only counts presses; the pool loop looks at the count between waits.
    Installed only in the main thread and only over a Python handler (a SIGINT that is ignored stays
    ignored); the previous handler comes back on exit.
    """

    def __init__(self) -> None:
        self.presses = 0
        self._previous: Any = None

    def _press(self, _signum: int, _frame: Any) -> None:
        self.presses += 1

    def __enter__(self) -> CtrlC:
        import signal
        import threading

        if threading.current_thread() is threading.main_thread() and callable(signal.getsignal(signal.SIGINT)):
            self._previous = signal.signal(signal.SIGINT, self._press)
        return self

    def __exit__(self, *_exc: object) -> None:
        if self._previous is not None:
            import signal

            signal.signal(signal.SIGINT, self._previous)
            self._previous = None


#: How often the pool loop looks for a Ctrl-C while it waits for a batch (program timing, not a model number).
CTRL_C_POLL_S = 0.1


def stop_workers(pool: Any) -> None:
    """End a process pool's workers now (a second Ctrl-C): Python 3.14's ``terminate_workers``,
    else each worker process of the pool."""
    terminate = getattr(pool, "terminate_workers", None)
    if terminate is not None:
        terminate()
        return
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        process.terminate()


def run_process_pool(context: PointContext, batches: Sequence[list[Task]], args: BatchArgs,
                     workers: int, on_stopping: Callable[[int], None] | None = None) -> Generator[Rows, None, None]:
    """Batches on a local process pool, at most ``2 x workers`` in flight.

    The first Ctrl-C stops new batches: those queued are cancelled, those already running finish and
    are yielded (so they are written), then KeyboardInterrupt; ``on_stopping`` hears how many are
    running. A second Ctrl-C ends the workers at once.
    """
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from itertools import islice

    spawn = multiprocessing.get_context("spawn")  # no fork of a process with a progress thread
    with CtrlC() as ctrl_c, ProcessPoolExecutor(max_workers=workers, mp_context=spawn,
                                                initializer=_init_worker, initargs=(context, args, os.getpid())) as pool:
        pending = iter(batches)
        in_flight: set[Any] = set()
        draining = False
        try:
            while True:
                if not ctrl_c.presses:
                    for batch in islice(pending, max(0, 2 * workers - len(in_flight))):
                        in_flight.add(pool.submit(_pool_batch, batch))
                if not in_flight:
                    break
                done, in_flight = wait(in_flight, timeout=CTRL_C_POLL_S, return_when=FIRST_COMPLETED)
                for future in done:
                    if not future.cancelled():
                        yield future.result()
                if ctrl_c.presses > 1:
                    stop_workers(pool)
                    raise KeyboardInterrupt
                if ctrl_c.presses and not draining:
                    draining = True
                    in_flight = {future for future in in_flight if not future.cancel()}  # running ones stay
                    if on_stopping is not None:
                        on_stopping(len(in_flight))
            if ctrl_c.presses:
                raise KeyboardInterrupt
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)  # the batches running finish; none start
            raise


# --- Ray ----------------------------------------------------------------------------------------------

_RAY_CONTEXTS: dict[str, PointContext] = {}


def _ray_batch(context_ref: list[Any], batch: list[Task], args: BatchArgs) -> Rows:
    """A Ray task: the context reference is wrapped in a list so Ray does not fetch it for every task;
    the worker fetches it once and keeps it."""
    import ray

    key = context_ref[0].hex()
    if key not in _RAY_CONTEXTS:
        _RAY_CONTEXTS.clear()
        _RAY_CONTEXTS[key] = ray.get(context_ref[0])
    return run_batch(_RAY_CONTEXTS[key], batch, args.columns, args.json_axes)


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise InputError(RAY_INSTALL_HINT) from None
    return ray


def start_ray(address: str | None, workers: int, temp_dir: str | None = None) -> Callable[[], None] | None:
    """Connect to the Ray cluster at ``address`` (with its token when it asks for one:
    :mod:`fabricplan.sweep.ray_auth`), or start a local single-node one on loopback with ``workers``
    CPUs, a small object store and no dashboard. When this call connected or started it: the
    function that shuts it down and puts back ``RAY_AUTH_MODE`` (which token authentication, and a
    local ``ray.init()`` by Ray's default, turn on for the process); None when Ray was already
    running here."""
    from fabricplan.sweep import ray_auth

    ray = import_ray()
    if ray.is_initialized():
        return None
    options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
    mode_before = os.environ.get(ray_auth.AUTH_MODE)

    def stop() -> None:
        ray.shutdown()
        ray_auth.put_back(mode_before)
    if address:
        from ray.exceptions import RayError

        import fabricplan

        probe_ray_address(address)
        flag = f"--ray-address {address}"
        # The cluster's workers get this fabricplan (its dependencies must be installed there).
        try:
            if _is_host_port(address):
                ray_auth.prepare(address, flag)
            ray.init(address=address, runtime_env={"py_modules": [fabricplan]}, **options)
        except (ConnectionError, TimeoutError, ValueError, RuntimeError, RayError) as exc:
            ray_auth.put_back(mode_before)
            reason = " ".join(str(exc).split())[:300]
            raise InputError(f"cannot connect to the Ray cluster: {reason}", location=flag) from None
        except InputError:
            ray_auth.put_back(mode_before)
            raise
        return stop
    # On Linux Ray binds even a local cluster to the machine's network address (it resolves 127.0.0.1
    # to it: ray/_private/services.py resolve_ip_for_localhost) unless clusters are switched off, as
    # Ray does by default on macOS and Windows (RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER, read into
    # ray_constants.ENABLE_RAY_CLUSTER at import). Switched off while the local node starts (its
    # processes inherit the variable), so everything listens on loopback only; restored after.
    from ray._private import ray_constants

    previous_env = os.environ.get(LOOPBACK_ENV)
    previous_flag = ray_constants.ENABLE_RAY_CLUSTER
    os.environ[LOOPBACK_ENV] = "0"
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        ray.init(address="local", num_cpus=workers, object_store_memory=LOCAL_RAY_OBJECT_STORE_BYTES,
                 _temp_dir=temp_dir, **options)
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = previous_flag
        if previous_env is None:
            os.environ.pop(LOOPBACK_ENV, None)
        else:
            os.environ[LOOPBACK_ENV] = previous_env
    return stop


def node_addresses() -> list[str]:
    """The addresses of the connected Ray cluster's nodes (for the run summary)."""
    import ray

    return sorted({node["NodeManagerAddress"] for node in ray.nodes() if node.get("Alive")})


def run_ray(context: PointContext, batches: Sequence[list[Task]], args: BatchArgs, workers: int,
            address: str | None = None, temp_dir: str | None = None,
            info: dict[str, Any] | None = None) -> Generator[Rows, None, None]:
    ray = import_ray()
    stop = start_ray(address, workers, temp_dir)
    try:
        if info is not None:
            info["ray_nodes"] = node_addresses()
        capacity = max(1, int(ray.cluster_resources().get("CPU", workers)))
        remote = ray.remote(num_cpus=1, max_retries=2)(_ray_batch)
        context_ref = ray.put(context)
        args_ref = ray.put(args)
        pending = iter(batches)
        in_flight: list[Any] = []
        for batch in pending:
            in_flight.append(remote.remote([context_ref], batch, args_ref))
            if len(in_flight) >= 2 * capacity:
                done, in_flight = ray.wait(in_flight, num_returns=1)
                for ref in done:
                    yield ray.get(ref)
        while in_flight:
            done, in_flight = ray.wait(in_flight, num_returns=1)
            for ref in done:
                yield ray.get(ref)
    finally:
        if stop is not None:
            stop()


def execute(executor: str, context: PointContext, batches: Sequence[list[Task]], args: BatchArgs, *,
            workers: int, ray_address: str | None = None, ray_temp_dir: str | None = None,
            info: dict[str, Any] | None = None,
            on_stopping: Callable[[int], None] | None = None) -> Generator[Rows, None, None]:
    """The rows of each batch as it finishes; ``info`` gets what the executor ran on (Ray's nodes);
    ``on_stopping``: the process pool's first Ctrl-C, with the number of batches left to finish."""
    if executor == "inprocess":
        return run_inprocess(context, batches, args)
    if executor == "process":
        return run_process_pool(context, batches, args, workers, on_stopping)
    if executor == "ray":
        return run_ray(context, batches, args, workers, ray_address, ray_temp_dir, info)
    raise InputError(f"unknown executor '{executor}'; choose one of {', '.join(EXECUTORS)}", location="--executor")
