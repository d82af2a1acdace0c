"""DCQCN analysis against the CoNEXT'16 paper's numbers (Zhu et al., 'ECN or Delay').

Reference curves are the phase-margin data files behind the paper's figure 9 (jitupadhye-zz/rdma,
conext2016/figures/pm_*.txt) and the fixed-point table of shared/reference/dcqcn.md section 4.3.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from fabricplan.catalog import load_catalog
from fabricplan.errors import InputError
from fabricplan.sim.dcqcn import analyse, convergence_bound, dcqcn_params, fixed_point, phase_margin

CATALOG = load_catalog()

DEFAULT = dcqcn_params(catalog=CATALOG)

# (link Gb/s, delay us, flows) -> published phase margin (deg); file name in the comment.
PUBLISHED_PM = [
    (40, 1, 2, 26.257), (40, 1, 4, 13.124), (40, 1, 10, 4.5296), (40, 1, 64, 43.193),   # pm_rai40_delay1
    (40, 50, 2, 8.2626), (40, 50, 10, -6.5844), (40, 50, 64, 29.548),                    # pm_rai40_delay50
    (40, 100, 2, -10.099), (40, 100, 10, -17.925), (40, 100, 36, 1.2794),                # pm_rai40_delay100
    (40, 100, 100, 23.142),
    (100, 100, 2, -57.292), (100, 100, 24, -33.662), (100, 100, 100, -18.34),            # pm_100gbps_delay100
]


@pytest.mark.parametrize("link, delay, flows, published", PUBLISHED_PM)
def test_phase_margin_matches_the_published_curves(link, delay, flows, published):
    # tolerance 0.5 deg: the curves were computed with MATLAB's `margin` on the same linearisation
    pm, crossover = phase_margin(link, flows, delay, DEFAULT)
    assert pm == pytest.approx(published, abs=0.5)
    assert crossover > 0


def test_phase_margin_with_small_rai_and_large_kmax_matches_figure_9c():
    # pm_rai10_delay50_kmax1000.txt: N=2 62.877, N=10 53.724, N=12 20.392, N=64 38.188 (40G)
    params = DEFAULT.with_values(rai_mbps=10, kmax_kb=1000)
    for flows, published in ((2, 62.877), (10, 53.724), (12, 20.392), (64, 38.188)):
        assert phase_margin(40, flows, 50, params)[0] == pytest.approx(published, abs=0.5)


def test_stability_moves_as_the_paper_reports():
    # CoNEXT'16 section 4.2: more delay -> less margin; smaller R_AI and larger Kmax -> more margin;
    # non-monotonic in N with a dip near N = 10 at large delay, then more stable with many flows.
    n10 = [phase_margin(40, 10, d, DEFAULT)[0] for d in (1, 25, 50, 85, 100)]
    assert n10 == sorted(n10, reverse=True)
    assert phase_margin(40, 10, 85, DEFAULT.with_values(rai_mbps=10))[0] > phase_margin(40, 10, 85, DEFAULT)[0]
    assert phase_margin(40, 10, 85, DEFAULT.with_values(kmax_kb=1000))[0] > phase_margin(40, 10, 85, DEFAULT)[0]
    curve = [phase_margin(40, n, 100, DEFAULT)[0] for n in (2, 8, 30, 64)]
    assert curve[1] < curve[0] and curve[1] < curve[2] < curve[3]
    # the paper's fluid runs: 85 us is unstable for 10 flows, 4 us is stable
    assert not analyse(40, 10, 85, catalog=CATALOG).stable
    assert analyse(40, 10, 4, catalog=CATALOG).stable


def test_100g_has_less_margin_than_40g():
    # CoNEXT'16 (100G paragraph): at 50-100 us the phase margin is much lower than at 40G
    for flows in (2, 10, 64):
        assert phase_margin(100, flows, 100, DEFAULT)[0] < phase_margin(40, flows, 100, DEFAULT)[0] - 10


@pytest.mark.parametrize("link, flows, p_star, queue_kb, alpha", [
    (40, 2, 9.25e-4, 23.0, 0.119), (40, 10, 7.85e-3, 158.0, 0.195),
    (100, 2, 2.76e-4, 10.4, 0.091), (100, 10, 2.32e-3, 50.2, 0.148)])
def test_taylor_fixed_point_matches_the_reference_table(link, flows, p_star, queue_kb, alpha):
    # dcqcn.md table, 3 significant figures -> 1 % tolerance
    fp = fixed_point(link, flows, DEFAULT)
    assert fp.p_star_taylor == pytest.approx(p_star, rel=0.01)
    assert fp.queue_taylor_bytes / 1e3 == pytest.approx(queue_kb, rel=0.01)
    assert fp.rate_gbps == pytest.approx(link / flows)
    assert 1 - (1 - fp.p_star_taylor) ** (55e-6 * link * 1e9 / 8e3 / flows) == pytest.approx(alpha, rel=0.02)


def test_exact_fixed_point_solves_the_papers_equation_and_taylor_overestimates():
    # The exact root of eq. (p_fixed) sits below the cube-root Taylor form (the O(p^4) terms and the
    # (1-p)^(F T R_C) factor the Taylor form drops); within 35 % at the default parameters.
    for link, flows in ((40, 2), (40, 10), (100, 2), (100, 10)):
        fp = fixed_point(link, flows, DEFAULT)
        assert fp.p_star < fp.p_star_taylor < 1.35 * fp.p_star
        assert fp.in_marking_range
        assert fp.target_rate_gbps > fp.rate_gbps
    assert not fixed_point(40, 64, DEFAULT).in_marking_range  # dcqcn.md: N=64 at 40G is beyond Kmax


def test_convergence_bound_within_100ms_and_shrinks_with_flows():
    # CoNEXT'16 section 4.3: "with default parameter settings, DCQCN converges within 100ms, and the
    # convergence time decreases quickly as the number of flows increases"; R_AI dominates.
    bounds = [convergence_bound(40, n, DEFAULT, 0.1).bound_ms for n in (2, 4, 10, 64)]
    assert all(0 < b <= 100 for b in bounds)
    assert bounds == sorted(bounds, reverse=True)
    slow = convergence_bound(40, 2, DEFAULT.with_values(rai_mbps=10), 0.1).bound_ms
    assert slow > 1.5 * bounds[0]


def test_cli_json_keys(cli):
    result = cli("dcqcn", "--flows", "10", "--delay-us", "85", "--link", "40G", "--json")
    assert result.code == 0, result.err
    doc = result.json()
    assert doc["stable"] is False
    assert doc["phase_margin_deg"] == pytest.approx(phase_margin(40, 10, 85, DEFAULT)[0])
    assert 0 < doc["convergence_bound_ms"] < 100
    assert doc["fixed_point"]["rate_gbps"] == pytest.approx(4.0)
    tuned = cli("dcqcn", "--flows", "10", "--delay-us", "85", "--link", "40G", "--rai-mbps", "10",
                "--kmax-kb", "1000", "--json").json()
    assert tuned["stable"] is True and tuned["parameters"]["kmax_kb"] == 1000


def test_cli_text(cli):
    result = cli("dcqcn", "--flows", "2", "--delay-us", "1", "--link", "100G")
    assert result.code == 0 and "stable" in result.out and "phase margin" in result.out


@pytest.mark.parametrize("flows, published_s", [(2, 0.35817), (10, 0.12137), (20, 0.074943), (50, 0.040262),
                                                 (100, 0.025873)])
def test_convergence_bound_matches_the_published_curve(flows, published_s):
    # jitupadhye-zz/rdma conext2016/figures/convergence_rai10.txt (40G, R_AI = 10 Mb/s, the other
    # parameters at their defaults): the bound in seconds against N; tolerance 5 %
    bound = convergence_bound(40, flows, DEFAULT.with_values(rai_mbps=10), 0.1).bound_ms / 1e3
    assert bound == pytest.approx(published_s, rel=0.05)


def test_long_delays_are_not_wrapped_back_to_stable(cli):
    # issue 31: 500 us reported +171 deg (stable) and 10 ms +82 deg while 200 us gave -72 deg; a pure
    # delay keeps the crossover, so the margin falls by w_c tau* (unwrapped phase)
    margins = {}
    for delay in ("200", "500", "10000"):
        doc = cli("dcqcn", "--flows", "16", "--delay-us", delay, "--json").json()
        assert doc["stable"] is False
        margins[delay] = doc
    assert margins["200"]["phase_margin_deg"] > margins["500"]["phase_margin_deg"] > margins["10000"][
        "phase_margin_deg"]
    pm0, wc = phase_margin(margins["500"]["link_gbps"], 16, 0, DEFAULT)
    assert margins["500"]["crossover_rad_s"] == pytest.approx(wc)
    assert margins["500"]["phase_margin_deg"] == pytest.approx(pm0 - math.degrees(wc * 500e-6), abs=0.01)


@settings(max_examples=examples(40), deadline=None)
@given(link=st.sampled_from([10, 25, 40, 100, 200, 400, 800]), flows=st.integers(1, 256),
       delays=st.lists(st.floats(0, 1e6, allow_nan=False), min_size=2, max_size=2, unique=True))
def test_phase_margin_falls_monotonically_with_delay(link, flows, delays):
    # any accepted delay (finite, >= 0): more delay never gives more margin, and the crossover stays put
    short, long = sorted(delays)
    try:
        pm_short, wc_short = phase_margin(link, flows, short, DEFAULT)
    except InputError:  # too many flows for the link: the model's range ends (a one-line error)
        assume(False)
    pm_long, wc_long = phase_margin(link, flows, long, DEFAULT)
    assert wc_long == pytest.approx(wc_short)
    assert pm_long <= pm_short + 1e-9
    if wc_short > 0:
        assert pm_short - pm_long == pytest.approx(math.degrees(wc_short * (long - short) * 1e-6), rel=1e-6, abs=1e-6)


def test_too_many_flows_for_the_link_is_one_line(cli):
    # the Taylor fixed point's marking probability reaches 1 (95 flows on 10G): once a math domain error
    result = cli("dcqcn", "--flows", "95", "--delay-us", "1", "--link", "10G")
    assert result.code == 2 and result.out == ""
    assert len(result.err.strip().splitlines()) == 1 and "--flows" in result.err
