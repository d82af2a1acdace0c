"""Hypothesis over every ops reader and the lint/headroom flags: random mutations of the good
fixtures (huge integers, negatives, NaN, wrong types, truncation, duplicated keys) only ever
exit 0, 1 or 2; an exit 2 is one line naming the damaged file (or flag), in bounded time."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from _ops_fuzz import CABLING_TEXT, DB, NIC_TEXT, check_contract, lint_args, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FUZZ = settings(max_examples=40, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

numbers = st.one_of(
    st.integers(-10**6, 10**6).map(str),
    st.integers(min_value=1, max_value=6000).map(lambda n: "9" * n),          # past 4,300 digits
    st.sampled_from(["-1", "0", "4294967296", "99999999999", "1e20", "NaN", "nan", "inf", "-inf", "1.5", "", " ",
                     "0x10", "1_000"]),
)
json_values = st.one_of(numbers, st.integers(-10**30, 10**30), st.floats(allow_nan=False, allow_infinity=False),
                        st.none(), st.booleans(), st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


def _leaves(node, prefix=()):
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _leaves(value, (*prefix, key))
    else:
        yield prefix


DB_LEAVES = sorted(_leaves(DB))


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(DB_LEAVES), json_values), min_size=1, max_size=3))
def test_config_db_leaf_mutations(edits):
    db = json.loads(json.dumps(DB))
    for path, value in edits:
        node = db
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    with tempfile.TemporaryDirectory() as tmp:
        args, files = lint_args(Path(tmp), db=json.dumps(db))
        check_contract(*run_cli(*args), blamed=files["db"])


def _text_mutations(text: str):
    lines = text.splitlines()
    digit_runs = st.tuples(st.integers(0, len(lines) - 1), numbers).map(
        lambda pair: "\n".join(_replace_number(line, pair[1]) if i == pair[0] else line for i, line in enumerate(lines)))
    duplicated = st.integers(0, len(lines) - 1).map(
        lambda i: "\n".join(lines[: i + 1] + [lines[i]] + lines[i + 1:]))
    truncated = st.integers(0, len(text)).map(lambda n: text[:n])
    return st.one_of(digit_runs, duplicated, truncated)


def _replace_number(line: str, number: str) -> str:
    import re

    return re.sub(r"\d+", number, line, count=1)


@FUZZ
@given(_text_mutations(NIC_TEXT))
def test_nic_dump_mutations(text):
    with tempfile.TemporaryDirectory() as tmp:
        args, files = lint_args(Path(tmp), nic=text)
        check_contract(*run_cli(*args), blamed=files["nic"])


@FUZZ
@given(_text_mutations(CABLING_TEXT))
def test_cabling_mutations(text):
    with tempfile.TemporaryDirectory() as tmp:
        args, files = lint_args(Path(tmp), cabling=text)
        check_contract(*run_cli(*args), blamed=files["cabling"])


OPTIONS = ["roce_dscp", "roce_pcp", "cnp_dscp", "max_lossless_priorities", "detection_max_ms", "scheduler_types",
           "headroom_model", "default_cable_len_m"]
RULE_OF = {"cnp_dscp": "CNP001", "max_lossless_priorities": "PFC002", "detection_max_ms": "PFCWD001",
           "scheduler_types": "ETS001", "headroom_model": "HDRM001", "default_cable_len_m": "HDRM002"}


@FUZZ
@given(st.sampled_from(OPTIONS), numbers, st.booleans())
def test_lint_config_values(option, value, duplicate):
    if option in RULE_OF:
        body = f"rules:\n  {RULE_OF[option]}:\n    {option}: {value}\n"
    else:
        body = f"settings:\n  {option}: {value}\n"
    if duplicate:
        body += body.splitlines()[-1] + "\n"
    with tempfile.TemporaryDirectory() as tmp:
        args, files = lint_args(Path(tmp), config=body)
        check_contract(*run_cli(*args), blamed=files["config"])


@FUZZ
@given(st.sampled_from(["--speed", "--cable", "--mtu", "--lossless-mtu", "--small-packet-percentage", "--lanes"]),
       numbers, st.sampled_from(["", "G", "m"]), st.sampled_from(["generic", "sonic", "mlx5"]))
def test_headroom_flags(flag, value, unit, model):
    args = {"--speed": "100G", "--cable": "5m", "--mtu": "9100"}
    args[flag] = value + unit
    argv = ["headroom", *[x for pair in args.items() for x in pair], "--model", model]
    if model == "sonic":
        argv += ["--asic", "spectrum-2"]
    code, out, err, seconds = run_cli(*argv)
    check_contract(code, out, err, seconds)
    if code == 2:
        assert "--" in err  # names a flag
