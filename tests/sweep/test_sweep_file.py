"""Sweep files: axes (lists, ranges), zip and product, filters, outputs, spec dotted paths."""

from __future__ import annotations

import json

import pytest
from sweep_files import SMALL_AXES, write_sweep

from fabricplan.errors import InputError
from fabricplan.spec.paths import get_path, with_values
from fabricplan.sweep import load_sweep
from fabricplan.sweep.model import AxisRange
from fabricplan.sweep.points import input_column


def test_ranges_linear_log_and_integer_rounding():
    assert AxisRange(low=30000, high=70000, steps=5).values() == [30000, 40000, 50000, 60000, 70000]
    assert AxisRange(low=1024, high=32768, steps=6, scale="log").values() == [1024, 2048, 4096, 8192, 16384, 32768]
    assert AxisRange(low=0.05, high=0.25, steps=3).values() == pytest.approx([0.05, 0.15, 0.25])
    assert AxisRange(low=1, high=2, steps=3).values() == [1, 2, 2]  # 1.5 rounds to even: integers stay integers


def test_product_order_first_axis_slowest(tmp_path):
    sweep = load_sweep(write_sweep(tmp_path, SMALL_AXES))
    points = list(sweep.points())
    assert sweep.total == 6
    assert [index for index, _ in points] == list(range(6))
    assert [tuple(v.values()) for _, v in points] == [(512, 30000), (512, 50000), (1024, 30000), (1024, 50000),
                                                      (2048, 30000), (2048, 50000)]


def test_zip_moves_axes_together_and_product_with_the_rest(tmp_path):
    axes = {"cluster.gpus": [512, 1024, 2048], "jobs.0.global_batch_sequences": [256, 512, 1024],
            "economics.energy_usd_per_kwh": [0.1, 0.2]}
    sweep = load_sweep(write_sweep(tmp_path, axes, zip=[["cluster.gpus", "jobs.0.global_batch_sequences"]]))
    values = [tuple(v.values()) for _, v in sweep.points()]
    assert sweep.total == 6
    assert values == [(512, 256, 0.1), (512, 256, 0.2), (1024, 512, 0.1), (1024, 512, 0.2), (2048, 1024, 0.1),
                      (2048, 1024, 0.2)]


def test_filters_keep_points_where_every_condition_holds(tmp_path):
    axes = {**SMALL_AXES, "jobs.0.tp": [4, 8]}
    sweep = load_sweep(write_sweep(tmp_path, axes, filters=[
        "cluster.gpus >= 1024", "catalog.switches.sw_ib_qm9700.price_usd < 40000",
        "jobs.0.tp == cluster.gpus_per_node"]))
    kept = [(i, v) for i, v in sweep.points()]
    assert [v for _, v in kept] == [{"cluster.gpus": 1024, "catalog.switches.sw_ib_qm9700.price_usd": 30000,
                                     "jobs.0.tp": 8},
                                    {"cluster.gpus": 2048, "catalog.switches.sw_ib_qm9700.price_usd": 30000,
                                     "jobs.0.tp": 8}]
    assert [i for i, _ in kept] == [5, 9]  # indexes count every point, kept or not


def test_point_id_is_a_content_hash_of_the_inputs(tmp_path):
    first = load_sweep(write_sweep(tmp_path, SMALL_AXES))
    again = load_sweep(write_sweep(tmp_path, {"cluster.gpus": [1024, 512]}, name="other"))
    values = {"cluster.gpus": 512}
    assert first.point_id(values) == again.point_id(values)  # same base, same values: same id
    assert first.point_id(values) != first.point_id({"cluster.gpus": 1024})
    changed = write_sweep(tmp_path, {"cluster.gpus": [512]}, name="quick", quick=False)
    assert load_sweep(changed).point_id(values) != first.point_id(values)  # model options are inputs too


def test_spec_paths_by_index_by_name_and_new_keys():
    document = {"cluster": {"gpus": 8}, "fabrics": ["roce-v2", "infiniband-ndr"],
                "jobs": [{"name": "a", "tp": 8}, {"name": "b", "tp": 4}]}
    assert get_path(document, "jobs.b.tp") == 4
    updated = with_values(document, {"jobs.1.tp": 2, "cluster.nic_speed_gbps": 800,
                                     "fabrics.infiniband-ndr.switch": "sw_ib_q3400"})
    assert updated["jobs"][1]["tp"] == 2 and updated["cluster"] == {"gpus": 8, "nic_speed_gbps": 800}
    assert updated["fabrics"] == ["roce-v2", {"profile": "infiniband-ndr", "switch": "sw_ib_q3400"}]
    assert document["jobs"][1]["tp"] == 4 and document["fabrics"][1] == "infiniband-ndr"  # unchanged


def test_input_columns_read_unquoted_in_sql():
    assert input_column("catalog.switches.sw_ib_qm9700.price_usd") == "catalog_switches_sw_ib_qm9700_price_usd"
    assert input_column("fabrics.infiniband-ndr.switch") == "fabrics_infiniband_ndr_switch"


def test_published_schema_accepts_the_worked_example():
    import jsonschema
    import yaml

    from project_paths import EXAMPLES, ROOT

    schema = json.loads((ROOT / "schemas" / "sweep.schema.json").read_text())
    jsonschema.validate(yaml.safe_load((EXAMPLES / "sweeps" / "llama70b-space.yaml").read_text()), schema)


def test_worked_example_has_2000_points():
    from project_paths import EXAMPLES

    sweep = load_sweep(EXAMPLES / "sweeps" / "llama70b-space.yaml")
    assert sweep.total == 2000 and sum(1 for _ in sweep.points()) == 2000
    assert sweep.context.fabrics == ["ethernet-tcp", "roce-v2", "infiniband-ndr"]


def test_unknown_output_is_one_line(tmp_path):
    with pytest.raises(InputError, match=r"outputs\[0\]: unknown output 'cost'"):
        load_sweep(write_sweep(tmp_path, SMALL_AXES, outputs=["cost"]))


def test_point_ids_change_with_the_bundled_data(tmp_path, monkeypatch):
    import fabricplan.sweep.points as points

    values = {"cluster.gpus": 512}
    before = load_sweep(write_sweep(tmp_path, SMALL_AXES)).point_id(values)
    monkeypatch.setattr(points, "bundled_data_hash", lambda: "another catalog release")
    assert load_sweep(write_sweep(tmp_path, SMALL_AXES)).point_id(values) != before
