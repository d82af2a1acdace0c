"""Parser robustness: truncated, reordered, mutated and random inputs never raise anything but
InputError (with a location), and the CLI always exits 0, 1 or 2 with a one-line error."""

from __future__ import annotations

import contextlib
import io
import json
import re
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ops_fixtures import DB_REL, GOOD

from fabricplan.catalog import load_catalog
from fabricplan.cli.app import run
from fabricplan.errors import InputError
from fabricplan.ops.readers import parse_mlnx_qos, parse_sysfs_dump, read_cabling, read_config_db

CATALOG = load_catalog()

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

QOS_TEXT = (GOOD / "nics/gpu01_eth2/mlnx_qos.txt").read_text()
DUMP_TEXT = (GOOD / "nics/gpu02_eth2.nic").read_text()
SYSFS_TEXT = "\n".join(line for line in DUMP_TEXT.splitlines() if line.startswith("/sys"))
DB = json.loads((GOOD / DB_REL).read_text())
CABLING_TEXT = (GOOD / "cabling.yaml").read_text()
LINE_LOCATION = re.compile(r"^src:\d+$")


def _mutations(text: str):
    """Strategies for damaged versions of a text: truncated, lines shuffled/dropped/replaced, random."""
    lines = text.splitlines()
    truncated = st.integers(0, len(text)).map(lambda n: text[:n])
    reordered = st.permutations(lines).map("\n".join)
    dropped = st.sets(st.integers(0, len(lines) - 1), min_size=1, max_size=5).map(
        lambda drop: "\n".join(line for i, line in enumerate(lines) if i not in drop))
    replaced = st.tuples(st.integers(0, len(lines) - 1), st.text(max_size=40)).map(
        lambda pair: "\n".join(pair[1] if i == pair[0] else line for i, line in enumerate(lines)))
    return st.one_of(truncated, reordered, dropped, replaced, st.text(max_size=300))


@FUZZ
@given(_mutations(QOS_TEXT))
def test_mlnx_qos_never_crashes(text):
    try:
        parse_mlnx_qos(text, "src")
    except InputError as exc:
        assert exc.location and LINE_LOCATION.match(exc.location), exc.location


@FUZZ
@given(_mutations(SYSFS_TEXT))
def test_sysfs_dump_never_crashes(text):
    try:
        parse_sysfs_dump(text, "src")
    except InputError as exc:
        assert exc.location and LINE_LOCATION.match(exc.location), exc.location


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**12) | st.text(max_size=12)
    | st.sampled_from(["", "3", "0", "-1", "NULL", "3,4", "[SCHEDULER|nope]", "[BUFFER_PROFILE|ingress_lossy_profile]",
                       "99999999999", "5m", "0m", "9100", "1", "ecn_all", "STRICT"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


def _paths(node, prefix=()):
    if isinstance(node, dict) and len(prefix) < 3:
        for key, value in node.items():
            yield (*prefix, key)
            yield from _paths(value, (*prefix, key))


DB_PATHS = sorted(_paths(DB))
_DELETE = object()


def _apply(edits):
    db = json.loads(json.dumps(DB))
    for path, value in edits:
        node = db
        try:
            for key in path[:-1]:
                node = node[key]
            if value is _DELETE:
                del node[path[-1]]
            else:
                node[path[-1]] = value
        except (KeyError, TypeError):
            continue
    return db


db_edits = st.lists(st.tuples(st.sampled_from(DB_PATHS), json_values | st.just(_DELETE)), min_size=1, max_size=4)


def _run_cli(args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def _lint_args(tmp: Path, db_text: str | None = None, nic_text: str | None = None, cabling_text: str | None = None):
    args = ["lint", "--nic", GOOD / "nics/gpu01_eth2", "--nic", GOOD / "nics/gpu03_eth2.nic"]
    nic = tmp / "gpu02_eth2.nic"
    nic.write_text(DUMP_TEXT if nic_text is None else nic_text)
    db = tmp / "config_db.json"
    db.write_text((GOOD / DB_REL).read_text() if db_text is None else db_text)
    cabling = tmp / "cabling.yaml"
    cabling.write_text(CABLING_TEXT if cabling_text is None else cabling_text)
    return [*args, "--nic", nic, "--switch", db, "--cabling", cabling, "--json"], {nic, db, cabling}


def _check_cli(args, files):
    code, out, err = _run_cli(args)
    assert code in (0, 1, 2)
    if code == 2:
        assert err.startswith("error: ") and err.count("\n") == 1, err
        assert any(str(f) in err for f in files), err  # the message names the bad file
        assert out == ""
    else:
        json.loads(out)  # --json printed exactly one document


@FUZZ
@given(db_edits)
def test_config_db_mutations_never_crash(edits):
    db = _apply(edits)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "config_db.json"
        path.write_text(json.dumps(db))
        try:
            read_config_db(path, catalog=CATALOG)
        except InputError as exc:
            assert exc.location and exc.location.startswith(str(path))
        _check_cli(*_lint_args(Path(tmp), db_text=json.dumps(db)))


@FUZZ
@given(_mutations(json.dumps(DB, indent=2)))
def test_config_db_text_damage_never_crashes(text):
    with tempfile.TemporaryDirectory() as tmp:
        _check_cli(*_lint_args(Path(tmp), db_text=text))


@FUZZ
@given(_mutations(DUMP_TEXT))
def test_nic_dump_damage_never_crashes(text):
    with tempfile.TemporaryDirectory() as tmp:
        _check_cli(*_lint_args(Path(tmp), nic_text=text))


@FUZZ
@given(_mutations(CABLING_TEXT))
def test_cabling_damage_never_crashes(text):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "links.yaml"
        path.write_text(text)
        try:
            read_cabling(path)
        except InputError as exc:
            assert exc.location and exc.location.startswith(str(path))
        _check_cli(*_lint_args(Path(tmp), cabling_text=text))


@FUZZ
@given(st.binary(max_size=200))
def test_random_bytes_in_every_input(data):
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        for which in ("nic", "db", "cabling"):
            args, files = _lint_args(tmp_path)
            target = {"nic": tmp_path / "gpu02_eth2.nic", "db": tmp_path / "config_db.json",
                      "cabling": tmp_path / "cabling.yaml"}[which]
            target.write_bytes(data)
            _check_cli(args, files)
