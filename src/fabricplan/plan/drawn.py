"""Step times under drawn inputs: the chain's performance step on a small grid, read per draw.

The step-time model is not vectorised over draws (its NCCL algorithm choices and placements are
discrete), so the drawn chain runs the plan's own performance step on a grid and interpolates:

* compute speed (``param:uncertainty_gpu_efficiency``, one draw per world shared by every fabric)
  and per-NIC bandwidth (:func:`bandwidth_ratio_draws`: an RDMA profile's own
  ``effective_bandwidth_gbytes_per_s`` range, drawn per fabric; for socket-transport profiles the
  socket model at the drawn socket figures) at their low, default and high values; each draw is
  interpolated bilinearly in its grid cell, per job, in GPU utilisation (compute / step) and step
  time. Utilisation is monotone in both, so every draw lies between the values at its cell's
  corners (a bound); it is exact at the grid points, and a zero-width range collapses the grid onto
  the deterministic run;
* each ``PERF_DRAWN`` number (the adaptive-routing residual on adaptive fabrics, the data-parallel
  overlap efficiency on every fabric) adds its own first-order term: the change at its low and high
  (one run each), interpolated at its draw (exact when it alone moves; interactions with the grid
  are left out);
* ``light`` (the scale curve's many sizes): compute speed enters as a linear term (its slope from
  one run at its high, at the default bandwidth) instead of the grid, and the ``PERF_DRAWN``
  numbers stay at their defaults.

The result is one :class:`~fabricplan.perf.step.StepResult` per job whose step time and compute
time (and the MFU, tokens per second and GPU-hours that follow from the step time) are arrays of
draws; the chain's outcome step takes them as it takes a point's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from fabricplan.catalog import Catalog, Range
from fabricplan.catalog.inputs import Draws
from fabricplan.catalog.spread import field_bounds
from fabricplan.design import FabricDesign
from fabricplan.perf.step import StepResult
from fabricplan.plan.scenario import Levers

if TYPE_CHECKING:
    import numpy as np

#: ``perf_defaults`` numbers drawn from their own ranges with one extra pair of runs each (at their
#: low and high), for the fabrics whose ``routing`` they act on (None: every fabric).
PERF_DRAWN: tuple[tuple[str, str | None], ...] = (("adaptive_routing_residual_collision_fraction", "adaptive"),
                                                   ("dp_overlap_efficiency", None),
                                                   ("per_gpu_persistent_throughput_sigma", None),
                                                   ("nccl_hbm_bytes_per_bus_byte", None))

Performance = Callable[[Catalog, Levers], list[StepResult]]


def _lever_grid(value: Range) -> list[float]:
    return sorted({value.at("low"), value.at("default"), value.at("high")})


def _interp_index(grid: list[float], values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cell index and position (0..1) of each value on a sorted grid (clamped at the ends)."""
    import numpy as np

    points = np.asarray(grid)
    if len(points) == 1:
        return np.zeros(len(values), dtype=int), np.zeros(len(values))
    index = np.clip(np.searchsorted(points, values, side="right") - 1, 0, len(points) - 2)
    t = (values - points[index]) / (points[index + 1] - points[index])
    return index, np.clip(t, 0.0, 1.0)


def bandwidth_ratio_draws(catalog: Catalog, design: FabricDesign, draws: Draws) -> np.ndarray:
    """Per-NIC bandwidth per draw / its deterministic value, for the design's fabric (the bandwidth lever).

    RDMA profiles: the profile's ``effective_bandwidth_gbytes_per_s`` drawn from its own range
    (``fabric:<id>:effective_bandwidth_gbytes_per_s``). Socket-transport profiles: the socket
    model's large-message bandwidth (:func:`fabricplan.perf.socket_transport.socket_nic_bandwidth`
    at NCCL's buffer size) at the drawn socket figures (``param:<name>``, shared by every socket
    fabric: the same host and kernel), exact per draw."""
    import numpy as np

    profile = design.network.profile
    fabric = profile.id
    if profile.socket is None:  # relative to the catalog's value, so a spec's override keeps the range's shape
        entry = catalog.fabric(fabric) if fabric in catalog.section("fabrics") else profile
        low, value, high = field_bounds(entry, "effective_bandwidth_gbytes_per_s")
        return draws.of(f"fabric:{fabric}:effective_bandwidth_gbytes_per_s", low, value, high) / value
    from fabricplan.perf.collectives import gpu_compute_capability
    from fabricplan.perf.params import perf_parameter
    from fabricplan.perf.socket_transport import SOCKET_DRAWN, socket_nic_bandwidth

    parameters = catalog.perf_defaults.parameters
    tcpx = profile.socket.variant == "gpudirect_tcpx"
    names = [name for name in SOCKET_DRAWN if (name == "devmem_tcp_line_rate_fraction") == tcpx]
    values = {name: draws.of_field(f"param:{name}", parameters[name], "value") for name in names}
    network = design.network
    kwargs = dict(message_bytes=perf_parameter("nccl_buffsize_bytes", catalog),
                  nics_per_node=network.nics_per_node, gpus_per_node=network.gpus_per_node,
                  compute_capability=gpu_compute_capability(network.gpu, catalog),
                  hbm_tbytes_per_s=getattr(network.gpu, "hbm_bandwidth_tbytes_per_s", None), catalog=catalog)
    base = socket_nic_bandwidth(profile, **kwargs).gbytes_per_s
    drawn = socket_nic_bandwidth(profile, figures=values, **kwargs).gbytes_per_s
    return np.broadcast_to(drawn / base if base > 0 else 1.0, (draws.n,)).astype(float)


def _table(steps: list[StepResult]) -> np.ndarray:
    """(utilisation, step time) per job: shape (2, jobs)."""
    import numpy as np

    return np.array([[r.compute_s / r.step_time_s for r in steps], [r.step_time_s for r in steps]])


def _bilinear(run: Callable[[float, float], np.ndarray], g_grid: list[float], b_grid: list[float],
              g: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The grid's (utilisation, step time) per job interpolated at each draw: shape (2, jobs, n)."""
    import numpy as np

    table = np.array([[run(gv, bv) for bv in b_grid] for gv in g_grid])  # (G, B, 2, jobs)
    gi, gt = _interp_index(g_grid, g)
    bi, bt = _interp_index(b_grid, b)
    gi1 = np.minimum(gi + 1, len(g_grid) - 1)
    bi1 = np.minimum(bi + 1, len(b_grid) - 1)

    def at(i, j):
        return np.moveaxis(table[i, j], 0, -1)  # (2, jobs, n)

    return ((1 - gt) * (1 - bt) * at(gi, bi) + gt * (1 - bt) * at(gi1, bi)
            + (1 - gt) * bt * at(gi, bi1) + gt * bt * at(gi1, bi1))


def drawn_steps(catalog: Catalog, design: FabricDesign, draws: Draws, point: list[StepResult],
                performance: Performance, levers: Levers = Levers(), light: bool = False) -> list[StepResult]:
    """The jobs' step results under ``draws`` (module docstring). ``point`` are the deterministic
    results (the grid's default corner); ``performance(catalog, levers)`` runs the chain's
    performance step on the design."""
    import numpy as np

    if not point:
        return []
    gpu_range = catalog.parameter("uncertainty_gpu_efficiency").value
    g = draws.of_range("param:uncertainty_gpu_efficiency", gpu_range)
    b = bandwidth_ratio_draws(catalog, design, draws)
    base = _table(point)

    def run(gv: float, bv: float, at: Catalog = catalog) -> np.ndarray:
        if gv == 1.0 and bv == 1.0 and at is catalog:
            return base
        lever = Levers(efficiency_multiplier=levers.efficiency_multiplier * gv,
                       bandwidth_multiplier=levers.bandwidth_multiplier * bv)
        return _table(performance(at, lever))

    b_grid = sorted({float(b.min()), 1.0, float(b.max())})
    result = _bilinear(run, [1.0] if light else _lever_grid(gpu_range), b_grid, g, b)
    if light:  # compute speed as a linear term: its slope from one run at its high, default bandwidth
        high = gpu_range.at("high")
        if high != 1.0:
            result = result + ((run(high, 1.0) - base) / (high - 1.0))[..., None] * (g - 1.0)
    else:
        for name, routing in PERF_DRAWN:
            if routing is not None and design.network.profile.routing != routing:
                continue
            parameter = catalog.perf_defaults.parameters[name]
            low, value, high = field_bounds(parameter, "value")
            if high <= low:
                continue
            x = draws.of(f"param:{name}", low, value, high)
            grid = sorted({low, value, high})
            deltas = [np.zeros_like(base) if v == value else
                      run(1.0, 1.0, catalog.with_values({f"perf_defaults.parameters.{name}.value": v})) - base
                      for v in grid]
            result = result + np.array([[np.interp(x, grid, [d[k, j] for d in deltas])
                                         for j in range(base.shape[1])] for k in range(2)])
    return [_drawn_result(r, result[0, j], result[1, j]) for j, r in enumerate(point)]


def _drawn_result(point: StepResult, utilisation: np.ndarray, step_time_s: np.ndarray) -> StepResult:
    """``point`` at drawn utilisation and step time: compute = utilisation x step
    (:meth:`~fabricplan.perf.step.StepResult.at_step_time`)."""
    return point.at_step_time(step_time_s, utilisation * step_time_s)
