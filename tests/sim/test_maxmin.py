"""Max-min fairness by progressive filling: textbook cases and properties on random instances."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from fabricplan.sim.maxmin import RELATIVE_TOLERANCE, completion_times, max_min_rates


def test_textbook_example():
    # Bertsekas & Gallager section 6.5.2 style: link A (cap 1) carries flows 0, 1, 2; link B (cap 2)
    # carries flows 2 and 3. A saturates first at 1/3 each; flow 3 then takes B's remaining 5/3.
    rate = max_min_rates(4, [0, 1, 2, 2, 3], [0, 0, 0, 1, 1], [1.0, 2.0])
    assert rate == pytest.approx([1 / 3, 1 / 3, 1 / 3, 5 / 3])


def test_weights_split_a_flow_over_links():
    # flow 0 sprayed half/half over links 0 and 1 (cap 10 each) competes with flow 1 on link 0 only:
    # link 0: 0.5 r0 + r1 <= 10, link 1: 0.5 r0 <= 10 -> r0 = r1 = 20/3
    rate = max_min_rates(2, [0, 0, 1], [0, 1, 0], [10.0, 10.0], entry_weight=[0.5, 0.5, 1.0])
    assert rate == pytest.approx([20 / 3, 20 / 3])


def test_demand_caps_a_flow_and_inactive_flows_get_nothing():
    rate = max_min_rates(3, [0, 1, 2], [0, 0, 0], [10.0], demand=np.array([1.0, 100.0, 100.0]),
                         active=np.array([True, True, False]))
    assert rate == pytest.approx([1.0, 9.0, 0.0])


def test_completion_times_share_then_speed_up():
    # two 1,250-byte flows on a 10 Gb/s link, one also on a 3 Gb/s link: 7 and 3 Gb/s, then the
    # second keeps 3 Gb/s (its own bottleneck) after the first finishes at 1250 / 875 us
    fct = completion_times([1250.0, 1250.0], [0, 1, 1], [0, 0, 1], [10.0, 3.0])
    assert fct == pytest.approx([1250 / 875, 1250 / 375])


def test_equal_flows_on_one_link_finish_together():
    fct = completion_times(np.full(8, 1e6), np.arange(8), np.zeros(8, int), [100.0])
    assert fct == pytest.approx(np.full(8, 8 * 1e6 / (100 * 125)))


def test_late_start_and_zero_size():
    fct = completion_times([1250.0, 1250.0, 0.0], [0, 1, 2], [0, 0, 0], [10.0], start_us=[0.0, 10.0, 3.0])
    assert fct == pytest.approx([1.0, 11.0, 3.0])


@st.composite
def instances(draw):
    n_links = draw(st.integers(1, 8))
    n_flows = draw(st.integers(1, 12))
    capacity = np.array(draw(st.lists(st.floats(0.5, 400.0), min_size=n_links, max_size=n_links)))
    flows, links, weights = [], [], []
    for f in range(n_flows):
        used = draw(st.sets(st.integers(0, n_links - 1), min_size=1, max_size=n_links))
        for link in sorted(used):
            flows.append(f)
            links.append(link)
            weights.append(draw(st.sampled_from([1.0, 0.5, 0.25, 1.0 / 3])))
    return n_flows, np.array(flows), np.array(links), capacity, np.array(weights)


@settings(max_examples=examples(200))
@given(instances())
def test_max_min_properties(instance):
    n_flows, flows, links, capacity, weights = instance
    rate = max_min_rates(n_flows, flows, links, capacity, weights)
    tol = 1e-6
    assert np.all(rate >= 0)
    load = np.bincount(links, weights=weights * rate[flows], minlength=len(capacity))
    assert np.all(load <= capacity * (1 + tol))  # no link over capacity
    saturated = load >= capacity * (1 - tol)
    for f in range(n_flows):
        own = links[flows == f]
        # bottleneck: a saturated link where no other flow gets more than f
        assert any(saturated[link] and rate[f] >= rate[flows[links == link]].max() * (1 - tol) for link in own), f


@settings(max_examples=examples(100))
@given(instances(), st.lists(st.floats(1.0, 1e6), min_size=12, max_size=12))
def test_completion_times_are_finite_and_no_faster_than_alone(instance, sizes):
    n_flows, flows, links, capacity, weights = instance
    size = np.array(sizes[:n_flows])
    fct = completion_times(size, flows, links, capacity, weights)
    assert np.all(np.isfinite(fct)) and np.all(fct > 0)
    alone = np.array([size[f] / (125.0 * min(capacity[k] / w for k, w in zip(links[flows == f], weights[flows == f])))
                      for f in range(n_flows)])
    assert np.all(fct >= alone * (1 - 1e-6))  # sharing never speeds a flow up
    assert RELATIVE_TOLERANCE < 1e-6
