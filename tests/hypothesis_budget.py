"""Example budgets of the property tests under the active hypothesis profile (tests/conftest.py).

A plain module, so that test files never import a conftest by name.
"""

from __future__ import annotations

from hypothesis import settings

#: max_examples of hypothesis's own default profile; the `ci` profile keeps it.
_BASE_EXAMPLES = 100


def examples(n: int) -> int:
    """``n`` under the `ci` profile; scaled up with the profile's max_examples under `explore`
    (2,000 -> 20 x n)."""
    scale = settings.default.max_examples / _BASE_EXAMPLES
    return max(n, int(n * scale))
