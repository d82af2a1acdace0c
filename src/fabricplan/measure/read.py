"""Read measurement logs: each file may hold nccl-tests runs, perftest tables, or both."""

from __future__ import annotations

from pathlib import Path

from fabricplan.errors import InputError
from fabricplan.io import MAX_DOCUMENT_BYTES, read_text_bounded
from fabricplan.measure.nccl_tests import read_nccl_tests
from fabricplan.measure.perftest import read_perftest
from fabricplan.measure.records import MeasurementLog

#: Program limit: logs of at most this many lines (NCCL_DEBUG=INFO logs of 1,000 ranks run to ~10^5).
MAX_LOG_LINES = 1_000_000


def read_text(path: str | Path) -> str:
    """The file's text; bytes that are not UTF-8 (terminal noise in a captured log) become U+FFFD."""
    path = Path(path)
    try:
        return read_text_bounded(path, str(path), expected="a measurement log is expected to be a few MB",
                                 allow_control=True)
    except InputError as exc:
        if "not UTF-8" not in exc.message:
            raise
        with open(path, "rb") as handle:
            return handle.read(MAX_DOCUMENT_BYTES).decode("utf-8", errors="replace")


def parse_log(text: str, file: str, *, operation: str | None = None) -> MeasurementLog:
    """Every nccl-tests run and perftest table in ``text``; InputError when there is none."""
    if text.count("\n") > MAX_LOG_LINES:
        raise InputError(f"more than {MAX_LOG_LINES:,} lines; split the log", location=file)
    nccl, ignored = read_nccl_tests(text, file, operation=operation)
    perftest, _skipped = read_perftest(text, file)
    nccl = [run for run in nccl if run.rows or run.complete]
    if not nccl and not any(run.rows for run in perftest):
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        raise InputError(f"no nccl-tests table (a '# nThread ...' header and size/time rows) and no perftest "
                         f"table ('#bytes #iterations ...') in {lines} lines", location=file)
    return MeasurementLog(file=file, nccl_runs=tuple(nccl), perftest_runs=tuple(r for r in perftest if r.rows),
                          ignored_lines=ignored)


def read_log(path: str | Path, *, operation: str | None = None) -> MeasurementLog:
    """Read one log file (see :func:`parse_log`)."""
    return parse_log(read_text(path), str(path), operation=operation)
