"""Bad inputs to `fabricplan dcqcn`: one line on stderr naming the flag, exit 2."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("args, flag", [
    (["--flows", "0", "--delay-us", "10"], "--flows"),
    (["--flows", "2", "--delay-us", "-1"], "--delay-us"),
    (["--flows", "2", "--delay-us", "1", "--link", "fast"], "--link"),
    (["--flows", "2", "--delay-us", "1", "--link", "0G"], "--link"),
    (["--flows", "2", "--delay-us", "1", "--kmax-kb", "1"], "--kmax-kb"),
    (["--flows", "2", "--delay-us", "1", "--pmax", "1.5"], "--pmax"),
    (["--flows", "2", "--delay-us", "1", "--g", "1"], "--g"),
    (["--flows", "2", "--delay-us", "1", "--rai-mbps", "0"], "--rai-mbps"),
    (["--flows", "2", "--delay-us", "nan"], "--delay-us"),
])
def test_bad_dcqcn_input(cli, args, flag):
    result = cli("dcqcn", *args)
    assert result.code == 2
    assert result.out == ""
    assert len(result.err.strip().splitlines()) == 1 and flag in result.err
