"""Monte Carlo over the catalog's ranges: per fabric, the distribution of cost per useful GPU-hour
and the probability that it is the best.

``metric = TCO / (GPU-hours x weighted utilisation x weighted goodput)`` (:mod:`fabricplan.plan.outcome`),
drawn as

* TCO: :func:`fabricplan.cost.draws.tco_draws` - exact, because TCO is linear in each price
  (counts x price draws) and a product of the opex parameters;
* utilisation: the step-time model is run on a small grid of compute speed
  (``uncertainty_gpu_efficiency``, one draw per world shared by every fabric) and per-NIC bandwidth
  (:func:`bandwidth_ratio_draws`: an RDMA profile's own ``effective_bandwidth_gbytes_per_s`` range,
  drawn per fabric; for socket-transport profiles the socket model at the drawn socket figures,
  ``perf_defaults`` ``tcp_receive_gbps_per_core``, ``socket_dram_touches_per_byte``, ...) at their
  low, default and high values, and each draw is interpolated bilinearly in its grid cell.
  Utilisation is monotone in both, so every draw lies between the values at its cell's corners (a
  bound), it is exact at the grid points, and a zero-width range collapses the grid onto the
  deterministic run. Each ``PERF_DRAWN`` number (the adaptive-routing residual on adaptive fabrics,
  the data-parallel overlap efficiency on every fabric)
  adds its own first-order term: the utilisation change at its low and high (one run each),
  interpolated at its draw (exact when it alone moves; interactions with the grid are left out);
* goodput after failures: exact per draw (:func:`goodput_draws`: failure rates, the fabric's
  network failure multiplier, checkpoint write and restart times, vectorised).

All fabrics share the same draws of shared quantities (common random numbers), so the probability
that one is best is not blurred by independent noise on parts they share.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from fabricplan.catalog import Catalog, Range
from fabricplan.catalog.spread import field_bounds
from fabricplan.cost import resolve_assumptions
from fabricplan.cost.draws import Draws, tco_draws
from fabricplan.cost.opex import HOURS_PER_YEAR
from fabricplan.plan import DEFAULT_PLAN, Levers, Plan
from fabricplan.plan.outcome import FabricOutcome, weighted_utilisation
from fabricplan.spec import ClusterSpec

if TYPE_CHECKING:
    import numpy as np


class FabricDistribution(BaseModel):
    """One fabric's cost per useful GPU-hour over the draws."""

    p10_usd: float
    p50_usd: float
    p90_usd: float
    mean_usd: float
    probability_best: float = Field(description="Share of draws in which this fabric is the cheapest eligible one")


class Uncertainty(BaseModel):
    """The Monte Carlo of one decision (module docstring)."""

    draws: int
    seed: int
    method: str = ("triangular(low, default, high) per ranged catalog number (its Range or spread); TCO exact "
                   "(counts x price and power draws); utilisation interpolated on a low/default/high grid of compute "
                   "speed and per-NIC bandwidth (drawn from each fabric's own figures), plus a first-order term per "
                   "drawn perf number (adaptive-routing residual, DP overlap efficiency)")
    threshold: float = Field(description="A fabric with at least this probability of being best is a clear winner")
    fabrics: dict[str, FabricDistribution]
    leader: str = Field(description="The eligible fabric most often best")
    leader_probability: float
    clear: bool = Field(description="The leader is best with probability >= threshold")
    ranged_inputs: list[str] = Field(description="The ranged quantities drawn (catalog ids), widths > 0")


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


#: ``perf_defaults`` numbers the Monte Carlo draws from their own ranges with one extra pair of runs
#: each (at their low and high), for the fabrics whose ``routing`` they act on (None: every fabric).
PERF_DRAWN: tuple[tuple[str, str | None], ...] = (("adaptive_routing_residual_collision_fraction", "adaptive"),
                                                   ("dp_overlap_efficiency", None))


def bandwidth_ratio_draws(spec: ClusterSpec, catalog: Catalog, fabric: str, design, draws: Draws) -> np.ndarray:
    """Per-NIC bandwidth per draw / its deterministic value, for one fabric (the bandwidth lever).

    RDMA profiles: the profile's ``effective_bandwidth_gbytes_per_s`` drawn from its own range
    (``fabric:<id>:effective_bandwidth_gbytes_per_s``). Socket-transport profiles: the socket
    model's large-message bandwidth (:func:`fabricplan.perf.socket_transport.socket_bandwidth_draws`
    at NCCL's buffer size) at the drawn socket figures (``param:<name>``, shared by every socket
    fabric: the same host and kernel), exact per draw."""
    import numpy as np

    profile = design.network.profile
    if profile.socket is None:  # relative to the catalog's value, so a spec's override keeps the range's shape
        entry = catalog.fabric(fabric) if fabric in catalog.section("fabrics") else profile
        low, value, high = field_bounds(entry, "effective_bandwidth_gbytes_per_s")
        return draws.of(f"fabric:{fabric}:effective_bandwidth_gbytes_per_s", low, value, high) / value
    from fabricplan.perf.collectives import gpu_compute_capability
    from fabricplan.perf.params import perf_parameter
    from fabricplan.perf.socket_transport import SOCKET_DRAWN, socket_bandwidth_draws

    parameters = catalog.perf_defaults.parameters
    tcpx = profile.socket.variant == "gpudirect_tcpx"
    names = [name for name in SOCKET_DRAWN if (name == "devmem_tcp_line_rate_fraction") == tcpx]
    values = {name: draws.of_field(f"param:{name}", parameters[name], "value") for name in names}
    network = design.network
    kwargs = dict(message_bytes=perf_parameter("nccl_buffsize_bytes", catalog),
                  nics_per_node=network.nics_per_node, gpus_per_node=network.gpus_per_node,
                  compute_capability=gpu_compute_capability(network.gpu, catalog),
                  hbm_tbytes_per_s=getattr(network.gpu, "hbm_bandwidth_tbytes_per_s", None), catalog=catalog)
    base = socket_bandwidth_draws(profile, {}, **kwargs)
    drawn = socket_bandwidth_draws(profile, values, **kwargs)
    return np.broadcast_to(drawn / base if base > 0 else 1.0, (draws.n,)).astype(float)


def utilisation_draws(spec: ClusterSpec, catalog: Catalog, outcome: FabricOutcome, draws: Draws,
                      plan: Plan = DEFAULT_PLAN, levers: Levers = Levers(), light: bool = False,
                      design=None) -> np.ndarray:
    """Weighted utilisation per draw of ``outcome``'s design (module docstring). ``light`` (the
    scale curve's many sizes): compute speed enters as a linear term (its slope from one run at its
    high, at the default bandwidth) instead of the bilinear grid, and the ``PERF_DRAWN`` numbers are
    held at their defaults."""
    import numpy as np

    if not spec.jobs:
        return np.ones(draws.n)
    from fabricplan.perf.efficiency import efficiency_model

    gpu_range = catalog.parameter("uncertainty_gpu_efficiency").value
    design = outcome_design(spec, catalog, outcome, plan) if design is None else design
    g = draws.of_range("param:uncertainty_gpu_efficiency", gpu_range)
    b = bandwidth_ratio_draws(spec, catalog, outcome.fabric, design, draws)
    g_grid = [1.0] if light else _lever_grid(gpu_range)
    b_grid = sorted({float(b.min()), 1.0, float(b.max())})
    model = efficiency_model(plan.efficiency_model)

    def run(gv: float, bv: float, at: Catalog = catalog) -> float:
        if gv == 1.0 and bv == 1.0 and at is catalog:
            return outcome.weighted_gpu_utilisation
        lever = Levers(efficiency_multiplier=levers.efficiency_multiplier * gv,
                       bandwidth_multiplier=levers.bandwidth_multiplier * bv)
        return weighted_utilisation(spec.jobs, plan.performance(spec, at, design, lever, model))

    table = np.array([[run(gv, bv) for bv in b_grid] for gv in g_grid])
    gi, gt = _interp_index(g_grid, g)
    bi, bt = _interp_index(b_grid, b)
    gi1 = np.minimum(gi + 1, len(g_grid) - 1)
    bi1 = np.minimum(bi + 1, len(b_grid) - 1)
    result = ((1 - gt) * (1 - bt) * table[gi, bi] + gt * (1 - bt) * table[gi1, bi]
              + (1 - gt) * bt * table[gi, bi1] + gt * bt * table[gi1, bi1])
    base = outcome.weighted_gpu_utilisation
    if light:  # compute speed as a linear term: its slope from one run at its high, default bandwidth
        high = gpu_range.at("high")
        if high == 1.0:
            return result
        return result + (run(high, 1.0) - base) / (high - 1.0) * (g - 1.0)
    for name, routing in PERF_DRAWN:
        if routing is not None and design.network.profile.routing != routing:
            continue
        parameter = catalog.perf_defaults.parameters[name]
        low, value, high = field_bounds(parameter, "value")
        if high <= low:
            continue
        x = draws.of(f"param:{name}", low, value, high)
        grid = sorted({low, value, high})
        deltas = [0.0 if v == value else
                  run(1.0, 1.0, catalog.with_values({f"perf_defaults.parameters.{name}.value": v})) - base
                  for v in grid]
        result = result + np.interp(x, grid, deltas)
    return result


def outcome_design(spec: ClusterSpec, catalog: Catalog, outcome: FabricOutcome, plan: Plan = DEFAULT_PLAN):
    """The design an outcome was computed on (the chosen design when several were considered)."""
    from fabricplan.design.candidates import design_options

    choice = next(c for c in spec.fabric_choices() if c.profile == outcome.fabric)
    chosen = outcome.design
    if chosen is not None:
        for option in design_options(spec, catalog, choice):
            if (option.switch, option.style) == (chosen.switch, chosen.style) and option.problem is None:
                return plan.design(option.spec, catalog, option.choice)
    return plan.design(spec, catalog, choice)


def metric_draws(spec: ClusterSpec, catalog: Catalog, outcomes: dict[str, FabricOutcome], draws: Draws,
                 plan: Plan = DEFAULT_PLAN, price_multipliers: dict[str, float] | None = None,
                 levers: Levers = Levers(), light: bool = False) -> dict[str, np.ndarray]:
    """Cost per useful GPU-hour draws per fabric (``light``: see :func:`utilisation_draws`)."""
    import numpy as np

    assumptions = resolve_assumptions(spec, catalog, price_multipliers)
    gpu_hours = spec.cluster.gpus * HOURS_PER_YEAR * assumptions.horizon_years
    result = {}
    for fabric, outcome in outcomes.items():
        tco = tco_draws(spec, catalog, outcome.cost, assumptions, draws)
        design = outcome_design(spec, catalog, outcome, plan)  # once for both parts
        utilisation = utilisation_draws(spec, catalog, outcome, draws, plan, levers, light, design)
        goodput = goodput_draws(spec, catalog, outcome, draws, plan, design)
        with np.errstate(divide="ignore"):  # a draw whose failures leave no progress costs infinity
            result[fabric] = tco / (gpu_hours * utilisation * goodput)
    return result


def goodput_draws(spec: ClusterSpec, catalog: Catalog, outcome: FabricOutcome, draws: Draws,
                  plan: Plan = DEFAULT_PLAN, design=None) -> np.ndarray:
    """Job-weighted goodput after failures per draw (:mod:`fabricplan.plan.goodput`): each class's
    failure rate (``param:failure_rate_<class>_per_million_hours``, shared by every fabric), the
    fabric's network failure multiplier (``costs:network_failure_multiplier:<fabric>``) and the
    checkpoint write and restart times (unless the spec fixes them) drawn; weighted as the outcome
    weights it, ``Σ share x utilisation x goodput / Σ share x utilisation`` at the deterministic
    utilisations, so zero-width ranges give the outcome's ``weighted_goodput`` exactly."""
    import numpy as np

    from fabricplan.plan.goodput import FAILURE_CLASSES, NETWORK_CLASSES, goodput_array
    from fabricplan.plan.outcome import failure_counts

    design = outcome_design(spec, catalog, outcome, plan) if design is None else design
    costs = design.hardware.profile.costs
    multiplier = (draws.of_range(f"costs:network_failure_multiplier:{outcome.fabric}", costs.network_failure_multiplier)
                  if costs is not None else 1.0)
    rates = {}
    for name in FAILURE_CLASSES:
        parameter = f"failure_rate_{name}_per_million_hours"
        rate = draws.of_range(f"param:{parameter}", catalog.parameter(parameter).value) / 1e6
        rates[name] = rate * multiplier if name in NETWORK_CLASSES else rate
    ops = spec.operations

    def minutes(value: float | None, name: str):
        return draws.of_range(f"param:{name}", catalog.parameter(name).value) if value is None else value

    write = minutes(ops.checkpoint_write_minutes, "checkpoint_write_minutes")
    restart = minutes(ops.restart_minutes, "restart_minutes")

    def job(gpus: int) -> np.ndarray:
        values = goodput_array(failure_counts(spec, design, gpus), rates, write, restart,
                               ops.checkpoint_interval_minutes)
        return np.broadcast_to(values, (draws.n,))

    if not outcome.jobs:
        return job(spec.cluster.gpus)
    weights = [j.share * j.gpu_utilisation for j in outcome.jobs]
    total = sum(weights)
    if total <= 0:
        return np.full(draws.n, outcome.weighted_goodput)
    return sum(w * job(j.gpus) for w, j in zip(weights, outcome.jobs)) / total


def summarise(metrics: dict[str, np.ndarray], eligible: list[str], draws: Draws, threshold: float) -> Uncertainty:
    """Percentiles per fabric and the probability that each eligible fabric is the cheapest."""
    import numpy as np

    names = [f for f in metrics if f in eligible] or list(metrics)
    stack = np.vstack([metrics[f] for f in names])
    best = np.argmin(stack, axis=0)
    progress = np.isfinite(stack.min(axis=0))  # a draw in which no fabric makes progress has no winner
    wins = {f: float(np.mean((best == i) & progress)) for i, f in enumerate(names)}
    fabrics = {}
    for fabric, values in metrics.items():
        p10, p50, p90 = np.percentile(values, [10, 50, 90])
        fabrics[fabric] = FabricDistribution(p10_usd=float(p10), p50_usd=float(p50), p90_usd=float(p90),
                                             mean_usd=float(np.mean(values)),
                                             probability_best=wins.get(fabric, 0.0))
    leader = max(names, key=lambda f: (wins[f], -float(np.median(metrics[f]))))
    return Uncertainty(draws=draws.n, seed=draws.seed, threshold=threshold, fabrics=fabrics, leader=leader,
                       leader_probability=wins[leader], clear=wins[leader] >= threshold,
                       ranged_inputs=sorted(draws.ranged))


def monte_carlo(spec: ClusterSpec, catalog: Catalog, outcomes: dict[str, FabricOutcome], eligible: list[str],
                n: int, seed: int, plan: Plan = DEFAULT_PLAN) -> Uncertainty:
    """The Monte Carlo of one decision: ``n`` seeded draws (module docstring)."""
    draws = Draws(n=n, seed=seed)
    threshold = catalog.parameter("decision_best_probability").value.at("default")
    return summarise(metric_draws(spec, catalog, outcomes, draws, plan), eligible, draws, threshold)
