"""The `fabricplan` command. Each command group lives in its own module with a `register(app)`."""

from __future__ import annotations

import sys

import typer

from fabricplan.errors import FabricplanError

app = typer.Typer(
    name="fabricplan",
    help="Choose, size, price and check the network fabric of a GPU training cluster.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register_all() -> None:
    """Each command module adds its commands to `app`: planning, performance, decision, operations."""
    from fabricplan.cli import decide_cmds, ops_cmds, perf_cmds, plan_cmds

    for module in (plan_cmds, perf_cmds, decide_cmds, ops_cmds):
        module.register(app)


_register_all()


def run(argv: list[str] | None = None) -> int:
    """Run the app and return its exit code.

    Usage errors are reported by typer itself (exit 2); errors in the user's input
    (`FabricplanError`) become one line on stderr and exit 2, with no traceback.
    """
    try:
        app(args=argv, prog_name="fabricplan")
    except SystemExit as exc:
        if exc.code is None:
            return 0
        return exc.code if isinstance(exc.code, int) else 1
    except FabricplanError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def main() -> None:
    """Console-script entry point."""
    sys.exit(run())


if __name__ == "__main__":
    main()
