"""``ctx.register_shortcut``: keys in pi's syntax, kept on the session's context (shared with command
contexts), listed by ``get_shortcuts`` for ``/hotkeys``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_core import CommandContext, ExtensionContext, Shortcut


def test_shortcuts_are_canonical_shared_and_replaced(tmp_path: Path) -> None:
    ctx = ExtensionContext(tmp_path)
    calls: list[Any] = []
    first = ctx.register_shortcut("Shift+Ctrl+P", calls.append, description="one")
    assert isinstance(first, Shortcut) and first.key == "ctrl+shift+p"
    command_ctx = CommandContext(ctx)
    command_ctx.register_shortcut("ctrl+shift+p", calls.append, description="two")
    assert [(s.key, s.description) for s in ctx.get_shortcuts()] == [("ctrl+shift+p", "two")]
    assert ctx.take_shortcut_problems() == ["shortcut ctrl+shift+p registered again; the later one is used"]
    assert ctx.take_shortcut_problems() == []  # reported once
    ctx.get_shortcuts()[0].handler("pressed")
    assert calls == ["pressed"]


def test_a_bad_key_or_handler_is_refused(tmp_path: Path) -> None:
    ctx = ExtensionContext(tmp_path)
    with pytest.raises(ValueError, match="unknown modifier"):
        ctx.register_shortcut("hyper+x", print)
    with pytest.raises(ValueError, match="not callable"):
        ctx.register_shortcut("alt+x", "nope")  # type: ignore[arg-type]
    assert ctx.get_shortcuts() == []


def test_a_front_end_reads_shortcuts_and_renderers_through_the_public_context(tmp_path: Path) -> None:
    ctx = ExtensionContext(tmp_path)
    version = ctx.shortcuts_version
    ctx.register_shortcut("alt+x", print)
    assert ctx.shortcuts_version > version

    def message(message: Any, options: Any, theme: Any) -> list[str]:
        return ["m"]

    def entry(entry: Any, options: Any, theme: Any) -> list[str]:
        return ["e"]

    assert ctx.get_entry_renderer_types() == frozenset() and ctx.get_message_renderer("note") is None
    ctx.register_message_renderer("note", message)
    ctx.register_entry_renderer("bookmark", entry)
    assert ctx.get_message_renderer("note") is message and ctx.get_entry_renderer("bookmark") is entry
    assert ctx.get_entry_renderer_types() == {"bookmark"} and ctx.get_entry_renderer("note") is None
    assert ctx.resolve_tool_renderers("bash", lambda: "own") == "own"
    ctx.register_tool_renderer(lambda name, next_: "mine" if name == "bash" else next_())
    assert ctx.resolve_tool_renderers("bash", lambda: "own") == "mine"
    assert ctx.resolve_tool_renderers("read", lambda: "own") == "own"
