"""The sweep command's own wording: its rate of points."""


def test_points_rate_shows_a_slow_sweep_as_it_is():
    from fabricplan.cli.sweep_cmds import points_rate

    assert points_rate(120.4) == "120 points/s"
    assert points_rate(0.0877) == "0.088 points/s"  # 68 s for 6 points is not "0 points/s"
    assert points_rate(1 / 300) == "300 s per point"
