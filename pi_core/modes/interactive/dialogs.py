"""Dialogs drawn inline under the conversation: a filterable list (select, confirm), a one-line input
and a multi-line editor. Each is a small non-fullscreen prompt_toolkit application that erases
itself when done (the answer is echoed into the scrollback by the caller).

Line-based equivalents for pipes are in :class:`LineDialogs`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from .capabilities import use_escape_timeout
from .style import Palette

VISIBLE_OPTIONS = 10


class TerminalDialogs:
    """prompt_toolkit dialogs (imported lazily: only the interactive mode needs prompt_toolkit)."""

    def __init__(self, palette: Palette) -> None:
        self.palette = palette

    async def select(self, title: str, options: Sequence[str], *, refresh: Refresh | None = None) -> int | None:
        """The position of the chosen option. With ``refresh``, the list is shown at once and ``refresh()``
        runs in the background; the options it returns (with a status line) replace the shown ones — the
        answer is then a position in those."""
        import asyncio

        from prompt_toolkit.application import Application
        from prompt_toolkit.buffer import Buffer
        from prompt_toolkit.filters import Condition
        from prompt_toolkit.formatted_text import ANSI
        from prompt_toolkit.layout import ConditionalContainer, HSplit, Layout, Window
        from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl

        state = _SelectState(list(options))
        query = Buffer(on_text_changed=lambda buf: state.filter(buf.text))
        p = self.palette

        def body() -> Any:
            return ANSI("\n".join(state.rows(p)))

        layout = Layout(HSplit([
            Window(FormattedTextControl(lambda: ANSI(p(title, "bold") + p("  (type to filter, Enter to choose, "
                                                                           "Esc to cancel)", "gray"))),
                   dont_extend_height=True),
            Window(BufferControl(query), height=1, get_line_prefix=lambda *_: ANSI(p("filter: ", "gray"))),
            Window(FormattedTextControl(body), dont_extend_height=True),
            ConditionalContainer(Window(FormattedTextControl(lambda: ANSI(p(state.status, "gray"))), height=1),
                                 filter=Condition(lambda: bool(state.status))),
        ]), focused_element=query)
        app: Application[int | None] = Application(layout=layout, key_bindings=_select_keys(state),
                                                   erase_when_done=True, full_screen=False)
        use_escape_timeout(app)  # PI_TUI_ESC_TIMEOUT: a lone Esc cancels at once
        if refresh is None:
            return await app.run_async()

        async def update() -> None:
            state.status = "Refreshing model catalogs…"
            result = await refresh()
            if result is not None:
                fresh, status = result
                state.replace(list(fresh), query.text)
                state.status = status
            else:
                state.status = ""
            app.invalidate()

        task = asyncio.ensure_future(update())
        try:
            return await app.run_async()
        finally:
            task.cancel()

    async def input(self, title: str, placeholder: str, prefill: str = "", *, secret: bool = False) -> str | None:
        return await self._prompt(title, prefill, placeholder, multiline=False, secret=secret)

    async def tree(self, state: Any, keymap: Any, title: str) -> tuple[str, str] | None:
        from .tree_view import run_tree

        return await run_tree(self.palette, state, keymap, title=title)

    async def sessions(self, state: Any, title: str) -> tuple[str, Any] | None:
        from .session_picker import run_picker

        return await run_picker(self.palette, state, title)

    async def editor(self, title: str, prefill: str) -> str | None:
        return await self._prompt(title + " (Alt+Enter to save, Esc to cancel)", prefill, "", multiline=True)

    async def _prompt(self, title: str, prefill: str, placeholder: str, *, multiline: bool,
                      secret: bool = False) -> str | None:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.formatted_text import ANSI
        from prompt_toolkit.key_binding import KeyBindings

        keys = KeyBindings()

        @keys.add("escape")
        @keys.add("c-c")
        def _cancel(event: Any) -> None:
            event.app.exit(result=None)

        if multiline:
            @keys.add("escape", "enter")
            def _save(event: Any) -> None:
                event.current_buffer.validate_and_handle()

        p = self.palette
        session: PromptSession[str] = PromptSession(erase_when_done=True, key_bindings=keys, multiline=multiline)
        use_escape_timeout(session.app)
        message = ANSI(p(title, "bold") + ("\n" if multiline else ": "))
        # A secret is drawn as one "*" per character, so an API key never shows on screen or in a recording.
        return await session.prompt_async(message, default=prefill, placeholder=ANSI(p(placeholder, "gray")),
                                          is_password=secret)


#: A picker's background refresh: the new options and a status line, or ``None`` to keep the shown ones.
Refresh = Callable[[], Awaitable["tuple[Sequence[str], str] | None"]]


class _SelectState:
    def __init__(self, options: list[str]) -> None:
        self.options = options
        self.visible = list(range(len(options)))
        self.cursor = 0
        self.status = ""

    def replace(self, options: list[str], query: str) -> None:
        """New options under the same filter; the cursor stays on the option it was on when still there."""
        chosen = self.chosen()
        was = self.options[chosen] if chosen is not None else None
        self.options = options
        self.filter(query)
        if was is not None and was in options:
            index = options.index(was)
            if index in self.visible:
                self.cursor = self.visible.index(index)

    def filter(self, text: str) -> None:
        words = text.lower().split()
        self.visible = [i for i, o in enumerate(self.options) if all(w in o.lower() for w in words)]
        self.cursor = 0

    def move(self, delta: int) -> None:
        if self.visible:
            self.cursor = (self.cursor + delta) % len(self.visible)

    def chosen(self) -> int | None:
        return self.visible[self.cursor] if self.visible else None

    def rows(self, p: Palette) -> list[str]:
        if not self.visible:
            return [p("  (nothing matches)", "gray")]
        start = max(0, min(self.cursor - VISIBLE_OPTIONS // 2, len(self.visible) - VISIBLE_OPTIONS))
        window = self.visible[start:start + VISIBLE_OPTIONS]
        rows = []
        for offset, index in enumerate(window):
            if start + offset == self.cursor:
                rows.append(p(f"{p.glyphs.user} {self.options[index]}", "bold", "cyan"))
            else:
                rows.append(f"  {self.options[index]}")
        if len(self.visible) > VISIBLE_OPTIONS:
            rows.append(p(f"  ({self.cursor + 1}/{len(self.visible)})", "gray"))
        return rows


def _select_keys(state: _SelectState) -> Any:
    from prompt_toolkit.key_binding import KeyBindings

    keys = KeyBindings()
    moves = {"up": -1, "c-p": -1, "down": 1, "c-n": 1, "pageup": -VISIBLE_OPTIONS, "pagedown": VISIBLE_OPTIONS}
    for key, delta in moves.items():
        keys.add(key)(lambda event, delta=delta: state.move(delta))

    @keys.add("enter")
    def _choose(event: Any) -> None:
        event.app.exit(result=state.chosen())

    @keys.add("escape")
    @keys.add("c-c")
    def _cancel(event: Any) -> None:
        event.app.exit(result=None)

    return keys


class LineDialogs:
    """Dialogs for a pipe: the question is printed, the next input line answers it."""

    def __init__(self, write: Callable[[str], None], read_line: Callable[[], Awaitable[str | None]]) -> None:
        self.write = write
        self.read_line = read_line

    async def select(self, title: str, options: Sequence[str], *, refresh: Refresh | None = None) -> int | None:
        """A numbered list (``refresh`` is not waited for: the list is printed once)."""
        self.write(title)
        for number, option in enumerate(options, 1):
            self.write(f"  {number}. {option}")
        self.write(f"choose 1-{len(options)} (empty line to cancel):")
        answer = await self.read_line()
        if answer is None or not answer.strip():
            return None
        text = answer.strip()
        if text.isdigit() and 1 <= int(text) <= len(options):
            return int(text) - 1
        matches = [i for i, o in enumerate(options) if o.lower() == text.lower()]
        return matches[0] if matches else None

    async def sessions(self, state: Any, title: str) -> tuple[str, Any] | None:
        """The sessions as a numbered list (resume only)."""
        from .session_picker import _title

        rows = state.rows
        index = await self.select(title, [_title(i)[:80] for i in rows]) if rows else None
        return None if index is None else ("resume", rows[index])

    async def tree(self, state: Any, keymap: Any, title: str) -> tuple[str, str] | None:
        """The tree as a numbered list of the visible entries."""
        rows = state.rows
        index = await self.select(title, ["  " * r.depth + r.text[:100] for r in rows]) if rows else None
        return None if index is None else ("select", rows[index].id)

    async def input(self, title: str, placeholder: str, prefill: str = "", *, secret: bool = False) -> str | None:
        self.write(f"{title}:" + (f" ({placeholder})" if placeholder else ""))
        answer = await self.read_line()
        return None if answer is None else answer

    async def editor(self, title: str, prefill: str) -> str | None:
        self.write(f"{title} (lines until a line with a single '.'):")
        lines: list[str] = []
        while True:
            line = await self.read_line()
            if line is None:
                return None
            if line == ".":
                return "\n".join(lines)
            lines.append(line)


__all__ = ["LineDialogs", "Refresh", "TerminalDialogs"]
