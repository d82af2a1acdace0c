"""Paths shared by the tests (a plain module, so that test files never import a conftest by name)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
