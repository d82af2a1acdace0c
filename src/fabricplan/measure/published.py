"""Calibration against a published nccl-tests table: the Azure NDm A100 v4 all-reduce table of
``catalog/data/published_perf.yaml`` (docs/reference/nccl_tests.md T1) printed in nccl-tests' layout,
read back, fitted on part of its sizes and used to predict the rest (docs/validation.md,
scripts/validate_calibration.py, tests/measure/test_published.py)."""

from __future__ import annotations

from dataclasses import dataclass

from fabricplan.measure.system import MeasuredSystem


@dataclass(frozen=True)
class HeldOutRow:
    size_bytes: int
    published_us: float
    bundled_us: float  # the model with the bundled catalog
    calibrated_us: float  # the model with the fitted values

    @property
    def bundled_error(self) -> float:
        return self.bundled_us / self.published_us - 1.0

    @property
    def calibrated_error(self) -> float:
        return self.calibrated_us / self.published_us - 1.0


@dataclass(frozen=True)
class PublishedSplit:
    name: str
    fit_sizes: tuple[int, ...]
    parameters: tuple  # FittedParameter
    held_out: tuple[HeldOutRow, ...]


def azure_system(table: dict) -> MeasuredSystem:
    return MeasuredSystem(gpu_id=table["gpu"], fabric_id="infiniband-hdr", nccl_version=table["nccl_version"],
                          logged_nccl_version=table["nccl_version"], nics_per_node=table["nics_per_node"],
                          cpu_vendor=table["cpu_vendor"], collnet=False,
                          notes=("published run without a SHARP plugin (docs/reference/nccl_tests.md T1)",))


def azure_log_text(table: dict) -> str:
    """The published table (out-of-place and in-place times) in nccl-tests' layout."""
    from fabricplan.measure.write import nccl_tests_text

    return nccl_tests_text("all_reduce", table["gpus"], table["gpus_per_node"],
                           [(int(s), float(o), float(i)) for s, o, i in table["rows"]],
                           gpu_name="NVIDIA A100-SXM4-80GB", nccl_version=table["nccl_version"])


SPLITS = {
    "every other size": lambda sizes: sizes[::2],
    "up to 16 MiB -> larger": lambda sizes: [s for s in sizes if s <= 16 * 2**20],
    "from 1 MiB -> smaller": lambda sizes: [s for s in sizes if s >= 2**20],
}


def azure_splits(catalog) -> list[PublishedSplit]:
    """Fit on part of the Azure table (each split of :data:`SPLITS`), predict the other sizes."""
    from dataclasses import replace

    from fabricplan.catalog.files import load_data_file
    from fabricplan.measure.fit import calibrate
    from fabricplan.measure.read import parse_log

    table = load_data_file("published_perf.yaml")["azure_ndv4_allreduce"]
    system = azure_system(table)
    log = parse_log(azure_log_text(table), "published_perf.yaml:azure_ndv4_allreduce")
    (run,) = log.nccl_runs
    sizes = [row.size_bytes for row in run.rows]
    out = []
    for name, pick in SPLITS.items():
        keep = set(pick(sizes))
        train = replace(run, rows=tuple(r for r in run.rows if r.size_bytes in keep))
        test = [r for r in run.rows if r.size_bytes not in keep]
        result = calibrate([replace(log, nccl_runs=(train,))], catalog, system, cross_validate=False)
        values = result.values()
        fitted = catalog.with_values(values)
        held = []
        for row in test:
            bundled = system.collective(catalog, "all_reduce", row.size_bytes, run.ranks, run.ranks_per_node).time_us
            calibrated = system.collective(fitted, "all_reduce", row.size_bytes, run.ranks,
                                           run.ranks_per_node).time_us
            held.append(HeldOutRow(row.size_bytes, float(row.oop_time_us), bundled, calibrated))
        out.append(PublishedSplit(name, tuple(sorted(keep)), result.parameters, tuple(held)))
    return out
