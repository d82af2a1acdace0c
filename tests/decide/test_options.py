"""Fabric options in compare (issue 26): each option switched from how the spec builds the fabric (on
where it is off, off where it is on) through the same chain, and the reason where the step does not move."""

from __future__ import annotations

import pytest
import yaml

import fabricplan.api as fp
from fabricplan.report.compare_terminal import option_line
from fabricplan.spec import parse_spec
from project_paths import pinned

JOB = "llama3-70b-pretrain"


def _spec(fabrics):
    document = yaml.safe_load(pinned("llama70b-1024-h100").read_text())  # rail-optimised: sends leave the leaf
    document["fabrics"] = fabrics
    return parse_spec(document)


def test_an_option_on_as_installed_is_priced_off_through_the_same_chain():
    report = fp.compare(_spec(["roce-spectrum-x", "infiniband-ndr"]), quick=True, draws=0)
    options = {(o.fabric, o.option): o for o in report.options}
    off = options[("roce-spectrum-x", "adaptive_routing")]
    assert off.enabled is False
    # the same numbers as compare on the spec that builds Spectrum-X without adaptive routing
    built_off = fp.compare(_spec([{"profile": "roce-spectrum-x", "adaptive_routing": False}, "infiniband-ndr"]),
                           quick=True, draws=0)
    without = {f.fabric: f for f in built_off.fabrics}["roce-spectrum-x"]
    base = {f.fabric: f for f in report.fabrics}["roce-spectrum-x"]
    assert off.cost_per_useful_gpu_hour_usd == pytest.approx(without.cost_per_useful_gpu_hour_usd, rel=1e-12)
    assert off.step_time_change[JOB] == pytest.approx(without.jobs[0].step_time_s / base.jobs[0].step_time_s - 1,
                                                      rel=1e-9)
    # static ECMP on the pipeline sends that leave the leaf (4 stages of 32 nodes span 97 nodes)
    assert off.step_time_change[JOB] > 0 and off.cost_per_useful_gpu_hour_change > 0
    assert not off.note
    line = option_line(off)
    assert line.startswith("roce-spectrum-x without adaptive routing (on as installed): step +")
    # and the off-as-installed option of the same report is turned on
    assert options[("infiniband-ndr", "sharp")].enabled is True


def test_sharp_that_cannot_help_says_why_instead_of_a_bare_zero():
    """ZeRO-1 data parallelism runs reduce-scatter/all-gather across nodes, no all-reduce: CollNet's
    reduce-scatter/all-gather (NCCL 2.20+) moves each rank's share through its NIC as a ring does."""
    report = fp.compare(_spec(["infiniband-ndr"]), quick=True, draws=0)
    [sharp] = report.options
    assert (sharp.fabric, sharp.option, sharp.enabled) == ("infiniband-ndr", "sharp", True)
    assert abs(sharp.step_time_change[JOB]) < 5e-5
    assert "reduce-scatter" in sharp.note
    assert "these run none (a sharded optimizer's data parallelism)" in sharp.note
    line = option_line(sharp)
    assert line.startswith("infiniband-ndr with SHARP (off as installed): no step-time change: NCCL keeps Ring/Tree")
    assert "+0.0%" not in line.split(";")[0]
