"""Port of pi's ``modal-editor`` example: a vim-like modal editor (``ctx.ui.set_editor_component``).

* Escape: insert → normal mode (in normal mode it goes to pi: it interrupts the agent)
* ``i`` insert, ``a`` append; ``h j k l`` move, ``0``/``$`` line start/end, ``x`` deletes
* Ctrl+C, Ctrl+D, Enter and the other keys work in both modes

The mode shows at the end of the editor's bottom border.
"""

from __future__ import annotations

from typing import Any

from pi_core import ExtensionContext, hookimpl
from pi_core.tui import CustomEditor, matches_key, truncate_to_width, visible_width

NORMAL_KEYS: dict[str, str | None] = {
    "h": "\x1b[D",  # left
    "j": "\x1b[B",  # down
    "k": "\x1b[A",  # up
    "l": "\x1b[C",  # right
    "0": "\x01",  # line start
    "$": "\x05",  # line end
    "x": "\x1b[3~",  # delete the character under the cursor
    "i": None,  # insert mode
    "a": None,  # append (insert mode after the cursor)
}


class ModalEditor(CustomEditor):
    mode = "insert"

    def handle_input(self, data: str) -> None:
        if matches_key(data, "escape"):  # insert → normal; in normal mode pi gets it (interrupt...)
            if self.mode == "insert":
                self.mode = "normal"
                self.tui.request_render()
            else:
                super().handle_input(data)
            return
        if self.mode == "insert":
            super().handle_input(data)
            return
        if data in NORMAL_KEYS:
            sequence = NORMAL_KEYS[data]
            if data == "i":
                self.mode = "insert"
            elif data == "a":
                self.mode = "insert"
                super().handle_input("\x1b[C")
            elif sequence:
                super().handle_input(sequence)
            self.tui.request_render()
            return
        if len(data) == 1 and ord(data) >= 32:  # other printable keys do nothing in normal mode
            return
        super().handle_input(data)  # control keys (Ctrl+C, Enter...) as usual

    def render(self, width: int) -> list[str]:
        rows = super().render(width)
        if not rows:
            return rows
        label = " NORMAL " if self.mode == "normal" else " INSERT "
        if visible_width(rows[-1]) >= len(label):
            rows[-1] = truncate_to_width(rows[-1], width - len(label), "") + label
        return rows


@hookimpl
async def session_start(event: Any, ctx: ExtensionContext) -> None:
    await ctx.ui.set_editor_component(lambda tui, theme, keybindings: ModalEditor(tui, theme, keybindings))
