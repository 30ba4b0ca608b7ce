"""A plugin's editor (``ctx.ui.set_editor_component``) on top of the prompt_toolkit editor line.

The prompt_toolkit editor stays what edits the text (so every built-in binding keeps working). The
plugin's :class:`~pi_core.tui.CustomEditor` sits in front of it:

* keys: the editor application's key processor is wrapped, so each key press (as raw terminal input)
  goes to the plugins' terminal-input listeners (``ctx.ui.on_terminal_input``: consume or replace it),
  then to the component's ``handle_input``; what the component hands on (``super().handle_input``)
  is fed to the key processor as if typed;
* rows: the component's ``render(width)`` gives a top border (drawn above the text), the text's rows
  (their styling is used while their visible text matches the buffer, through a lexer) and a bottom
  border (drawn under the text, before the widgets and footer).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import ANSI, StyleAndTextTuples, to_formatted_text
from prompt_toolkit.input.vt100_parser import Vt100Parser
from prompt_toolkit.key_binding.key_processor import KeyPress, KeyProcessor
from prompt_toolkit.keys import Keys
from prompt_toolkit.lexers import Lexer

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")
PASSED_AS_IS = {Keys.CPRResponse, Keys.BracketedPaste, Keys.Vt100MouseEvent, Keys.WindowsMouseEvent,
                Keys.SIGINT, Keys.Ignore, Keys.ScrollUp, Keys.ScrollDown}
"""Key presses that are not keys a user typed: they skip the plugin's editor."""


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


class EditorBridge:
    """Connects one :class:`~pi_core.tui.CustomEditor` (or none) to the editor line."""

    def __init__(self, app: Callable[[], Any], columns: Callable[[], int],
                 listeners: Callable[[], list[Callable[[str], Any]]] | None = None) -> None:
        self._app = app
        self._columns = columns
        self._listeners = listeners or (lambda: [])  # ctx.ui.on_terminal_input handlers, first to see keys
        self.component: Any = None
        self._feeding: list[KeyPress] | None = None  # the key presses the current data came from
        self._forward: Callable[[list[KeyPress]], None] | None = None
        self._processor: KeyProcessor | None = None
        self._processing = 0  # inside the key processor's process_keys (a binding runs)

    # -- set-up --------------------------------------------------------------------------------

    def install(self, processor: KeyProcessor) -> None:
        """Wrap ``processor.feed_multiple`` (what prompt_toolkit feeds read keys through)."""
        if self._processor is processor:
            return
        self._processor = processor
        forward = processor.feed_multiple
        self._forward = lambda presses: forward(presses)

        def feed_multiple(presses: list[KeyPress], first: bool = False) -> None:
            if first or (self.component is None and not self._listeners()):
                forward(presses, first)
                return
            self._dispatch(presses)

        process = processor.process_keys

        def process_keys() -> None:
            self._processing += 1
            try:
                process()
            finally:
                self._processing -= 1

        processor.feed_multiple = feed_multiple  # type: ignore[method-assign,assignment]
        processor.process_keys = process_keys  # type: ignore[method-assign]

    def set_component(self, component: Any) -> None:
        old = self.component
        if old is not None and getattr(old, "_host", None) is self:
            old._host = None
        self.component = component
        if component is not None and hasattr(component, "_host"):
            component._host = self

    # -- keys ----------------------------------------------------------------------------------

    def _dispatch(self, presses: list[KeyPress]) -> None:
        for group in _groups(presses):
            if group[0].key in PASSED_AS_IS:
                self._send(group)
                continue
            data = "".join(press.data for press in group)
            heard = self._hear(data)
            if heard is None:  # a listener consumed it
                continue
            if heard != data:
                data, group = heard, parse_keys(heard)
            if self.component is None:
                self._send(group)
                continue
            handle = getattr(self.component, "handle_input", None)
            if handle is None:
                self._send(group)
                continue
            self._feeding = group
            try:
                handle(data)
            except Exception:  # a plugin's bug must not take the keyboard away: the key goes to pi
                self._send(group)
                self._process()
            finally:
                self._feeding = None

    def _hear(self, data: str) -> str | None:
        """``data`` after the terminal-input listeners (``None``: one consumed it). A listener answers
        ``None`` (pass on), ``{"consume": True}`` or ``{"data": replacement}``."""
        for listener in list(self._listeners()):
            try:
                answer = listener(data)
            except Exception:  # noqa: BLE001 - a plugin's bug must not eat the keyboard
                continue
            if answer is None:
                continue
            get = answer.get if isinstance(answer, dict) else (lambda name, a=answer: getattr(a, name, None))
            if get("consume"):
                return None
            replacement = get("data")
            if isinstance(replacement, str):
                data = replacement
        return data

    def _send(self, presses: list[KeyPress]) -> None:
        if self._forward is not None and presses:
            self._forward(presses)

    def feed(self, data: str) -> None:
        """``CustomEditor.handle_input``'s default: pi's editor handles ``data`` now (so the text the
        component reads next already has the key in it)."""
        current = self._feeding
        if current is not None and data == "".join(press.data for press in current):
            self._send(current)  # the key as it was read (keeps keys only prompt_toolkit can name)
        else:
            self._send(parse_keys(data))
        self._process()

    def _process(self) -> None:
        if self._processing:  # a key binding fed this: the running process_keys takes it
            return
        app = self._app()
        if app is not None and app.is_running and self._processor is not None:
            from prompt_toolkit.application.current import set_app

            with set_app(app):
                self._processor.process_keys()

    # -- text ----------------------------------------------------------------------------------

    def _buffer(self) -> Any:
        app = self._app()
        return app.current_buffer if app is not None else None

    def get_text(self) -> str:
        buffer = self._buffer()
        return buffer.text if buffer is not None else ""

    def set_text(self, text: str) -> None:
        buffer = self._buffer()
        if buffer is not None:
            buffer.document = Document(text, len(text))

    def insert_text(self, text: str) -> None:
        buffer = self._buffer()
        if buffer is not None:
            buffer.insert_text(text)

    def rows(self, width: int) -> list[str]:
        """The default rows: a border, the text's lines, a border."""
        component = self.component
        border = component.border_color("─" * width) if component is not None else "─" * width
        return [border, *self.get_text().split("\n"), border]

    # -- drawing -------------------------------------------------------------------------------

    def rendered(self) -> list[str]:
        """The component's rows for the terminal's width (at least two: the borders)."""
        component = self.component
        if component is None:
            return []
        width = self._columns()
        try:
            rows = [str(row) for row in component.render(width)]
        except Exception as exc:  # a plugin's bug shows, the editor stays usable
            rows = [f"[editor error: {exc}]", *self.get_text().split("\n"), ""]
        if len(rows) < 2:
            rows = [*rows, "", ""][:2]
        from ...tui import truncate_to_width

        return [truncate_to_width(rows[0], width), *rows[1:-1], truncate_to_width(rows[-1], width)]

    def lexer(self) -> Lexer:
        return _ComponentLexer(self)


class _ComponentLexer(Lexer):
    """Styles the buffer's lines with the component's text rows (when their visible text matches)."""

    def __init__(self, bridge: EditorBridge) -> None:
        self.bridge = bridge
        self._serial = 0

    def lex_document(self, document: Document) -> Callable[[int], StyleAndTextTuples]:
        rows = self.bridge.rendered()[1:-1]
        lines = document.lines

        def line(number: int) -> StyleAndTextTuples:
            text = lines[number] if number < len(lines) else ""
            if number < len(rows) and strip_ansi(rows[number]) == text and "\x1b" in rows[number]:
                return to_formatted_text(ANSI(rows[number]))
            return [("", text)]

        return line

    def invalidation_hash(self) -> Any:
        self._serial += 1  # the component may draw differently at any redraw (an animation)
        return self._serial


def parse_keys(data: str) -> list[KeyPress]:
    """Raw terminal input as prompt_toolkit key presses."""
    presses: list[KeyPress] = []
    parser = Vt100Parser(presses.append)
    parser.feed(data)
    parser.flush()
    return presses


def _groups(presses: list[KeyPress]) -> list[list[KeyPress]]:
    """Key presses as the keys a user pressed: Esc followed by a key is Alt+key; presses without data
    (the rest of a sequence prompt_toolkit splits) stay with the one before."""
    groups: list[list[KeyPress]] = []
    pending_escape = False
    for press in presses:
        if groups and (not press.data or pending_escape) and groups[-1][0].key not in PASSED_AS_IS \
                and press.key not in PASSED_AS_IS:
            groups[-1].append(press)
            pending_escape = False
            continue
        groups.append([press])
        pending_escape = press.key == Keys.Escape and press.data == "\x1b"
    return groups


__all__ = ["EditorBridge", "parse_keys", "strip_ansi"]
