"""Lossless-Ethernet configuration checker: rules as units, a config file, and output formats.

``lint(nics, switch_ports, cabling, config)`` returns findings; ``rules.RULES`` lists the rules.
"""

from fabricplan.ops.lint.engine import LintResult, build_fabric, lint, lint_paths
from fabricplan.ops.lint.finding import SEVERITIES, Finding

__all__ = ["SEVERITIES", "Finding", "LintResult", "build_fabric", "lint", "lint_paths"]
