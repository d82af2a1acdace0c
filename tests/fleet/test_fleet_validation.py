"""The fleet section of docs/validation.md is current and its bound rows hold (scripts/validate_fleet.py)."""

from __future__ import annotations

from project_paths import ROOT, load_script


def test_fleet_validation_section_is_current_and_within_its_checks():
    module = load_script("validate_fleet")
    text = (ROOT / "docs" / "validation.md").read_text(encoding="utf-8")
    written = text[text.index(module.BEGIN):text.index(module.END) + len(module.END)] + "\n"
    section, failures = module.render()
    assert failures == []
    assert written == section, "run python scripts/validate_fleet.py"


def test_a_bound_row_can_fail():
    from validation.fleet import FleetRow

    row = FleetRow("x", "q", "over 30 %", 0.2, "at least", 0.30, "r", "s", "d")
    assert row.ok is False
    assert FleetRow("x", "q", "95 %", 1.2, "within", 0.10, "r", "s", "d", target=0.95).ok is False
