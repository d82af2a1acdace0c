"""A pinned topology style: compare says what the open design search would choose (issue 26)."""

from __future__ import annotations

from pathlib import Path

from fabricplan.catalog import load_catalog
from fabricplan.decide import compare
from fabricplan.spec import load_spec

ROOT = Path(__file__).resolve().parents[2]
CATALOG = load_catalog()


def _spec(style: str | None):
    from fabricplan.spec.models import Topology

    spec = load_spec(ROOT / "examples" / "llama70b-1024-h100.yaml", CATALOG)
    return spec.model_copy(update={"topology": Topology() if style is None else Topology(style=style)})


def _compare(spec):
    return compare(spec, CATALOG, search_scale=False, analyse_sensitivity=False, draws=0)


def test_a_pinned_style_reports_the_open_searchs_designs_and_their_cost():
    report = _compare(_spec("rail_optimized"))
    found = report.open_search
    assert found is not None and found.pinned_style == "rail_optimized"
    assert set(found.designs) == {f.fabric for f in report.fabrics}
    for outcome in report.fabrics:  # the pinned numbers are the comparison's own
        assert found.pinned_cost_per_useful_gpu_hour_usd[outcome.fabric] == outcome.cost_per_useful_gpu_hour_usd
        assert outcome.design.style == "rail_optimized"
    # the open search includes the pinned style, so it is never dearer, and here it finds cheaper designs
    assert all(found.cost_per_useful_gpu_hour_usd[f] <= found.pinned_cost_per_useful_gpu_hour_usd[f] * (1 + 1e-12)
               for f in found.designs)
    assert any(d.style != "rail_optimized" for d in found.designs.values())
    assert found.leader == min(found.cost_per_useful_gpu_hour_usd, key=found.cost_per_useful_gpu_hour_usd.get)
    note = next(n for n in report.notes if n.startswith("The spec pins topology.style rail_optimized"))
    assert found.leader in note


def test_an_open_spec_has_no_open_search_section():
    spec = _spec(None)
    assert not spec.style_pinned
    assert _compare(spec).open_search is None


def test_open_design_keeps_the_rest_of_the_topology_section():
    from fabricplan.spec.models import Topology

    spec = _spec(None).model_copy(update={"topology": Topology(style="fat_tree", oversubscription=[2.0])})
    opened = spec.open_design()
    assert spec.style_pinned and not opened.style_pinned
    assert opened.topology.oversubscription == [2.0]
