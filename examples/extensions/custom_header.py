"""Port of pi's ``custom-header`` example: at start the plugin's header replaces pi's (a small logo and
the version); ``/builtin-header`` puts pi's back."""

from __future__ import annotations

from typing import Any

from pi_core import Command, CommandContext, ExtensionContext, SessionStartEvent, __version__, hookimpl
from pi_core.tui import Text


def header(tui: Any, theme: Any) -> Text:
    return Text([theme.fg("accent", "π ━━ pi for Python ━━ π"), theme.fg("muted", f"version {__version__}")])


@hookimpl
async def session_start(event: SessionStartEvent, ctx: ExtensionContext) -> None:
    await ctx.ui.set_header(header)


async def builtin_header(args: str, ctx: CommandContext) -> None:
    await ctx.ui.set_header(None)
    await ctx.ui.notify("Built-in header restored", "info")


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("builtin-header", builtin_header, "Restore the built-in header"))
