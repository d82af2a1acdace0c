"""Packages that double as functions of the public API (``fabricplan.cost(spec)``).

``fabricplan.cost`` and ``fabricplan.design`` are packages (``import fabricplan.cost.tco`` works)
and, for notebook users, also the API functions of the same name in :mod:`fabricplan.api`. The
package's module object gets a class whose ``__call__`` runs that function and whose
``__signature__`` is the function's, so ``help`` and ``inspect.signature`` show its typed
parameters. The function is looked up by name when first needed: the package does not import the
API (which sits above it), so imports keep one direction.
"""

from __future__ import annotations

import importlib
import inspect
import sys
import types
from typing import Any

API_MODULE = "fabricplan.api"


def make_callable(module_name: str, function_name: str) -> None:
    """Make the already imported module ``module_name`` callable as ``fabricplan.api.<function_name>``."""
    module = sys.modules[module_name]

    def function() -> Any:
        return getattr(importlib.import_module(API_MODULE), function_name)

    class CallablePackage(types.ModuleType):
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            return function()(*args, **kwargs)

        @property
        def __signature__(self) -> inspect.Signature:
            return inspect.signature(function())

    CallablePackage.__name__ = f"{function_name}_package"
    CallablePackage.__call__.__doc__ = f"Call :func:`{API_MODULE}.{function_name}` (see its docstring)."
    module.__class__ = CallablePackage
