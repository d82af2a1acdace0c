"""The typed sections perf_defaults, nccl_tuner, ops_defaults and models: load, overlay, errors."""

from __future__ import annotations

import pytest
import yaml

from fabricplan.catalog import DOCUMENTS, ModelPreset, NcclTuner, OpsDefaults, PerfDefaults, load_catalog
from fabricplan.errors import CatalogError
from fabricplan.ops import defaults
from fabricplan.perf.flops import model_dims
from fabricplan.perf.latency import perf_parameter, perf_table
from fabricplan.perf.nccl_tuner import (
    Communicator,
    Graph,
    algorithm_bandwidth_gbytes_per_s,
    algorithm_latency_us,
    network_step_delay_us,
    nvlink_bw_per_link_gbytes_per_s,
    tuner_constants,
    tuner_versions,
)

CATALOG = load_catalog()

SOURCE = {"source": "test overlay: a made-up value for the test", "date": "2026-06"}


def comm(n_nodes: int, ppn: int = 8, cc: int = 80) -> Communicator:
    graph = Graph(8, 24.0, 24.0)
    return Communicator(n_ranks=n_nodes * ppn, n_nodes=n_nodes, compute_capability=cc,
                        graphs={"ring": graph, "tree": graph})


def overlay(tmp_path, document: dict, name: str = "overlay.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return path


def test_each_new_section_loads_typed_with_its_numbers():
    catalog = load_catalog()
    assert isinstance(catalog.perf_defaults, PerfDefaults)
    assert isinstance(catalog.nccl_tuner, NcclTuner)
    assert isinstance(catalog.ops_defaults, OpsDefaults)
    assert catalog.perf_defaults.parameters["tp_overlap_unhidden_collective_share"].value == 0.25
    assert catalog.perf_defaults.parameters["nvlink_gbytes_per_link_bidirectional"].value == {
        70: 50.0, 80: 50.0, 90: 50.0, 100: 100.0}
    tuner = catalog.nccl_tuner
    assert tuner.default_version == "2.30.7"
    assert set(tuner.versions) == {"2.30.7", "2.19.3", "2.17.1", "2.7.5"}
    assert tuner.versions["2.30.7"].hw_latency_us["net"]["nvls_tree"] == [0, 0, 20.9]
    assert tuner.versions["2.7.5"].tree_absolute_cap.up_to_2_nodes == 110.0
    assert tuner.network_steps.step_data_bytes == {"ll": 32768, "ll128": 576000}
    assert tuner.nvlink_bw_per_link_gbytes_per_s[90] == 20.6
    preset = catalog.model_preset("llama3-70b")
    assert isinstance(preset, ModelPreset)
    assert (preset.layers, preset.hidden, preset.kv_heads, preset.vocab) == (80, 8192, 8, 128256)
    assert defaults.value("lint.roce_dscp", catalog) == 26
    assert defaults.value("headroom.pause_quanta_by_speed_mbps", catalog)[400000] == 905


def test_every_item_of_the_new_sections_has_source_and_date():
    catalog = load_catalog()
    for name in DOCUMENTS:
        items = catalog.document_items(name)
        assert items, name
        for path, _item in items:
            source, date = catalog.source_of(f"{name}.{path}")
            assert len(source) > 10 and date[:4].isdigit(), (name, path)
    for preset in catalog.section("models").values():
        assert len(preset.source) > 10 and preset.date[:4].isdigit()


def test_accessors_default_to_the_bundled_catalog():
    assert perf_parameter("host_link_length_m", catalog=CATALOG) == 3.0
    assert perf_table("nvlink_gbytes_per_link_bidirectional", catalog=CATALOG)[100] == 100.0
    assert tuner_constants(catalog=CATALOG)["version"] == "2.30.7"
    assert tuner_constants("2.17.1", catalog=CATALOG)["intra_ll_latency_multiplier_multinode"] == 1.8
    assert set(tuner_versions(catalog=CATALOG)) == {"2.30.7", "2.19.3", "2.17.1", "2.7.5"}
    assert nvlink_bw_per_link_gbytes_per_s(90, catalog=CATALOG) == 20.6
    assert model_dims("llama3-8b", catalog=CATALOG).ffn_hidden == 14336
    assert defaults.source("lint.roce_pcp", catalog=CATALOG).startswith("NVIDIA Cumulus")
    assert defaults.group("headroom.sonic.asic", catalog=CATALOG)["spectrum-2"]["value"]["cell_size_bytes"] == 144


def test_overlay_moves_tuner_constants_perf_defaults_models_and_ops(tmp_path):
    path = overlay(tmp_path, {
        "nccl_tuner": {
            "versions": {"2.30.7": {"base_latency_us": {"ring": [6.6, 14.0, 18.4]}, "tree_algbw_ratio": 0.25}},
            "network_steps": {"wire_bytes_per_data_byte": {"ll": 4.0}},
            "nvlink_bw_per_link_gbytes_per_s": {90: 25.0},
        },
        "perf_defaults": {"parameters": {"tp_overlap_efficiency": {"value": 0.5, **SOURCE}}},
        "models": [{"id": "llama3-70b", "layers": 40, **SOURCE}],
        "ops_defaults": {"lint": {"roce_dscp": {"value": 24, **SOURCE}}},
    })
    catalog = load_catalog([path])
    bundled = load_catalog()
    # accessors
    assert perf_parameter("tp_overlap_efficiency", catalog) == 0.5
    assert perf_parameter("tp_overlap_efficiency", catalog=CATALOG) == 0.0 == perf_parameter("tp_overlap_efficiency", bundled)
    constants = tuner_constants(catalog=catalog)
    assert constants["base_latency_us"]["ring"] == [6.6, 14.0, 18.4]
    assert constants["base_latency_us"]["tree"] == [6.8, 14.0, 8.4]  # merged field by field
    assert constants["tree_algbw_ratio"] == 0.25 and tuner_constants(catalog=CATALOG)["tree_algbw_ratio"] == 0.5
    assert tuner_constants("2.19.3", catalog=catalog)["tree_algbw_ratio"] == 0.5
    assert nvlink_bw_per_link_gbytes_per_s(90, catalog) == 25.0
    assert nvlink_bw_per_link_gbytes_per_s(80, catalog) == 20.0
    assert model_dims("llama3-70b", catalog).layers == 40 and model_dims("llama3-70b", catalog=CATALOG).layers == 80
    assert defaults.value("lint.roce_dscp", catalog) == 24 and defaults.value("lint.roce_dscp", catalog=CATALOG) == 26
    # the NCCL model itself, given the overlaid constants
    base = tuner_constants(catalog=CATALOG)
    two = comm(2)
    assert algorithm_latency_us(constants, two, "all_reduce", "ring", "simple") == pytest.approx(
        algorithm_latency_us(base, two, "all_reduce", "ring", "simple") + 10.0)  # Simple base latency 8.4 -> 18.4
    assert algorithm_latency_us(constants, two, "all_reduce", "ring", "ll") == pytest.approx(
        algorithm_latency_us(base, two, "all_reduce", "ring", "ll"))
    assert algorithm_bandwidth_gbytes_per_s(constants, comm(4), "all_reduce", "tree", "simple") == pytest.approx(
        algorithm_bandwidth_gbytes_per_s(base, comm(4), "all_reduce", "tree", "simple") / 2)
    # LL steps now carry 4 wire bytes per data byte instead of 2: the store-and-forward delay doubles.
    size = 1 << 20
    delay = network_step_delay_us(two, "all_reduce", "ring", "ll", size, 8, 512, constants)
    assert delay == pytest.approx(2 * network_step_delay_us(two, "all_reduce", "ring", "ll", size, 8, 512, base))
    assert delay > 0
    # origins
    assert catalog.origin("perf_defaults.parameters.tp_overlap_efficiency.value") == str(path)
    assert catalog.origin("perf_defaults.parameters.dp_overlap_efficiency") == "bundled"
    assert catalog.origin("nccl_tuner.versions.2.30.7.tree_algbw_ratio") == str(path)
    assert catalog.origins["models"]["llama3-70b"] == str(path)


def test_collective_time_takes_the_catalog(tmp_path):
    # collective_time uses the catalog for fabrics and switches today (tuner constants: after the
    # collectives restructuring threads the catalog through); an overlaid fabric bandwidth moves it.
    from fabricplan.perf.collectives import collective_time

    catalog = load_catalog()
    slower = catalog.with_values({"fabrics.infiniband-ndr.effective_bandwidth_gbytes_per_s": 12.0})
    gpu = catalog.gpu("h100-sxm")
    fast = collective_time("all_reduce", 1 << 30, 64, 8, "infiniband-ndr", gpu, catalog=catalog)
    slow = collective_time("all_reduce", 1 << 30, 64, 8, "infiniband-ndr", gpu, catalog=slower)
    assert slow.time_us > 1.9 * fast.time_us  # bandwidth-bound: 1 GiB at 12 instead of 47 GB/s per NIC


MALFORMED = {
    "perf_defaults": ({"parameters": {"tp_overlap_efficiency": {"vaule": 0.5}}},
                      "parameters.tp_overlap_efficiency.vaule: unknown field"),
    "nccl_tuner": ({"versions": {"2.30.7": {"tree_factor": -1}}},
                   "versions.2.30.7.tree_factor: Input should be greater than 0"),
    "ops_defaults": ({"lint": {"new_rule_threshold": {"value": 3}}},
                     "lint.new_rule_threshold.source: required field is missing"),
    "models": ([{"id": "llama3-70b", "layers": 0}], "layers: Input should be greater than 0"),
}


@pytest.mark.parametrize("section", sorted(MALFORMED))
def test_malformed_overlay_is_one_error_naming_file_section_and_field(tmp_path, section):
    document, expected = MALFORMED[section]
    path = overlay(tmp_path, {section: document})
    with pytest.raises(CatalogError) as error:
        load_catalog([path])
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: {section}")
    assert expected in message


@pytest.mark.parametrize("document, expected", [
    ({"nccl_tunr": {}}, "unknown section 'nccl_tunr'; expected one of switches"),
    ({"perf_defaults": [{"id": "x"}]}, "perf_defaults: expected a mapping shaped like perf_defaults.yaml"),
    ({"nccl_tuner": {"default_version": "9.9"}}, "default_version '9.9' is not one of the versions"),
])
def test_overlay_shape_errors_name_the_file(tmp_path, document, expected):
    path = overlay(tmp_path, document)
    with pytest.raises(CatalogError, match="^" + str(path).replace("\\", "\\\\")) as error:
        load_catalog([path])
    assert expected in str(error.value)


def test_malformed_overlay_on_the_cli_exits_2_with_one_line(tmp_path, cli):
    path = overlay(tmp_path, {"nccl_tuner": {"versions": {"2.30.7": {"tree_factr": 0.9}}}})
    result = cli("catalog", "list", "nccl_tuner", "--catalog", path)
    assert result.code == 2
    assert "Traceback" not in result.err
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert len(lines) == 1 and str(path) in lines[0] and "versions.2.30.7.tree_factr: unknown field" in lines[0]


def test_catalog_cli_lists_and_shows_the_new_sections(tmp_path, cli):
    result = cli("catalog", "list", "models", "--json")
    assert result.code == 0
    assert result.json()["models"]["llama3-405b"]["layers"] == 126
    result = cli("catalog", "list", "perf_defaults", "--json")
    assert result.json()["perf_defaults"]["parameters.tp_overlap_unhidden_collective_share"]["value"] == 0.25
    path = overlay(tmp_path, {"perf_defaults": {"parameters": {"tp_overlap_efficiency": {"value": 0.5, **SOURCE}}}})
    shown = cli("catalog", "show", "tp_overlap_efficiency", "--catalog", path, "--json").json()
    assert shown["path"] == "perf_defaults.parameters.tp_overlap_efficiency"
    assert shown["value"]["value"] == 0.5 and shown["origin"] == str(path)
    shown = cli("catalog", "show", "nccl_tuner.versions.2.17.1.tree_factor", "--json").json()
    assert shown["value"] == 0.92 and shown["date"] == "2023-03" and "v2.17.1-1" in shown["source"]
    result = cli("catalog", "show", "nccl_tuner.versions.2.30.7.tree_facto")
    assert result.code == 2 and "no field 'tree_facto'" in result.err
