"""Things plugins register besides tools and providers: commands, toolsets, flags, CLI commands."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias


ArgumentCompletions: TypeAlias = "Sequence[str | tuple[str, str]] | None"
"""What ``Command.argument_completions`` returns: values, or ``(value, description)`` pairs; ``None``: nothing."""


@dataclass
class Command:
    """A slash command: ``/name args``. ``handler(args, ctx)`` may be ``def`` or ``async def``; ``ctx`` is
    a :class:`pi_core.CommandContext`.

    :param usage: how the arguments are written (``"[name]"``), for ``/help``.
    :param idle_only: refuse to run while the agent works (the user is told to wait or press Esc);
        by default a command typed while the agent works runs at once, as in pi.
    :param argument_completions: pi's ``getArgumentCompletions``: given the argument typed so far, the
        values the editor offers (Tab), each a string or ``(value, description)``; ``None`` offers nothing.
        It may be ``async def`` (values from a server, ``ctx.exec``, a file it reads).
    """

    name: str
    handler: Callable[[str, Any], Awaitable[Any] | Any]
    description: str = ""
    usage: str = ""
    idle_only: bool = False
    argument_completions: Callable[[str], ArgumentCompletions | Awaitable[ArgumentCompletions]] | None = None


@dataclass
class Toolset:
    """A named set of tool names, chosen with ``pi --toolset NAME``."""

    name: str
    tools: list[str]
    description: str = ""


@dataclass
class Flag:
    """A command-line flag a plugin adds (``--name``); ``type`` is ``bool`` or ``str``."""

    name: str
    type: type = bool
    default: Any = None
    help: str = ""

    def __post_init__(self) -> None:
        self.name = self.name.lstrip("-")
        if self.type not in (bool, str):
            raise ValueError(f"flag --{self.name}: type must be bool or str, not {self.type!r}")


@dataclass
class CliCommand:
    """A ``pi`` sub-command: a function whose parameters typer turns into options/arguments."""

    name: str
    callback: Callable[..., Any]
    help: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


__all__ = ["CliCommand", "Command", "Flag", "Toolset"]
