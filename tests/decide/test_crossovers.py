"""Crossovers mean something: only clear hand-overs count, and curve points run the whole job mix."""

from __future__ import annotations

from fabricplan.catalog import load_catalog
from fabricplan.decide import compare
from fabricplan.decide.models import ScalePoint
from fabricplan.decide.whatif import crossovers, full_mix_spec, scale_curve
from fabricplan.spec import load_spec, parse_spec
from fabricplan.topology import tier_capacities
from project_paths import EXAMPLES, pinned

CATALOG = load_catalog()
PAIR = ["roce-v2", "infiniband-ndr"]


def two_fabric_spec():
    return parse_spec({"cluster": {"gpu": "h100-sxm", "gpus": 1024}, "fabrics": PAIR,
                       "topology": {"style": "rail_optimized"}})


def point(gpus, roce, ib, p_roce_lower):
    return ScalePoint(gpus=gpus, cost_per_useful_gpu_hour_usd={"roce-v2": roce, "infiniband-ndr": ib},
                      probability_lower={"roce-v2|infiniband-ndr": p_roce_lower})


def test_a_dip_into_the_uncertainty_with_the_same_leader_either_side_is_no_crossover():
    # 256 to 1,024 GPUs lie between the radix-64 tier boundaries (2,048) and the radix-128 ones
    # (1,024 is below 8,192): the deterministic leader flips twice, but inside the uncertainty, and
    # RoCE leads clearly on both sides: the leader does not change.
    curve = [point(128, 1.00, 1.10, 0.95), point(256, 1.00, 0.99, 0.55), point(512, 0.99, 1.00, 0.45),
             point(1024, 1.00, 0.995, 0.6), point(2048, 1.00, 1.10, 0.9)]
    (row,) = crossovers(two_fabric_spec(), CATALOG, curve, threshold=0.8)
    assert row.kind == "no_change" and row.leader_below == "roce-v2" and row.gpus is None
    assert "no clear leader at 256, 512, 1,024 GPUs" in row.note
    # Without draws (--draws 0), the same curve reports every deterministic flip.
    assert sum(c.kind == "crossover" for c in crossovers(two_fabric_spec(), CATALOG, curve, threshold=None)) >= 2


def test_an_unclear_span_between_two_different_leaders_is_a_no_clear_leader_crossover():
    curve = [point(128, 1.00, 1.10, 0.95), point(256, 1.00, 0.99, 0.55), point(512, 0.99, 1.00, 0.45),
             point(1024, 1.10, 1.00, 0.1)]
    (unclear,) = crossovers(two_fabric_spec(), CATALOG, curve, threshold=0.8)
    assert unclear.kind == "no_clear_leader" and (unclear.from_gpus, unclear.to_gpus) == (256, 512)
    assert (unclear.leader_below, unclear.leader_above) == ("roce-v2", "infiniband-ndr")
    assert unclear.note.startswith("no clear leader from 256 to 512 GPUs")


def test_no_crossover_has_the_same_leader_on_both_sides_on_the_single_node():
    report = compare(load_spec(EXAMPLES / "single-node-8-inference.yaml", CATALOG), CATALOG, draws=200,
                     analyse_sensitivity=False)
    assert report.crossovers
    for crossing in report.crossovers:
        if crossing.kind != "no_change":
            assert crossing.leader_above is not None and crossing.leader_below != "-", crossing
            assert crossing.leader_below != crossing.leader_above, crossing


def test_a_clear_hand_over_is_a_crossover():
    curve = [point(128, 1.00, 1.10, 0.95), point(256, 1.10, 1.00, 0.05)]
    (crossing,) = crossovers(two_fabric_spec(), CATALOG, curve, threshold=0.8)
    assert crossing.kind == "crossover" and (crossing.leader_below, crossing.leader_above) == tuple(PAIR)
    assert 128 < crossing.gpus <= 256


def test_the_scale_curve_runs_only_sizes_where_the_whole_mix_lays_out():
    spec = load_spec(EXAMPLES / "llama405b-16k-h100.yaml", CATALOG)  # tp 8 x pp 16: 128-GPU model replicas
    grid = [64, 128, 192, 256]
    curve = scale_curve(spec, CATALOG, grid)
    sizes = [p.gpus for p in curve]
    assert set(sizes) <= {g for g in grid if full_mix_spec(spec, g, CATALOG) is not None}
    assert full_mix_spec(spec, 64, CATALOG) is None and 64 not in sizes  # half a model replica
    assert {128, 256} <= set(sizes)


def test_compare_marks_tier_boundaries_of_each_chosen_design():
    report = compare(load_spec(pinned("llama70b-1024-h100"), CATALOG), CATALOG, draws=200)
    ib = {b.gpus: b.tiers_above for b in report.tier_boundaries if b.fabric == "infiniband-ndr"}
    capacity = tier_capacities(nics_per_node=8, radix=64, style="rail_optimized")
    assert ib == {capacity[1] * 8: 2, capacity[2] * 8: 3, capacity[3] * 8: 4} == {64: 2, 2048: 3, 65536: 4}
    roce = {b.gpus for b in report.tier_boundaries if b.fabric == "roce-v2"}
    radix = next(f for f in report.fabrics if f.fabric == "roce-v2").cost.topology.radix
    # The chosen RoCE switch: 64-port Tomahawk-4 or 128-port Tomahawk-5 (within 0.1 % at 1,024 GPUs).
    assert roce == ({64, 2048, 65536} if radix == 64 else {128, 8192})
    for crossing in report.crossovers:
        assert crossing.kind in {"crossover", "no_change", "no_clear_leader"}


def test_the_scale_curve_with_draws_carries_each_fabric_s_p10_p90_bands():
    spec = load_spec(EXAMPLES / "llama405b-16k-h100.yaml", CATALOG)
    with_draws = scale_curve(spec, CATALOG, [128, 256], draws=40, seed=3)
    for point in with_draws:
        assert set(point.cost_band_usd) == set(point.cost_per_useful_gpu_hour_usd) == set(point.excess_band)
        for low, high in point.cost_band_usd.values():
            assert 0 < low < high
        for low, high in point.excess_band.values():  # against the cheapest of the same draw: never below it
            assert 0 <= low <= high
        assert min(low for low, _high in point.excess_band.values()) == 0.0
    assert all(not point.cost_band_usd and not point.excess_band for point in scale_curve(spec, CATALOG, [128]))
