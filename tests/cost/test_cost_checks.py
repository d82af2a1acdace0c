"""Cost checks against published figures (docs/validation.md, "Cost checks"), within stated tolerances,
and the mechanisms that make the IB-vs-Ethernet price premium decide (a --catalog overlay flips it)."""

from __future__ import annotations

import pytest

from fabricplan.catalog import load_catalog
from fabricplan.cost import cost
from fabricplan.spec import parse_spec

CATALOG = load_catalog()
#: The sheet's basis: FS.com (third-party) InfiniBand optics and a $36k QM9700 (tech-talk-cto, Aug 2024).
SHEET_CATALOG = CATALOG.with_values({"switches.sw_ib_qm9700.price_usd.default": 36000})
SHEET_OPTICS = {"switch_optic": "opt_800_twin_sr8", "nic_optic": "opt_400_osfp_sr4",
                "interswitch_optic": "opt_800_twin_sr8"}


def fabric_cost(gpus, fabric, catalog=CATALOG, **sections):
    spec = parse_spec({"cluster": {"gpu": "h100-sxm", "gpus": gpus}, "fabrics": [fabric], **sections})
    return cost(spec, catalog).fabrics[0]


def share_without_nics(fabric):
    """Switches + optics + cables over (servers with their NICs + those): the sheet's split."""
    network = fabric.network_capex_usd - fabric.capex_usd["nics"]
    return network / (network + fabric.servers.capex_usd + fabric.capex_usd["nics"])


@pytest.mark.parametrize(("gpus", "published"), [(1024, 0.099), (32768, 0.146)])
def test_infiniband_network_share_matches_the_h100_cost_sheet(gpus, published):
    # tech-talk-cto "H100 Freakonomics" (Aug 2024): 9.9 % at 1,024 GPUs (2 tiers), 14.6 % at
    # 32,768 (3 tiers), NICs in the server price. Tolerance: 10 % relative.
    fabric = fabric_cost(gpus, {"profile": "infiniband-ndr", **SHEET_OPTICS}, SHEET_CATALOG)
    assert share_without_nics(fabric) == pytest.approx(published, rel=0.10)


def test_third_tier_adds_what_the_sheet_says_per_gpu():
    # Same sheet: all-in cost per H100 rises ~$2.6k from 2 to 3 tiers ($49k -> $51.6k). Tolerance 30 %.
    def per_gpu(gpus):
        fabric = fabric_cost(gpus, {"profile": "infiniband-ndr", **SHEET_OPTICS}, SHEET_CATALOG)
        return (fabric.servers.capex_usd + fabric.network_capex_usd) / gpus
    assert per_gpu(16384) - per_gpu(1024) == pytest.approx(2600, rel=0.30)


@pytest.mark.parametrize("gpus", [1024, 4096, 16384, 32768])
@pytest.mark.parametrize("fabric", ["ethernet-tcp", "roce-v2", "infiniband-ndr", "roce-spectrum-x"])
def test_network_share_within_the_published_band(gpus, fabric):
    # Published network shares of an AI cluster's capex: 10-15 % (ucsguru, Feb 2026), 15-25 %
    # (kshirol learnAI notes), 9.9-14.6 % (tech-talk-cto sheet): the band 9-25 %.
    share = fabric_cost(gpus, fabric).network_share_of_cluster_capex
    assert 0.09 <= share <= 0.25


def test_switch_price_per_400g_port_matches_published_ranges():
    # docs/reference/costs.md §0.4: IB street $560-780 per 400G port (QM9700 $36-50k / 64);
    # 51.2T Ethernet at OEM prices $1,170-1,950 per 400G port (luxoptx $150-250k / 128).
    qm9700, sn5600 = CATALOG.switch("sw_ib_qm9700"), CATALOG.switch("sw_eth_sn5600")
    assert 560 <= qm9700.price_usd.default / qm9700.radix_at(400) <= 780
    assert 1170 <= sn5600.price_usd.default / sn5600.radix_at(400) <= 1950


def test_linkx_premium_is_the_published_vendor_ratio():
    # AscentOptics (2026): third-party optics 55 % below NVIDIA list => list 2.2x; our default is ~2x
    # (street), the high end 2.5x. Tolerance: the default between 1.7x and 2.3x third-party.
    pairs = [("opt_800_twin_sr8_nv", "opt_800_twin_sr8"), ("opt_400_osfp_sr4_nv", "opt_400_osfp_sr4"),
             ("opt_800_twin_dr8_nv", "opt_800_twin_dr8"), ("opt_400_osfp_dr4_nv", "opt_400_osfp_dr4")]
    for vendor, third in pairs:
        ratio = CATALOG.optic(vendor).price_usd.default / CATALOG.optic(third).price_usd.default
        assert 1.7 <= ratio <= 2.3, (vendor, ratio)


def _overlay(tmp_path):
    """An overlay that removes InfiniBand's premium: LinkX optics at third-party prices, QM9700 at $36k."""
    third = {"opt_800_twin_sr8_nv": 1000, "opt_400_osfp_sr4_nv": 650, "opt_800_twin_dr8_nv": 1300,
             "opt_400_osfp_dr4_nv": 750, "opt_800_twin_fr8_nv": 1700}
    lines = ["switches:", "  - {id: sw_ib_qm9700, price_usd: {low: 30000, default: 36000, high: 50000}}", "optics:"]
    lines += [f"  - {{id: {i}, price_usd: {{low: {p}, default: {p}, high: {p}}}}}" for i, p in third.items()]
    path = tmp_path / "no-premium.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_overlay_that_removes_the_ib_premium_flips_the_cheaper_fabric(cli, tmp_path):
    """The optics basis decides the 1,024-GPU example: at the default third-party basis InfiniBand is
    the cheaper per useful GPU-hour; at the vendor basis (NVIDIA LinkX at ~2x) RoCE is; and an overlay
    that prices LinkX at third-party prices (with a $36k QM9700) turns it back."""
    import yaml

    from project_paths import pinned

    example = pinned("llama70b-1024-h100")  # rail-optimised: the same style for both fabrics
    document = yaml.safe_load(open(example))
    document.setdefault("economics", {})["optics_basis"] = "vendor"
    vendor_spec = tmp_path / "vendor.yaml"
    vendor_spec.write_text(yaml.safe_dump(document))

    def metric(spec, *extra):
        result = cli("compare", str(spec), "--json", *extra)
        assert result.code == 0, result.err
        fabrics = result.json()["fabrics"]
        assert {f["cost"]["optics_basis"] for f in fabrics} == {"vendor" if spec == vendor_spec else "third_party"}
        return {f["fabric"]: f["cost_per_useful_gpu_hour_usd"] for f in fabrics}

    bundled = metric(example)
    assert bundled["infiniband-ndr"] < bundled["roce-v2"]  # third-party optics on every fabric: IB cheaper
    vendor = metric(vendor_spec)
    assert vendor["roce-v2"] < vendor["infiniband-ndr"]  # LinkX optics at ~2x: IB dearer
    assert vendor["roce-v2"] == pytest.approx(bundled["roce-v2"])  # white-box Ethernet: the same parts
    overlaid = metric(vendor_spec, "--catalog", str(_overlay(tmp_path)))
    assert overlaid["infiniband-ndr"] < overlaid["roce-v2"]  # LinkX at third-party prices: IB cheaper again
