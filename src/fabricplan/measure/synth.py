"""Synthetic nccl-tests logs from the model: known parameters in, a log in the tool's layout out (for the
calibration round trip, check-measured tests and the validation report)."""

from __future__ import annotations

import math


def model_log(system, catalog, *, operation: str = "all_reduce", n_gpus: int = 16, ranks_per_node: int = 8,
              sizes: list[int] | None = None, values: dict | None = None, noise: float = 0.0, seed: int = 0,
              gpu_name: str = "NVIDIA H100 80GB HBM3", nccl_version: str | None = None,
              debug_lines: tuple[str, ...] = ()) -> str:
    """nccl-tests output whose times are the model's for ``system`` with ``values`` set at their catalog
    paths, each multiplied by ``exp(N(0, noise))`` (log-normal noise, seeded)."""
    import numpy as np

    from fabricplan.measure.write import nccl_tests_text

    rng = np.random.default_rng(seed)
    sizes = sizes or [8 * 2 ** k for k in range(31)]
    model_catalog = catalog.with_values(values) if values else catalog
    network = system.network(model_catalog)
    rows = []
    for size in sizes:
        t = system.collective(model_catalog, operation, size, n_gpus, ranks_per_node, network=network).time_us
        oop = t * math.exp(rng.normal(0.0, noise)) if noise else t
        ip = t * math.exp(rng.normal(0.0, noise)) if noise else t
        rows.append((size, oop, ip))
    return nccl_tests_text(operation, n_gpus, ranks_per_node, rows, gpu_name=gpu_name,
                           nccl_version=nccl_version or system.logged_nccl_version or system.nccl_version,
                           debug_lines=debug_lines)
