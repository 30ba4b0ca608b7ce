"""How plugins restyle the conversation in the terminal: message renderers by ``custom_type``
(``ctx.register_message_renderer``) and entry renderers for their ``custom`` session entries
(``ctx.register_entry_renderer``). Tools carry their own ``render_call`` / ``render_result``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

MessageRenderer = Callable[[Any, dict[str, Any], Any], Any]
"""``(message, options, theme) -> component | lines | None`` (``options["expanded"]``; ``None``: pi's
default row)."""


EntryRenderer = Callable[[Any, dict[str, Any], Any], Any]
"""``(entry, options, theme) -> component | lines | None`` for a ``custom`` entry (``entry.custom_type``,
``entry.data``, ``entry.id``, ``entry.timestamp``); ``None`` draws nothing, as without a renderer."""


class RendererRegistry:
    def __init__(self) -> None:
        self.messages: dict[str, MessageRenderer] = {}
        self.entries: dict[str, EntryRenderer] = {}

    def register_entry(self, custom_type: str, renderer: EntryRenderer) -> None:
        if not callable(renderer):
            raise ValueError(f"register_entry_renderer({custom_type!r}): the renderer is not callable")
        self.entries[custom_type] = renderer

    def register_message(self, custom_type: str, renderer: MessageRenderer) -> None:
        if not callable(renderer):
            raise ValueError(f"register_message_renderer({custom_type!r}): the renderer is not callable")
        self.messages[custom_type] = renderer


__all__ = ["EntryRenderer", "MessageRenderer", "RendererRegistry"]
