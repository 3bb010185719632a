"""The error funnel and the app factory: every failure comes out as one line and a documented exit code.

`failure` turns our errors, the system's and a bug into one `lifecycle: error: …` line (a traceback
only with CONTINUITY_DEBUG=1); `FunnelGroup` does the same for click's own errors; `new_app` makes
a typer application on that group, for `lifecycle` (`app`) and `artifactctl` (`cli.outbox`) alike.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import click
import typer
from typer.core import TyperGroup

from continuity.errors import COMMAND_LINE, EXIT_USAGE, describe, message as errors_message, one_line, trace


def _once(text: str) -> str:
    """Each sentence once: click and typer may both append the same suggestion ("Did you mean …?")."""
    seen: list[str] = []
    for sentence in text.replace("? ", "?\n").replace(". ", ".\n").splitlines():
        if sentence not in seen:
            seen.append(sentence)
    return " ".join(seen)


def failure(exc: Exception, label: str) -> tuple[str, int]:
    """The error line and exit code for a failure that is not a usage error of click's: the one funnel
    (`errors.describe`), with fields named as flags and the person's advice given."""
    trace()
    return describe(exc, COMMAND_LINE, label)


def message(exc: Exception) -> str:
    """A failure's text as the command line names its field (no advice), for a line a command words itself."""
    return errors_message(exc, COMMAND_LINE)


def _no_args_is_help(exc: click.exceptions.UsageError) -> bool:
    """A group called without its command: click 8.2 and later carry the whole help as the message."""
    kind = getattr(click.exceptions, "NoArgsIsHelpError", None)
    return kind is not None and isinstance(exc, kind)


class FunnelGroup(TyperGroup):
    """A click group whose errors come out as one line and a documented exit code."""

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        label = prog_name or "lifecycle"
        try:
            # Without standalone mode click returns the code of a `typer.Exit` instead of raising it.
            returned = super().main(
                args=args, prog_name=label, complete_var=complete_var, standalone_mode=False, **extra
            )
        except click.exceptions.Exit as exc:
            code = exc.exit_code
        except click.exceptions.Abort:
            click.echo(f"{label}: error: aborted", err=True)
            code = EXIT_USAGE
        except click.exceptions.UsageError as exc:
            where = exc.ctx.command_path if exc.ctx is not None else label
            hint = f" (see '{where} --help')"
            if not exc.format_message():  # bare `lifecycle` under an older click: the help was printed
                if standalone_mode:
                    sys.exit(EXIT_USAGE)
                return EXIT_USAGE
            if _no_args_is_help(exc):
                # `lifecycle` or `lifecycle lease` alone: the readable help, then the one error line.
                click.echo(exc.format_message())
                click.echo(f"{label}: error: missing command{hint}", err=True)
            else:
                click.echo(f"{label}: error: {_once(one_line(exc.format_message()))}{hint}", err=True)
            code = EXIT_USAGE
        except click.exceptions.ClickException as exc:
            click.echo(f"{label}: error: {one_line(exc.format_message())}", err=True)
            code = EXIT_USAGE
        except Exception as exc:  # ours (ContinuityError), the system's (OSError) or a bug
            line, code = failure(exc, label)
            click.echo(line, err=True)
        else:
            code = returned if isinstance(returned, int) else 0
        if standalone_mode:
            sys.exit(code)
        return code


def _version(value: bool) -> None:
    if value:
        from importlib import metadata

        try:
            found = metadata.version("continuity")
        except metadata.PackageNotFoundError:
            found = "unknown (not installed)"
        click.echo(f"continuity {found}")
        raise typer.Exit(0)


def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print continuity's version and exit."
    ),
) -> None:
    """The application's own options (only --version)."""


def new_app(help_text: str) -> typer.Typer:
    app = _typer(help_text)
    app.callback()(_root)
    return app


def _typer(help_text: str) -> typer.Typer:
    return typer.Typer(
        cls=FunnelGroup,
        help=help_text,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        pretty_exceptions_show_locals=False,
        # Plain click help: rich's Markdown renderer costs about 60 ms at every `--help`.
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
