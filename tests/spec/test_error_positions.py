"""Schema errors name the file, line and column of the field (issue 30), in YAML and JSON."""

from __future__ import annotations

import pytest

from fabricplan.errors import InputError
from fabricplan.io import document_position
from fabricplan.spec import read_spec

YAML = """name: bad
cluster:
  gpu: h100-sxm
  gpus: 16
jobs:
  - name: a
    model: llama3-8b
    tp: 0
    global_batch_sequences: 16
    seq_len_tokens: 4096
"""


def test_a_bad_value_is_located_at_its_field(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text(YAML)
    with pytest.raises(InputError) as error:
        read_spec(path)
    assert error.value.location == f"{path}:8:5"  # `tp:` of the first job
    assert error.value.message.startswith("jobs[0].tp:")


def test_a_misspelt_field_is_located_at_the_misspelling_and_a_missing_one_at_its_mapping(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text(YAML.replace("tp: 0", "tpp: 2"))
    with pytest.raises(InputError) as error:
        read_spec(path)
    assert error.value.location == f"{path}:8:5" and "did you mean 'tp'" in error.value.message
    assert document_position("cluster:\n  gpus: 8\n", ("cluster", "gpu")) == (2, 3)


def test_json_positions(tmp_path):
    path = tmp_path / "spec.json"
    path.write_text('{"cluster": {"gpu": "h100-sxm",\n "gpus": 0}}')
    with pytest.raises(InputError) as error:
        read_spec(path)
    assert error.value.location == f"{path}:2:2"
    assert document_position("[1, 2", (0,)) is None  # text that does not compose: no position
