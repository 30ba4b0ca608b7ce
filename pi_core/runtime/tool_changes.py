"""Changes of the declared tools, recorded in the transcript as pi 1.6 records them.

The first system message declares the tools (``toolsAdded``). When the set changes later (a plugin's
``set_active_tools``, ``tool_search`` loading tools, a tool registered at run time), the next request is
preceded by a system message with no text and only the difference: ``toolsAdded`` for new or changed
declarations, ``toolsRemoved`` (``{"name": ...}``) for dropped or changed ones. Replaying the system
messages of a branch gives the tools the model was last told about, in either program.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..ai.message_list import message_items
from ..ai.types import SystemMessage, ToolDeclaration


def _key(declaration: ToolDeclaration) -> dict[str, Any]:
    return declaration.model_dump(mode="json", by_alias=True, exclude_none=True)


def _fold(declared: dict[str, dict[str, Any]], message: Any) -> None:
    for tool in getattr(message, "tools_removed", None) or ():
        if isinstance(tool, dict):
            declared.pop(tool.get("name"), None)
    for tool in getattr(message, "tools_added", None) or ():
        declared[tool.name] = _key(tool)


class DeclaredTools:
    """What a transcript's system messages declare, folded as the transcript grows.

    The transcript only grows between reloads, so each request folds only the messages added since
    the last one (a replay of the whole session per request would cost its length). Call
    :meth:`reset` whenever the transcript is replaced (resume, tree navigation, compaction).
    """

    def __init__(self) -> None:
        self._seen = 0
        self._tools: dict[str, dict[str, Any]] = {}

    def reset(self) -> None:
        self._seen, self._tools = 0, {}

    def names(self, transcript: Sequence[Any]) -> list[str]:
        """The tool names the transcript declares now, in declaration order."""
        return list(self._current(transcript))

    def declare(self, transcript: Sequence[Any], pending: Sequence[Any],
                current: Sequence[ToolDeclaration]) -> list[Any]:
        """The system messages ``pending`` (about to be added) should be so that the transcript declares
        ``current``. As in pi, the last pending system message's tool fields are taken as intent and
        replaced by the difference; without one, a new message holds it; nothing changes when the
        transcript already declares ``current``."""
        declared = dict(self._current(transcript))
        last = pending[-1] if pending else None
        for message in pending[:-1]:
            _fold(declared, message)
        now = {tool.name: tool for tool in current}
        added = [tool for name, tool in now.items() if declared.get(name) != _key(tool)]
        removed = [{"name": name} for name, key in declared.items() if name not in now or _key(now[name]) != key]
        if last is None:
            if not added and not removed:
                return []
            return [SystemMessage(content="", tools_added=added or None, tools_removed=removed or None)]
        if [_key(t) for t in last.tools_added or ()] == [_key(t) for t in added] \
                and list(last.tools_removed or ()) == removed:
            return list(pending)
        update = {"tools_added": added or None, "tools_removed": removed or None}
        return [*pending[:-1], last.model_copy(update=update)]

    def _current(self, transcript: Sequence[Any]) -> dict[str, dict[str, Any]]:
        if len(transcript) < self._seen:
            self.reset()
        # Roles are read from the items: a resumed session's messages are typed only when read
        # (MessageList), and only the system messages need to be.
        items = message_items(transcript)
        for at in range(self._seen, len(items)):
            if getattr(items[at], "role", None) == "system":
                _fold(self._tools, transcript[at])
        self._seen = len(transcript)
        return self._tools
