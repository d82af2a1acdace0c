"""Build the fabric (links from the cabling file) and run every enabled rule over it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabricplan.errors import InputError
from fabricplan.ops.lint.config import LintConfig, load_config
from fabricplan.ops.lint.finding import Finding, severity_rank
from fabricplan.ops.lint.rules import RULES
from fabricplan.ops.model import CablingEntry, Fabric, Link, NicQos, SwitchPortQos
from fabricplan.ops.readers import read_cabling, read_config_db, read_nics


@dataclass
class LintResult:
    fabric: Fabric
    findings: list[Finding]
    notes: list[str] = field(default_factory=list)  # things the user should know (go to stderr)


def build_fabric(nics: Sequence[NicQos], ports: Sequence[SwitchPortQos],
                 cabling: Sequence[CablingEntry] | None, cabling_source: str | None = None) -> tuple[Fabric, list[str]]:
    """Pair NIC ports with switch ports using the cabling file.

    Uncabled NICs and switch ports become one-sided links (their one-sided rules still run).
    Without a cabling file, a single NIC and a single switch port are paired. What the cabling
    file names but no input matched is kept in ``Fabric.cabling`` for the LINK001/LINK002 rules.
    """
    notes: list[str] = []
    nic_by_name = {nic.name: nic for nic in nics}
    port_by_name: dict[str, SwitchPortQos] = {}
    for port in ports:
        if port.name in port_by_name:
            raise InputError(f"switch port {port.name} appears in two inputs (also {port_by_name[port.name].source})",
                             location=port.source)
        port_by_name[port.name] = port
    links: list[Link] = []
    used_nics: set[str] = set()
    used_ports: set[str] = set()
    if cabling:
        for entry in cabling:
            nic = nic_by_name.get(entry.nic)
            port = port_by_name.get(entry.switch_port)
            if nic is None and port is None:
                continue  # reported by LINK001/LINK002 (fabric.cabling keeps the row)
            links.append(Link(nic=nic, switch=port, cable_m=entry.length_m, location=entry.location))
            if nic is not None:
                used_nics.add(nic.name)
            if port is not None:
                used_ports.add(port.name)
    elif len(nics) == 1 and len(ports) == 1:
        links.append(Link(nic=nics[0], switch=ports[0]))
        used_nics.add(nics[0].name)
        used_ports.add(ports[0].name)
    elif nics and ports:
        notes.append("no --cabling file: NIC and switch sides are checked separately (no cross-link checks)")
    for nic in nics:
        if nic.name not in used_nics:
            links.append(Link(nic=nic, switch=None))
    for port in ports:
        if port.name not in used_ports:
            links.append(Link(nic=None, switch=port))
    return Fabric(links=links, nics=list(nics), switch_ports=list(ports),
                  cabling=list(cabling) if cabling is not None else None,
                  cabling_source=cabling_source), notes


def lint(fabric: Fabric, config: LintConfig | None = None, *, catalog: Any) -> list[Finding]:
    """Run every enabled rule; severities come from the config (or the rule's default), default
    options from the config's catalog (the one :func:`load_config` checked it against), else from
    ``catalog``."""
    config = config or LintConfig(catalog=catalog)
    findings, _ = run_units(RULES, lambda rule: [fabric] if rule.SCOPE == "fabric" else fabric.links, config)
    return findings


def run_units(units: Sequence[Any], targets: Callable[[Any], Iterable[Any]], config: LintConfig
              ) -> tuple[list[Finding], list[Any]]:
    """Run every enabled unit (a lint rule or a health check: ``ID``, ``SEVERITY``, ``SCOPE``,
    ``OPTIONS``, ``defaults``, ``check``) over ``targets(unit)`` with its configured options.

    Findings get the configured severity (capped by their own ``max_severity``); anything else a
    unit yields (a health check's measurements and "not available" notes) is returned as it is.
    """
    findings: list[Finding] = []
    other: list[Any] = []
    for rule in units:
        settings = config.for_rule(rule)
        if not settings.enabled:
            continue
        for target in targets(rule):
            for item in rule.check(target, settings.options, config.catalog):
                if not isinstance(item, Finding):
                    other.append(item)
                    continue
                item.severity = settings.severity
                if item.max_severity and severity_rank(item.max_severity) < severity_rank(item.severity):
                    item.severity = item.max_severity
                findings.append(item)
    return findings, other


def lint_paths(nic_paths: Sequence[Path | str], switch_paths: Sequence[Path | str],
               cabling_path: Path | str | None = None, config_path: Path | str | None = None,
               *, catalog: Any) -> LintResult:
    """Read every input, build the fabric and lint it (what ``fabricplan lint`` does); ``catalog``
    (a :class:`~fabricplan.catalog.Catalog`, with the user's overlays) supplies the rules' defaults."""
    config = load_config(config_path, RULES, catalog)
    if not nic_paths and not switch_paths:
        raise InputError("nothing to lint: give --nic and/or --switch inputs")
    nics = read_nics(list(nic_paths)) if nic_paths else []
    ports: list[SwitchPortQos] = []
    for path in _expand_switch_paths(switch_paths):
        read = read_config_db(path, catalog)
        if not read:
            raise InputError("read 0 switch ports: no PORT or PORT_QOS_MAP rows (expected CONFIG_DB tables, "
                             "nested {\"PORT\": {...}} or flat {\"PORT|Ethernet0\": {...}})", location=str(path))
        ports.extend(read)
    cabling = read_cabling(cabling_path) if cabling_path is not None else None
    fabric, notes = build_fabric(nics, ports, cabling, str(cabling_path) if cabling_path is not None else None)
    if not fabric.links:
        raise InputError("read 0 links: nothing was checked", location=", ".join(str(p) for p in (*nic_paths, *switch_paths)))
    return LintResult(fabric=fabric, findings=lint(fabric, config, catalog=catalog), notes=notes)


def _expand_switch_paths(paths: Sequence[Path | str]) -> list[Path]:
    """A folder stands for every ``*.json`` below it (e.g. ``leafNN/config_db.json``)."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found = sorted(p.rglob("*.json"))
            if not found:
                raise InputError("folder holds no config_db JSON files", location=str(p))
            out.extend(found)
        else:
            out.append(p)
    return out
