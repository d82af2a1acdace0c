"""Phases (issue 29): each phase's jobs share the cluster during it; compare weighs the phases by
their hours and says which decides."""

from __future__ import annotations

import pytest
import yaml

from fabricplan.catalog import default_catalog
from fabricplan.decide.phases import phase_outcomes
from fabricplan.plan import fabric_outcomes
from fabricplan.spec import parse_spec
from project_paths import ROOT

CATALOG = default_catalog()
MOE = yaml.safe_load((ROOT / "examples" / "moe-alltoall-2048-h100.yaml").read_text(encoding="utf-8"))["jobs"][0]
SMALL = {"name": "ft", "model": "llama3-8b", "gpus": 8, "tp": 8, "pp": 1, "global_batch_sequences": 16,
         "seq_len_tokens": 8192}  # one node: no network traffic, so the cheaper fabric to own wins this phase


def _spec(train_hours: float):
    return parse_spec({
        "cluster": {"gpu": "h100-sxm", "gpus": 2048, "gpus_per_node": 8, "nics_per_node": 8},
        "fabrics": ["ethernet-tcp", "infiniband-ndr"],
        "phases": [{"name": "train", "hours_share": train_hours}, {"name": "serve", "hours_share": 1 - train_hours}],
        "jobs": [{**MOE, "phase": "train", "share": 1.0}, {**SMALL, "phase": "serve"}]})


def hours_train(spec) -> float:
    return next(p.hours_share for p in spec.phases if p.name == "train")


def _ranked(outcomes):
    return sorted(outcomes, key=lambda f: float(outcomes[f].cost_per_useful_gpu_hour_usd))


def test_the_hours_weight_the_phases_and_the_deciding_phase_is_named():
    decisions = {}
    for train in (0.5, 0.01):
        spec = _spec(train)
        outcomes = fabric_outcomes(spec, CATALOG)
        for outcome in outcomes.values():  # useful share = sum over phases of hours x the phase's own
            per_phase = {p.phase: p for p in phase_outcomes(spec, outcomes, _ranked(outcomes))[0]}
            assert {j.phase for j in outcome.jobs} == {"train", "serve"}
            assert sum(float(j.share) for j in outcome.jobs) == pytest.approx(1.0)  # each phase full
            hours = {"train": hours_train(spec), "serve": 1 - hours_train(spec)}
            within = {p: sum(float(j.share) / hours[p] * float(j.gpu_utilisation) for j in outcome.jobs
                             if j.phase == p) for p in hours}
            assert float(outcome.weighted_gpu_utilisation) == pytest.approx(
                sum(hours[p] * within[p] for p in hours), rel=1e-12)
            assert set(per_phase) == {"train", "serve"}
        ranking = _ranked(outcomes)
        rows, deciding, text = phase_outcomes(spec, outcomes, ranking)
        decisions[train] = (ranking[0], deciding, {r.phase: r.best for r in rows}, text)
    (a, phase_a, best_a, _), (b, phase_b, best_b, text_b) = decisions[0.5], decisions[0.01]
    assert best_a["train"] == best_b["train"] == "infiniband-ndr"  # the MoE phase alone: InfiniBand
    assert best_b["serve"] == "ethernet-tcp"  # the one-node phase alone: the fabric cheaper to own
    assert (a, phase_a) == ("infiniband-ndr", "train")  # half the hours training: training decides
    assert (b, phase_b) == ("ethernet-tcp", "serve")  # 99 % of the hours on one node: that phase decides
    assert "disagree" in text_b and "train (1 % of the hours) favours infiniband-ndr" in text_b


def test_phase_errors_name_the_field():
    from fabricplan.errors import InputError

    base = {"cluster": {"gpu": "h100-sxm", "gpus": 128}, "phases": [{"name": "a", "hours_share": 0.6}]}
    job = {"name": "j", "model": "llama3-8b", "global_batch_sequences": 64, "seq_len_tokens": 8192}
    cases = [({**base, "jobs": [{**job, "phase": "b"}]}, "jobs[0].phase"),
             ({"cluster": base["cluster"], "jobs": [{**job, "phase": "a"}]}, "jobs[0].phase"),
             ({**base, "phases": [{"name": "a", "hours_share": 0.6}, {"name": "b", "hours_share": 0.6}]}, "1.2"),
             ({**base, "jobs": [{**job, "phase": "a", "share": 0.7}, {**job, "name": "k", "phase": "a", "share": 0.7}]},
              "phase 'a'")]
    for document, fragment in cases:
        with pytest.raises(InputError) as err:
            parse_spec(document)
        assert fragment in str(err.value)
