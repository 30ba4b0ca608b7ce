"""The base of a plugin's editor (``ctx.ui.set_editor_component``): pi's ``CustomEditor``."""

from __future__ import annotations

from typing import Any, Protocol


class EditorHost(Protocol):
    """What the terminal gives a :class:`CustomEditor` (set when the editor is on screen)."""

    def feed(self, data: str) -> None: ...
    def rows(self, width: int) -> list[str]: ...
    def get_text(self) -> str: ...
    def set_text(self, text: str) -> None: ...
    def insert_text(self, text: str) -> None: ...


class CustomEditor:
    """The base of a plugin's editor (pi's ``CustomEditor``), for ``ctx.ui.set_editor_component``.

    Every key reaches :meth:`handle_input` first, as raw terminal input; ``super().handle_input(data)``
    gives it to pi's editor, which keeps all its bindings (Enter sends, history, Ctrl+C, Esc interrupts,
    the app's keys and the plugins' shortcuts). A key not handed on does nothing. ``data`` may be any
    key's sequence, so a subclass can translate (vim's ``h`` → ``"\x1b[D"``, Left).

    :meth:`render` returns the editor's rows for ``width``: a top border, one row per line of text and
    a bottom border. A subclass may replace the borders (a status in them) and restyle the text rows;
    a text row is shown restyled as long as its visible text stays the same (the cursor stays pi's).
    """

    def __init__(self, tui: Any, theme: Any, keybindings: Any, options: dict[str, Any] | None = None) -> None:
        self.tui = tui
        self.theme = theme
        self.keybindings = keybindings
        self.options = dict(options or {})
        self._host: EditorHost | None = None

    def handle_input(self, data: str) -> None:
        """Give ``data`` to pi's editor (what a subclass calls for keys it does not handle itself)."""
        if self._host is not None:
            self._host.feed(data)

    def render(self, width: int) -> list[str]:
        """Top border, the text's rows, bottom border (nothing while the editor is not on screen)."""
        return self._host.rows(width) if self._host is not None else []

    def get_text(self) -> str:
        return self._host.get_text() if self._host is not None else ""

    def set_text(self, text: str) -> None:
        if self._host is not None:
            self._host.set_text(text)

    def insert_text(self, text: str) -> None:
        """Type ``text`` at the cursor."""
        if self._host is not None:
            self._host.insert_text(text)

    def border_color(self, text: str) -> str:
        """``text`` in the editor border's colour."""
        theme = self.theme
        return theme.fg("border", text) if theme is not None and hasattr(theme, "fg") else text

    def invalidate(self) -> None:
        return None


__all__ = ["CustomEditor", "EditorHost"]
