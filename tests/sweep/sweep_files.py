"""Sweep files for the sweep tests, written into a test's folder."""

from __future__ import annotations

from pathlib import Path

import yaml

from project_paths import EXAMPLES

BASE = EXAMPLES / "llama70b-1024-h100.yaml"


def write_sweep(folder: Path, axes: dict, name: str = "t", **extra) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"name": name, "base": str(BASE), "axes": axes, **extra}, sort_keys=False))
    return path


SMALL_AXES = {"cluster.gpus": [512, 1024, 2048],
              "catalog.switches.sw_ib_qm9700.price_usd": [30000, 50000]}

#: 5 x 5 x 4 x 2 = 200 points.
POINTS_200 = {"cluster.gpus": [512, 1024, 2048, 4096, 8192],
              "catalog.switches.sw_ib_qm9700.price_usd": {"low": 30000, "high": 70000, "steps": 5},
              "topology.oversubscription": [[1.0, 1.0], [1.5, 1.0], [2.0, 1.0], [3.0, 1.0]],
              "economics.energy_usd_per_kwh": [0.05, 0.2]}
