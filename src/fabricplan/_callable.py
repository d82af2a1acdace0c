"""Packages that double as functions of the public API (``fabricplan.cost(spec)``).

``fabricplan.cost`` and ``fabricplan.design`` are packages (``import fabricplan.cost.tco`` works)
and, for notebook users, also the API functions of the same name. A package's module object gets a
class whose ``__call__`` runs the API function, and the function's signature and docstring, so
``help(fabricplan.cost)`` and ``inspect.signature`` show the function's typed parameters.
"""

from __future__ import annotations

import inspect
import sys
import types
from collections.abc import Callable
from typing import Any


def make_callable(module_name: str, function: Callable[..., Any]) -> None:
    """Make the already imported module ``module_name`` callable as ``function``."""
    module = sys.modules[module_name]

    class CallablePackage(types.ModuleType):
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            return function(*args, **kwargs)

    CallablePackage.__name__ = f"{module_name.rsplit('.', 1)[-1]}_package"
    CallablePackage.__call__.__doc__ = function.__doc__
    module.__class__ = CallablePackage
    module.__signature__ = inspect.signature(function)  # type: ignore[attr-defined]
