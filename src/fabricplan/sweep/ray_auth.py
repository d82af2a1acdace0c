"""Token authentication of a Ray cluster the sweep connects to (``--ray-address``).

Newer Ray (token authentication, ``ray._private.authentication``) starts a head with
``RAY_AUTH_MODE=token`` whenever ``ray start --head`` finds a token (``RAY_AUTH_TOKEN``,
``RAY_AUTH_TOKEN_PATH`` or ``~/.ray/auth_token``, which a local ``ray.init()`` writes), and then
refuses every connection without it ("Authentication token is missing or incorrect"). Ray's own
``ray.init()`` turns token mode on for a cluster it finds itself but not for an address it is
given, so a driver with the token in its usual place is still refused. Here, as a Ray user
expects: with ``RAY_AUTH_MODE`` unset, one connection attempt to the cluster's GCS (Ray's
``GcsClient``, without the driver's ~20 s of retries) says whether it asks for a token; if it
does and a token is where Ray looks for one, token mode is on for this connection (the process's
``RAY_AUTH_MODE`` is restored after it). A cluster that still refuses, or a token that is nowhere,
is one error line saying what to set. ``RAY_AUTH_MODE`` set by the user is respected as it is.
A Ray without token authentication is left alone.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

from fabricplan.errors import InputError

AUTH_MODE = "RAY_AUTH_MODE"
TOKEN = "RAY_AUTH_TOKEN"
TOKEN_PATH = "RAY_AUTH_TOKEN_PATH"
#: How to get the head's token: Ray's command, run where the cluster was started.
GET_TOKEN = "`ray get-auth-token` on the head prints it"


def token_source(environ: dict[str, str] | None = None, home: Path | None = None) -> str | None:
    """Where Ray would read this process's token from (its order: the variable, the file the
    variable names, ``~/.ray/auth_token``); None when there is none."""
    environ = os.environ if environ is None else environ
    if environ.get(TOKEN, "").strip():
        return TOKEN
    if environ.get(TOKEN_PATH, "").strip():
        return f"{TOKEN_PATH} ({environ[TOKEN_PATH]})"
    default = (home or Path.home()) / ".ray" / "auth_token"
    return f"{default}" if default.is_file() else None


@contextmanager
def _quiet_stderr():
    """File descriptor 2 to /dev/null for a moment: Ray's C++ client logs each refused attempt
    there, and the refusal becomes one error line of ours instead."""
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def _refused(address: str) -> bool:
    """One attempt to reach the GCS at ``address`` with this process's authentication settings:
    True when it refuses them (Ray's ``AuthenticationError``); any other failure is left to ``ray.init``."""
    from ray._raylet import GcsClient
    from ray.exceptions import AuthenticationError

    try:
        with _quiet_stderr():
            GcsClient(address=address)
    except AuthenticationError:
        return True
    except Exception:  # noqa: BLE001 (not an authentication refusal: ray.init reports it)
        return False
    return False


def _set_mode(mode: str | None) -> None:
    """``RAY_AUTH_MODE`` to ``mode`` (None: unset), and Ray's cached config and token read again."""
    from ray._raylet import AuthenticationTokenLoader, Config

    if mode is None:
        os.environ.pop(AUTH_MODE, None)
    else:
        os.environ[AUTH_MODE] = mode
    Config.initialize("")
    AuthenticationTokenLoader.instance().reset_cache()


def put_back(mode: str | None) -> None:
    """``RAY_AUTH_MODE`` back to ``mode`` (None: unset) if it changed since (after ``ray.shutdown``)."""
    if os.environ.get(AUTH_MODE) != mode:
        _set_mode(mode)


def prepare(address: str, flag: str) -> None:
    """Make this process's Ray authentication fit the cluster at ``address`` (module docstring):
    token mode on when the cluster asks for a token and one is where Ray looks for it (the caller
    puts ``RAY_AUTH_MODE`` back with :func:`put_back`); InputError, one line located at ``flag``,
    when it cannot."""
    try:
        import ray._private.authentication.authentication_token_setup  # noqa: F401 (Ray with token auth)
    except ImportError:
        return
    if not _refused(address):
        return
    mode = os.environ.get(AUTH_MODE)
    source = token_source()
    if mode is None and source is not None:
        _set_mode("token")
        if not _refused(address):
            return
    elif mode is not None and mode.lower() != "token":
        raise InputError(f"the Ray cluster asks for an authentication token but {AUTH_MODE} is '{mode}': "
                         f"set it to token, with {TOKEN} set to the cluster's token ({GET_TOKEN})", location=flag)
    if source is not None:
        raise InputError(f"the Ray cluster refuses the authentication token from {source}: set {TOKEN} to "
                         f"its token ({GET_TOKEN})", location=flag)
    raise InputError(f"the Ray cluster asks for an authentication token and none is set: set {TOKEN} to its "
                     f"token ({GET_TOKEN}), or {TOKEN_PATH} to a file holding it", location=flag)
