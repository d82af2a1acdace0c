"""Start-up cost: `fabricplan --help` loads no models, and the lazy package keeps its public API."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"


def test_help_imports_no_heavy_modules():
    code = ("import sys\n"
            "from fabricplan.cli.app import run\n"
            "assert run(['--help']) == 0\n"
            "heavy = ['numpy', 'pydantic', 'networkx', 'plotly', 'scipy', 'fabricplan.catalog', 'fabricplan.perf',\n"
            "         'fabricplan.decide', 'fabricplan.cost', 'fabricplan.spec', 'fabricplan.report']\n"
            "print(' '.join(m for m in heavy if m in sys.modules), file=sys.stderr)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                            env={**os.environ, "PYTHONPATH": str(SRC)})
    assert result.returncode == 0, result.stderr
    assert "compare" in result.stdout
    assert result.stderr.strip() == ""


def test_help_section_names_are_the_catalog_sections():
    from fabricplan.catalog import SECTIONS
    from fabricplan.cli.plan_cmds import HELP_SECTION_NAMES

    assert HELP_SECTION_NAMES == tuple(SECTIONS)


def test_lazy_package_keeps_the_api_function_named_cost():
    code = ("import fabricplan, fabricplan.cost.bom\n"
            "from fabricplan.api import cost\n"
            "from fabricplan.catalog import load_catalog\n"
            "assert fabricplan.cost is cost, fabricplan.cost\n"
            "assert fabricplan.load_catalog is load_catalog\n"
            "assert 'size_topology' in dir(fabricplan)\n"
            "try:\n"
            "    fabricplan.no_such_name\n"
            "except AttributeError:\n"
            "    pass\n"
            "else:\n"
            "    raise SystemExit('expected AttributeError')\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                            env={**os.environ, "PYTHONPATH": str(SRC)})
    assert result.returncode == 0, result.stderr
