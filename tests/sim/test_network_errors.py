"""Errors of the simulator's fat tree name the flag the user gave (issue 31: blame the right place)."""

from __future__ import annotations

import pytest

from fabricplan.catalog import default_catalog
from fabricplan.errors import InputError
from fabricplan.sim.network import fat_tree

CATALOG = default_catalog()


@pytest.mark.parametrize(("kwargs", "where"), [
    ({"k": 100_000}, "--k"),                       # too big a tree: the radix, not --hosts
    ({"k": 16, "hosts": 10_000}, "--hosts"),
    ({"k": 16, "link_gbps": 0}, "--link"),
    ({"k": 16, "link_latency_us": -1}, "--link-latency-us"),
    ({"k": 15}, "--k"),
])
def test_a_bad_fat_tree_names_its_flag(kwargs, where):
    with pytest.raises(InputError) as err:
        fat_tree(catalog=CATALOG, **kwargs)
    assert err.value.location == where


def test_a_state_over_the_memory_budget_is_refused_before_allocating():
    """The ring of in-flight bytes grows with propagation / step; the estimate is checked first."""
    from fabricplan.sim.fluid_state import MAX_STATE_BYTES, _check_memory, state_bytes

    assert state_bytes(10, 400, 30, 1_000_001) > MAX_STATE_BYTES > state_bytes(10, 400, 30, 1_001)
    _check_memory(10, 400, 30, 1_001, 1.0)  # within the budget: nothing raised
    with pytest.raises(InputError) as rows:
        _check_memory(10, 40, 30, 10_000_001, 0.0001)
    assert rows.value.location == "--step-us, --link-latency-us" and "budget" in rows.value.message
    with pytest.raises(InputError) as flows:
        _check_memory(5_000_000, 200_000_000, 1_000, 2, 1.0)
    assert flows.value.location == "--hosts, --senders, --k"
