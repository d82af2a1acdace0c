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

Default severities come from each rule module (``SEVERITY``), default options from its
``defaults(catalog)``: the numbers of ``catalog/data/ops_defaults.yaml`` with any ``--catalog``
overlay applied. The config file's values go on top, each checked against the option's type and
valid range (e.g. a DSCP in 0..63).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from fabricplan.errors import InputError
from fabricplan.ops.lint import options as option_checks
from fabricplan.ops.lint.finding import SEVERITIES
from fabricplan.ops.readers._common import read_structured


@dataclass
class RuleSettings:
    enabled: bool
    severity: str
    options: dict[str, Any]


@dataclass
class LintConfig:
    """The lint config file's overrides, over the rule defaults of ``catalog`` (always given)."""

    settings: dict[str, Any] = field(default_factory=dict)
    rules: dict[str, dict[str, Any]] = field(default_factory=dict)
    source: str = "<defaults>"
    catalog: Any = field(kw_only=True)

    def for_rule(self, rule: ModuleType) -> RuleSettings:
        """Effective settings of one rule: catalog defaults, then ``settings:``, then ``rules: ID:``."""
        options = rule.defaults(self.catalog)
        for key, value in self.settings.items():
            if key in options:
                options[key] = value
        override = dict(self.rules.get(rule.ID, {}))
        enabled = bool(override.pop("enabled", True))
        severity = override.pop("severity", rule.SEVERITY)
        options.update(override)
        return RuleSettings(enabled=enabled, severity=severity, options=options)


def load_config(path: Path | str | None, rules: list[ModuleType], catalog: Any) -> LintConfig:
    """Read and validate a lint config file against the registered ``rules``; ``None`` = defaults.

    The rules' defaults come from ``catalog`` (with the user's overlays) and are checked too, so a
    bad ``--catalog`` overlay value fails here with the overlay's name. Every option is checked
    against its type and range (``ops.lint.options``).
    """
    defaults_by_id = {rule.ID: rule.defaults(catalog) for rule in rules}
    if path is None:
        return LintConfig(catalog=catalog)
    source = str(path)
    _text, data = read_structured(path, as_json=False)  # strict: duplicated keys, depth, aliases, digits
    if data is None:
        return LintConfig(source=source, catalog=catalog)
    if not isinstance(data, dict) or set(data) - {"settings", "rules"}:
        raise InputError("config must be a mapping with 'settings' and/or 'rules'", location=source)
    by_id = {rule.ID: rule for rule in rules}
    settings = data.get("settings") or {}
    if not isinstance(settings, dict):
        raise InputError("'settings' must be a mapping", location=f"{source}:$.settings")
    known_settings: dict[str, Any] = {}
    for rule in rules:
        for key, value in defaults_by_id[rule.ID].items():
            known_settings.setdefault(key, value)
    for key, value in settings.items():
        where = f"{source}:$.settings.{key}"
        if key not in known_settings:
            raise InputError(f"unknown setting {key!r}; known: {', '.join(sorted(known_settings))}", location=where)
        option_checks.check(key, value, known_settings[key], where)
        for rule in rules:
            if key in defaults_by_id[rule.ID]:
                _check_value(rule, key, value, where, catalog)
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
        rule_defaults = defaults_by_id[rule_id]
        entry: dict[str, Any] = {}
        for key, option in value.items():
            if key == "enabled":
                if not isinstance(option, bool):
                    raise InputError("enabled must be true or false", location=f"{where}.enabled")
            elif key == "severity":
                if option not in SEVERITIES:
                    raise InputError(f"severity must be one of {', '.join(SEVERITIES)}", location=f"{where}.severity")
            elif key in rule_defaults:
                option_checks.check(key, option, rule_defaults[key], f"{where}.{key}")
                _check_value(by_id[rule_id], key, option, f"{where}.{key}", catalog)
            else:
                known = ", ".join(["enabled", "severity", *sorted(rule_defaults)])
                raise InputError(f"unknown option {key!r} for {rule_id}; known: {known}", location=f"{where}.{key}")
            entry[key] = option
        parsed[rule_id] = entry
    return LintConfig(settings=dict(settings), rules=parsed, source=source, catalog=catalog)


def _check_value(rule: ModuleType, key: str, value: Any, where: str, catalog: Any) -> None:
    """A rule's own check of an option's value beyond its type and range (``check_option(key, value,
    where, catalog)``, when the rule defines one), so a bad value names the lint config file and its
    field, not the switch file the rule was reading when it used it."""
    check = getattr(rule, "check_option", None)
    if check is not None:
        check(key, value, where, catalog)
