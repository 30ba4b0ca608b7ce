"""``ctx.ui`` without a terminal answers as pi's no-UI context does: a theme whose calls work (plain text),
``get_theme`` ``None``, ``set_theme`` refused; over RPC ``custom()`` is ``None`` and the client hears nothing."""

from __future__ import annotations

import asyncio
from typing import Any

from pi_core import UI
from pi_core.modes.rpc.ui import RpcUI


def test_the_headless_theme_styles_as_plain_text() -> None:
    ui = UI()
    theme = ui.theme
    assert theme.fg("accent", "hi") == "hi" and theme.bg("selectedBg", "x") == "x" and theme.bold("b") == "b"
    assert theme.style("s", fg="error", bold=True) == "s"
    assert theme.name == "dark" and theme.hex("accent") is not None  # the colours are known, just not drawn
    assert ui.get_theme("light") is None and ui.get_all_themes() == []
    assert asyncio.run(ui.set_theme("light")) == {"success": False, "error": "UI not available"}


def test_rpc_custom_answers_none_without_telling_the_client() -> None:
    sent: list[dict[str, Any]] = []
    ui = RpcUI(sent.append)

    async def run() -> Any:
        return await ui.custom(lambda tui, theme, keybindings, done: None, overlay=True,
                               on_handle=lambda handle: None)

    assert asyncio.run(run()) is None and sent == []
    assert ui.theme.fg("accent", "plain") == "plain"
    assert asyncio.run(ui.set_theme("dark")) == {"success": False,
                                                 "error": "Theme switching not supported in RPC mode"}
