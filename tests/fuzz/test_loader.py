"""Hostile and mistaken input documents: each fails fast with one `error:` line naming the file,
exit code 2, never a traceback, a hang or a memory blow-up (fabricplan.io.read_document)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fabricplan.errors import InputError
from fabricplan.io import (
    MAX_DOCUMENT_BYTES,
    MAX_INTEGER_DIGITS,
    MAX_NESTING_DEPTH_LEVELS,
    MAX_YAML_ALIASES,
    read_document,
)

SRC = Path(__file__).resolve().parents[2] / "src"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "llama70b-1024-h100.yaml"


def _billion_laughs() -> str:
    """Ten levels of ten aliases: 10^10 strings once expanded, from under 500 bytes."""
    lines = ["a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol,lol]"]
    for previous, name in zip("abcdefghi", "bcdefghij"):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{previous}"] * 10) + "]")
    return "\n".join(lines) + "\n"


def _run_cli_subprocess(*args: str, timeout_s: float = 30) -> tuple[subprocess.CompletedProcess, float, int]:
    """Run the CLI in a fresh interpreter; return the result, wall time [s] and peak RSS [KiB]."""
    code = ("import resource, sys\n"
            "from fabricplan.cli.app import run\n"
            "code = run(sys.argv[1:])\n"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stdout)\n"
            "sys.exit(code)\n")
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                            timeout=timeout_s, env=env)
    elapsed = time.perf_counter() - start
    peak_kib = int(result.stdout.split()[-1]) if result.stdout.strip() else -1
    return result, elapsed, peak_kib


def _assert_one_line_error(err: str, path: Path | str, *words: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"error: {path}"), lines[0]
    assert "Traceback" not in err
    for word in words:
        assert word in lines[0], lines[0]


def test_billion_laughs_fails_fast_with_little_memory(tmp_path):
    spec = tmp_path / "laughs.yaml"
    spec.write_text(_billion_laughs())
    assert spec.stat().st_size < 500
    baseline, _, baseline_kib = _run_cli_subprocess("compare", str(EXAMPLE / "missing"))
    result, _, peak_kib = _run_cli_subprocess("compare", str(spec))
    assert result.returncode == 2
    _assert_one_line_error(result.stderr, spec, "aliases are expanded")  # a hang fails at the 30 s timeout
    # The expansion is counted, never built: peak memory stays that of a CLI error (+ 20 MiB).
    assert baseline.returncode == 2 and baseline_kib > 0
    assert peak_kib < baseline_kib + 20 * 1024, (peak_kib, baseline_kib)


def test_many_aliases_are_refused(tmp_path):
    spec = tmp_path / "aliases.yaml"
    spec.write_text("a: &a 1\nb: [" + ",".join(["*a"] * (MAX_YAML_ALIASES + 1)) + "]\n")
    with pytest.raises(InputError, match=f"more than {MAX_YAML_ALIASES:,} YAML aliases") as info:
        read_document(spec)
    assert str(spec) in str(info.value)


def test_recursive_alias_is_refused(cli, tmp_path):
    spec = tmp_path / "loop.yaml"
    spec.write_text("name: x\njobs: &j [1, *j]\n")
    result = cli("compare", spec)
    assert result.code == 2
    _assert_one_line_error(result.err, f"{spec}:2:14", "recursive")


def test_merge_keys_may_override_without_being_duplicates(tmp_path):
    spec = tmp_path / "merge.yaml"
    spec.write_text("base: &b {x: 1, y: 2}\nderived:\n  <<: *b\n  x: 3\n")
    assert read_document(spec) == {"base": {"x": 1, "y": 2}, "derived": {"x": 3, "y": 2}}


def test_dev_zero_is_refused_after_a_bounded_read(monkeypatch, cli):
    import fabricplan.io as io_module

    read = [0]
    real_read = os.read

    def counted(fd, n):  # an endless input stops at MAX_DOCUMENT_BYTES + 1 bytes: the work is bounded
        chunk = real_read(fd, n)
        read[0] += len(chunk)
        return chunk

    monkeypatch.setattr(io_module.os, "read", counted)
    result = cli("compare", "/dev/zero")
    assert 0 < read[0] <= MAX_DOCUMENT_BYTES + 1
    assert result.code == 2
    _assert_one_line_error(result.err, "/dev/zero", "not a regular file", "10 MiB")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_without_writer_does_not_hang(tmp_path):
    fifo = tmp_path / "spec.yaml"
    os.mkfifo(fifo)
    result, _, _ = _run_cli_subprocess("compare", str(fifo), timeout_s=20)
    assert result.returncode == 2
    _assert_one_line_error(result.stderr, fifo, "empty")  # a hang fails at the 20 s timeout


def test_oversized_regular_file_is_refused_before_reading(tmp_path):
    spec = tmp_path / "huge.yaml"
    with spec.open("wb") as handle:
        handle.truncate(MAX_DOCUMENT_BYTES + 1)  # sparse: no 10 MiB written
    with pytest.raises(InputError, match=r"file is 10\.5 MB") as info:
        read_document(spec)
    assert info.value.location == str(spec)


@pytest.mark.parametrize("name, text, line", [
    ("flow.yaml", "[" * 1500 + "]" * 1500, 1),
    ("block.yaml", "".join("  " * i + "k:\n" for i in range(1500)), MAX_NESTING_DEPTH_LEVELS + 1),
    ("deep.json", "[" * 1500 + "]" * 1500, 1),
    ("objects.json", '{"k":' * 1500 + "1" + "}" * 1500, 1),
], ids=["yaml-flow", "yaml-block", "json-arrays", "json-objects"])
def test_deep_nesting_is_a_clean_error(cli, tmp_path, name, text, line):
    spec = tmp_path / name
    spec.write_text(text)
    result = cli("compare", spec)
    assert result.code == 2
    _assert_one_line_error(result.err, f"{spec}:{line}:", f"nested more than {MAX_NESTING_DEPTH_LEVELS} levels")


def test_very_deep_yaml_does_not_crash_the_interpreter(tmp_path):
    # libyaml's own composer recurses in C and segfaults near 100,000 levels; ours stops at the limit.
    spec = tmp_path / "deeper.yaml"
    spec.write_text("[" * 200_000 + "]" * 200_000)
    result, _, _ = _run_cli_subprocess("compare", str(spec))
    assert result.returncode == 2, result.stderr
    _assert_one_line_error(result.stderr, f"{spec}:1:{MAX_NESTING_DEPTH_LEVELS + 1}", "nested")


def test_duplicate_yaml_key_names_key_and_lines(cli, tmp_path):
    spec = tmp_path / "dup.yaml"
    spec.write_text(EXAMPLE.read_text().replace("  gpus: 1024\n", "  gpus: 1024\n  gpus: 2048\n"))
    first = EXAMPLE.read_text().splitlines().index("  gpus: 1024") + 1
    result = cli("compare", spec)
    assert result.code == 2
    _assert_one_line_error(result.err, f"{spec}:{first + 1}:3", f"duplicate key 'gpus' (first on line {first})")


def test_duplicate_json_key_names_key_and_lines(cli, tmp_path):
    spec = tmp_path / "dup.json"
    spec.write_text('{"name": "x",\n "cluster": {"gpus": 8,\n   "gpus": 16}}\n')
    result = cli("compare", spec)
    assert result.code == 2
    _assert_one_line_error(result.err, f"{spec}:3:4", "duplicate key 'gpus' (first on line 2)")


def test_same_key_in_different_json_objects_is_fine(tmp_path):
    spec = tmp_path / "ok.json"
    spec.write_text('{"a": {"k": 1}, "b": {"k": 2}, "k": [{"k": 3}]}')
    assert read_document(spec) == {"a": {"k": 1}, "b": {"k": 2}, "k": [{"k": 3}]}


@pytest.mark.parametrize("name, text, location", [
    ("int.yaml", "name: x\ncluster:\n  gpus: " + "9" * 5000 + "\n", ":3:9"),
    ("int.json", '{"name": "x",\n "cluster": {"gpus": ' + "9" * 5000 + "}}", ":2:22"),
], ids=["yaml", "json"])
def test_five_thousand_digit_integer(cli, tmp_path, name, text, location):
    spec = tmp_path / name
    spec.write_text(text)
    result = cli("compare", spec)
    assert result.code == 2
    _assert_one_line_error(result.err, f"{spec}{location}", f"5,000 digits; at most {MAX_INTEGER_DIGITS}")


def test_integer_at_the_digit_limit_is_accepted(tmp_path):
    spec = tmp_path / "ok.json"
    spec.write_text('{"n": ' + "9" * MAX_INTEGER_DIGITS + "}")
    assert read_document(spec) == {"n": int("9" * MAX_INTEGER_DIGITS)}


@pytest.mark.parametrize("name, text, location, literal", [
    ("inf.json", '{"name": "x",\n "share": 1e999}', ":2:11", "1e999"),
    ("inf.yaml", "name: x\nshare: 1.0e+999\n", ":2:8", "1.0e+999"),
], ids=["json", "yaml"])
def test_overflowing_float(cli, tmp_path, name, text, location, literal):
    spec = tmp_path / name
    spec.write_text(text)
    result = cli("compare", spec)
    assert result.code == 2
    _assert_one_line_error(result.err, f"{spec}{location}", f"number {literal} is too large for a float")


def test_json_nan_is_refused(tmp_path):
    spec = tmp_path / "nan.json"
    spec.write_text('{"share": NaN}')
    with pytest.raises(InputError, match="NaN is not a JSON number") as info:
        read_document(spec)
    assert info.value.location == f"{spec}:1:11"


def test_strict_reader_matches_pyyaml_on_the_examples():
    import yaml

    for example in sorted(EXAMPLE.parent.glob("*.yaml")):
        assert read_document(example) == yaml.safe_load(example.read_text()), example
    data = json.loads(json.dumps(yaml.safe_load(EXAMPLE.read_text())))
    assert read_document(EXAMPLE) == data


def test_single_document_only(tmp_path):
    spec = tmp_path / "two.yaml"
    spec.write_text("a: 1\n---\nb: 2\n")
    with pytest.raises(InputError, match="expected a single document") as info:
        read_document(spec)
    assert info.value.location == f"{spec}:2:1"


@pytest.mark.parametrize("command", ["cost", "compare", "step", "topology"])
@pytest.mark.parametrize("character", ["\x00", "\x1b", "\x7f"])
def test_control_characters_are_one_line_errors(cli, tmp_path, command, character):
    # libyaml's reader rejects them when the loader is made; that must be an input error too.
    path = tmp_path / "ctrl.yaml"
    path.write_text(f"name: x{character}\ncluster: {{gpu: h100-sxm, gpus: 8}}\n", encoding="utf-8")
    result = cli(command, path)
    assert result.code == 2
    assert result.err.count("\n") == 1 and str(path) in result.err and "control character U+" in result.err
