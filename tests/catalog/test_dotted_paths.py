"""Catalog.get_path / with_values: round trips, price ranges, errors, immutability."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricplan.catalog import SET_BY_PATH, Range, load_catalog
from fabricplan.errors import CatalogError
from fabricplan.perf.latency import perf_parameter
from fabricplan.perf.nccl_tuner import tuner_constants

CATALOG = load_catalog()


def test_get_path_reads_entries_documents_numeric_keys_and_list_items():
    assert CATALOG.get_path("switches.sw_ib_qm9700.price_usd.default") == 45000.0
    assert CATALOG.get_path("switches.sw_ib_qm9700.price_usd") == Range(low=36000, default=45000, high=50000)
    assert CATALOG.get_path("perf_defaults.parameters.tp_overlap_unhidden_collective_share.value") == 0.25
    assert CATALOG.get_path("nccl_tuner.versions.2.30.7.tree_factor") == 0.92  # "2.30.7" is one key
    assert CATALOG.get_path("nccl_tuner.versions.2.7.5.tree_factor") == 0.9
    assert CATALOG.get_path("nccl_tuner.nvlink_bw_per_link_gbytes_per_s.90") == 20.6  # int key
    assert CATALOG.get_path("nccl_tuner.versions.2.30.7.hw_latency_us.net.ring.2") == 14.0  # list index
    assert CATALOG.get_path("nccl_tuner.network_steps.tree_ll128_halving.1.floor_bytes") == 32768
    assert CATALOG.get_path("ops_defaults.headroom.sonic.asic.spectrum-3.value")["cell_size_bytes"] == 144
    assert CATALOG.get_path("models.gpt3-175b.hidden") == 12288


def test_with_values_returns_a_new_catalog_and_leaves_the_original_alone():
    changed = CATALOG.with_values({
        "perf_defaults.parameters.tp_overlap_efficiency.value": 0.5,
        "nccl_tuner.versions.2.30.7.tree_factor": 0.8,
        "switches.sw_ib_qm9700.power_w": 800,
        "ops_defaults.lint.max_lossless_priorities.value": 3,
        "models.llama3-8b.layers": 16,
    })
    assert changed.get_path("perf_defaults.parameters.tp_overlap_efficiency.value") == 0.5
    assert perf_parameter("tp_overlap_efficiency", changed) == 0.5
    assert tuner_constants(catalog=changed)["tree_factor"] == 0.8
    assert changed.switch("sw_ib_qm9700").power_w == 800.0
    assert changed.get_path("ops_defaults.lint.max_lossless_priorities.value") == 3
    assert changed.model_preset("llama3-8b").layers == 16
    # the original is unchanged, and so is a fresh load
    for catalog in (CATALOG, load_catalog()):
        assert perf_parameter("tp_overlap_efficiency", catalog) == 0.0
        assert tuner_constants(catalog=catalog)["tree_factor"] == 0.92
        assert catalog.switch("sw_ib_qm9700").power_w != 800.0
        assert catalog.model_preset("llama3-8b").layers == 32
        assert catalog.origins["switches"]["sw_ib_qm9700"] == "bundled"
    # untouched parts are shared, changed ones record where they come from
    assert changed.switch("sw_eth_th5") is CATALOG.switch("sw_eth_th5")
    assert changed.origins["switches"]["sw_ib_qm9700"] == SET_BY_PATH
    assert changed.origin("nccl_tuner.versions.2.30.7.tree_factor") == SET_BY_PATH
    assert changed.origin("nccl_tuner.versions.2.19.3.tree_factor") == "bundled"
    # chaining keeps earlier changes
    again = changed.with_values({"switches.sw_ib_qm9700.price_usd.default": 40000})
    assert again.switch("sw_ib_qm9700").power_w == 800.0
    assert again.get_path("switches.sw_ib_qm9700.price_usd") == Range(low=36000, default=40000, high=50000)


def test_a_number_on_a_price_range_sets_low_default_and_high():
    changed = CATALOG.with_values({"switches.sw_ib_qm9700.price_usd": 30000})
    assert changed.get_path("switches.sw_ib_qm9700.price_usd") == Range(low=30000, default=30000, high=30000)
    for point in ("low", "default", "high"):
        assert changed.switch("sw_ib_qm9700").price_usd.at(point) == 30000.0
    # a mapping merges field by field, as overlays do
    merged = CATALOG.with_values({"switches.sw_ib_qm9700.price_usd": {"high": 60000}})
    assert merged.get_path("switches.sw_ib_qm9700.price_usd") == Range(low=36000, default=45000, high=60000)


@pytest.mark.parametrize("path, expected", [
    ("switches.sw_nope.power_w", "no 'sw_nope' in 'switches'; known: sw_"),
    ("switches.sw_ib_qm9700.pwer_w", "no field 'pwer_w' in 'switches.sw_ib_qm9700' (Switch); fields: id, name"),
    ("switchs.sw_ib_qm9700", "no 'switchs' in the catalog; known: switches, nics"),
    ("nccl_tuner.versions.2.31.0.tree_factor", "no '2.31.0.tree_factor' in 'nccl_tuner.versions'; known: 2.30.7"),
    ("nccl_tuner.versions.2.30.7.hw_latency_us.net.ring.3", "'3' is not an index of"),
    ("switches.sw_ib_qm9700.power_w.max", "'switches.sw_ib_qm9700.power_w' is a value"),
    ("switches..power_w", "a catalog path is dot-separated names"),
])
def test_bad_paths_name_the_failing_segment_and_what_exists(path, expected):
    with pytest.raises(CatalogError) as error:
        CATALOG.get_path(path)
    assert expected in str(error.value)
    with pytest.raises(CatalogError) as error:
        CATALOG.with_values({path: 1.0})
    assert expected in str(error.value)


@pytest.mark.parametrize("values, expected", [
    ({"switches.sw_ib_qm9700.price_usd.default": 99999}, "high (50000.0) must not be below default"),
    ({"switches.sw_ib_qm9700.power_w": -5}, "power_w: Input should be greater than or equal to 0"),
    ({"nccl_tuner.versions.2.30.7.inter_latency_rule": "sum"}, "inter_latency_rule: Input should be 'add'"),
    ({"nccl_tuner.default_version": "2.0"}, "default_version '2.0' is not one of the versions"),
    ({"switches.sw_ib_qm9700.id": "x"}, "an entry's id cannot be set by path"),
    ({"switches": 1}, "name an entry of 'switches'"),
])
def test_values_a_field_does_not_accept_are_errors_naming_the_path(values, expected):
    with pytest.raises(CatalogError) as error:
        CATALOG.with_values(values)
    message = str(error.value)
    assert message.startswith(f"catalog path {next(iter(values))}: ")
    assert expected in message and "\n" not in message


NUMERIC_PATHS = [
    "switches.sw_ib_qm9700.price_usd",
    "switches.sw_eth_th5.power_w",
    "perf_defaults.parameters.alltoall_per_peer_latency_us.value",  # a share (..._efficiency) is bounded to 0..1
    "perf_defaults.parameters.host_link_length_m.value",
    "nccl_tuner.versions.2.30.7.tree_factor",
    "nccl_tuner.versions.2.17.1.hw_latency_us.net.ring.2",
    "nccl_tuner.nvlink_bw_per_link_gbytes_per_s.90",
    "ops_defaults.headroom.generic.ns_per_m.value",
    # a parameter without a sanity bound of its own (PARAMETER_BOUNDS: energy price <= 10 USD/kWh ...)
    "parameters.rule_infiniband_allreduce_above_gpus.value",
]


@settings(max_examples=60, deadline=None)
@given(path=st.sampled_from(NUMERIC_PATHS),
       value=st.floats(min_value=0.001, max_value=1e6, allow_nan=False, allow_infinity=False))
def test_with_values_then_get_path_returns_the_value(path, value):
    changed = CATALOG.with_values({path: value})
    got = changed.get_path(path)
    if isinstance(got, Range):  # a number on a range sets all three points
        assert (got.low, got.default, got.high) == (value, value, value)
    else:
        assert got == value
    assert changed.origin(path) == SET_BY_PATH
    assert CATALOG.get_path(path) != got or CATALOG.get_path(path) == value
