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
            "         'fabricplan.decide', 'fabricplan.cost', 'fabricplan.spec', 'fabricplan.report',\n"
            "         'fabricplan.sweep', 'pyarrow', 'ray']\n"
            "print(' '.join(m for m in heavy if m in sys.modules), file=sys.stderr)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                            env={**os.environ, "PYTHONPATH": str(SRC)}, cwd=SRC.parent)
    assert result.returncode == 0, result.stderr
    assert "compare" in result.stdout
    assert result.stderr.strip() == ""


def test_help_section_names_are_the_catalog_sections():
    from fabricplan.catalog import ALL_SECTIONS
    from fabricplan.cli.plan_cmds import HELP_SECTION_NAMES

    assert HELP_SECTION_NAMES == tuple(ALL_SECTIONS)


def test_cost_and_design_are_packages_and_api_functions():
    # `fabricplan.cost` / `fabricplan.design` are subpackages (import fabricplan.cost.tco works) that
    # are also callable as the API functions of the same name, with their signatures.
    code = ("import inspect\n"
            "import fabricplan, fabricplan.cost.tco, fabricplan.design.placement\n"
            "from fabricplan import api\n"
            "from fabricplan.catalog import load_catalog\n"
            "assert callable(fabricplan.cost.tco.cost_design)\n"
            "assert inspect.signature(fabricplan.cost) == inspect.signature(api.cost)\n"
            "spec = fabricplan.load_spec('examples/mid-128-h100-existing-ethernet.yaml')\n"
            "assert fabricplan.cost(spec).fabrics[0].network_capex_usd > 0\n"
            "assert fabricplan.design(spec, 'roce-v2').size.tiers == 1\n"
            "assert fabricplan.load_catalog is load_catalog\n"
            "assert 'size_topology' in dir(fabricplan)\n"
            "try:\n"
            "    fabricplan.no_such_name\n"
            "except AttributeError:\n"
            "    pass\n"
            "else:\n"
            "    raise SystemExit('expected AttributeError')\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                            env={**os.environ, "PYTHONPATH": str(SRC)}, cwd=SRC.parent)
    assert result.returncode == 0, result.stderr


def test_command_modules_cover_every_command():
    # `run` builds only the invoked command's module (COMMAND_MODULES); every registered command
    # must be listed, under the module that registers it.
    from fabricplan.cli.app import COMMAND_MODULES, app

    names = {info.name or info.callback.__name__ for info in app.registered_commands}
    names |= {group.name for group in app.registered_groups}
    assert names == set(COMMAND_MODULES)
    import importlib

    import typer

    for name, module in COMMAND_MODULES.items():
        small = typer.Typer()
        importlib.import_module(f"fabricplan.cli.{module}").register(small)
        registered = {i.name or i.callback.__name__ for i in small.registered_commands}
        registered |= {g.name for g in small.registered_groups}
        assert name in registered, (name, module)


def test_step_with_a_warm_cache_builds_no_catalog_validator(tmp_path):
    # The catalog's models are built lazily and the bundled catalog is read back validated from the
    # per-user cache, so `step` (a command that reads only the bundled catalog) never builds them.
    code = ("import sys\n"
            "from fabricplan.cli.app import run\n"
            "assert run(['step', 'examples/llama70b-1024-h100.yaml', '--json']) == 0\n"
            "from fabricplan.catalog import models, documents\n"
            "built = [m.__name__ for module in (models, documents) for m in vars(module).values()\n"
            "         if isinstance(m, type) and issubclass(m, models.Strict) and m is not models.Strict\n"
            "         and m.__module__ == module.__name__\n"
            "         and type(m.__pydantic_validator__).__name__ != 'MockValSer']\n"
            "print(' '.join(built), file=sys.stderr)\n")
    env = {**os.environ, "PYTHONPATH": str(SRC), "FABRICPLAN_CACHE_DIR": str(tmp_path)}
    for _warm_then_measured in range(2):
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                                env=env, cwd=SRC.parent)
        assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == ""
