"""Headroom models against the test vectors in reference/pfc_headroom.md (exact integers)."""

from __future__ import annotations

import pytest

from fabricplan.errors import InputError
from fabricplan.ops import headroom

# reference/pfc_headroom.md §1.2 worked outputs: Spectrum-2, port_mtu 9100, lossless_mtu 1024,
# small packets 100 %, no shared headroom pool. Exact: the Lua rounds up to 1024 B.
SONIC_GOLDEN = [
    # speed_mbps, cable_m, asic, xon, xoff, size
    (25000, 5, "spectrum-2", 18432, 35840, 54272),
    (100000, 5, "spectrum-2", 18432, 81920, 100352),
    (100000, 40, "spectrum-2", 18432, 92160, 110592),
    (100000, 300, "spectrum-2", 18432, 163840, 182272),
    (200000, 5, "spectrum-2", 18432, 92160, 110592),
    (400000, 5, "spectrum-2", 18432, 159744, 178176),
    (400000, 40, "spectrum-2", 18432, 198656, 217088),
    (100000, 5, "spectrum", 18432, 72704, 91136),
]


@pytest.mark.parametrize(("speed", "cable", "asic", "xon", "xoff", "size"), SONIC_GOLDEN)
def test_sonic_golden_values(speed, cable, asic, xon, xoff, size):
    result = headroom.sonic_headroom(speed, cable, 9100, 1024, asic, 100)
    assert (result.xon_bytes, result.xoff_bytes, result.size_bytes) == (xon, xoff, size)


def test_sonic_shared_headroom_pool_size_is_xon():
    result = headroom.sonic_headroom(100000, 5, 9100, 1024, "spectrum-2", shared_headroom_pool=True)
    assert (result.xoff_bytes, result.size_bytes) == (81920, 18432)


def test_sonic_eight_lane_port_doubles_pipeline_latency():
    result = headroom.sonic_headroom(400000, 5, 9100, 1024, "spectrum-3", eight_lanes=True)
    assert result.xon_bytes == 18432 * 2 - 1024
    assert result.size_bytes == result.xoff_bytes + result.xon_bytes + 9216  # 9100 rounded up to 1 KB


# reference/pfc_headroom.md §1.1 table: MTU 9216 both sides, 5 ns/m, no D-Intf.
GENERIC_GOLDEN = {
    100000: (44107, 47482, 56232, 106232),
    200000: (48258, 55008, 72508, 172508),
    400000: (77936, 91436, 126436, 326436),
}


@pytest.mark.parametrize("speed", sorted(GENERIC_GOLDEN))
def test_generic_table(speed):
    got = tuple(headroom.generic_headroom(speed, cable, 9216).xoff_bytes for cable in (3, 30, 100, 500))
    assert got == GENERIC_GOLDEN[speed]


def test_generic_terms_add_up():
    result = headroom.generic_headroom(400000, 30, 9216)
    assert {t.name: t.bytes for t in result.terms} == {
        "local_frame_in_flight": 9216, "peer_frame_in_flight": 9216, "pfc_frame": 84,
        "cable_round_trip": 15000, "peer_response": 905 * 64}
    assert result.xoff_bytes == result.size_bytes == 91436
    assert result.xon_bytes is None


# reference/pfc_headroom.md §1.3 integer-formula rows, cable 7 m.
MLX5_GOLDEN = {
    25000: (16720, 24064, 37120),
    100000: (35680, 43024, 56080),
    200000: (67280, 74624, 87680),
    400000: (130480, 137824, 150880),
}


@pytest.mark.parametrize("speed", sorted(MLX5_GOLDEN))
def test_mlx5_integer_rows(speed):
    assert tuple(headroom.mlx5_xoff(speed, 7, mtu) for mtu in (1500, 4200, 9000)) == MLX5_GOLDEN[speed]


def test_mlx5_minimum_buffer_and_terms():
    result = headroom.mlx5_headroom(100000, 7, 9000)
    assert result.xoff_bytes == 56080
    assert result.size_bytes == 56080 + 9216 + 128
    assert sum(t.bytes for t in result.terms) == 56080


def test_generic_unknown_speed_is_input_error():
    with pytest.raises(InputError, match="pause-quanta"):
        headroom.generic_headroom(123000, 5, 9216)


def test_sonic_unknown_speed_falls_back_to_asic_peer_response():
    result = headroom.sonic_headroom(123000, 5, 9100, 1024)
    assert any(t.name == "peer_response" and t.bytes == pytest.approx(3.8 * 1024) for t in result.terms)


@pytest.mark.parametrize(("text", "mbps"), [("400G", 400000), ("100g", 100000), ("25Gbps", 25000),
                                            ("100000", 100000), ("2.5G", 2500)])
def test_parse_speed(text, mbps):
    assert headroom.parse_speed_mbps(text) == mbps


@pytest.mark.parametrize("text", ["fast", "", "-100G", "0G"])
def test_parse_speed_rejects(text):
    with pytest.raises(InputError):
        headroom.parse_speed_mbps(text)


def test_cli_headroom_json(cli):
    result = cli("headroom", "--speed", "400G", "--cable", "30m", "--mtu", "9216", "--json")
    assert result.code == 0
    doc = result.json()
    assert doc["xoff_bytes"] == 91436 and doc["model"] == "generic"
    assert [t["name"] for t in doc["terms"]] == ["local_frame_in_flight", "peer_frame_in_flight", "pfc_frame",
                                                 "cable_round_trip", "peer_response"]


def test_cli_headroom_sonic_text(cli):
    result = cli("headroom", "--speed", "100G", "--cable", "5m", "--mtu", "9100", "--model", "sonic")
    assert result.code == 0
    assert "81,920" in result.out and "18,432" in result.out and "100,352" in result.out


def test_cli_headroom_mlx5(cli):
    result = cli("headroom", "--speed", "100G", "--cable", "7m", "--mtu", "9000", "--model", "mlx5", "--json")
    assert result.json()["xoff_bytes"] == 56080 and result.json()["size_bytes"] == 65424


@pytest.mark.parametrize("args", [
    ("--speed", "fast", "--cable", "5m", "--mtu", "9100"),
    ("--speed", "100G", "--cable", "far", "--mtu", "9100"),
    ("--speed", "100G", "--cable", "5m", "--mtu", "9100", "--model", "cisco"),
    ("--speed", "100G", "--cable", "5m", "--mtu", "9100", "--model", "sonic", "--asic", "tomahawk"),
    ("--speed", "123G", "--cable", "5m", "--mtu", "9100"),
    ("--speed", "100G", "--cable", "5m", "--mtu", "9100", "--model", "sonic", "--lossless-mtu", "-3"),
    ("--speed", "100G", "--cable", "5m", "--mtu", "abc"),  # a usage error, reported like the others
    ("--speed", "100G", "--cable", "5m"),  # --mtu missing
])
def test_cli_headroom_bad_input_exit_2(cli, args):
    result = cli("headroom", *args)
    assert result.code == 2
    assert result.err.startswith("error: ") and result.err.count("\n") == 1 and result.out == ""
