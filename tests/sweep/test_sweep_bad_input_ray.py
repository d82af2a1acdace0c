"""A --ray-address where nothing listens is one line at once, not minutes of Ray's retries (issue 31)."""

from __future__ import annotations

import socket

import pytest
from sweep_files import SMALL_AXES, write_sweep

from fabricplan.errors import InputError
from fabricplan.sweep.executors import probe_ray_address


def _closed_port() -> int:
    with socket.socket() as s:  # a port just freed: nothing listens there
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("form", ["127.0.0.1:{port}", "ray://127.0.0.1:{port}"])
def test_an_address_where_nothing_listens_is_refused(form):
    address = form.format(port=_closed_port())
    with pytest.raises(InputError) as err:
        probe_ray_address(address)
    assert err.value.location == f"--ray-address {address}" and "cannot reach" in err.value.message


def test_a_listening_address_and_other_forms_pass_the_probe():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        probe_ray_address(f"127.0.0.1:{server.getsockname()[1]}")
    probe_ray_address("auto")  # left to Ray


def test_cli_sweep_with_an_unreachable_ray_is_one_line(cli, tmp_path):
    pytest.importorskip("ray")
    path = write_sweep(tmp_path, SMALL_AXES, name="ray", draws=0)
    address = f"127.0.0.1:{_closed_port()}"
    result = cli("sweep", "run", path, "--out", tmp_path / "out", "--executor", "ray", "--ray-address", address)
    assert result.code == 2
    errors = [line for line in result.err.strip().splitlines() if line.startswith("error:")]
    assert "Traceback" not in result.err
    assert len(errors) == 1 and errors[0].startswith(f"error: --ray-address {address}: cannot reach"), result.err
