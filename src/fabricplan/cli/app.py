"""The `fabricplan` command. Each command group lives in its own module with a `register(app)`."""

from __future__ import annotations

import sys

import click
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
    # One line per command module; each adds its commands to `app`.
    from fabricplan.cli import plan_cmds

    plan_cmds.register(app)
    from fabricplan.cli import ops_cmds; ops_cmds.register(app)  # noqa: E702
    from fabricplan.cli import perf_cmds; perf_cmds.register(app)  # noqa: E702
    from fabricplan.cli import decide_cmds; decide_cmds.register(app)  # noqa: E702


_register_all()


def run(argv: list[str] | None = None) -> int:
    """Run the app and return its exit code; known errors become one line on stderr, exit 2."""
    try:
        result = app(args=argv, standalone_mode=False, prog_name="fabricplan")
    except FabricplanError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.Abort:
        print("aborted", file=sys.stderr)
        return 130
    except click.ClickException as exc:
        # Usage errors (bad option values, missing arguments) exit 2, as click does.
        exc.show(file=sys.stderr)
        return exc.exit_code
    return result if isinstance(result, int) else 0


def main() -> None:
    """Console-script entry point."""
    sys.exit(run())


if __name__ == "__main__":
    main()
