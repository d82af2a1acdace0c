"""The fluid model's rules one at a time, and a new sender rule through the registry."""

from __future__ import annotations

import numpy as np
import pytest

from fabricplan.catalog import load_catalog
from fabricplan.errors import InputError
from fabricplan.sim.fluid import fluid_config, simulate_fluid
from fabricplan.sim.fluid_senders import SENDER_RULES, SenderRule, nic_limited, register_sender_rule
from fabricplan.sim.fluid_state import new_state
from fabricplan.sim.fluid_switch import pfc_xoff_xon, serve
from fabricplan.sim.network import Flows, Network
from fabricplan.sim.scenarios import run_scenarios

CATALOG = load_catalog()


def _two_to_one(**config):
    """Hosts 0 and 1 send to host 2 through switch 3 (links 0: h0->s, 1: h1->s, 2: s->h2)."""
    net = Network(link_src=[0, 1, 3], link_dst=[3, 3, 2], capacity_gbps=[100.0] * 3, latency_us=[1.0] * 3,
                  buffer_bytes=[375e3] * 3, node_kind=[0, 0, 0, 1], node_tier=[0, 0, 0, 1], n_hosts=3)
    flows = Flows(src=[0, 1], dst=[2, 2], size_bytes=[1e6, 1e6], start_us=[0.0, 0.0], path_ptr=[0, 2, 4],
                  path_links=[0, 2, 1, 2])
    return net, flows, fluid_config(CATALOG, **config)


def test_pfc_rule_alone_sends_xoff_at_the_threshold_and_xon_below_the_resume_point():
    net, flows, cfg = _two_to_one(cc="none", pfc=True, step_us=1.0, pfc_xoff_bytes=10e3, pfc_xon_bytes=5e3)
    s = new_state(net, flows, cfg, None, started=0.0)
    h0_up, h1_up, to_h2 = (int(np.flatnonzero(s.used_q == link)[0]) for link in (0, 1, 2))
    entry_at_switch = 1                # flow 0's bytes at the switch: they arrived on link h0->s

    def step(at_switch_bytes):
        s.q[:] = 0.0
        s.q[entry_at_switch] = at_switch_bytes
        pfc_xoff_xon(s)
        s.t_step += 1
        s.slot = s.t_step % s.D
        return bool(s.pause_gen[h0_up])

    assert [step(b) for b in (9e3, 10e3, 7e3, 5e3, 6e3)] == [False, True, True, False, False]  # XOFF, hold, XON
    assert not s.pause_gen[h1_up] and not s.pause_gen[to_h2]     # nothing arrived on h1's link; hosts never pause
    assert s.pause_us[h0_up] == 2 * cfg.step_us                  # paused for two steps
    # the upstream queue sees the pause one propagation delay (d0 steps) after it was sent
    s.q[:] = 0.0
    s.q[0] = 5e3                                                  # flow 0 waits in h0's NIC
    s.pause_hist[:] = False
    s.pause_hist[(s.slot - s.d0) % s.D, h0_up] = True
    s.qsum = np.bincount(s.e_q, weights=s.q, minlength=s.Q)
    with np.errstate(invalid="ignore"):  # idle queues: 0/0, as simulate_fluid allows
        serve(s)
    assert s.serve[h0_up] == 0.0 and s.qpost[h0_up] == 5e3


class HalfLineRate(SenderRule):
    """A sender the loop has never heard of: half its line rate, counting the hooks' calls."""

    def init(self, s):
        self.calls = {"init": 1, "budget": 0, "react": 0}
        RUNS.append(self)

    def budget(self, s):
        self.calls["budget"] += 1
        return nic_limited(s, 0.5 * s.line_Bps * s.dt)

    def react(self, s):
        self.calls["react"] += 1


RUNS: list[HalfLineRate] = []


@pytest.fixture
def registry():
    saved = dict(SENDER_RULES)
    yield SENDER_RULES
    SENDER_RULES.clear()
    SENDER_RULES.update(saved)


def test_a_registered_sender_rule_runs_through_simulate_fluid(registry):
    with pytest.raises(InputError, match="half-line"):
        fluid_config(CATALOG, cc="half-line")
    register_sender_rule("half-line", HalfLineRate)
    net, _, _ = _two_to_one()
    one = Flows(src=[0], dst=[2], size_bytes=[1e6], start_us=[0.0], path_ptr=[0, 2], path_links=[0, 2])
    half = simulate_fluid(net, one, fluid_config(CATALOG, cc="half-line", pfc=False, step_us=1.0))
    full = simulate_fluid(net, one, fluid_config(CATALOG, cc="none", pfc=False, step_us=1.0))
    rule = RUNS[-1]
    ran = half.steps + 1                # steps counts from 0 and the loop stops in the step that finished
    assert rule.calls == {"init": 1, "budget": ran, "react": ran}
    assert half.done.all() and full.done.all()
    # the flow's bytes take twice as long to send at half the rate (the 2 us of propagation do not)
    assert half.finish_us[0] - 2.0 == pytest.approx(2 * (full.finish_us[0] - 2.0), rel=0.02)
    assert not half.config.lossless and half.config.uses_pfc is False
    # a registered mode is a --cc like the built-in ones (scenarios, PFC, the document)
    doc = run_scenarios("incast", k=4, senders=2, cc="half-line", pfc="on", flow_size="256KB", catalog=CATALOG).document()
    assert doc["completed"] == 2 and doc["settings"]["cc"] == "half-line" and doc["lossless"]


def test_register_sender_rule_checks_what_it_is_given(registry):
    with pytest.raises(ValueError, match="already registered"):
        register_sender_rule("dcqcn", HalfLineRate)
    with pytest.raises(TypeError):
        register_sender_rule("not-a-rule", object)

    class Odd(SenderRule):
        link = "token-ring"

    with pytest.raises(ValueError, match="link"):
        register_sender_rule("odd", Odd)
    register_sender_rule("dcqcn", HalfLineRate, replace=True)
    assert SENDER_RULES["dcqcn"] is HalfLineRate
