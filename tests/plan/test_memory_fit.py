"""Memory gates the comparison (issue 26): a job no recompute setting fits gets more pipeline
stages, and one no pipeline depth fits is left out with what it needs; the rest is still compared."""

from __future__ import annotations

from fabricplan.catalog import load_catalog
from fabricplan.decide import fabric_outcomes
from fabricplan.plan.memory_fit import deeper_pipelines
from fabricplan.spec import parse_spec

CATALOG = load_catalog()


def _spec(*jobs):
    return parse_spec({"name": "memory", "cluster": {"gpu": "h100-sxm", "gpus": 64, "gpus_per_node": 8,
                                                     "nics_per_node": 8},
                       "fabrics": ["roce-v2", "infiniband-ndr"], "jobs": list(jobs)})


SEVENTY = {"name": "seventy", "model": "llama3-70b", "tp": 4, "pp": 1, "global_batch_sequences": 64,
           "seq_len_tokens": 8192}
HUGE = {"name": "huge", "model": "llama3-405b", "tp": 8, "pp": 1, "global_batch_sequences": 64,
        "seq_len_tokens": 8192, "share": 0.5}
SMALL = {"name": "small", "model": "llama3-8b", "global_batch_sequences": 64, "seq_len_tokens": 8192, "share": 0.5}


def test_a_job_no_recompute_fits_runs_with_the_shallowest_deeper_pipeline_that_fits():
    outcome = fabric_outcomes(_spec(SEVENTY), CATALOG, fabrics=["infiniband-ndr"])["infiniband-ndr"]
    [job] = outcome.jobs
    assert job.fits_memory and job.memory_per_gpu_gib <= job.memory_capacity_gib
    assert "so run with pp 2" in job.memory_note  # pp 1 fits at no recompute setting
    assert not outcome.jobs_left_out


def test_a_job_no_layout_fits_is_left_out_and_the_rest_is_compared():
    outcomes = fabric_outcomes(_spec(HUGE, SMALL), CATALOG)
    for outcome in outcomes.values():
        assert [j.job for j in outcome.jobs] == ["small"]
        assert "needs 423.6 GiB per GPU" in outcome.jobs_left_out["huge"]
        # the left-out share does no useful work: utilisation is counted over the whole cluster
        assert outcome.weighted_gpu_utilisation <= 0.5 + 1e-9


def test_deeper_pipelines_double_the_stages_and_keep_only_layouts_the_spec_accepts():
    spec = _spec(SEVENTY)
    depths = [s.jobs[0].pp for s in deeper_pipelines(spec, 0)]
    assert depths and depths == sorted(depths) and depths[0] == 2
    assert all(4 * pp <= 64 for pp in depths)  # tp x pp within the cluster's GPUs


def test_compare_flags_a_left_out_job_in_json_and_terminal(cli, tmp_path):
    import yaml

    path = tmp_path / "left-out.yaml"
    path.write_text(yaml.safe_dump(_spec(HUGE, SMALL).model_dump(mode="json", exclude_unset=True)))
    report = cli("compare", path, "--quick", "--json")
    assert report.code == 0, report.err
    assert all("huge" in f["jobs_left_out"] for f in report.json()["fabrics"])
    text = cli("compare", path, "--quick").out
    assert "huge left out of the comparison" in " ".join(text.split())
