"""Property test: for any well-formed spec, compare either answers or says why it cannot (no crash)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from fabricplan.catalog import load_catalog
from fabricplan.decide import compare
from fabricplan.errors import FabricplanError
from fabricplan.spec import parse_spec

CATALOG = load_catalog()

jobs = st.fixed_dictionaries({
    "name": st.sampled_from(["a", "b"]),
    "model": st.sampled_from(["llama3-8b", "llama3-70b", "mixtral-8x7b", "gpt3-175b"]),
    "tp": st.sampled_from([1, 2, 4, 8]),
    "pp": st.sampled_from([1, 2, 4]),
    "ep": st.sampled_from([1, 2, 8]),
    "zero_stage": st.sampled_from([0, 1, 2, 3]),
    "micro_batches": st.sampled_from([1, 4, 16]),
    "seq_len_tokens": st.sampled_from([2048, 8192]),
    "share": st.sampled_from([0.2, 0.5]),
})


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes=st.sampled_from([1, 2, 3, 4, 16, 64, 96, 256, 1024]), nics=st.sampled_from([1, 2, 4, 8]),
       style=st.sampled_from(["rail_optimized", "leaf_spine", "fat_tree"]),
       ratio=st.sampled_from([1.0, 2.0, 3.0]), maturity=st.sampled_from(["none", "basic", "expert"]),
       estate=st.booleans(), aware=st.booleans(), gpu=st.sampled_from(["h100-sxm", "a100-sxm-80gb", "b200"]),
       job=st.lists(jobs, min_size=0, max_size=2, unique_by=lambda j: j["name"]))
def test_compare_answers_or_explains(nodes, nics, style, ratio, maturity, estate, aware, gpu, job):
    for entry in job:  # a global batch that fits the data-parallel size, so most jobs lay out
        dp = max(8 * nodes // (entry["tp"] * entry["pp"]), 1)
        entry["global_batch_sequences"] = dp * entry.pop("micro_batches")
        if entry["model"] != "mixtral-8x7b":
            entry["ep"] = 1  # expert parallelism needs an MoE model
    spec = parse_spec({"cluster": {"gpu": gpu, "gpus": 8 * nodes, "nics_per_node": nics},
                       "topology": {"style": style, "oversubscription": [ratio]},
                       "operations": {"maturity": maturity, "existing_ethernet": estate,
                                      "topology_aware_scheduling": aware},
                       "jobs": job})
    try:
        report = compare(spec, CATALOG, search_scale=False, analyse_sensitivity=False)
    except FabricplanError as error:  # e.g. parallelism that does not divide the GPUs: a clear message
        assert str(error)
        return
    ranking = report.recommendation.ranking
    assert sorted(ranking) == sorted(f.fabric for f in report.fabrics)
    assert ranking[0] == report.recommendation.recommended
    for outcome in report.fabrics:
        assert outcome.cost_per_useful_gpu_hour_usd > 0
        assert 0 <= outcome.weighted_gpu_utilisation <= 1
