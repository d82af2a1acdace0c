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
