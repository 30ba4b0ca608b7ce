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
    assert ctx._shortcuts.problems == ["shortcut ctrl+shift+p registered again; the later one is used"]
    ctx.get_shortcuts()[0].handler("pressed")
    assert calls == ["pressed"]


def test_a_bad_key_or_handler_is_refused(tmp_path: Path) -> None:
    ctx = ExtensionContext(tmp_path)
    with pytest.raises(ValueError, match="unknown modifier"):
        ctx.register_shortcut("hyper+x", print)
    with pytest.raises(ValueError, match="not callable"):
        ctx.register_shortcut("alt+x", "nope")  # type: ignore[arg-type]
    assert ctx.get_shortcuts() == []
