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

* Parts whose failure slows the job instead of stopping it (a multi-plane design's leaves and host
  links: the NIC keeps its other planes, :func:`fabricplan.fleet.failures.plane_port_pace`; Alibaba
  HPN, SIGCOMM 2024): the job runs with its step ``1 + s`` times as long until the part is repaired
  (``T``) or, when that takes longer than the next checkpoint (on average ``tau / 2`` away), until
  that checkpoint, and then restarts without the slow node and without rework (``R``)::

      per failure = T x s / (1 + s)                     if T <= tau / 2
                  = tau / 2 x s / (1 + s) + R           otherwise
      degraded = lambda_slow x per failure              (added to the waste)

  never more than a stop (``tau / 2 + R``) costs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fabricplan.catalog import Catalog
from fabricplan.catalog.inputs import Inputs, clip, divide, where

#: Component classes with a catalog failure rate ``failure_rate_<class>_per_million_hours``.
FAILURE_CLASSES: tuple[str, ...] = ("gpu", "host", "nic", "switch", "link")
#: Classes that belong to the fabric (scaled by the profile's network_failure_multiplier).
NETWORK_CLASSES = frozenset({"nic", "switch", "link"})
MINUTES_PER_HOUR = 60.0


def failure_rates_per_hour(catalog: Catalog, inputs: Inputs | None = None, network_multiplier=1.0) -> dict:
    """Per-component interruption rates [1/h] (``param:failure_rate_<class>_per_million_hours`` from
    ``inputs``: the catalog's default, or its draws), network classes scaled."""
    inputs = inputs or Inputs.point()
    rates = {}
    for name in FAILURE_CLASSES:
        value = catalog.parameter(f"failure_rate_{name}_per_million_hours").value
        rate = inputs.of_range(f"param:failure_rate_{name}_per_million_hours", value, value.default, "default") / 1e6
        rates[name] = rate * network_multiplier if name in NETWORK_CLASSES else rate
    return rates


def interruption_rate_per_hour(counts: dict[str, float], rates_per_hour: dict):
    """``sum_c count_c x rate_c``: how often a job built from ``counts`` parts is interrupted [1/h]
    (floats, or arrays of drawn rates)."""
    return sum(count * rates_per_hour.get(name, 0.0) for name, count in counts.items())


def degraded_lost_fraction(rate_per_hour, repair_h, interval_h, restart_h, slowdown):
    """``lambda_slow x per failure`` (module docstring): the share of time lost to failures that slow
    the job by ``slowdown`` (step ``1 + s`` times as long) until repair (``repair_h``) or the next
    checkpoint, then a restart without rework; capped to [0, 1]. Floats or numpy arrays (elementwise)."""
    slow = slowdown / (1.0 + slowdown)
    half = where(interval_h == math.inf, repair_h, interval_h / 2.0)  # no checkpoints: slowed until the repair
    per_failure = where(repair_h <= half, repair_h * slow, half * slow + restart_h)
    return clip(rate_per_hour * per_failure, 0.0, 1.0)


def optimal_checkpoint_interval_h(write_h, mtbf_h, restart_h=0.0):
    """Daly's first-order optimum ``sqrt(2 C (M + R))`` [h] (Young's ``sqrt(2 C M)`` when R = 0).
    Floats or numpy arrays (elementwise)."""
    return (2.0 * write_h * (mtbf_h + restart_h)) ** 0.5


def lost_fraction(interval_h, write_h, restart_h, rate_per_hour):
    """``C / tau + lambda (tau / 2 + R)``, capped to [0, 1] (module docstring); an interval of 0
    (free checkpoints, checkpointing continuously) loses only the restarts, or everything when a
    checkpoint costs time. Floats or numpy arrays of draws (elementwise)."""
    positive = interval_h > 0
    lost = where(positive, write_h / where(positive, interval_h, 1.0) + rate_per_hour * (interval_h / 2.0 + restart_h),
                 where(write_h > 0, 1.0, rate_per_hour * restart_h))
    return clip(lost, 0.0, 1.0)


@dataclass(frozen=True)
class Goodput:
    """One job's interruptions and what they cost (floats, or arrays of draws)."""

    interruptions_per_day: float
    mtbf_h: float
    checkpoint_interval_min: float
    lost_fraction: float

    @property
    def goodput(self):
        return 1.0 - self.lost_fraction


def job_goodput(counts: dict[str, float], rates_per_hour: dict, write_min, restart_min,
                interval_min: float | None = None, slow_rate_per_hour=0.0, slow_repair_h=0.0,
                slowdown=0.0) -> Goodput:
    """Goodput of a job of ``counts`` parts (module docstring): the configured interval or Daly's
    optimum, then the waste ``C / tau + lambda (tau / 2 + R)`` capped to [0, 1]. Nothing failing
    loses nothing (no checkpoints needed); free checkpoints (C = 0) lose only the restarts.

    ``slow_rate_per_hour``, ``slow_repair_h`` and ``slowdown`` add :func:`degraded_lost_fraction` for
    the parts that slow the job instead of stopping it.

    Rates [1/h] and the write and restart times [min] are floats (one point: the result's fields are
    floats) or numpy arrays of draws (elementwise: the fields are arrays)."""
    rate = interruption_rate_per_hour(counts, rates_per_hour)
    write_h, restart_h = write_min / MINUTES_PER_HOUR, restart_min / MINUTES_PER_HOUR
    fails = rate > 0
    mtbf = divide(1.0, rate)
    if interval_min is not None:
        interval_h = interval_min / MINUTES_PER_HOUR + 0.0 * rate
    else:  # nothing fails: never checkpoint; free checkpoints: checkpoint continuously
        daly = optimal_checkpoint_interval_h(write_h, divide(1.0, rate, 0.0), restart_h)  # finite where it is used
        interval_h = where(fails, where(write_h > 0, daly, 0.0), math.inf)
    never = interval_h == math.inf  # no checkpoints and nothing lost (the formula is not evaluated at infinity)
    lost = where(never, 0.0, lost_fraction(where(never, 1.0, interval_h), write_h, restart_h, rate))
    slowed = degraded_lost_fraction(slow_rate_per_hour, slow_repair_h, where(never, math.inf, interval_h), restart_h,
                                    slowdown)
    lost = clip(lost + slowed, 0.0, 1.0)
    return Goodput(interruptions_per_day=rate * 24.0, mtbf_h=mtbf, checkpoint_interval_min=interval_h * MINUTES_PER_HOUR,
                   lost_fraction=lost)
