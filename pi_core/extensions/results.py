"""What the plugin API's queries and session moves return (pi's result objects, snake_case)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal


@dataclass(frozen=True)
class ContextUsage:
    """How full the model's context was at the last answer (``ctx.get_context_usage()``).

    ``tokens`` and ``percent`` are ``None`` when unknown: no answer yet, or right after a compaction.
    """

    tokens: int | None
    context_window: int
    percent: float | None

    def to_json(self) -> dict[str, Any]:
        return {"tokens": self.tokens, "contextWindow": self.context_window, "percent": self.percent}


@dataclass(frozen=True)
class SessionResult:
    """The outcome of ``ctx.new_session()`` / ``ctx.switch_session()``: ``cancelled`` when a plugin said no."""

    cancelled: bool


@dataclass(frozen=True)
class ForkResult:
    """The outcome of ``ctx.fork()``: ``text`` is the forked user message (``position="before"``)."""

    cancelled: bool
    text: str = ""


@dataclass(frozen=True)
class NavigateResult:
    """The outcome of ``ctx.navigate_tree()``.

    :ivar cancelled: a plugin cancelled, or the summary was aborted (``aborted``).
    :ivar editor_text: the text of the user message moved before, to edit and send again.
    :ivar summary_entry: the ``branch_summary`` entry written (pi's JSON), if any.
    """

    cancelled: bool
    aborted: bool = False
    editor_text: str | None = None
    summary_entry: dict[str, Any] | None = None


@dataclass(frozen=True)
class SourceInfo:
    """Where a command comes from (pi's ``sourceInfo``)."""

    path: Path | None
    source: str = "local"
    scope: str = "temporary"
    origin: str = "top-level"
    base_dir: Path | None = None


@dataclass(frozen=True)
class SlashCommandInfo:
    """One ``/`` command a user can type (``ctx.get_commands()``): a plugin command, a prompt template or
    a skill (``skill:<name>``)."""

    name: str
    description: str | None
    source: Literal["extension", "prompt", "skill"]
    source_info: SourceInfo
    plugin: str | None = None
    """The plugin that registered it (plugin commands only)."""
    usage: str = ""
    """How its arguments are written (``"[name]"``), for ``/help``."""


__all__ = ["ContextUsage", "ForkResult", "NavigateResult", "SessionResult", "SlashCommandInfo", "SourceInfo"]
