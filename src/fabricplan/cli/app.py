"""The `fabricplan` command. Each command group lives in its own module with a `register(app)`."""

from __future__ import annotations

import os
import re
import sys
from typing import Annotated

import typer

from fabricplan.errors import FabricplanError, printable

_app = typer.Typer(
    name="fabricplan",
    help="Choose, size, price and check the network fabric of a GPU training cluster.",
    no_args_is_help=True,
    # --install-completion / --show-completion: bash, zsh, fish and PowerShell complete commands,
    # options and file names (typer's shell completion; the completion script calls fabricplan)
    add_completion=True,
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    if value:
        from fabricplan import __version__

        print(f"fabricplan {__version__}")
        raise typer.Exit()


@_app.callback()
def _top(version: Annotated[bool, typer.Option(
        "--version", callback=_print_version, is_eager=True, help="Print the version and exit.")] = False) -> None:
    """Choose, size, price and check the network fabric of a GPU training cluster."""


def _help_shows_types_plainly() -> None:
    """Value types in `--help` read as a user writes them.

    typer's rich help prints a value type after every option, so a flag reads `--json <bool>` as if
    it took a value. A flag takes none: its type column is left empty. A repeatable option shows the
    type of one value (`--catalog <path>`, not `<list[Path]>`), and a required argument in the usage
    line is its bare name (`SPEC`, not `{SPEC}`); an optional one keeps its brackets (`[PATH]`), and
    `LOG...` stays `LOG...`.
    """
    try:
        from typer.core import TyperArgument, TyperOption
    except ImportError:  # another typer layout: its help is left as it is
        return
    for cls in (TyperOption, TyperArgument):
        original = getattr(cls, "display_type_rich", None)
        if original is None or getattr(original, "_fabricplan_types", False):
            continue

        def display_type_rich(self, ctx, original=original):  # type: ignore[no-untyped-def]
            if getattr(self, "is_flag", False) and not getattr(self, "count", False):
                return None
            shown = original(self, ctx)
            one = re.fullmatch(r"<list\[(.+)\]>", shown) if isinstance(shown, str) else None
            return f"<{one.group(1).lower()}>" if one else shown

        display_type_rich._fabricplan_types = True  # type: ignore[attr-defined]
        cls.display_type_rich = display_type_rich  # type: ignore[method-assign]
    usage = getattr(TyperArgument, "_usage_display_name", None)
    if usage is not None and not getattr(usage, "_fabricplan_usage", False):
        def _usage_display_name(self):  # type: ignore[no-untyped-def]
            shown = usage(self)
            if shown.startswith("{"):
                shown = shown[1:].replace("}", "", 1)
            return shown[:-3] if shown.endswith("......") else shown  # metavar "LOG..." of nargs=-1

        _usage_display_name._fabricplan_usage = True  # type: ignore[attr-defined]
        TyperArgument._usage_display_name = _usage_display_name  # type: ignore[method-assign]


_help_shows_types_plainly()


_ESCAPED: dict[int, object] = {}


def _help_as_written(app: typer.Typer) -> typer.Typer:
    """Every help text of `app` (commands, groups, options, arguments) printed as written.

    typer's rich help reads help texts as rich markup, so "[us]", "[bytes]" or "{name: [host, ...]}"
    vanished as unknown style tags. Each text is escaped once (`rich.markup.escape`) when its command
    is registered; the objects done are remembered (`_ESCAPED`) so that an option shared by several
    commands (`--catalog`) is not escaped twice. (typer copies its info objects' attributes, so they
    carry no mark of their own.)
    """
    import inspect
    import typing

    from rich.markup import escape
    from typer.models import ParameterInfo

    def escaped(owner: object, attribute: str) -> None:
        text = getattr(owner, attribute, None)
        if isinstance(text, str) and id(owner) not in _ESCAPED:
            setattr(owner, attribute, escape(text))
        _ESCAPED[id(owner)] = owner  # kept alive, so its id is never reused

    def command(info) -> None:  # type: ignore[no-untyped-def]
        callback = info.callback
        if callback is None:
            return
        if info.help is None and callback.__doc__:
            info.help = inspect.getdoc(callback)
        escaped(info, "help")
        hints = typing.get_type_hints(callback, include_extras=True)
        for name, parameter in inspect.signature(callback).parameters.items():
            found = [parameter.default, *getattr(hints.get(name), "__metadata__", ())]
            for item in found:
                if isinstance(item, ParameterInfo):
                    escaped(item, "help")

    def group(instance: typer.Typer) -> None:
        escaped(instance.info, "help")
        if instance.registered_callback is not None:
            command(instance.registered_callback)
        for info in instance.registered_commands:
            command(info)
        for sub in instance.registered_groups:
            escaped(sub, "help")
            if sub.typer_instance is not None:
                group(sub.typer_instance)

    group(app)
    return app


class _Interrupted(Exception):
    """Ctrl-C inside a command: typer would turn its KeyboardInterrupt into a silent exit 130."""


def _interruptible(app: typer.Typer) -> typer.Typer:
    """Every command callback of ``app`` (and its groups) raises :class:`_Interrupted` for Ctrl-C, so
    that `run` says "interrupted" in one line and exits 130 (the wrapper keeps the signature)."""
    import functools

    def wrap(info) -> None:  # type: ignore[no-untyped-def]
        callback = info.callback
        if callback is None or getattr(callback, "_fabricplan_interruptible", False):
            return

        @functools.wraps(callback)
        def interruptible(*args, **kwargs):  # type: ignore[no-untyped-def]
            try:
                return callback(*args, **kwargs)
            except KeyboardInterrupt:
                raise _Interrupted from None

        interruptible._fabricplan_interruptible = True  # type: ignore[attr-defined]
        info.callback = interruptible

    for info in app.registered_commands:
        wrap(info)
    for sub in app.registered_groups:
        if sub.typer_instance is not None:
            _interruptible(sub.typer_instance)
    return app


#: The module that registers each top-level command (tests check it matches `app`).
COMMAND_MODULES = {"init": "plan_cmds", "schema": "plan_cmds", "catalog": "plan_cmds", "topology": "plan_cmds",
                   "cost": "plan_cmds", "collective": "perf_cmds", "step": "perf_cmds", "compare": "decide_cmds",
                   "lint": "ops_cmds", "headroom": "ops_cmds",
                   "health": "health_cmds", "dcqcn": "sim_cmds", "simulate": "sim_cmds",
                   "calibrate": "measure_cmds", "check-measured": "measure_cmds", "sweep": "sweep_cmds",
                   "fleet": "fleet_cmds"}


_registered = False


def full_app() -> typer.Typer:
    """The app with every command: each command module adds its commands (planning, performance,
    decision, operations) on first use. A run of one known command never builds it (`_app_for`)."""
    global _registered
    if not _registered:
        import importlib

        for module in dict.fromkeys(COMMAND_MODULES.values()):
            importlib.import_module(f"fabricplan.cli.{module}").register(_app)
        _help_as_written(_interruptible(_app))
        _registered = True
    return _app


def __getattr__(name: str) -> typer.Typer:
    """``app`` (the whole command tree) is built when first asked for."""
    if name == "app":
        return full_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _app_for(argv: list[str]) -> typer.Typer:
    """The app to run ``argv`` with: for a known command, an app holding only its module's commands.

    typer turns every registered command into a click command (signature inspection, type
    conversion set-up) on each invocation, ~3 ms a command; building only the module in use keeps
    that out of every run. The top-level help and anything unrecognised use the full `app`. A no-op
    callback keeps the small app a command group even when its module registers one command.
    """
    import importlib

    module = COMMAND_MODULES.get(argv[0]) if argv else None
    if module is None:
        return full_app()
    small = typer.Typer(name=_app.info.name, help=_app.info.help, no_args_is_help=True, add_completion=False,
                        pretty_exceptions_enable=False)
    small.callback()(_group)
    importlib.import_module(f"fabricplan.cli.{module}").register(small)
    return _help_as_written(_interruptible(small))


def _group() -> None:
    """Choose, size, price and check the network fabric of a GPU training cluster."""

# click's exception base, found through a public typer name: typer >= 0.2x vendors click, so the
# class `import click` would give is not the one raised.
ClickException = next(cls for cls in typer.BadParameter.__mro__ if cls.__name__ == "ClickException")


def run(argv: list[str] | None = None) -> int:
    """Run the app and return its exit code.

    Usage errors (unknown option, a value of the wrong type, a missing argument) and errors in the
    user's input (`FabricplanError`) become one `error: ...` line on stderr and exit 2, with no
    traceback; control characters in the message (a server's error body, a host name from a
    capture) are shown escaped (`errors.printable`); Ctrl-C inside a command is one "interrupted"
    line and exit 130. A bare command group prints its help on stdout and exits 2.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        result = _app_for(args)(args=args, prog_name="fabricplan", standalone_mode=False)
    except ClickException as exc:
        message = exc.format_message()
        if message:  # empty for "no arguments": the help is already on stdout
            context = getattr(exc, "ctx", None)
            hint = f" (see '{context.command_path} --help')" if context is not None else ""
            print(printable(f"error: {message}{hint}"), file=sys.stderr)
        return exc.exit_code
    except FabricplanError as exc:  # one line whatever names it quotes (a file or host name with ESC)
        print(printable(f"error: {exc}"), file=sys.stderr)
        return 2
    except _Interrupted:
        print("interrupted", file=sys.stderr)
        return 130
    return result if isinstance(result, int) else 0


def main() -> None:
    """Console-script entry point: also ends quietly on Ctrl-C and when the reader of stdout goes
    away (`fabricplan ... | head`), as command-line tools do."""
    try:
        code = run()
        sys.stdout.flush()
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        code = 130
    except BrokenPipeError:
        # Point stdout at /dev/null so the interpreter's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 0
    sys.exit(code)


if __name__ == "__main__":
    main()
