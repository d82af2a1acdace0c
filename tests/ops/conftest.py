"""Pytest fixtures for the ops tests (helpers live in ops_fixtures.py)."""

from __future__ import annotations

import pytest
from ops_fixtures import setup_args


@pytest.fixture
def good_args() -> list[str]:
    return setup_args()
