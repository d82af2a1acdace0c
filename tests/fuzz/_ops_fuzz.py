"""Shared helpers of the ops fuzz corpus: the good fixtures, an in-process CLI run, and the
contract every bad input must meet (exit 0/1/2, one `error:` line naming the file, no traceback)."""

from __future__ import annotations

import contextlib
import io
import json
import time
from pathlib import Path

from fabricplan.cli.app import run

OPS = Path(__file__).resolve().parents[1] / "fixtures" / "ops"
GOOD = OPS / "good"
DB_PATH = GOOD / "switches/leaf01/config_db.json"
DB = json.loads(DB_PATH.read_text())
DB_TEXT = DB_PATH.read_text()
NIC_TEXT = (GOOD / "nics/gpu02_eth2.nic").read_text()
CABLING_TEXT = (GOOD / "cabling.yaml").read_text()


def run_cli(*args: object) -> tuple[int, str, str, float]:
    out, err = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run([str(a) for a in args])
    return code, out.getvalue(), err.getvalue(), time.perf_counter() - start


def lint_args(tmp: Path, *, db: str | None = None, nic: str | None = None, cabling: str | None = None,
              config: str | None = None) -> tuple[list[object], dict[str, Path]]:
    """``lint`` over the good setup with gpu02's dump, the config_db, the cabling file and
    (optionally) a lint config replaced by the given texts; returns the args and the file paths."""
    files = {"nic": tmp / "gpu02_eth2.nic", "db": tmp / "leaf01" / "config_db.json", "cabling": tmp / "cabling.yaml"}
    files["db"].parent.mkdir(exist_ok=True)
    files["nic"].write_text(NIC_TEXT if nic is None else nic)
    files["db"].write_text(DB_TEXT if db is None else db)
    files["cabling"].write_text(CABLING_TEXT if cabling is None else cabling)
    args: list[object] = ["lint", "--nic", GOOD / "nics/gpu01_eth2", "--nic", GOOD / "nics/gpu03_eth2.nic",
                          "--nic", files["nic"], "--switch", files["db"], "--cabling", files["cabling"]]
    if config is not None:
        files["config"] = tmp / "lint.yaml"
        files["config"].write_text(config)
        args += ["--config", files["config"]]
    return args, files


def check_contract(code: int, out: str, err: str, seconds: float, blamed: Path | str | None = None) -> None:
    """Exit 0, 1 or 2; an exit 2 prints exactly one `error:` line (naming ``blamed`` if given)
    and nothing on stdout; never a traceback (``seconds`` is kept for reports, not judged: a
    wall-clock ceiling failed on a busy machine)."""
    assert code in (0, 1, 2), (code, err)
    assert "Traceback" not in err and "Traceback" not in out
    if code == 2:
        assert err.startswith("error: ") and err.count("\n") == 1, err
        assert out == ""
        if blamed is not None:
            assert str(blamed) in err, err
