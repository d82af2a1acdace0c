"""The README's Python blocks run, and the overlay it shows is the shipped file (examples/overlays/my-prices.yaml)."""

from __future__ import annotations

import re

import pytest

from project_paths import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"^```python\n(.*?)^```", README, re.S | re.M)
OVERLAY = ROOT / "examples" / "overlays" / "my-prices.yaml"


def test_the_readme_shows_the_shipped_overlay_as_it_is():
    text = OVERLAY.read_text(encoding="utf-8")
    assert f"```yaml\n{text}```" in README


def test_the_shipped_overlay_layers_over_the_bundled_catalog():
    from fabricplan.catalog import load_catalog

    catalog = load_catalog([OVERLAY])
    assert catalog.get_path("switches.sw_eth_th5.price_usd.default") == 60000
    assert catalog.get_path("nics.nic_mine.speed_gbps") == 400
    assert catalog.origin("switches.sw_eth_th5.price_usd").endswith("my-prices.yaml")


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_every_python_block_runs(index, monkeypatch):
    assert len(BLOCKS) >= 3
    monkeypatch.chdir(ROOT)
    namespace: dict = {"__name__": "readme"}
    exec(compile(BLOCKS[index], f"README.md[python block {index}]", "exec"), namespace)  # noqa: S102 - our own docs


def test_the_catalog_block_comments_are_what_it_returns(monkeypatch):
    # The dotted-path block's comments quote what the calls return.
    block = next(b for b in BLOCKS if "get_path" in b)
    monkeypatch.chdir(ROOT)
    namespace: dict = {"__name__": "readme"}
    exec(compile(block, "README.md[catalog block]", "exec"), namespace)  # noqa: S102 - our own docs
    low, default, high = map(float, re.search(r"# Range: low=(\d+) default=(\d+) high=(\d+)", block).groups())
    price = namespace["cat"].get_path("switches.sw_ib_qm9700.price_usd")
    assert (price.low, price.default, price.high) == (low, default, high)
    from fabricplan.perf.latency import perf_parameter

    assert perf_parameter("tp_overlap_efficiency", namespace["swept"]) == 0.5
    assert namespace["swept"].origin("switches.sw_ib_qm9700.price_usd") == "set by path"
