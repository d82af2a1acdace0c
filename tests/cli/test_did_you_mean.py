"""A mistyped name gets one line naming the closest 1-3 known ones (issue 30): spec fields, sweep-file
fields, `catalog show` ids and `catalog list` sections; `catalog list` summarises by section."""

from __future__ import annotations

import yaml

from fabricplan.errors import closest, did_you_mean
from project_paths import EXAMPLES

SPEC = EXAMPLES / "llama70b-1024-h100.yaml"


def _spec_with(tmp_path, edit) -> str:
    document = yaml.safe_load(SPEC.read_text())
    edit(document)
    path = tmp_path / "typo.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def _one_line(result) -> str:
    assert result.code == 2, (result.out, result.err)
    assert result.err.count("\n") == 1 and result.err.startswith("error: ") and "Traceback" not in result.err
    return result.err.strip()


def test_closest_names_best_first():
    assert closest("gpu_per_node", ["gpus_per_node", "nics_per_node", "gpu", "name"]) == ["gpus_per_node",
                                                                                          "nics_per_node"]
    assert closest("H100-SXM", ["h100-sxm", "h200-sxm"])[0] == "h100-sxm"
    assert did_you_mean("zzz", ["switch", "nic"]) == ""
    assert did_you_mean("swich", ["switch", "nic"]) == "did you mean 'switch'?"


def test_a_misspelt_spec_field_names_the_field_meant(cli, tmp_path):
    def edit(document):
        document["cluster"]["gpu_per_node"] = document["cluster"].pop("gpus_per_node", 8)
    line = _one_line(cli("step", _spec_with(tmp_path, edit)))
    assert "cluster.gpu_per_node: unknown field; did you mean 'gpus_per_node'" in line
    assert "`fabricplan schema` lists the fields" in line


def test_nested_fields_inside_lists_and_unions(cli, tmp_path):
    def edit(document):
        document["fabrics"] = [{"profile": "roce-v2", "swich": "sw_eth_th5"}]
        document["economics"] = {"horizon_year": 3}
    line = _one_line(cli("cost", _spec_with(tmp_path, edit)))
    assert "fabrics[0].swich: unknown field; did you mean 'switch'?" in line
    assert "economics.horizon_year: unknown field; did you mean 'horizon_years'?" in line


def test_a_misspelt_required_field_is_named_before_it_is_missing(cli, tmp_path):
    def edit(document):
        job = document["jobs"][0]
        job["global_batch_sequence"] = job.pop("global_batch_sequences")
    line = _one_line(cli("step", _spec_with(tmp_path, edit)))
    unknown = line.index("jobs[0].global_batch_sequence: unknown field; did you mean 'global_batch_sequences'")
    assert unknown < line.index("jobs[0].global_batch_sequences: required field is missing")


def test_a_sweep_file_field(cli, tmp_path):
    sweep = tmp_path / "s.yaml"
    sweep.write_text(yaml.safe_dump({"name": "s", "base": str(SPEC), "axis": {"cluster.gpus": [512]}}))
    line = _one_line(cli("sweep", "run", sweep, "--dry-run"))
    assert "axis: unknown field; did you mean 'axes'? (`fabricplan sweep schema` lists the fields)" in line


def test_a_mistyped_catalog_id_names_the_closest_not_every_id(cli):
    line = _one_line(cli("catalog", "show", "sw_ib_qm970"))
    assert "did you mean 'sw_ib_qm9700'" in line
    assert len(line) < 300 and "a100-sxm-80gb" not in line  # was every one of ~150 ids
    assert "did you mean 'tp_overlap_efficiency'" in _one_line(cli("catalog", "show", "tp_overlap_eficiency"))
    nothing = _one_line(cli("catalog", "show", "zzzqqq"))
    assert "did you mean" not in nothing and "fabricplan catalog list" in nothing


def test_a_mistyped_catalog_section(cli):
    assert "did you mean 'switches'?" in _one_line(cli("catalog", "list", "switchs"))


def _sections(document: dict) -> dict:
    """The sections of `catalog list --json` (without the version and catalog stamp)."""
    return {k: v for k, v in document.items() if k not in ("fabricplan_version", "catalog_sha256")}


def test_catalog_list_summarises_each_section(cli):
    summary = cli("catalog", "list")
    assert summary.code == 0, summary.err
    everything = _sections(cli("catalog", "list", "--json").json())
    lines = summary.out.splitlines()
    assert len(lines) < 50  # was 1,127 lines
    for section, entries in everything.items():
        row = next(line for line in lines if line.split()[:1] == [section])
        assert row.split()[1] == f"{len(entries):,}", row
    assert "--all" in summary.out and "catalog list SECTION" in summary.out


def test_catalog_list_all_and_one_section_list_every_entry(cli):
    everything = _sections(cli("catalog", "list", "--json").json())
    full = cli("catalog", "list", "--all")
    assert full.code == 0 and len(full.out.splitlines()) > sum(len(v) for v in everything.values())
    switches = cli("catalog", "list", "switches").out
    assert all(entry_id in switches for entry_id in everything["switches"])
    assert cli("catalog", "list", "switches", "--all").code == 2
