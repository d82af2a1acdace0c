"""Fixture paths for the ops tests: the good RoCE setup and the broken variants laid over it."""

from __future__ import annotations

from pathlib import Path

import yaml

OPS_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ops"
GOOD = OPS_FIXTURES / "good"
BROKEN = OPS_FIXTURES / "broken"
DB_REL = Path("switches/leaf01/config_db.json")


def variant_names() -> list[str]:
    return sorted(p.name for p in BROKEN.iterdir() if p.is_dir())


def variant_expectation(name: str) -> dict:
    return yaml.safe_load((BROKEN / name / "expect.yaml").read_text())


def setup_args(variant: str | None = None) -> list[str]:
    """``lint`` arguments for the good setup, with one variant's files laid over it."""
    over = BROKEN / variant if variant else None
    args: list[str] = []
    for entry in sorted((GOOD / "nics").iterdir()):
        chosen = over / "nics" / entry.name if over and (over / "nics" / entry.name).exists() else entry
        args += ["--nic", str(chosen)]
    db = over / DB_REL if over and (over / DB_REL).exists() else GOOD / DB_REL
    cabling = over / "cabling.yaml" if over and (over / "cabling.yaml").exists() else GOOD / "cabling.yaml"
    return args + ["--switch", str(db), "--cabling", str(cabling)]


