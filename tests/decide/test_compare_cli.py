"""`fabricplan compare` on the command line: JSON against the published schema, Markdown, HTML."""

from __future__ import annotations

import json

import jsonschema
import pytest
import yaml

from project_paths import EXAMPLES, ROOT, load_script

SCHEMA_PATH = ROOT / "schemas" / "compare-report.schema.json"


def _export_module():
    return load_script("export_schemas")


def test_published_schemas_are_current():
    module = _export_module()
    for name in module.SCHEMAS:
        assert (ROOT / "schemas" / name).read_text() == module.render(name), f"run scripts/export_schemas.py ({name})"


@pytest.fixture(scope="module")
def compare_json(tmp_path_factory):
    import contextlib
    import io

    from fabricplan.cli.app import run

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run(["compare", str(EXAMPLES / "mid-128-h100-existing-ethernet.yaml"), "--json"])
    assert code == 0, err.getvalue()
    return json.loads(out.getvalue())


def test_compare_json_validates_against_published_schema(compare_json):
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.validate(compare_json, schema)
    assert compare_json["recommendation"]["recommended"] in {f["fabric"] for f in compare_json["fabrics"]}
    assert [f["rank"] for f in compare_json["fabrics"]] == [1, 2, 3]


def test_schema_rejects_a_broken_report(compare_json):
    schema = json.loads(SCHEMA_PATH.read_text())
    broken = json.loads(json.dumps(compare_json))
    del broken["recommendation"]["recommended"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


def test_compare_quick_text_and_bad_spec(cli, tmp_path):
    result = cli("compare", EXAMPLES / "single-node-8-inference.yaml", "--quick", "--quiet")
    assert result.code == 0, result.err
    assert "recommend" in result.out.lower()
    bad = tmp_path / "bad.yaml"
    bad.write_text("cluster: {gpu: h100-sxm, gpus: 16}\njobs: [{name: x, model: llama3-70b, tp: 3, "
                   "global_batch_sequences: 8, seq_len_tokens: 4096}]\n")
    result = cli("compare", bad, "--quick", "--quiet")
    assert result.code == 2 and result.err.startswith("error: ") and "tp" in result.err


def test_compare_markdown_and_html(cli, tmp_path):
    html = tmp_path / "report.html"
    result = cli("compare", EXAMPLES / "mid-128-h100-existing-ethernet.yaml", "--markdown", "--html", html)
    assert result.code == 0, result.err
    assert result.out.lstrip().startswith("#")
    assert "roce-v2" in result.out
    text = html.read_text()
    assert text.count("<html") == 1 and 'src="http' not in text


def test_compare_html_to_an_unwritable_path_is_one_error_line(cli, tmp_path):
    result = cli("compare", EXAMPLES / "single-node-8-inference.yaml", "--quick", "--quiet",
                 "--html", tmp_path / "missing" / "report.html")
    assert result.code == 2
    assert result.err.startswith("error: ") and result.err.count("\n") == 1 and "report.html" in result.err


def test_compare_text_prints_job_names_with_brackets(cli, tmp_path):
    document = yaml.safe_load((EXAMPLES / "single-node-8-inference.yaml").read_text())
    document["jobs"][0]["name"] = "[b]j[/]"
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(document))
    result = cli("compare", spec, "--quick", "--quiet")
    assert result.code == 0, result.err
    assert "[b]j[/]" in result.out


def test_draws_and_seed_flags(cli):
    spec = str(EXAMPLES / "mid-128-h100-existing-ethernet.yaml")
    one = cli("compare", spec, "--quick", "--quiet", "--json", "--draws", "300", "--seed", "5")
    two = cli("compare", spec, "--quick", "--quiet", "--json", "--draws", "300", "--seed", "5")
    assert one.code == 0 and json.loads(one.out)["uncertainty"] == json.loads(two.out)["uncertainty"]
    report = json.loads(one.out)
    assert (report["uncertainty"]["draws"], report["uncertainty"]["seed"]) == (300, 5)
    assert report["recommendation"]["decided_by"] in {"numbers", "exclusions"}
    none = json.loads(cli("compare", spec, "--quick", "--quiet", "--json", "--draws", "0").out)
    assert none["uncertainty"] is None and none["recommendation"]["probability_best"] is None
    bad = cli("compare", spec, "--quick", "--quiet", "--draws", "-1")
    assert bad.code == 2 and len(bad.err.strip().splitlines()) == 1


def test_markdown_shows_uncertainty_designs_advice_and_tier_boundaries(cli):
    out = cli("compare", str(EXAMPLES / "mid-128-h100-existing-ethernet.yaml"), "--quiet", "--markdown",
              "--draws", "200").out
    for heading in ("## Uncertainty: cost per useful GPU-hour over 200 draws", "## Designs considered",
                    "## The seeds' advice beside the numbers (it does not rank)", "## Tier boundaries",
                    "## Crossovers"):
        assert heading in out, heading
    assert "| infiniband-ndr | sw_ib_qm9700 | rail optimized | 2 | 6 |" in out  # 4 leaves + 2 spines


def test_a_job_over_memory_is_re_laid_and_flagged_in_json_and_terminal(cli):
    # The 128-GPU example's 8B fine-tune needs 82.5 GiB per GPU at selective recompute on a 74.5 GiB
    # H100: the chain re-lays it with full recomputation (which fits) and every output says so.
    spec = str(EXAMPLES / "mid-128-h100-existing-ethernet.yaml")
    result = cli("compare", spec, "--quick", "--quiet", "--json", "--draws", "0")
    assert result.code == 0
    report = json.loads(result.out)
    for fabric in report["fabrics"]:
        job = next(j for j in fabric["jobs"] if j["job"] == "llama3-8b-finetune")
        assert job["fits_memory"] and job["recompute"] == "full"
        assert job["memory_per_gpu_gib"] <= job["memory_capacity_gib"]
        assert job["memory_note"].startswith("re-laid: needs 82.5 GiB per GPU with recompute selective")
        other = next(j for j in fabric["jobs"] if j["job"] != "llama3-8b-finetune")
        assert other["fits_memory"] and other["memory_note"] == ""
    assert any(n.startswith("Memory: llama3-8b-finetune re-laid") for n in report["notes"])
    text = cli("compare", spec, "--quick", "--quiet", "--draws", "0").out
    assert "memory/GPU: llama3-8b-finetune" in text and "re-laid to fit in GPU memory" in text
    assert "Memory: llama3-8b-finetune re-laid" in " ".join(text.split())
    markdown = cli("compare", spec, "--quick", "--quiet", "--markdown", "--draws", "0").out
    assert "memory/GPU: llama3-8b-finetune" in markdown and "Memory: llama3-8b-finetune re-laid" in markdown


def test_the_relaid_job_runs_slower_than_the_layout_that_does_not_fit():
    # Full recomputation repeats the forward pass: the re-laid step is longer than the (unfitting) one.
    from fabricplan.catalog import load_catalog
    from fabricplan.plan import DEFAULT_PLAN
    from fabricplan.spec import load_spec

    catalog = load_catalog()
    spec = load_spec(EXAMPLES / "mid-128-h100-existing-ethernet.yaml", catalog)
    relaid = DEFAULT_PLAN.evaluate(spec, catalog, fabrics=["roce-v2"]).runs["roce-v2"]
    assert relaid.spec.jobs[0].recompute == "full" and spec.jobs[0].recompute == "selective"
    unfit = DEFAULT_PLAN.performance(spec, catalog, relaid.design, relaid.levers, DEFAULT_PLAN.efficiency())
    assert not unfit[0].memory_fits and relaid.steps[0].memory_fits
    assert relaid.steps[0].step_time_s > unfit[0].step_time_s


def test_the_single_node_designs_table_lists_each_distinct_design_once(cli):
    # One 8-GPU server: every switch model x style is "0 tiers, 0 switches" at the same cost, so each
    # fabric's table shows one buildable row standing for all its options.
    from fabricplan.catalog import load_catalog
    from fabricplan.decide import compare
    from fabricplan.report.compare_content import design_rows
    from fabricplan.spec import load_spec

    catalog = load_catalog()
    report = compare(load_spec(EXAMPLES / "single-node-8-inference.yaml", catalog), catalog, search_scale=False,
                     analyse_sensitivity=False, draws=0)
    buildable = [row for row in design_rows(report) if row[3] != "-"]
    assert sorted(row[0] for row in buildable) == sorted(f.fabric for f in report.fabrics)
    assert all(row[3:5] == ("0", "0") and "the same design as" in row[7] for row in buildable)
    considered = sum(1 for f in report.fabrics for d in f.designs_considered if d.tiers is not None)
    assert considered > len(buildable)  # the options are all still in the JSON
