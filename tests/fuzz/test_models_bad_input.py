"""Bad numbers and inconsistent specs/catalog overlays reaching the models (issue 10): every case
exits 2 with one `error:` line naming the file and the field, never a traceback, and `topology`,
`cost`, `step` and `compare` give the same error for the same bad spec (one validation path)."""

from __future__ import annotations

import copy

import pytest
import yaml

from fabricplan.catalog import load_catalog
from fabricplan.errors import CatalogError, InputError

BASE = {
    "name": "t",
    "cluster": {"gpu": "h100-sxm", "gpus": 64},
    "fabrics": ["roce-v2", "infiniband-ndr"],
    "jobs": [{"name": "j", "model": "llama3-8b", "tp": 8, "global_batch_sequences": 64, "seq_len_tokens": 4096}],
}
COMMANDS = (("topology",), ("cost",), ("step",), ("compare", "--quick", "--quiet"))


def _write(tmp_path, name, document) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return str(path)


def _spec(tmp_path, change=None, name="spec.yaml") -> str:
    document = copy.deepcopy(BASE)
    if change:
        change(document)
    return _write(tmp_path, name, document)


def _one_line(result, *fragments) -> str:
    assert result.code == 2, (result.code, result.out[-500:], result.err)
    assert "Traceback" not in result.err
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    assert lines[0].startswith("error: "), lines[0]
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


def _same_error_everywhere(cli, spec, *fragments, extra=()) -> str:
    messages = {command[0]: _one_line(cli(command[0], spec, *extra, *command[1:]), spec, *fragments)
                for command in COMMANDS}
    assert len(set(messages.values())) == 1, messages
    return next(iter(messages.values()))


# --- absurd magnitudes in the spec -------------------------------------------------------------------

SPEC_NUMBERS = [
    (lambda d: d["jobs"][0].update(seq_len_tokens=10 ** 30), "jobs[0].seq_len_tokens"),
    (lambda d: d["jobs"][0].update(global_batch_sequences=10 ** 40), "jobs[0].global_batch_sequences"),
    (lambda d: d["jobs"][0].update(micro_batch_sequences=10 ** 12, global_batch_sequences=10 ** 12),
     "jobs[0].global_batch_sequences"),
    (lambda d: d["jobs"][0].update(tp=10 ** 20), "jobs[0].tp"),
    (lambda d: d.setdefault("operations", {}).update(restart_minutes=-1), "operations.restart_minutes"),
    (lambda d: d.setdefault("operations", {}).update(checkpoint_interval_minutes=0),
     "operations.checkpoint_interval_minutes"),
    (lambda d: d.setdefault("operations", {}).update(checkpoint_write_minutes=1e300),
     "operations.checkpoint_write_minutes"),
    (lambda d: d["jobs"][0].update(token_budget=1e300), "jobs[0].token_budget"),
    (lambda d: d["jobs"][0].update(model={"layers": 10 ** 20, "hidden": 4096, "heads": 32, "vocab": 128000}),
     "jobs[0].model.layers"),
    (lambda d: d["jobs"][0].update(model={"layers": 32, "hidden": 2 ** 40, "heads": 32, "vocab": 128000}),
     "jobs[0].model.hidden"),
    (lambda d: d["cluster"].update(gpus=10 ** 30), "cluster.gpus"),
    (lambda d: d["cluster"].update(nics_per_node=10 ** 9), "cluster.nics_per_node"),
    (lambda d: d["cluster"].update(grow_to_gpus=10 ** 30), "cluster.grow_to_gpus"),
    (lambda d: d["cluster"].update(grow_to_gpus=32), "grow_to_gpus"),  # below gpus (64)
    (lambda d: d["cluster"].update(grow_to_gpus=68), "grow_to_gpus"),  # not whole nodes
    (lambda d: d.update(economics={"energy_usd_per_kwh": 1e300}), "economics.energy_usd_per_kwh"),
    (lambda d: d.update(economics={"fte_cost_usd_per_year": 1e308}), "economics.fte_cost_usd_per_year"),
    (lambda d: d.update(economics={"colo_usd_per_kw_month": 1e200}), "economics.colo_usd_per_kw_month"),
    (lambda d: d.update(topology={"oversubscription": [1e300]}), "oversubscription[0]"),
    (lambda d: d.update(constraints={"latency_sla_us": 1e300}), "constraints.latency_sla_us"),
    (lambda d: d["cluster"].update(gpu={"peak_dense_tflops": {"bf16": 1e300}, "hbm_gbytes": 80,
                                        "nvlink_bandwidth_gbytes_per_s": 900, "power_w": 700}),
     "cluster.gpu.peak_dense_tflops.bf16"),
    (lambda d: d["cluster"].update(gpu={"peak_dense_tflops": {"bf16": 989}, "hbm_gbytes": 1e300,
                                        "nvlink_bandwidth_gbytes_per_s": 900, "power_w": 700}),
     "cluster.gpu.hbm_gbytes"),
]


@pytest.mark.parametrize("change,field", SPEC_NUMBERS)
def test_absurd_spec_numbers_are_one_line_errors_everywhere(cli, tmp_path, change, field):
    _same_error_everywhere(cli, _spec(tmp_path, change), field)


# --- absurd magnitudes and malformed values in catalog overlays -----------------------------------------

OVERLAYS = [
    ({"gpus": [{"id": "h100-sxm", "peak_dense_tflops": {"bf16": 1e300}}]}, "gpus[id=h100-sxm]",
     "peak_dense_tflops.bf16"),
    ({"gpus": [{"id": "h100-sxm", "peak_dense_tflops": {"bf16": 1e-300}}]}, "gpus[id=h100-sxm]",
     "peak_dense_tflops.bf16"),
    ({"fabrics": [{"id": "roce-v2", "ops_fte_multiplier": 1e308}]}, "fabrics[id=roce-v2]", "ops_fte_multiplier"),
    ({"optics": [{"id": "cab_dac_800_2x400", "reach_m": 1e20}]}, "optics[id=cab_dac_800_2x400]", "reach_m"),
    ({"fabrics": [{"id": "roce-v2", "ops_fte_multiplier": 2}]}, "fabrics[id=roce-v2]", "costs.ops_fte_multiplier"),
    ({"fabrics": [{"id": "infiniband-ndr", "costs": {"support_fraction_per_year": {"default": 3, "high": 3}}}]},
     "fabrics[id=infiniband-ndr]", "costs.support_fraction_per_year"),
    ({"fabrics": [{"id": "roce-v2", "hardware": {"host_media": [{"switch_end": "no_such_optic"}]}}]},
     "fabrics[id=roce-v2]", "hardware.host_media[0].switch_end"),
    ({"fabrics": [{"id": "roce-v2", "hardware": {"host_media": [{"switch_end": "opt_800_twin_sr8"}]}}]},
     "fabrics[id=roce-v2]", "hardware.host_media[0].far_end"),
    ({"fabrics": [{"id": "roce-v2", "hardware": {"interswitch_media": [
        {"switch_end": "cab_dac_800_2x400", "far_end": "opt_800_twin_sr8"}]}}]},
     "fabrics[id=roce-v2]", "hardware.interswitch_media[0]"),
    ({"parameters": [{"id": "floor_racks_per_row", "value": {"low": 0, "default": 0, "high": 0}}]},
     "parameters[id=floor_racks_per_row]", "value.low"),
    ({"parameters": [{"id": "failure_rate_link_per_million_hours", "value": {"default": 1e9, "high": 1e9}}]},
     "parameters[id=failure_rate_link_per_million_hours]", "value.default"),
    ({"switches": [{"id": "sw_eth_th5", "price_usd": {"default": 1e306, "high": 1e308}}]},
     "switches[id=sw_eth_th5]", "price_usd.default"),
    ({"switches": [{"id": "sw_eth_th5", "date": "last tuesday"}]}, "switches[id=sw_eth_th5]", "date"),
    ({"switches": [{"id": "sw_eth_th5", "date": "2024-13-45"}]}, "switches[id=sw_eth_th5]", "date"),
    ({"parameters": [{"id": "energy_usd_per_kwh", "value": {"low": 1e300, "default": 1e300, "high": 1e300}}]},
     "parameters[id=energy_usd_per_kwh]", "value"),
    ({"parameters": [{"id": "scale_search_max_gpus", "value": {"default": 1e300}}]},
     "parameters[id=scale_search_max_gpus]", "value.default"),
    ({"parameters": [{"id": "scale_search_max_gpus", "value": {"default": 1e11}}]},
     "parameters[id=scale_search_max_gpus]", "value.default"),
    ({"parameters": [{"id": "sensitivity_swing", "value": {"default": 1.5}}]},
     "parameters[id=sensitivity_swing]", "value.default"),
    ({"perf_defaults": {"parameters": {"tp_overlap_efficiency": {"value": 5}}}}, "perf_defaults",
     "tp_overlap_efficiency"),
    ({"perf_defaults": {"parameters": {"activation_bytes_per_element": {"value": 1e300}}}}, "perf_defaults",
     "activation_bytes_per_element"),
    ({"perf_defaults": {"parameters": {"gradient_bytes_per_parameter": {"date": "yesterday"}}}}, "perf_defaults",
     "date"),
]


@pytest.mark.parametrize("overlay,entry,field", OVERLAYS)
def test_absurd_overlay_values_name_the_overlay_and_field(cli, tmp_path, overlay, entry, field):
    spec = _spec(tmp_path)
    catalog = _write(tmp_path, "overlay.yaml", overlay)
    messages = {command[0]: _one_line(cli(command[0], spec, "--catalog", catalog, *command[1:]),
                                      f"error: {catalog}", entry, field) for command in COMMANDS}
    assert len(set(messages.values())) == 1, messages


def test_scale_search_parameter_set_by_path_is_a_catalog_error():
    """The unhandled pydantic error of an oversized scale_search setting (issue 10) is a CatalogError."""
    catalog = load_catalog()
    with pytest.raises(CatalogError, match=r"scale_search_max_gpus.*less than or equal to 1000000000000"):
        catalog.with_values({"parameters.scale_search_max_gpus.value": 1e300})
    with pytest.raises(CatalogError, match=r"scale_search_max_gpus\]\.value\.low: must be between 1 and 1e\+07"):
        catalog.with_values({"parameters.scale_search_max_gpus.value": 1e11})


# --- cross-field consistency ---------------------------------------------------------------------------

def test_server_for_another_gpu(cli, tmp_path):
    spec = _spec(tmp_path, lambda d: d["cluster"].update(server="srv_a100_8gpu"))
    _same_error_everywhere(cli, spec, "cluster.server", "a100-sxm-80gb", "h100-sxm")


@pytest.mark.parametrize("slot,part,kind", [("switch_optic", "cab_fiber_mpo", "fibre"),
                                            ("nic_optic", "cab_dac_800_2x400", "cable"),
                                            ("interswitch_optic", "cab_dac_800_2x400", "cable")])
def test_cable_or_fibre_used_as_a_transceiver(cli, tmp_path, slot, part, kind):
    spec = _spec(tmp_path, lambda d: d.update(fabrics=[{"profile": "roce-v2", slot: part}]))
    _same_error_everywhere(cli, spec, f"fabrics[roce-v2].{slot}", f"is a {kind}", "transceiver")


def test_optic_used_as_the_host_cable_in_an_overlay(cli, tmp_path):
    spec = _spec(tmp_path)
    catalog = _write(tmp_path, "overlay.yaml",
                     {"fabrics": [{"id": "roce-v2", "hardware": {"host_dac": "opt_400_osfp_sr4"}}]})
    _one_line(cli("cost", spec, "--catalog", catalog), f"error: {catalog}", "fabrics[id=roce-v2].hardware.host_dac",
              "is a transceiver", "takes a cable")


@pytest.mark.parametrize("override,field,fragment", [
    ({"profile": "infiniband-ndr", "nic": "nic_eth_400_generic"}, "fabrics[infiniband-ndr].nic",
     "does not support infiniband"),
    ({"profile": "roce-v2", "switch": "sw_ib_qm9700"}, "fabrics[roce-v2].switch", "is infiniband"),
])
def test_wrong_family_overrides_fail_for_every_command(cli, tmp_path, override, field, fragment):
    spec = _spec(tmp_path, lambda d: d.update(fabrics=[override]))
    _same_error_everywhere(cli, spec, field, fragment)


def test_unknown_model_preset_fails_in_cost_and_topology_too(cli, tmp_path):
    spec = _spec(tmp_path, lambda d: d["jobs"][0].update(model="gpt5"))
    _same_error_everywhere(cli, spec, "jobs[0].model", "unknown model preset 'gpt5'", "llama3-70b")


@pytest.mark.parametrize("change,field", [
    (lambda d: d["jobs"][0].update(tp=3), "jobs[0]"),
    (lambda d: d["jobs"][0].update(ep=2), "jobs[0].ep"),
    (lambda d: d["jobs"][0].update(pp=64, tp=1), "jobs[0].pp"),
    (lambda d: d["jobs"][0].update(global_batch_sequences=12), "jobs[0].global_batch_sequences"),
    (lambda d: d["jobs"][0].update(precision="fp8", model="llama3-8b") or d["cluster"].update(gpu="a100-sxm-80gb"),
     "jobs[0].precision"),
])
def test_job_layout_errors_are_the_same_for_every_command(cli, tmp_path, change, field):
    _same_error_everywhere(cli, _spec(tmp_path, change), field)


@pytest.mark.parametrize("server", [
    {"id": "srv_h100_8gpu", "gpu": "h100-sxn"},  # a typo in an override of a bundled server
    {"id": "srv_x", "name": "x", "source": "quote", "date": "2024", "gpu": "h999", "gpus_per_server": 8,
     "power_w": 10000, "price_usd": {"default": 300000}},
])
def test_unknown_gpu_in_a_server_overlay(cli, tmp_path, server):
    """Before: the cluster silently lost its servers (network-only TCO, $2.87 -> $0.61 per useful GPU-hour)."""
    spec = _spec(tmp_path)
    catalog = _write(tmp_path, "servers.yaml", {"servers": [server]})
    for command in COMMANDS:
        _one_line(cli(command[0], spec, "--catalog", catalog, *command[1:]), f"error: {catalog}",
                  f"servers[id={server['id']}].gpu", f"unknown GPU '{server['gpu']}'")


def test_sensitivity_swing_of_100_percent_is_rejected():
    from fabricplan.decide.whatif import sensitivity
    from fabricplan.spec import parse_spec

    with pytest.raises(InputError, match="swing must be at least 0 and below 1"):
        sensitivity(parse_spec(BASE), load_catalog(), swing=1.2)


# --- collective flags ---------------------------------------------------------------------------------

@pytest.mark.parametrize("args,fragment", [
    (("--size", "1e400GiB"), "--size: size '1e400GiB' is not like 8B, 64KiB, 16MiB, 8G or 1MB (1 B..1 TiB"),
    (("--size", "99999999999999999999999999TiB"), "--size: size '99999999999999999999999999TiB' must be in 1 B..1 TiB"),
    (("--size", "9" * 5000), "--size: size '999999999999'...(5,000 characters) is not like 8B"),
    (("--sweep-sizes", "8B:1e300B"), "--sweep-sizes: stop '1e300B' is not like 8B"),
    (("--sweep-sizes", "8B:2TiB"), "--sweep-sizes: stop '2TiB' must be in 1 B..1 TiB"),
    (("--size", "0.5"), "--size: size '0.5' is 0.5 bytes; a size is a whole number of bytes (1 B..1 TiB)"),
    (("--size", "1.5"), "--size: size '1.5' is 1.5 bytes"),
    (("--size", "inf"), "--size: size 'inf' is not like"),
    (("--size", "-8MiB"), "--size: size '-8MiB' must be in 1 B..1 TiB"),
    (("--size", "8PiB"), "--size: size '8PiB' has an unknown unit 'PiB'"),
    (("--gpus", "9" * 30, "--size", "8MiB"), "gpus: at most 10,000,000 GPUs"),
    (("--gpus", "99999999999", "--gpus-per-node", "99999999999", "--size", "8MiB"), "gpus: at most"),
    (("--gpus-per-node", "4096", "--gpus", "8192", "--size", "8MiB"), "gpus-per-node: GPUs per node must be at most"),
    (("--nics-per-node", "99999999999", "--size", "8MiB"), "nics-per-node: NICs per node must be at most"),
])
def test_collective_rejects_absurd_flags(cli, args, fragment):
    _one_line(cli("collective", *args), fragment)


def test_collective_at_the_bounds_still_runs(cli):
    result = cli("collective", "--sweep-sizes", "512GiB:1TiB", "--gpus", "16", "--json")
    assert result.code == 0, result.err
    assert [row["size_bytes"] for row in result.json()["results"]] == [2 ** 39, 2 ** 40]


def test_scale_search_skips_sizes_whose_weak_scaled_batch_breaks_a_bound(cli, tmp_path):
    """900 million sequences on 8 GPUs: at 16 GPUs the weak-scaled batch (1.8 billion) is over the
    spec's bound; the scale search leaves the job out there instead of raising pydantic's error."""
    spec = _spec(tmp_path, lambda d: d["cluster"].update(gpus=8)
                 or d["jobs"][0].update(global_batch_sequences=900_000_000))
    result = cli("compare", spec, "--quiet", "--json")
    assert result.code == 0, result.err
    assert [p["gpus"] for p in result.json()["scale_curve"]] == [8]


def test_sizing_errors_name_the_spec_field(cli, tmp_path):
    spec = _spec(tmp_path, lambda d: d.update(topology={"tiers": 1}, jobs=[]) or d["cluster"].update(gpus=1024))
    for command in (("topology",), ("cost",), ("compare", "--quick", "--quiet")):
        _one_line(cli(command[0], spec, *command[1:]), f"error: {spec}: topology.tiers: 1 tier(s) hold at most")


@pytest.mark.parametrize("bad", [0, -2])
def test_nics_per_gpu_below_one_is_an_input_error(bad):
    from fabricplan.perf.collectives import collective_time

    catalog = load_catalog()
    with pytest.raises(InputError, match="NICs per GPU must be >= 1") as info:
        collective_time("all_reduce", 2**20, 16, 8, "infiniband-ndr", catalog.gpu("h100-sxm"), nics_per_gpu=bad,
                        catalog=catalog)
    assert info.value.location == "nics-per-gpu"


def test_more_nics_than_gpus_per_node_on_the_command_line(cli):
    # 32 NICs for 8 GPUs (AWS p5 shape) on EFA runs; 2,000 NICs is past the program limit.
    out = cli("collective", "--fabric", "aws-efa", "--gpus", "16", "--gpus-per-node", "8", "--nics-per-node", "32",
              "--size", "1GiB")
    assert out.code == 0, out.err
    out = cli("collective", "--gpus", "16", "--gpus-per-node", "8", "--nics-per-node", "2000", "--size", "1GiB")
    assert out.code == 2 and out.err.count("\n") == 1 and "nics-per-node" in out.err
