"""Paths shared by the tests (a plain module, so that test files never import a conftest by name)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"

_PINNED = None


def pinned(name: str, style: str = "rail_optimized") -> Path:
    """A copy of the bundled example ``name`` (file stem) with ``topology.style`` pinned, for tests of
    a mechanism on that style's design (the examples leave the design search open)."""
    import tempfile

    import yaml

    global _PINNED
    if _PINNED is None:
        _PINNED = Path(tempfile.mkdtemp(prefix="fabricplan-pinned-"))
    path = _PINNED / f"{name}-{style}.yaml"
    if not path.exists():
        document = yaml.safe_load((EXAMPLES / f"{name}.yaml").read_text())
        document.setdefault("topology", {})["style"] = style
        path.write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True))
    return path


def load_script(name: str):
    """The module ``scripts/<name>.py`` (scripts are not a package), loaded by path."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # a dataclass in the script looks its module up by name
    spec.loader.exec_module(module)
    return module
