"""The recommendation follows the evidence: each asserted ranking is justified by the numbers."""

from __future__ import annotations

import pytest

from fabricplan.catalog import load_catalog
from fabricplan.decide import Scenario, compare, decide, evaluate, fabric_outcomes
from fabricplan.decide.whatif import scale_grid, sensitivity
from fabricplan.plan import Levers
from fabricplan.spec import load_spec, parse_spec
from project_paths import EXAMPLES

CATALOG = load_catalog()


def example(name):
    return load_spec(EXAMPLES / f"{name}.yaml", CATALOG)


def with_operations(spec, **changes):
    return spec.model_copy(update={"operations": spec.operations.model_copy(update=changes)})


def fired(decision):
    return {rule.id for rule in decision.rules if rule.fired}


def test_single_node_network_barely_matters_and_cheapest_wins():
    decision = evaluate(example("single-node-8-inference"), CATALOG)
    outcomes = decision.outcomes
    utilisation = [o.weighted_gpu_utilisation for o in outcomes.values()]
    # One node: every collective stays on NVLink, so the fabric cannot change the step time.
    assert max(utilisation) - min(utilisation) < 1e-9
    assert "MIX001" in fired(decision)
    cheapest = min(outcomes, key=lambda f: outcomes[f].tco_usd)
    assert decision.recommendation.recommended == cheapest
    assert outcomes[cheapest].cost.topology.total_switches == 0  # no scale-out switch for one node
    assert any("barely matters" in reason for reason in decision.recommendation.reasons)


def test_16k_allreduce_heavy_rdma_fabric_wins_on_cost_per_useful_gpu_hour():
    decision = evaluate(example("llama405b-16k-h100"), CATALOG)
    outcomes = decision.outcomes
    winner = decision.recommendation.recommended
    assert winner in ("infiniband-ndr", "roce-v2")
    # Justification: kernel TCP exposes more data-parallel communication, so its GPUs compute less
    # of each step, and the RDMA winner is cheapest per useful GPU-hour.
    # of each step, and an RDMA fabric is cheapest per useful GPU-hour (which one: the prices decide;
    # with LinkX optics and NVIDIA support RoCE is, while the scale rules still name InfiniBand).
    cheapest = min(outcomes, key=lambda f: outcomes[f].cost_per_useful_gpu_hour_usd)
    assert cheapest in ("infiniband-ndr", "roce-v2")
    tcp, best = outcomes["ethernet-tcp"], outcomes[cheapest]
    assert tcp.jobs[0].exposed_comm_s["dp"] > 2 * best.jobs[0].exposed_comm_s["dp"]
    assert tcp.weighted_gpu_utilisation < best.weighted_gpu_utilisation
    assert {"SCALE003", "SCALE004"} <= fired(decision)
    # The reason against TCP names what costs it the utilisation: ZeRO 2's reduce-scatter after every
    # micro-batch, exposed on the socket transport, in seconds a step over the best fabric's.
    from fabricplan.decide.recommend import main_exposed_gap

    chosen = outcomes[winner]  # the why-not lines compare against the recommended fabric
    job, kind, extra = main_exposed_gap(tcp, chosen)
    assert (job, kind) == ("llama3-405b-pretrain", "dp")
    assert extra == pytest.approx(tcp.jobs[0].exposed_comm_s["dp"] - chosen.jobs[0].exposed_comm_s["dp"])
    shown = f"{extra:.2f} s" if extra >= 1 else f"{extra * 1e3:.1f} ms"
    assert f"mostly exposed data-parallel communication (+{shown} a step of llama3-405b-pretrain)" in \
        decision.recommendation.why_not["ethernet-tcp"]
    # Nothing is blamed where the utilisation does not fall.
    assert main_exposed_gap(best, best) is None


def moe_128(maturity="experienced"):
    """128 H100 training a Mixtral-style MoE: all-to-all heavy, so the fabric matters. Optics at the
    vendor basis (InfiniBand with NVIDIA LinkX), where RoCE leads at 'expert' and the maturity rules bite."""
    return parse_spec({"cluster": {"gpu": "h100-sxm", "gpus": 128}, "operations": {"maturity": maturity},
                       "economics": {"optics_basis": "vendor"},
                       "jobs": [{"name": "moe", "model": "mixtral-8x7b", "tp": 2, "ep": 8,
                                 "global_batch_sequences": 1024, "seq_len_tokens": 4096}]})


def test_no_operations_skill_rules_out_lossless_ethernet():
    spec = moe_128("expert")
    expert = evaluate(spec, CATALOG)
    outcomes = expert.outcomes
    # The numbers: RoCE is cheapest per useful GPU-hour; kernel TCP loses a third of the GPU time.
    assert expert.recommendation.recommended == "roce-v2"
    assert outcomes["roce-v2"].cost_per_useful_gpu_hour_usd == min(
        o.cost_per_useful_gpu_hour_usd for o in outcomes.values())
    assert outcomes["ethernet-tcp"].weighted_gpu_utilisation < 0.8 * outcomes["roce-v2"].weighted_gpu_utilisation
    none = evaluate(with_operations(spec, maturity="none"), CATALOG)
    assert none.recommendation.recommended != "roce-v2"
    assert none.recommendation.ranking[-1] == "roce-v2"
    assert "OPS001" in fired(none) and "OPS001" not in fired(expert)
    assert any("OPS001" in reason for reason in none.recommendation.reasons)
    assert "OPS001" in none.recommendation.why_not["roce-v2"]
    # The numbers changed only through staffing (maturity multipliers, catalog parameters); the rule
    # is what rules RoCE out.
    low, high = none.outcomes["roce-v2"], expert.outcomes["roce-v2"]
    assert low.weighted_gpu_utilisation == pytest.approx(high.weighted_gpu_utilisation)
    staff = (low.cost.opex_usd_per_year.operations_usd - high.cost.opex_usd_per_year.operations_usd)
    assert staff > 0
    assert low.tco_usd - high.tco_usd == pytest.approx(staff * low.cost.horizon_years)


def test_latency_sla_excludes_slow_fabrics():
    spec = example("llama70b-1024-h100")
    strict = spec.model_copy(update={"constraints": spec.constraints.model_copy(update={"latency_sla_us": 3.0})})
    decision = evaluate(strict, CATALOG)
    tcp_latency = decision.outcomes["ethernet-tcp"].small_message_latency_us
    assert tcp_latency > 3.0  # kernel TCP host stack alone is ~10 us (catalog fabrics.yaml)
    sla = next(rule for rule in decision.rules if rule.id == "SLA001")
    assert sla.fired and "ethernet-tcp" in sla.excludes
    assert decision.recommendation.ranking[-1] == "ethernet-tcp"


def test_rule_thresholds_come_from_the_catalog(tmp_path):
    overlay = tmp_path / "rules.yaml"
    overlay.write_text("parameters:\n  - id: rule_single_node_max_gpus\n    value: {default: 16}\n"
                       "    source: our policy\n    date: 2026-11\n")
    catalog = load_catalog([overlay])
    spec = parse_spec({"cluster": {"gpu": "h100-sxm", "gpus": 16}})
    decision = evaluate(spec, catalog)
    rule = next(r for r in decision.rules if r.id == "SCALE001")
    assert rule.fired and rule.thresholds == {"max_gpus": 16}


def test_every_rule_cites_a_seed_and_reports_thresholds():
    decision = evaluate(example("llama70b-1024-h100"), CATALOG)
    for rule in decision.rules:
        assert rule.citation.startswith(("[S1]", "[S2]")), rule.id
        assert rule.message
    ids = [rule.id for rule in decision.rules]
    assert len(ids) == len(set(ids))
    assert {"CHECK001", "CHECK002", "CHECK003"} <= set(ids)


def test_compare_report_has_crossovers_and_sensitivity():
    report = compare(moe_128("basic"), CATALOG)
    # InfiniBand (LinkX optics, lower staffing) and RoCE are within 0.4 % at the defaults: a close
    # call, which the draws' leader takes when no weighted rule vote favours another contender.
    uncertainty = report.uncertainty
    assert max(d.probability_best for d in uncertainty.fabrics.values()) < 0.8
    assert report.recommendation.recommended == uncertainty.leader
    assert report.recommendation.recommended != "ethernet-tcp"
    pairs = {(c.fabric_a, c.fabric_b) for c in report.crossovers}
    assert pairs == {("ethernet-tcp", "roce-v2"), ("ethernet-tcp", "infiniband-ndr"), ("roce-v2", "infiniband-ndr")}
    curve = {point.gpus: point.cost_per_useful_gpu_hour_usd for point in report.scale_curve}
    for crossing in (c for c in report.crossovers if c.gpus is not None):
        # The leader really changes across the reported GPU count: check it on the grid around it.
        below = max(g for g in curve if g < crossing.gpus)
        above = min(g for g in curve if g >= crossing.gpus)
        pair = (crossing.fabric_a, crossing.fabric_b)
        assert min(pair, key=lambda f: curve[below][f]) == crossing.leader_below
        assert min(pair, key=lambda f: curve[above][f]) == crossing.leader_above
    assert {row.factor for row in report.sensitivity} >= {
        "switch prices", "NIC prices", "optics and cable prices", "energy price", "achievable GPU efficiency",
        "operations maturity one step"}
    maturity = next(row for row in report.sensitivity if row.factor == "operations maturity one step")
    assert maturity.winner_low != "roce-v2"  # one step down is 'none': RoCE ruled out (flips if RoCE led)
    assert maturity.excluded_low == ["roce-v2"] and maturity.excluded_high == []  # OPS001 in the low case only
    switch = next(row for row in report.sensitivity if row.factor == "switch prices")
    for fabric, change in switch.metric_change_high.items():
        assert change > 0, fabric  # dearer switches never make a fabric cheaper to use
    assert [p.gpus for p in report.scale_curve] == sorted(p.gpus for p in report.scale_curve)


def no_ib_premium():
    """The catalog with InfiniBand's LinkX optics at the third-party prices of their Ethernet twins."""
    values = {}
    for vendor, third in (("opt_800_twin_sr8_nv", "opt_800_twin_sr8"), ("opt_400_osfp_sr4_nv", "opt_400_osfp_sr4"),
                          ("opt_800_twin_dr8_nv", "opt_800_twin_dr8"), ("opt_400_osfp_dr4_nv", "opt_400_osfp_dr4"),
                          ("opt_800_twin_fr8_nv", "opt_800_twin_fr8")):
        price = CATALOG.optic(third).price_usd
        values[f"optics.{vendor}.price_usd"] = {"low": price.low, "default": price.default, "high": price.high}
    return CATALOG.with_values(values)


def test_existing_ethernet_estate_is_advice_and_does_not_move_the_ranking():
    # 256 H100 training a 70B model: InfiniBand and RoCE are within the 10 % close-call band on cost
    # per useful GPU-hour. The estate rule (seed S2, step 3) has no mechanism in the chain yet (owned
    # switches and skills are not priced), so it is shown as advice and the numbers rank.
    document = {"cluster": {"gpu": "h100-sxm", "gpus": 256},
                "operations": {"maturity": "experienced", "existing_ethernet": False},
                "jobs": [{"name": "train", "model": "llama3-70b", "tp": 8, "pp": 2,
                          "global_batch_sequences": 512, "seq_len_tokens": 8192}]}
    catalog = no_ib_premium()
    new_build = evaluate(parse_spec(document), catalog)
    document["operations"]["existing_ethernet"] = True
    estate = evaluate(parse_spec(document), catalog)
    ib, roce = (new_build.outcomes[f].cost_per_useful_gpu_hour_usd for f in ("infiniband-ndr", "roce-v2"))
    assert ib < roce < ib * 1.10  # the numbers: InfiniBand ahead, but inside the band
    assert new_build.recommendation.recommended == estate.recommendation.recommended == "infiniband-ndr"
    assert estate.recommendation.close_call and estate.recommendation.decided_by == "numbers"
    assert "EST001" in fired(estate) and "EST001" not in fired(new_build)
    est = next(a for a in estate.recommendation.advice if a.rule == "EST001")
    assert est.favours and not est.agrees_with_numbers and est.mechanism.startswith("not modelled")
    assert any(d.startswith("EST001") for d in estate.recommendation.disagreements)


def _with_numbers(outcomes, **changes):
    """Outcomes with some numbers replaced: {fabric: {field: value}} (the rules read these fields)."""
    return {f: o.model_copy(update=changes.get(f.replace("-", "_"), {})) for f, o in outcomes.items()}


def test_a_close_call_without_draws_is_said_and_ranked_by_cost():
    # Estate next to RoCE-friendly rules (EST001, WORK001 favour roce-v2; WORK001 disfavours IB): the
    # rules are advice, so InfiniBand, 9 % cheaper, ranks first; the close call is said.
    spec = example("mid-128-h100-existing-ethernet")
    outcomes = _with_numbers(
        fabric_outcomes(spec, CATALOG),
        infiniband_ndr={"cost_per_useful_gpu_hour_usd": 1.00, "weighted_gpu_utilisation": 0.99},
        roce_v2={"cost_per_useful_gpu_hour_usd": 1.09, "weighted_gpu_utilisation": 0.95},
        ethernet_tcp={"cost_per_useful_gpu_hour_usd": 1.15, "weighted_gpu_utilisation": 0.90})
    decision = decide(spec, CATALOG, outcomes)
    recommendation = decision.recommendation
    assert recommendation.ranking == ["infiniband-ndr", "roce-v2", "ethernet-tcp"]
    assert recommendation.close_call and recommendation.decided_by == "numbers"
    assert "A close call: roce-v2 within the 10 % band" in " ".join(recommendation.reasons)
    assert "close call" in recommendation.why_not["roce-v2"].lower()
    assert "advice" in recommendation.why_not["roce-v2"]
    # 15 % above the cheapest is outside the band.
    assert "close call" not in recommendation.why_not["ethernet-tcp"].lower()
    assert any(d.startswith(("EST001", "WORK001")) for d in recommendation.disagreements)


def test_lowest_cost_reason_states_the_runner_up_gap():
    spec = example("mid-128-h100-existing-ethernet")
    outcomes = _with_numbers(
        fabric_outcomes(spec, CATALOG),
        infiniband_ndr={"cost_per_useful_gpu_hour_usd": 2.50, "weighted_gpu_utilisation": 0.99},
        roce_v2={"cost_per_useful_gpu_hour_usd": 2.00, "weighted_gpu_utilisation": 0.95},
        ethernet_tcp={"cost_per_useful_gpu_hour_usd": 3.00, "weighted_gpu_utilisation": 0.90})
    reason = decide(spec, CATALOG, outcomes).recommendation.reasons[0]
    assert reason.startswith("roce-v2 has the lowest cost per useful GPU-hour: $2.00")
    assert "infiniband-ndr, costs 25.0 % more ($2.50)" in reason  # 2.50 / 2.00 - 1, not 1 - 2.00 / 2.50


def test_misjudgement_checks_ignore_fabrics_a_rule_ruled_out():
    spec = example("mid-128-h100-existing-ethernet")
    base = fabric_outcomes(spec, CATALOG)
    # Kernel TCP: far cheaper to own, but costlier per useful GPU-hour, and slow (~10 us).
    cheap_tcp = {"tco_usd": 0.5 * base["ethernet-tcp"].tco_usd, "cost_per_useful_gpu_hour_usd": 9.0}
    outcomes = _with_numbers(base, ethernet_tcp=cheap_tcp)
    check = next(r for r in decide(spec, CATALOG, outcomes).rules if r.id == "CHECK001")
    assert check.fired and "ethernet-tcp" in check.message  # TCP is a real, cheaper alternative here
    strict = spec.model_copy(update={"constraints": spec.constraints.model_copy(update={"latency_sla_us": 5.0})})
    decision = decide(strict, CATALOG, outcomes)
    assert "ethernet-tcp" in next(r for r in decision.rules if r.id == "SLA001").excludes
    check = next(r for r in decision.rules if r.id == "CHECK001")
    assert not check.fired and "ethernet-tcp" not in check.message


def test_every_fabric_ruled_out_is_said_in_the_reasons():
    spec = example("llama70b-1024-h100")
    impossible = spec.model_copy(update={"constraints": spec.constraints.model_copy(update={"latency_sla_us": 0.1})})
    decision = evaluate(impossible, CATALOG)
    assert set(next(r for r in decision.rules if r.id == "SLA001").excludes) == set(decision.outcomes)
    assert any("Every fabric is ruled out by SLA001" in reason for reason in decision.recommendation.reasons)


def test_sensitivity_swing_and_scale_search_come_from_the_catalog(tmp_path):
    overlay = tmp_path / "whatif.yaml"
    overlay.write_text("parameters:\n"
                       "  - {id: sensitivity_swing, value: {default: 0.1}, source: ours, date: 2026-11}\n"
                       "  - {id: scale_search_max_gpus, value: {default: 64}, source: ours, date: 2026-11}\n")
    catalog = load_catalog([overlay])
    spec = example("mid-128-h100-existing-ethernet")
    assert scale_grid(spec, catalog) == [8, 16, 32, 64, 128]  # one node doubled to 64, plus the spec's 128
    assert scale_grid(spec, CATALOG)[-1] == CATALOG.parameter("scale_search_max_gpus").value.at("default")
    energy = next(row for row in sensitivity(spec, catalog) if row.factor == "energy price")
    assert (energy.low_label, energy.high_label) == ("-10%", "+10%")
    wide = next(row for row in sensitivity(spec, CATALOG) if row.factor == "energy price")
    for fabric, change in energy.metric_change_high.items():
        assert 0 < change < wide.metric_change_high[fabric]


def test_efficiency_lever_moves_a_gpu_without_its_own_achievable_fraction(tmp_path):
    # A GPU entry without achievable_fraction_of_peak runs at the step model's default; the
    # sensitivity lever must scale that default, not silently leave the numbers unchanged.
    overlay = tmp_path / "gpu.yaml"
    overlay.write_text("gpus:\n  - {id: h100-sxm, achievable_fraction_of_peak: null, source: test, date: 2026-11}\n")
    catalog = load_catalog([overlay])
    spec = load_spec(EXAMPLES / "mid-128-h100-existing-ethernet.yaml", catalog)
    base = fabric_outcomes(spec, catalog)
    slower = fabric_outcomes(spec, catalog, Scenario(levers=Levers(efficiency_multiplier=0.7)))
    for fabric, outcome in base.items():
        assert slower[fabric].jobs[0].compute_s > outcome.jobs[0].compute_s, fabric


def test_scale_search_keeps_a_dp_sized_job_at_its_share_of_the_cluster():
    from fabricplan.decide.whatif import jobs_left_out, scaled_spec

    spec = parse_spec({"cluster": {"gpu": "h100-sxm", "gpus": 1024},
                       "jobs": [{"name": "half", "model": "llama3-70b", "tp": 8, "pp": 4, "dp": 16,
                                 "global_batch_sequences": 256, "seq_len_tokens": 8192}]})
    job = scaled_spec(spec, 4096, CATALOG).jobs[0]
    # 16 replicas of 32 GPUs = half of 1,024; at 4,096 GPUs it keeps half: 64 replicas, same per-replica batch.
    assert job.dp == 64 and job.global_batch_sequences == 64 * 16
    assert jobs_left_out(spec, 16) == ["half"]  # tp x pp = 32 GPUs cannot fit on 16


def test_price_multipliers_reject_unknown_categories():
    from fabricplan.cost import cost

    with pytest.raises(ValueError, match="unknown price category"):
        cost(parse_spec({"cluster": {"gpu": "h100-sxm", "gpus": 64}}), CATALOG, price_multipliers={"switchs": 1.3})


def test_a_switch_override_reaches_the_performance_model():
    # RoCE built from Spectrum-4 (600 ns) instead of the profile's Tomahawk-5 (800 ns): cost and
    # latency both follow the override.
    base = {"cluster": {"gpu": "h100-sxm", "gpus": 1024}, "topology": {"style": "rail_optimized"}}
    default = evaluate(parse_spec({**base, "fabrics": ["roce-v2"]}), CATALOG).outcomes["roce-v2"]
    spectrum = evaluate(parse_spec({**base, "fabrics": [{"profile": "roce-v2", "switch": "sw_eth_sn5600"}]}),
                        CATALOG).outcomes["roce-v2"]
    assert spectrum.cost.switch_id == "sw_eth_sn5600"
    hops = 3  # two tiers: leaf, spine, leaf
    assert default.small_message_latency_us - spectrum.small_message_latency_us == pytest.approx(
        hops * (800 - 600) / 1000, abs=1e-6)


def test_faster_ports_speed_up_the_collectives():
    # RoCE at 800G (ConnectX-8 on a Spectrum-4) keeps the profile's efficiency (46 of 50 GB/s per
    # 400G). On B200 (NVLink ~720 GB/s in NCCL's terms) the data-parallel ring is NIC-bound at 400G
    # (8 x 46 GB/s per node), so doubling the port speed cuts its time by roughly half. (On H100 the
    # ring's NVLink leg, ~370 GB/s, caps it instead, and 800G NICs barely help.)
    from fabricplan.design import effective_profile
    from fabricplan.spec import FabricChoice

    fast_profile = effective_profile(CATALOG, FabricChoice(profile="roce-v2"), 800)
    assert fast_profile.effective_bandwidth_gbytes_per_s == pytest.approx(92.0)

    def dp_seconds(gpu, speed, fabric):
        spec = parse_spec({"cluster": {"gpu": gpu, "gpus": 1024, "nic_speed_gbps": speed},
                           "topology": {"style": "rail_optimized"},  # same style at both speeds
                           "fabrics": [fabric], "operations": {"topology_aware_scheduling": True},
                           "jobs": [{"name": "dp", "model": "llama3-8b", "global_batch_sequences": 1024,
                                     "seq_len_tokens": 8192}]})
        return evaluate(spec, CATALOG).outcomes["roce-v2"].jobs[0].comm_s["dp"]

    eight_hundred = {"profile": "roce-v2", "nic": "nic_cx8_800", "switch": "sw_eth_sn5600"}
    slow, fast = dp_seconds("b200", 400, "roce-v2"), dp_seconds("b200", 800, eight_hundred)
    assert 0.45 * slow < fast < 0.65 * slow
    h100_slow, h100_fast = dp_seconds("h100-sxm", 400, "roce-v2"), dp_seconds("h100-sxm", 800, eight_hundred)
    assert 0.9 * h100_slow < h100_fast <= h100_slow
