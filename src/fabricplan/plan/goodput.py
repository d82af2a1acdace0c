"""Failures, checkpoints and goodput: the share of a training job's GPU-hours that survives interruptions.

Pure functions; the rates and times come from the catalog (``failure_rate_*_per_million_hours``,
``checkpoint_write_minutes``, ``restart_minutes``, each with source and range) and the spec
(``operations.checkpoint_interval_minutes`` etc. override them).

* Interruption rate of a job (synchronous training stops when any of its parts fails)::

      lambda = sum over classes c of count_c x rate_c           [per hour]

  with classes GPU, host, NIC, switch and link (a cable or fibre with its transceivers), counts
  from the design scaled to the job's share of the cluster, and the network classes (NIC, switch,
  link) times the fabric's ``costs.network_failure_multiplier``. MTBF ``M = 1 / lambda``.
  Rates: the Llama 3 paper's interruption breakdown (419 in 54 days on 16,384 H100) and
  Microsoft's switch-failure study; see the catalog entries.
* Checkpoint interval: configured, or Daly's first-order optimum (Daly, "A higher order estimate of
  the optimum checkpoint interval for restart dumps", FGCS 2006; Young, CACM 1974 without ``R``)::

      tau = sqrt(2 C (M + R))

  with C the time the job stalls to write a checkpoint and R the restart time.
* Fraction of time lost (first order: checkpoint overhead, half an interval of rework and a restart
  per failure)::

      waste = C / tau + lambda x (tau / 2 + R)        (capped at 1)
      goodput = 1 - waste
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fabricplan.catalog import Catalog, PricePoint

#: Component classes with a catalog failure rate ``failure_rate_<class>_per_million_hours``.
FAILURE_CLASSES: tuple[str, ...] = ("gpu", "host", "nic", "switch", "link")
#: Classes that belong to the fabric (scaled by the profile's network_failure_multiplier).
NETWORK_CLASSES = frozenset({"nic", "switch", "link"})
MINUTES_PER_HOUR = 60.0


def failure_rates_per_hour(catalog: Catalog, point: PricePoint = "default",
                           network_multiplier: float = 1.0) -> dict[str, float]:
    """Per-component interruption rates [1/h] from the catalog, network classes scaled."""
    rates = {}
    for name in FAILURE_CLASSES:
        rate = catalog.parameter(f"failure_rate_{name}_per_million_hours").value.at(point) / 1e6
        rates[name] = rate * (network_multiplier if name in NETWORK_CLASSES else 1.0)
    return rates


def interruption_rate_per_hour(counts: dict[str, float], rates_per_hour: dict[str, float]) -> float:
    """``sum_c count_c x rate_c``: how often a job built from ``counts`` parts is interrupted [1/h]."""
    return sum(count * rates_per_hour.get(name, 0.0) for name, count in counts.items())


def _clip01(value):
    """``value`` clipped to [0, 1]: a float, or elementwise for numpy arrays (Monte Carlo draws)."""
    if isinstance(value, (int, float)):
        return min(max(float(value), 0.0), 1.0)
    import numpy as np

    return np.clip(value, 0.0, 1.0)


def optimal_checkpoint_interval_h(write_h, mtbf_h, restart_h=0.0):
    """Daly's first-order optimum ``sqrt(2 C (M + R))`` [h] (Young's ``sqrt(2 C M)`` when R = 0).
    Floats or numpy arrays (elementwise)."""
    return (2.0 * write_h * (mtbf_h + restart_h)) ** 0.5


def lost_fraction(interval_h, write_h, restart_h, rate_per_hour):
    """``C / tau + lambda (tau / 2 + R)``, capped to [0, 1] (module docstring). Floats or numpy
    arrays of draws (elementwise; an interval of 0 there counts as all lost)."""
    if isinstance(interval_h, (int, float)) and interval_h <= 0:
        return 1.0 if write_h > 0 else _clip01(rate_per_hour * restart_h)
    return _clip01(write_h / interval_h + rate_per_hour * (interval_h / 2.0 + restart_h))


@dataclass(frozen=True)
class Goodput:
    """One job's interruptions and what they cost."""

    interruptions_per_day: float
    mtbf_h: float
    checkpoint_interval_min: float
    lost_fraction: float

    @property
    def goodput(self) -> float:
        return 1.0 - self.lost_fraction


def job_goodput(counts: dict[str, float], rates_per_hour: dict[str, float], write_min: float, restart_min: float,
                interval_min: float | None = None) -> Goodput:
    """Goodput of a job of ``counts`` parts: the configured or optimal interval, then the waste."""
    rate = interruption_rate_per_hour(counts, rates_per_hour)
    mtbf = 1.0 / rate if rate > 0 else math.inf
    write_h, restart_h = write_min / MINUTES_PER_HOUR, restart_min / MINUTES_PER_HOUR
    if interval_min is not None:
        interval_h = interval_min / MINUTES_PER_HOUR
    elif rate == 0:
        interval_h = math.inf  # nothing fails: no need to checkpoint
    elif write_h == 0:
        interval_h = 0.0  # free checkpoints: checkpoint continuously, lose only the restarts
    else:
        interval_h = optimal_checkpoint_interval_h(write_h, mtbf, restart_h)
    lost = 0.0 if math.isinf(interval_h) else lost_fraction(interval_h, write_h, restart_h, rate)
    return Goodput(interruptions_per_day=rate * 24.0, mtbf_h=mtbf, checkpoint_interval_min=interval_h * MINUTES_PER_HOUR,
                   lost_fraction=lost)


def goodput_array(counts: dict[str, float], rates_per_hour: dict, write_min, restart_min,
                  interval_min: float | None = None):
    """:func:`job_goodput`'s goodput for numpy arrays of draws (rates per class, write and restart
    times), elementwise with the same cases: no failures lose nothing; free checkpoints lose only
    the restarts; else the configured or Daly's interval and ``C / tau + lambda (tau / 2 + R)``."""
    import numpy as np

    rate = sum(np.asarray(rates_per_hour.get(name, 0.0), dtype=float) * count for name, count in counts.items())
    write_h = np.asarray(write_min, dtype=float) / MINUTES_PER_HOUR
    restart_h = np.asarray(restart_min, dtype=float) / MINUTES_PER_HOUR
    rate, write_h, restart_h = np.broadcast_arrays(np.asarray(rate, dtype=float), write_h, restart_h)
    with np.errstate(divide="ignore", invalid="ignore"):
        if interval_min is not None:
            interval_h = np.full(rate.shape, interval_min / MINUTES_PER_HOUR)
        else:
            mtbf = np.where(rate > 0, 1.0 / np.where(rate > 0, rate, 1.0), np.inf)
            interval_h = np.sqrt(2.0 * write_h * (mtbf + restart_h))
        lost = np.where(interval_h > 0, write_h / np.where(interval_h > 0, interval_h, 1.0)
                        + rate * (interval_h / 2.0 + restart_h),
                        np.where(write_h > 0, 1.0, rate * restart_h))
    if interval_min is None:
        lost = np.where(rate > 0, lost, 0.0)
    return 1.0 - np.clip(lost, 0.0, 1.0)
