"""Every number of the bundled catalog carries a range (catalog/spread.py, models.Spread)."""

from __future__ import annotations

import pytest

from fabricplan.catalog import load_catalog
from fabricplan.catalog.models import Spread
from fabricplan.catalog.spread import bounds, numbers


def test_every_bundled_number_has_a_range_a_confidence_or_an_exact_mark():
    found = list(numbers(load_catalog()))
    assert len(found) > 3000  # the walk reaches entries and all three documents
    sections = {number.path.split(".")[0] for number in found}
    assert {"switches", "nics", "optics", "gpus", "servers", "fabrics", "parameters", "models",
            "perf_defaults", "nccl_tuner", "ops_defaults"} <= sections
    uncovered = [number.path for number in found if number.kind == "none"]
    assert uncovered == []
    outside = [number for number in found if not number.low <= number.value <= number.high]
    assert outside == []


def test_the_walk_flags_an_uncovered_number_and_a_value_outside_its_range():
    catalog = load_catalog()
    path = "perf_defaults.parameters.host_link_length_m"
    item = catalog.get_path(path)
    bare = item.model_copy(update={"spread": None})
    shifted = item.model_copy(update={"spread": Spread(ranges={"value": (10.0, 20.0)}, reason="test range")})
    for replaced, kind in ((bare, "none"), (shifted, "source")):
        parameters = dict(catalog.perf_defaults.parameters, host_link_length_m=replaced)
        documents = dict(catalog.documents, perf_defaults=catalog.perf_defaults.model_copy(update={"parameters": parameters}))
        changed = type(catalog)(entries=catalog.entries, origins=catalog.origins, documents=documents)
        number = next(n for n in numbers(changed) if n.path == path + ".value")
        assert number.kind == kind
    assert not number.low <= number.value <= number.high  # 3 m is outside [10, 20]: the first test would fail


def test_bounds_of_a_sourced_a_confident_an_exact_and_a_range_number():
    catalog = load_catalog()
    assert bounds(catalog, "fabrics.infiniband-ndr.effective_bandwidth_gbytes_per_s") == (46.0, 47.0, 48.0)
    low, value, high = bounds(catalog, "switches.sw_eth_th5.power_w")
    assert value == 913.0 and low == pytest.approx(913 * 0.7) and high == pytest.approx(913 * 1.3)
    assert bounds(catalog, "switches.sw_eth_th5.capacity_tbps") == (51.2, 51.2, 51.2)
    price = catalog.switch("sw_ib_qm9700").price_usd
    assert bounds(catalog, "switches.sw_ib_qm9700.price_usd.default") == (price.low, price.default, price.high)


@pytest.mark.parametrize("bad", [{"ranges": {"value": (2.0, 1.0)}, "reason": "reversed"},
                                 {"relative": 1.5, "reason": "wider than the value"},
                                 {"exact": True, "reason": ""}])
def test_a_bad_spread_is_rejected(bad):
    with pytest.raises(ValueError):
        Spread(**bad)
