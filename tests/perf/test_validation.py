"""Accuracy against published measurements (validation/perf.py), with the tolerances that
catalog/data/published_perf.yaml gives each row."""

import copy

import pytest

from fabricplan.catalog import load_catalog
from fabricplan.perf.collectives import bus_bandwidth_factor
from validation.perf import (
    GatedRow,
    azure_allreduce_rows,
    compute_microbench_rows,
    gemm_off_curve_rows,
    gpt3_rows,
    llama3_405b_rows,
    nic_ceiling_rows,
    nvls_single_node_rows,
    published_data,
    row_tolerance,
    step_time_error,
    training_error_summary,
    training_failures,
    training_rows,
    training_run_rows,
    training_summary_bounds,
)


@pytest.fixture(scope="module")
def azure():
    return {row.quantity: row for row in azure_allreduce_rows()}


def test_nccl_tests_busbw_formula():
    # docs/reference/nccl_tests.md §1: n=16, 8 GiB in 85129 us -> algbw 100.90, busbw 189.20.
    algbw = 8589934592 / 85129e-6 / 1e9
    assert algbw == pytest.approx(100.90, abs=0.01)
    assert algbw * bus_bandwidth_factor("all_reduce", 16) == pytest.approx(189.20, abs=0.01)
    assert bus_bandwidth_factor("all_reduce", 72) == pytest.approx(1.97222, abs=1e-5)
    assert bus_bandwidth_factor("all_reduce", 128) == pytest.approx(1.984375)
    assert bus_bandwidth_factor("all_reduce", 1440) == pytest.approx(1.998611, abs=1e-6)
    assert bus_bandwidth_factor("all_gather", 16) == pytest.approx(15 / 16)
    assert bus_bandwidth_factor("send_recv", 2) == 1.0


def test_azure_peak_busbw_within_5_percent(azure):
    row = azure[f"busbw@{8 * 2**30}"]
    assert row.tolerance == 0.05 and row.reason
    assert abs(row.error) <= row.tolerance


def test_azure_ramp_within_20_percent(azure):
    """Every ramp row 16 MiB..1 GiB within 20 % (busbw against the out-of-place column)."""
    gated = {quantity: row.tolerance for quantity, row in azure.items() if row.tolerance is not None}
    ramp = [f"busbw@{16 * 2**20 * 2**i}" for i in range(7)]  # 16 MiB .. 1 GiB
    # Three gated groups: 8 GiB busbw, the ramp, 8 B time; every other row is shown, not gated.
    assert gated == {**dict.fromkeys(ramp, 0.20), f"busbw@{8 * 2**30}": 0.05, "time_us@8": 0.02}
    for quantity in ramp:
        assert abs(azure[quantity].error) <= 0.20, (quantity, azure[quantity].error)
    assert all(row.reason for row in azure.values())


def test_proxy_terms_move_the_mid_sizes_to_the_measurement(azure):
    """With the proxy's op pick-up (calibrated on 8 B) and handshake per further chunk of NCCL's chunk rule
    (calibrated on 4 MiB), 1 and 8 MiB come within 3 % and 7 % busbw (they were +54 % and +30 %); 16 and
    32 MiB, either side of NCCL's switch from Tree/LL128 to Ring, at -17 % and +17 % (were +20 %, +19 %)."""
    assert azure[f"busbw@{2**20}"].error == pytest.approx(-0.031, abs=0.005)
    assert azure[f"busbw@{8 * 2**20}"].error == pytest.approx(-0.068, abs=0.005)
    assert azure[f"busbw@{16 * 2**20}"].error == pytest.approx(-0.170, abs=0.005)
    assert azure[f"busbw@{32 * 2**20}"].error == pytest.approx(0.170, abs=0.005)
    assert azure[f"busbw@{64 * 2**20}"].error == pytest.approx(-0.035, abs=0.005)
    assert azure[f"busbw@{16 * 2**20}"].detail == "tree/ll128"
    assert azure[f"busbw@{32 * 2**20}"].detail == "ring/ll128"


def test_without_the_network_step_delay_32_mib_misses(monkeypatch):
    from fabricplan.perf import nccl_tuner

    monkeypatch.setattr(nccl_tuner, "network_step_delay_us", lambda *args, **kwargs: 0.0)
    rows = {row.quantity: row for row in azure_allreduce_rows()}
    assert rows[f"busbw@{16 * 2**20}"].error == pytest.approx(-0.156, abs=0.005)
    assert rows[f"busbw@{32 * 2**20}"].error == pytest.approx(0.287, abs=0.005)  # outside the 20 %


def test_azure_8_byte_latency_is_the_proxy_calibration(azure):
    row = azure["time_us@8"]
    assert row.tolerance == 0.02
    assert abs(row.error) <= row.tolerance


def test_per_nic_ceilings_within_5_percent():
    rows = nic_ceiling_rows()
    assert [row.tolerance for row in rows] == [0.05, 0.05, 0.05]
    for row in rows:
        assert row.reason
        assert abs(row.error) <= row.tolerance, row


def test_gpt3_step_time_within_tolerance(capsys):
    # Checked only (nothing fitted to it): per-operation compute from microbenchmarks, unfused attention.
    step, tflops = gpt3_rows()
    with capsys.disabled():
        print(f"\nGPT-3 175B / 1024 A100: {step.model:.2f} s (published {step.published} s), {step.detail}")
    assert step.tolerance == tflops.tolerance == 0.15
    assert step.reason.startswith("checked only, nothing fitted to it")
    assert abs(step.error) <= step.tolerance
    assert abs(tflops.error) <= tflops.tolerance
    # 30.22 with the 2021 code's whole-tensor pipeline sends (issue 27, second round); 29.37 with
    # scatter/gather, 28.91 before the slowest GPU of N (issue 27).
    assert step.model == pytest.approx(30.22, abs=0.01)
    assert abs(step.error) <= 0.08  # issue 27's worst-row aim, met since the whole-tensor sends
    assert gpt3_rows(scatter_gather=True)[0].model == pytest.approx(29.37, abs=0.01)


def test_nvls_single_node_busbw_within_5_percent():
    # 8 x H100, NVLS, >= 1 GiB: ~480 GB/s busbw, algbw ~275 (nccl-tests#212); model 370.8 x 0.85 x 8/9.
    rows = nvls_single_node_rows()
    assert len(rows) == 3
    for row in rows:
        assert row.detail.startswith("nvls/simple")
        assert row.tolerance == 0.05 and "differ by 1 %" in row.reason
        assert abs(row.error) <= row.tolerance, row
    assert rows[0].model == pytest.approx(370.8 * 0.85 * 8 / 9 * 14 / 8, rel=0.02)


def test_llama3_405b_rows_use_the_published_layout_and_gate_per_configuration():
    # Checked only: the H100's compute data are kernel microbenchmarks (the old flat 0.43 was this
    # run's own MFU). Table 4's three configurations with section 3.3.2's layout: one-layer chunks
    # (v = 8; 126 layers + the embedding and loss slots over 16 stages), no recomputation at 8K.
    rows = llama3_405b_rows()
    assert [row.published for row in rows] == [0.43, 0.41, 0.38]
    assert all(row.detail.startswith("v=8, ") for row in rows)
    assert [row.detail.split(", ")[1] for row in rows] == ["recompute none", "recompute none", "recompute selective"]
    for row in rows:
        assert row.reason, row
        if row.tolerance is not None:
            assert abs(step_time_error(row)) <= row.tolerance, row
    # With the DP reduce-scatter's contention beside compute and the slowest GPU of N (issue 27) the
    # two 8K rows are 3 % and 1 % fast, the 128K row 2 % slow (8 % / 6 % / 2 % fast before).
    assert [step_time_error(row) for row in rows] == pytest.approx([-0.032, -0.007, 0.024], abs=0.003)
    assert [row.tolerance for row in rows] == [0.15, 0.15, 0.15]
    # PP sends between stages cross the leaves and collide under static ECMP (span_nodes): 0.502, 0.465,
    # 0.397 before, nearer the published 0.43, 0.41, 0.38 now.
    assert [row.model for row in rows] == pytest.approx([0.444, 0.413, 0.371], abs=0.005)
    # More micro-batches per step (32 against 16 on half the GPUs) shrink the bubble's share, so the
    # model's MFU rises with them, as Meta's does (43 % against 41 %).
    assert rows[0].model > rows[1].model


def test_llama3_405b_layout_overrides_reach_the_step_model():
    base = llama3_405b_rows()
    two_layer_chunks = llama3_405b_rows(virtual_pipeline_stages=4, account_for_embedding_in_pipeline_split=False,
                                        account_for_loss_in_pipeline_split=False)
    assert all(row.detail.startswith("v=4, ") for row in two_layer_chunks)
    # Half the chunks: twice the bubble, but half the pipeline sends, which cross the leaves of this
    # static-ECMP RoCE design (collective_time's span_nodes): slower where the bubble dominates, even at 8K.
    assert all(slow.model < fast.model for slow, fast in zip(two_layer_chunks[1:], base[1:]))
    assert two_layer_chunks[0].model == pytest.approx(base[0].model, rel=1e-3)
    recompute = llama3_405b_rows(recompute="selective")
    assert recompute[2].model == pytest.approx(base[2].model)  # the 128K row already recomputes
    assert recompute[0].model < base[0].model


def test_compute_curves_pass_through_their_microbenchmark_points():
    rows = compute_microbench_rows()
    assert len(rows) > 60
    assert {row.quantity.split()[0] for row in rows} == {"a100-sxm-80gb", "h100-sxm", "h200-sxm", "b200"}
    for row in rows:
        assert row.tolerance == 0.001
        assert abs(row.error) <= row.tolerance, row


def test_gemm_shapes_off_the_curve_are_shown_not_gated():
    rows = gemm_off_curve_rows()
    assert len(rows) == 9
    assert all(row_tolerance(row) is None for row in rows)


#: Gated training rows known to be past their tolerance (open gaps, reported as FAIL in
#: docs/validation.md and by scripts/validate_perf.py): the Megatron-LM README's H100 strong-scaling
#: rows (Megatron-Core r0.8, BF16), where the model is fast per micro-batch without a sourced mechanism
#: (issue 27's second round). Any other gated row leaving its tolerance fails the tests; these rows'
#: errors are not pinned (a mechanism that moves them into tolerance should take them off this list).
#: Third round: with Transformer Engine's default userbuffers SMs (tp_overlap_config te_default) the
#: 2,304-GPU row is inside its 10 % (-9.5 %) and off this list; the 96-GPU row is still past it (-13.4 %).
KNOWN_TRAINING_MISSES = ("mlm2407_gpt3_175b_96",)
#: Gated rows inside their tolerance but past issue 27's 8 % aim (every other row is held to it).
PAST_THE_AIM = ("mlm2407_gpt3_175b_2304",)


def _without_known_misses(rows):
    return [row for row in rows if row.quantity.split(":")[0] not in KNOWN_TRAINING_MISSES]


def test_training_error_summary_is_mean_and_worst():
    everything = training_rows()
    rows = _without_known_misses(everything)
    bounds = training_summary_bounds()
    assert (bounds["mean"][0], bounds["worst"][0]) == (0.04, 0.10)
    assert bounds["mean"][1] and bounds["worst"][1]
    mean, worst = training_error_summary(rows, gated_only=True)
    assert 0 < mean <= bounds["mean"][0] and worst <= bounds["worst"][0]
    past_aim = {row.quantity.split(":")[0] for row in rows
                if row_tolerance(row) is not None and abs(step_time_error(row) or 0.0) > 0.08}
    assert past_aim == set(PAST_THE_AIM)  # issue 27's 8 % for every other row
    assert mean <= worst
    assert training_failures(rows) == []
    failures = training_failures(everything)
    named = [line.split(":")[0] for line in failures if not line.startswith("worst step-time error")]
    assert set(named) <= set(KNOWN_TRAINING_MISSES)
    all_mean, all_worst = training_error_summary(everything, gated_only=True)
    assert all_mean <= bounds["mean"][0]
    assert (all_worst > bounds["worst"][0]) == any(line.startswith("worst step-time error") for line in failures)
    # A gated row past its tolerance fails; a row shown without one (tolerance null in
    # published_perf.yaml) does not, and only the summary over every row counts it.
    off = GatedRow("llama3_405b", "mfu@x", 0.40, 0.50, "", tolerance=0.15, reason="r")
    shown = GatedRow("llama3_405b", "mfu@x", 0.40, 0.50, "", tolerance=None, reason="r")
    assert training_failures([*rows, off]) and training_failures([*rows, shown]) == []
    assert training_error_summary([*rows, shown], gated_only=True) == (mean, worst)
    assert training_error_summary([*rows, shown])[1] == pytest.approx(max(0.2, training_error_summary(rows)[1]))


def test_training_runs_are_all_checked_and_each_within_its_tolerance():
    rows = training_run_rows()
    assert len(rows) == 46
    assert {row.group for row in rows} == {"checked"}  # nothing end-to-end is calibrated on
    # Step-time tolerance per source: 5 % where the whole layout is published and DP = 1, else 10 %;
    # two Megatron-Bridge rows are shown, not gated (cuDNN attention, which the compute data lack).
    gated = [row for row in rows if row.tolerance is not None]
    assert {row.case: row.tolerance for row in gated} == {"korthikanti": 0.05, "narayanan": 0.10,
                                                          "nemo2407": 0.10, "nemo2409": 0.10, "mb2511": 0.10,
                                                          "mlm2407": 0.10}
    # The Megatron-LM README's strong-scaling points read from its figure are shown, not gated, too.
    shown = {row.quantity.split(":")[0]: row.step_error for row in rows if row.tolerance is None}
    assert shown == pytest.approx({"mb2511_llama3_70b_h100_64": 0.174, "mb2511_llama3_8b_b200_8": 0.315,
                                   "mlm2407_gpt3_175b_144": -0.136, "mlm2407_gpt3_175b_288": -0.132,
                                   "mlm2407_gpt3_175b_576": -0.122, "mlm2407_gpt3_175b_1152": -0.110,
                                   "mlm2407_gpt3_175b_3072": -0.081}, abs=0.01)
    assert all("cuDNN" in row.reason for row in rows if row.tolerance is None and row.case == "mb2511")
    assert all("read from the figure" in row.reason for row in rows if row.tolerance is None and row.case == "mlm2407")
    misses = {row.quantity.split(":")[0] for row in gated if abs(row.step_error) > row.tolerance}
    assert misses <= set(KNOWN_TRAINING_MISSES)
    for row in gated:
        assert row.source and row.reason


def test_megatron_lm_h100_strong_scaling_rows():
    # NVIDIA/Megatron-LM README @f2e5db4: GPT-3 175B (vocabulary 131,072, sequence 4,096), batch 1,152 on
    # 96 / 2,304 / 4,608 H100, MFU 0.47 / 0.438 (432.8 TFLOP/s of 989) / 0.42; TP 8, PP 6 (the weak-scaling
    # table's 177B row), DP = GPUs / 48. MFU is Megatron's FLOP count, the model's: step error = published / model - 1.
    rows = {row.quantity: row for row in training_run_rows(ids=("mlm2407_gpt3_175b_96", "mlm2407_gpt3_175b_2304",
                                                                  "mlm2407_gpt3_175b_4608"))}
    assert all(row.tolerance == 0.10 for row in rows.values())  # the printed values are gated
    assert [row.published for row in rows.values()] == [0.47, 0.438, 0.42]
    for quantity, row in rows.items():
        assert quantity.endswith(": mfu")
        assert step_time_error(row) == pytest.approx(row.published / row.model - 1)
        assert " t8 p6 " in f" {row.detail}" and "v8" in row.detail
    assert [row.detail.split(",")[0] for row in rows.values()] == ["96 GPUs", "2304 GPUs", "4608 GPUs"]
    assert "d2 " in rows["mlm2407_gpt3_175b_96: mfu"].detail and "d96 " in rows["mlm2407_gpt3_175b_4608: mfu"].detail
    big = rows["mlm2407_gpt3_175b_4608: mfu"]
    assert abs(big.step_error) <= big.tolerance  # the largest printed point is within its 10 %


def test_calculon_set_better_than_calculon():
    # Korthikanti et al. 2022 (22B..1T, full and selective+SP): Calculon reports 3.65 % mean, 8.87 % worst.
    rows = [row for row in training_run_rows() if row.case == "korthikanti"]
    assert len(rows) == 8
    mean, worst = training_error_summary(rows)
    assert mean < 0.0365 and worst < 0.0887


def test_step_time_error_of_rates_is_inverse():
    (row,) = training_run_rows(ids=("narayanan_t1_7.5b",))
    assert row.quantity == "narayanan_t1_7.5b: tflops_per_gpu"
    assert step_time_error(row) == pytest.approx(row.published / row.model - 1)
    mfu = llama3_405b_rows()[1]
    assert step_time_error(mfu) == pytest.approx(mfu.published / mfu.model - 1)


def test_validate_perf_script_counts_socket_rows_past_tolerance(monkeypatch):
    """scripts/validate_perf.py renders the socket rows (calibrated and checked apart) and fails when a
    gated socket row leaves its tolerance."""
    import importlib.util

    import validation.perf as perf_checks
    from project_paths import ROOT

    spec = importlib.util.spec_from_file_location("validate_perf", ROOT / "scripts" / "validate_perf.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    text, failures = script.render()
    # The only rows outside tolerance are the known size-decade misses (collective_sweeps, issue 27) and
    # the known training misses with the worst-row bound they break.
    rows = training_rows()
    known = len(perf_checks.collective_decade_failures(perf_checks.collective_decade_rows())) + len(
        training_failures(rows))
    assert failures == known
    assert "### Calibrated on" in text and "### Checked only" in text
    rows = perf_checks.socket_transport_rows()
    off = [perf_checks.SocketValidationRow(r.case, r.quantity, r.published, r.model * (1.5 if r.tolerance else 1.0),
                                          r.detail, group=r.group, tolerance=r.tolerance, reason=r.reason)
           for r in rows]
    monkeypatch.setattr(script, "socket_transport_rows", lambda catalog=None: off)
    _text, failures = script.render()
    assert failures == known + 5  # every gated socket row, 50 % off


def test_validate_perf_script_fails_past_the_training_tolerances(monkeypatch):
    """The training section counts rows past their step-time tolerance and a summary past its bounds,
    both read from published_perf.yaml."""
    import importlib.util

    import validation.perf as perf_checks
    from project_paths import ROOT

    spec = importlib.util.spec_from_file_location("validate_perf", ROOT / "scripts" / "validate_perf.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    lines, failures = script._training_runs_section()
    assert failures == len(KNOWN_TRAINING_MISSES) + 1  # the known misses and the worst-row bound
    text = "\n".join(lines)
    assert "| korthikanti_175b_full: step_time_s | 18.13 |" in text and "Calculon" in text
    # Korthikanti rows at +-0.5 % (all eight are further off) and a mean bound of 1 %: rows and summary fail.
    data = copy.deepcopy(published_data())
    data["training_runs"]["tolerances"]["korthikanti"]["tolerance"] = 0.005
    data["training_runs"]["summary"]["mean"]["tolerance"] = 0.01
    monkeypatch.setattr(perf_checks, "published_data", lambda: data)
    _lines, failures = script._training_runs_section()
    assert failures == 8 + 1 + len(KNOWN_TRAINING_MISSES) + 1


# --- issue 12 item 6: catalog EDR/HDR profiles and AWS EFA -----------------------------------------

def test_edr_hdr_rows_use_catalog_profiles_with_real_switches():
    from validation.perf import rdma_fabric

    catalog = load_catalog()
    for rate, fabric_id, switch in ((100, "infiniband-edr", "sw_ib_sb7800"), (200, "infiniband-hdr", "sw_ib_qm8700")):
        profile = rdma_fabric(rate, catalog=catalog)
        assert profile.id == fabric_id and not profile.in_network_reduction
        assert catalog.switch(profile.hardware.switch).id == switch
        assert catalog.switch(switch).radix_at(rate) is not None
        assert catalog.nic(profile.hardware.nic).speed_gbps == rate
        assert profile.effective_bandwidth_gbytes_per_s == pytest.approx(rate / 8 * 0.94, rel=1e-12)


def test_efa_rows_within_tolerance_and_calibration_exact():
    from validation.perf import calibrated_efa_host_stack_us, efa_rows

    rows = efa_rows()
    assert [r for r in rows if r.tolerance is not None and abs(r.error) > r.tolerance] == []
    assert calibrated_efa_host_stack_us() == pytest.approx(load_catalog().fabric("aws-efa").host_stack_latency_us,
                                                           abs=0.05)
    assert sum(r.tolerance is not None for r in rows) >= 6


def test_p5_needs_four_nics_per_gpu():
    # With one NIC per GPU (8 of the 32 EFA cards) the 2 x p5 ring would be bound at 8 x 11.75 GB/s.
    from fabricplan.design import bare_network
    from fabricplan.perf.collectives import collective_time

    catalog = load_catalog()
    gpu = catalog.gpu("h100-sxm")
    network = bare_network(catalog, "aws-efa", gpu, gpus=16, gpus_per_node=8, nics_per_node=32)
    kw = dict(network=network, nccl_version="2.19.3", catalog=catalog, algorithm="ring")
    four = collective_time("all_reduce", 8 * 2**30, 16, 8, **kw)
    one = collective_time("all_reduce", 8 * 2**30, 16, 8, nics_per_gpu=1, **kw)
    assert four.channels == 32 and one.channels == 8
    assert one.busbw_gbytes_per_s == pytest.approx(8 * 11.75, rel=0.01)
    # 32 x 11.75 = 376 GB/s of EFA: the ring is now bound by NVLink (18 x 20.6 = 370.8), 4x the old figure
    assert four.busbw_gbytes_per_s == pytest.approx(min(32 * 11.75, 18 * 20.6), rel=0.02)
