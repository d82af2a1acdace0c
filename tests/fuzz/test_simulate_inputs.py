"""Bad inputs to `fabricplan simulate`: one line on stderr naming the flag, exit 2."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("args, flag", [
    (["incast", "--k", "8", "--senders", "80"], "--senders"),
    (["incast", "--k", "7"], "--k"),
    (["incast", "--tiers", "4"], "--tiers"),
    (["nonsense"], "scenario"),
    (["incast", "--cc", "bbr"], "--cc"),
    (["incast", "--routing", "random"], "--routing"),
    (["incast", "--pfc", "maybe"], "--pfc"),
    (["incast", "--flow-size", "-1MB"], "--flow-size"),
    (["incast", "--flow-size", "lots"], "--flow-size"),
    (["incast", "--link", "fast"], "--link"),
    (["incast", "--mtu", "0"], "--mtu"),
    (["incast", "--pfc-xoff-kb", "-5"], "--pfc-xoff-kb"),
    (["incast", "--pfc-xoff-kb", "10", "--pfc-xon-kb", "20"], "--pfc-xon-kb"),
    (["incast", "--max-time-ms", "0"], "--max-time-ms"),
    (["incast", "--step-us", "0"], "--step-us"),
    (["incast", "--hosts", "0"], "--hosts"),
    (["incast", "--loop-delay-us", "-3"], "--loop-delay-us"),
    (["incast", "--qps", "0"], "--qps"),
    (["incast", "--fabric", "roce-v2"], "--fabric"),
    (["incast", "--spec", "examples/llama70b-1024-h100.yaml", "--hosts", "4"], "--spec"),
    (["incast", "--spec", "no-such-spec.yaml"], "no-such-spec.yaml"),
])
def test_bad_simulate_input(cli, args, flag):
    result = cli("simulate", *args)
    assert result.code == 2
    assert result.out == ""
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and flag in lines[0]
