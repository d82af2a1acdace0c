"""Bad measurement logs: calibrate and check-measured exit 2 with ONE line naming the file and the line
number, never a traceback; random damage to a good log either still reads or fails that way."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from fabricplan.cli.app import run
from project_paths import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "measure"
GOOD = (FIXTURES / "all_reduce_debug_2x8_a100_hdr.log").read_text()
SPEC = FIXTURES / "cluster_roce_2x8_h100.yaml"


def _one_line_error(result) -> str:
    assert result.code == 2, (result.code, result.err)
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.err
    assert "Traceback" not in result.err
    return lines[0]


CASES = {
    # name: (text, the line number the message must name, what it must say)
    "time_not_a_number": (GOOD.replace("  37.30  ", "  3x.30  ", 1), 43, "time '3x.30' is not a number"),
    "busbw_nan": (GOOD.replace("  0.05      0    37.37", "  nan      0    37.37", 1), 44, "busbw 'nan'"),
    "negative_time": (GOOD.replace("  60.01  ", "  -60.01  ", 1), 45, "time -60.01 must be a finite number >= 0"),
    "too_many_fields": (GOOD.replace("85091  100.95  189.28      0", "85091  100.95  189.28      0  17", 1), 54,
                        "row has 14 fields, the table header has 13"),
    "huge_size": (GOOD.replace("  8589934592    2147483648", "  99999999999999999999    2147483648", 1), 54,
                  "size '99999999999999999999' is not a whole number"),
}


def test_bad_rows_exit_2_with_file_and_line(cli, tmp_path):
    for name, (text, line, message) in CASES.items():
        path = tmp_path / f"{name}.log"
        path.write_text(text)
        for args in (("calibrate", path, "--out", tmp_path / "o.yaml"), ("check-measured", path, "--spec", SPEC)):
            error = _one_line_error(cli(*args))
            assert f"{path}:{line}: " in error and message in error, (name, error)
        assert not (tmp_path / "o.yaml").exists()


def test_the_bad_row_fixture_names_line_28(cli, tmp_path):
    error = _one_line_error(cli("calibrate", FIXTURES / "bad_row.log", "--out", tmp_path / "o.yaml"))
    assert error == f"error: {FIXTURES / 'bad_row.log'}:28: time '3O.05' is not a number (an nccl-tests table row has numbers in every column)"


def test_files_without_tables_and_missing_files(cli, tmp_path):
    empty = tmp_path / "empty.log"
    empty.write_text("")
    noise = tmp_path / "noise.log"
    noise.write_bytes(b"\x00\xff\xfe garbage\n" * 50)
    for path in (empty, noise, tmp_path / "missing.log", tmp_path):
        error = _one_line_error(cli("calibrate", path, "--out", tmp_path / "o.yaml"))
        assert str(path) in error


def test_bad_flags_exit_2(cli, tmp_path):
    log = FIXTURES / "all_reduce_debug_2x8_a100_hdr.log"
    assert "--threshold" in _one_line_error(cli("check-measured", log, "--spec", SPEC, "--threshold", "1.5"))
    assert "--op" in _one_line_error(cli("calibrate", log, "--out", tmp_path / "o.yaml", "--op", "allreduce"))
    assert "--fabric" in _one_line_error(cli("calibrate", log, "--out", tmp_path / "o.yaml", "--fabric", "nope"))
    assert "--gpu" in _one_line_error(cli("calibrate", log, "--out", tmp_path / "o.yaml", "--gpu", "nope"))
    error = _one_line_error(cli("calibrate", log, "--out", tmp_path / "missing-dir" / "o.yaml"))
    assert "o.yaml" in error


@settings(max_examples=examples(25), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(line=st.integers(0, 60), junk=st.text(max_size=40), mode=st.sampled_from(["replace", "insert", "truncate"]))
def test_damaged_logs_read_or_fail_with_a_line(tmp_path_factory, line, junk, mode):
    lines = GOOD.splitlines()
    index = min(line, len(lines) - 1)
    if mode == "replace":
        lines[index] = junk
    elif mode == "insert":
        lines.insert(index, junk)
    else:
        lines = lines[:index]
    path = tmp_path_factory.mktemp("fuzz") / "all_reduce_perf.log"
    path.write_text("\n".join(lines))
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = run(["calibrate", str(path), "--out", str(path.with_suffix(".yaml")), "--gpu", "a100-sxm-80gb",
                    "--fabric", "infiniband-hdr", "--no-cross-validation"])
    message = err.getvalue()
    assert "Traceback" not in message
    assert code in (0, 2), message
    if code == 2:
        errors = [line for line in message.splitlines() if line.startswith("error: ")]
        assert len(errors) == 1
        assert re.search(r"\.log(:\d+)?: ", errors[0]), errors[0]


def test_perftest_logs_alone_are_refused_with_the_reason(cli, tmp_path):
    error = _one_line_error(cli("calibrate", FIXTURES / "ib_write_lat_ndr.log", "--out", tmp_path / "o.yaml"))
    assert "perftest tables only" in error and "ib_write_lat_ndr.log" in error
