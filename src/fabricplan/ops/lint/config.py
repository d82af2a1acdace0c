"""Lint configuration file: disable rules, change severities, override rule options.

Example (``fabricplan lint --config lint.yaml``)::

    settings:              # options shared by every rule that has them
      roce_dscp: 26
    rules:
      PFC002: disable      # or {enabled: false}
      ECN002:
        severity: error
      PFCWD001:
        detection_max_ms: 1000

Default severities and options come from each rule module (``SEVERITY``, ``DEFAULTS``), whose
numbers come from ``catalog/data/ops_defaults.yaml``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

from fabricplan.errors import InputError
from fabricplan.ops.lint.finding import SEVERITIES
from fabricplan.ops.readers._common import read_text


@dataclass
class RuleSettings:
    enabled: bool
    severity: str
    options: dict[str, Any]


@dataclass
class LintConfig:
    settings: dict[str, Any] = field(default_factory=dict)
    rules: dict[str, dict[str, Any]] = field(default_factory=dict)
    source: str = "<defaults>"

    def for_rule(self, rule: ModuleType) -> RuleSettings:
        """Effective settings of one rule: module defaults, then ``settings:``, then ``rules: ID:``."""
        options = dict(rule.DEFAULTS)
        for key, value in self.settings.items():
            if key in options:
                options[key] = value
        override = dict(self.rules.get(rule.ID, {}))
        enabled = bool(override.pop("enabled", True))
        severity = override.pop("severity", rule.SEVERITY)
        options.update(override)
        return RuleSettings(enabled=enabled, severity=severity, options=options)


def _check_value(default: Any, value: Any, where: str, name: str) -> None:
    if isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(default, float):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif isinstance(default, (list, tuple)):
        ok = isinstance(value, list)
    else:
        ok = isinstance(value, type(default))
    if not ok:
        raise InputError(f"option {name} must be like {default!r}, got {value!r}", location=where)


def load_config(path: Path | str | None, rules: list[ModuleType]) -> LintConfig:
    """Read and validate a lint config file against the registered ``rules``; ``None`` = defaults."""
    if path is None:
        return LintConfig()
    source = str(path)
    text = read_text(path)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise InputError(f"invalid YAML: {getattr(exc, 'problem', None) or exc}", location=f"{source}{line}") from None
    if data is None:
        return LintConfig(source=source)
    if not isinstance(data, dict) or set(data) - {"settings", "rules"}:
        raise InputError("config must be a mapping with 'settings' and/or 'rules'", location=source)
    by_id = {rule.ID: rule for rule in rules}
    settings = data.get("settings") or {}
    if not isinstance(settings, dict):
        raise InputError("'settings' must be a mapping", location=f"{source}:$.settings")
    known_settings: dict[str, Any] = {}
    for rule in rules:
        for key, value in rule.DEFAULTS.items():
            known_settings.setdefault(key, value)
    for key, value in settings.items():
        where = f"{source}:$.settings.{key}"
        if key not in known_settings:
            raise InputError(f"unknown setting {key!r}; known: {', '.join(sorted(known_settings))}", location=where)
        _check_value(known_settings[key], value, where, key)
    raw_rules = data.get("rules") or {}
    if not isinstance(raw_rules, dict):
        raise InputError("'rules' must be a mapping of rule id to settings", location=f"{source}:$.rules")
    parsed: dict[str, dict[str, Any]] = {}
    for rule_id, value in raw_rules.items():
        where = f"{source}:$.rules.{rule_id}"
        if rule_id not in by_id:
            raise InputError(f"unknown rule {rule_id!r}; known: {', '.join(sorted(by_id))}", location=where)
        if value in ("disable", False):
            parsed[rule_id] = {"enabled": False}
            continue
        if value in ("enable", True, None):
            parsed[rule_id] = {}
            continue
        if not isinstance(value, dict):
            raise InputError("rule settings must be 'disable' or a mapping", location=where)
        entry: dict[str, Any] = {}
        for key, option in value.items():
            if key == "enabled":
                if not isinstance(option, bool):
                    raise InputError("enabled must be true or false", location=f"{where}.enabled")
            elif key == "severity":
                if option not in SEVERITIES:
                    raise InputError(f"severity must be one of {', '.join(SEVERITIES)}", location=f"{where}.severity")
            elif key in by_id[rule_id].DEFAULTS:
                _check_value(by_id[rule_id].DEFAULTS[key], option, f"{where}.{key}", key)
            else:
                known = ", ".join(["enabled", "severity", *sorted(by_id[rule_id].DEFAULTS)])
                raise InputError(f"unknown option {key!r} for {rule_id}; known: {known}", location=f"{where}.{key}")
            entry[key] = option
        parsed[rule_id] = entry
    return LintConfig(settings=dict(settings), rules=parsed, source=source)
