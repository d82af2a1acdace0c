"""The compiled TCP step loop (sim/fluid_tcp_kernel.py) gives the numpy loop's results bit for bit."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from fabricplan.catalog import load_catalog
from fabricplan.sim import fluid_tcp_kernel
from fabricplan.sim.fluid import simulate_fluid
from fabricplan.sim.scenarios import run_scenarios

CATALOG = load_catalog()

pytest.importorskip("numba")

FIELDS = ("finish_us", "fct_us", "delivered_bytes", "injected_bytes", "dropped_bytes", "timeouts", "max_queue_bytes",
          "max_ingress_bytes")
SCALARS = ("steps", "sim_time_us", "queued_bytes_end", "in_flight_bytes_end", "min_queue_bytes", "min_rate_gbps")


def _both(monkeypatch, **scenario):
    base = run_scenarios(cc="tcp", pfc="off", catalog=CATALOG, **scenario).fluid
    calls = []
    compiled = fluid_tcp_kernel.kernel()

    def spy(*args):
        calls.append(args[0])
        return compiled(*args)

    monkeypatch.setattr(fluid_tcp_kernel, "kernel", lambda: spy)
    fast = simulate_fluid(base.network, base.flows, replace(base.config, accelerate=True), base.priority)
    slow = simulate_fluid(base.network, base.flows, replace(base.config, accelerate=False), base.priority)
    return fast, slow, calls


@pytest.mark.parametrize("scenario", [
    # incast: drop-tail losses and fast retransmits
    dict(scenario="incast", k=8, tiers=2, senders=12, flow_size="1MB"),
    # a permutation: shared uplinks, losses without timeouts
    dict(scenario="permutation", k=8, tiers=2, flow_size="1MB"),
    # long flows stopped by the time limit
    dict(scenario="incast", k=16, tiers=2, senders=64, flow_size="1GB", max_time_ms=1.0),
])
def test_compiled_tcp_loop_matches_numpy_bit_for_bit(monkeypatch, scenario):
    fast, slow, calls = _both(monkeypatch, **scenario)
    assert calls, "the compiled loop was not used"
    assert slow.dropped_bytes.sum() > 0                       # the drop-tail path is exercised
    for name in FIELDS:
        np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name), err_msg=name)
    for name in SCALARS:
        assert getattr(fast, name) == getattr(slow, name), name


def test_incast_with_timeouts_runs_through_the_compiled_loop(monkeypatch):
    """24-to-1 on k=16 (past the collapse point): retransmission timeouts, then idle skips to the RTO."""
    fast, slow, calls = _both(monkeypatch, scenario="incast", k=16, tiers=2, senders=24, flow_size="1MB",
                              max_time_ms=500.0)
    assert calls
    assert slow.timeouts.sum() >= 1 and slow.done.all()
    for name in FIELDS:
        np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name), err_msg=name)
    assert fast.steps == slow.steps


def test_numpy_loop_when_numba_is_missing(monkeypatch):
    base = run_scenarios(scenario="incast", k=8, tiers=2, senders=4, cc="tcp", pfc="off", catalog=CATALOG).fluid
    monkeypatch.setattr(fluid_tcp_kernel, "available", lambda: False)
    monkeypatch.setattr(fluid_tcp_kernel, "kernel", lambda: pytest.fail("compiled loop used"))
    result = simulate_fluid(base.network, base.flows, base.config, base.priority)
    np.testing.assert_array_equal(result.finish_us, base.finish_us)
