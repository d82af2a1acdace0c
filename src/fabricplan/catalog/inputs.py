"""The numbers a model chain reads, resolved once: at a point (floats) or as seeded draws (arrays).

Every step of the chain (:mod:`fabricplan.plan.chain`: cost, goodput, outcome) takes an
:class:`Inputs` and asks it for each ranged number it uses by a key that names what the number
stands for (``price:<catalog id>``, ``power:<id>``, ``param:<parameter id>``,
``costs:<field>:<fabric>``, ``fabric:<id>:<field>``) together with the value the deterministic run
uses (the spec's override or the catalog's value at the price point, times any what-if factor):

* :meth:`Inputs.point` (no draws) hands that value back unchanged, so the point estimate is the
  plain model;
* :meth:`Inputs.drawn` hands back ``value x draw / catalog value`` as a numpy array of ``n`` draws
  (the draw's ratio to the catalog value, so a spec override or a what-if factor keeps the range's
  shape), and the value itself for a number with no range (a spec override, a zero-width range).

The same functions then run on one point or on ``n`` draws (as pvlib's models take scalars or
arrays): no formula is written twice for the Monte Carlo.

Draws: every ranged catalog number (a :class:`~fabricplan.catalog.Range` with ``low``/``default``/
``high``, or a number with a ``spread``: :mod:`fabricplan.catalog.spread`) is drawn from the
triangular distribution ``T(low, mode, high)`` whose mode is the value at the price point (Law &
Kelton, *Simulation Modeling and Analysis*, §6.11: the triangular distribution for a quantity known
by a minimum, most likely value and maximum). A zero-width range draws its value every time, so a
Monte Carlo over zero-width ranges is the deterministic result. Draws are seeded per key from
``(seed, crc32(key))``: the same part in two fabrics, or at two cluster sizes, gets the same draws
(common random numbers), and the draws do not depend on the order in which they are asked for.

:data:`Num` is the type of a number a chain result carries: a float for a point, an array of draws
otherwise.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import WrapSerializer, WrapValidator

from fabricplan.catalog.models import PricePoint, Range
from fabricplan.catalog.spread import field_bounds

if TYPE_CHECKING:  # numpy loads inside the functions that draw (start-up stays fast)
    import numpy as np


def is_array(value: object) -> bool:
    """True for a numpy array (of draws); floats and ints are points."""
    return type(value).__module__ == "numpy" and hasattr(value, "shape") and getattr(value, "ndim", 0) > 0


def _keep_arrays(value: Any, handler):
    if type(value) is float:  # the point path: already a float (the common case, kept cheap)
        return value
    return value if is_array(value) else handler(value)


def _list_arrays(value: Any, handler):
    if type(value) is float:
        return handler(value)
    return value.tolist() if is_array(value) else handler(value)


#: A number of a chain result: a float (point estimate) or a numpy array of draws.
Num = Annotated[float, WrapValidator(_keep_arrays), WrapSerializer(_list_arrays)]


def maximum(a, b):
    """``max(a, b)`` for floats, elementwise for arrays of draws."""
    if is_array(a) or is_array(b):
        import numpy as np

        return np.maximum(a, b)
    return max(a, b)


def minimum(a, b):
    """``min(a, b)`` for floats, elementwise for arrays of draws."""
    if is_array(a) or is_array(b):
        import numpy as np

        return np.minimum(a, b)
    return min(a, b)


def where(condition, if_true, otherwise):
    """``if_true if condition else otherwise`` for floats, ``numpy.where`` for arrays of draws (both
    branches are evaluated: keep them finite or infinite, never raising)."""
    if is_array(condition) or is_array(if_true) or is_array(otherwise):
        import numpy as np

        return np.where(condition, if_true, otherwise)
    return if_true if condition else otherwise


def clip(value, low: float, high: float):
    """``value`` limited to [low, high] (NaN stays NaN), for floats or arrays of draws."""
    if is_array(value):
        import numpy as np

        return np.clip(value, low, high)
    return value if value != value else min(max(value, low), high)


def divide(numerator, denominator, otherwise: float = float("inf")):
    """``numerator / denominator`` where the denominator is positive, else ``otherwise`` (floats or
    arrays of draws, elementwise; an ``otherwise`` of None is NaN in an array)."""
    if not (is_array(numerator) or is_array(denominator)):
        return numerator / denominator if denominator > 0 else otherwise
    import numpy as np

    numerator, denominator = np.broadcast_arrays(np.asarray(numerator, dtype=float),
                                                 np.asarray(denominator, dtype=float))
    positive = denominator > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(positive, numerator / np.where(positive, denominator, 1.0),
                        np.nan if otherwise is None else otherwise)


@dataclass
class Draws:
    """``n`` seeded draws per named ranged quantity (module docstring); ``n = 0`` is not allowed."""

    n: int
    seed: int = 0
    _cache: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    ranged: dict[str, tuple[float, float, float]] = field(default_factory=dict, repr=False)

    def of(self, key: str, low: float, mode: float, high: float) -> np.ndarray:
        """Draws of ``key`` from ``T(low, mode, high)`` (the constant ``mode`` when low == high)."""
        import numpy as np

        cached = self._cache.get(key)
        if cached is not None:
            return cached
        low, high = min(low, mode), max(high, mode)
        if high <= low:
            values = np.full(self.n, float(mode))
        else:
            rng = np.random.default_rng([self.seed, zlib.crc32(key.encode())])
            values = rng.triangular(low, mode, high, self.n)
            self.ranged[key] = (low, mode, high)
        self._cache[key] = values
        return values

    def of_range(self, key: str, value: Range, point: PricePoint = "default") -> np.ndarray:
        """Draws of a catalog range around its value at ``point`` (low/default/high)."""
        return self.of(key, value.at("low"), value.at(point), value.at("high"))

    def of_field(self, key: str, block, name: str) -> np.ndarray:
        """Draws of the number ``name`` of a catalog block from its ``spread`` (:func:`field_bounds`)."""
        low, value, high = field_bounds(block, name)
        return self.of(key, low, value, high)


@dataclass(frozen=True)
class Inputs:
    """Where a chain step gets its ranged numbers (module docstring): ``draws`` None is the point
    estimate at ``price_point``."""

    price_point: PricePoint = "default"
    draws: Draws | None = None

    @classmethod
    def point(cls, price_point: PricePoint = "default") -> Inputs:
        return cls(price_point=price_point)

    @classmethod
    def drawn(cls, draws: Draws, price_point: PricePoint = "default") -> Inputs:
        return cls(price_point=price_point, draws=draws)

    @property
    def n(self) -> int | None:
        """Draws per number, None for a point."""
        return None if self.draws is None else self.draws.n

    def of_range(self, key: str, value: Range | None, used: float, point: PricePoint | None = None):
        """The number ``used`` (the deterministic run's value) of the catalog range ``value``: at a
        point ``used``; drawn, ``used x draw / value at the price point`` (``used`` when the range
        is None, i.e. fixed by the spec, or its value is 0). ``point`` overrides the price point for
        numbers that do not follow it (failure rates and times are always at their default)."""
        if self.draws is None or value is None:
            return self._broadcast(used)
        point = self.price_point if point is None else point
        base = value.at(point)
        if base == 0:
            return self._broadcast(used)
        return used * (self.draws.of_range(key, value, point) / base)

    def of_field(self, key: str, block, name: str, used: float | None = None):
        """The number ``name`` of a catalog block (its ``spread`` gives the range), scaled to
        ``used`` (default: the block's own value) as :meth:`of_range` does."""
        value = float(getattr(block, name))
        used = value if used is None else used
        if self.draws is None:
            return used
        if value == 0:
            return self._broadcast(used)
        return used * (self.draws.of_field(key, block, name) / value)

    def _broadcast(self, value: float):
        if self.draws is None:
            return value
        import numpy as np

        return np.full(self.draws.n, float(value))
