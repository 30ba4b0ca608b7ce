"""Components that take typed text: a one-line :class:`Input` and a multi-line :class:`Editor` (pi-tui's
``Input`` and ``Editor``), to embed in a ``ctx.ui.custom`` component.

Both handle pi's editing keys: ←/→ (Ctrl+B/F), Alt+←/→ by word, Home/End (Ctrl+A/E), Backspace,
Delete (Ctrl+D), Ctrl+W and Alt+Backspace (word back), Alt+D (word forward), Ctrl+U/Ctrl+K (to the
start/end of the line), Ctrl+Y (yank what was deleted last), Ctrl+- (undo), and pasted text.
While ``focused`` they put :data:`~pi_core.tui.CURSOR_MARKER` before their cursor.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .component import CURSOR_MARKER, render_fake_cursor
from .keys import matches_action
from .lists import SelectListTheme
from .width import _graphemes, slice_by_column, truncate_to_width, visible_width

PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"


def _is_text(data: str) -> bool:
    return bool(data) and all(ord(c) >= 32 and ord(c) != 0x7F and not 0x80 <= ord(c) <= 0x9F for c in data)


def _kitty_text(data: str) -> str | None:
    """The character a kitty ``CSI code u`` press of a printable key stands for (no modifiers but shift)."""
    import re

    match = re.fullmatch(r"\x1b\[(\d+)(?::(\d*))?(?::\d+)?(?:;(\d+))?(?::1)?u", data)
    if not match:
        return None
    mods = int(match.group(3) or 1) - 1
    code = int(match.group(2)) if match.group(2) and mods & 1 else int(match.group(1))
    if mods & ~1 or code < 32 or code == 127 or 57344 <= code <= 63743:
        return None
    return chr(code)


def _previous_grapheme(text: str, cursor: int) -> int:
    clusters = list(_graphemes(text[:cursor]))
    return cursor - (len(clusters[-1]) if clusters else 1)


def _next_grapheme(text: str, cursor: int) -> int:
    for cluster in _graphemes(text[cursor:]):
        return cursor + len(cluster)
    return cursor


def _word_left(text: str, cursor: int) -> int:
    while cursor > 0 and text[cursor - 1].isspace():
        cursor -= 1
    while cursor > 0 and not text[cursor - 1].isspace():
        cursor -= 1
    return cursor


def _word_right(text: str, cursor: int) -> int:
    while cursor < len(text) and text[cursor].isspace():
        cursor += 1
    while cursor < len(text) and not text[cursor].isspace():
        cursor += 1
    return cursor


class _LineEdit:
    """Editing one line of text: the keys both components share."""

    def __init__(self) -> None:
        self.killed = ""
        self.undo_stack: list[tuple[Any, ...]] = []

    def edit(self, data: str, text: str, cursor: int) -> tuple[str, int] | None:
        """``(text, cursor)`` after the key, or ``None`` when the key is not an editing key."""
        if matches_action(data, "tui.editor.deleteCharBackward"):
            if cursor == 0:
                return text, cursor
            start = _previous_grapheme(text, cursor)
            return text[:start] + text[cursor:], start
        if matches_action(data, "tui.editor.deleteCharForward"):
            end = _next_grapheme(text, cursor)
            return text[:cursor] + text[end:], cursor
        if matches_action(data, "tui.editor.deleteWordBackward"):
            start = _word_left(text, cursor)
            self.killed = text[start:cursor] or self.killed
            return text[:start] + text[cursor:], start
        if matches_action(data, "tui.editor.deleteWordForward"):
            end = _word_right(text, cursor)
            self.killed = text[cursor:end] or self.killed
            return text[:cursor] + text[end:], cursor
        if matches_action(data, "tui.editor.deleteToLineStart"):
            self.killed = text[:cursor] or self.killed
            return text[cursor:], 0
        if matches_action(data, "tui.editor.deleteToLineEnd"):
            self.killed = text[cursor:] or self.killed
            return text[:cursor], cursor
        if matches_action(data, "tui.editor.yank"):
            return text[:cursor] + self.killed + text[cursor:], cursor + len(self.killed)
        return self.move(data, text, cursor)

    def move(self, data: str, text: str, cursor: int) -> tuple[str, int] | None:
        if matches_action(data, "tui.editor.cursorWordLeft"):
            return text, _word_left(text, cursor)
        if matches_action(data, "tui.editor.cursorWordRight"):
            return text, _word_right(text, cursor)
        if matches_action(data, "tui.editor.cursorLeft"):
            return text, max(0, _previous_grapheme(text, cursor)) if cursor else 0
        if matches_action(data, "tui.editor.cursorRight"):
            return text, _next_grapheme(text, cursor)
        if matches_action(data, "tui.editor.cursorLineStart"):
            return text, 0
        if matches_action(data, "tui.editor.cursorLineEnd"):
            return text, len(text)
        return None


def _with_cursor(text: str, cursor: int, focused: bool) -> str:
    """``text`` with the cursor drawn at ``cursor`` (a reverse-video cell; the marker when focused)."""
    after = text[cursor:]
    cell = next(iter(_graphemes(after)), " ")
    rest = after[len(cell):] if after else ""
    return text[:cursor] + (CURSOR_MARKER if focused else "") + render_fake_cursor(cell) + rest


class Input:
    """One line of text (pi's ``Input``): Enter calls ``on_submit(value)``, Esc (or Ctrl+C) calls
    ``on_escape()``; the text scrolls sideways when it is wider than the row. ``prompt`` is drawn
    first (``"> "``), ``placeholder`` while it is empty."""

    def __init__(self, *, prompt: str = "> ", placeholder: str = "",
                 placeholder_style: Callable[[str], str] | None = None) -> None:
        self.value = ""
        self.cursor = 0
        self.prompt = prompt
        self.placeholder = placeholder
        self.placeholder_style = placeholder_style or (lambda text: text)
        self.focused = False
        self.on_submit: Callable[[str], Any] | None = None
        self.on_escape: Callable[[], Any] | None = None
        self._edit = _LineEdit()
        self._paste: str | None = None

    def get_value(self) -> str:
        return self.value

    def set_value(self, value: str) -> None:
        self.value = value
        self.cursor = min(self.cursor, len(value))

    def invalidate(self) -> None:
        return None

    def handle_input(self, data: str) -> None:
        if self._paste is not None or PASTE_START in data:
            self._take_paste(data)
            return
        if matches_action(data, "tui.select.cancel"):
            if self.on_escape is not None:
                self.on_escape()
            return
        if matches_action(data, "tui.editor.undo"):
            if self._edit.undo_stack:
                self.value, self.cursor = self._edit.undo_stack.pop()
            return
        if matches_action(data, "tui.input.submit") or data == "\n":
            if self.on_submit is not None:
                self.on_submit(self.value)
            return
        edited = self._edit.edit(data, self.value, self.cursor)
        if edited is not None:
            if edited[0] != self.value:
                self._edit.undo_stack.append((self.value, self.cursor))
            self.value, self.cursor = edited
            return
        text = _kitty_text(data)
        if text is None and _is_text(data):
            text = data
        if text is not None:
            self.insert(text)

    def insert(self, text: str) -> None:
        if not self._edit.undo_stack or text.isspace():
            self._edit.undo_stack.append((self.value, self.cursor))
        self.value = self.value[:self.cursor] + text + self.value[self.cursor:]
        self.cursor += len(text)

    def _take_paste(self, data: str) -> None:
        buffered = (self._paste or "") + data.replace(PASTE_START, "", 1)
        if PASTE_END not in buffered:
            self._paste = buffered
            return
        pasted, rest = buffered.split(PASTE_END, 1)
        self._paste = None
        self.insert(pasted.replace("\r\n", "").replace("\r", "").replace("\n", "").replace("\t", "    "))
        if rest:
            self.handle_input(rest)

    def render(self, width: int) -> list[str]:
        room = width - visible_width(self.prompt)
        if room <= 0:
            return [truncate_to_width(self.prompt, width, "")]
        if not self.value and self.placeholder:
            shown = truncate_to_width(self.placeholder, room, "")
            cell = next(iter(_graphemes(shown)), " ")
            line = (CURSOR_MARKER if self.focused else "") + render_fake_cursor(self.placeholder_style(cell)) \
                + self.placeholder_style(shown[len(cell):])
            return [self.prompt + line + " " * max(0, room - visible_width(line))]
        text, cursor = self.value, self.cursor
        total = visible_width(text)
        if total >= room:
            scroll = room - 1 if cursor == len(text) else room
            column = visible_width(text[:cursor])
            half = scroll // 2
            start = 0 if column < half else max(0, total - scroll) if column > total - half else max(0, column - half)
            text = slice_by_column(self.value, start, scroll, True)
            cursor = len(slice_by_column(self.value, start, max(0, column - start), True))
        line = _with_cursor(text, cursor, self.focused)
        return [self.prompt + line + " " * max(0, room - visible_width(line))]


@dataclass
class EditorTheme:
    """How an :class:`Editor` looks (pi's ``EditorTheme``): ``border_color`` styles its top and bottom
    rules; ``select_list`` is kept for pi's shape (this editor shows no completion menu)."""

    border_color: Callable[[str], str] = lambda text: text
    select_list: SelectListTheme = field(default_factory=SelectListTheme)


class Editor:
    """Several lines of text between two rules (pi's ``Editor``, without its completion menu and
    history): Enter calls ``on_submit(text)`` with the text trimmed and empties the editor (unless
    ``disable_submit``), Shift+Enter or Ctrl+J (or ``\\`` then Enter) starts a new line, ↑/↓ move
    between lines. ``on_change(text)`` follows every change. Long lines wrap; at most ``max_rows``
    rows of text show, scrolled to the cursor."""

    def __init__(self, tui: Any = None, theme: EditorTheme | None = None, *, padding_x: int = 0,
                 max_rows: int = 8) -> None:
        self.tui = tui
        self.theme = theme or EditorTheme()
        self.padding_x = padding_x
        self.max_rows = max_rows
        self.lines = [""]
        self.cursor_line = 0
        self.cursor_col = 0
        self.focused = False
        self.disable_submit = False
        self.on_submit: Callable[[str], Any] | None = None
        self.on_change: Callable[[str], Any] | None = None
        self._edit = _LineEdit()
        self._paste: str | None = None
        self._scroll = 0

    @property
    def border_color(self) -> Callable[[str], str]:
        return self.theme.border_color

    def get_text(self) -> str:
        return "\n".join(self.lines)

    def set_text(self, text: str) -> None:
        self.lines = text.replace("\r\n", "\n").split("\n")
        self.cursor_line = len(self.lines) - 1
        self.cursor_col = len(self.lines[-1])
        self._changed()

    def insert_text_at_cursor(self, text: str) -> None:
        line = self.lines[self.cursor_line]
        head, tail = line[:self.cursor_col], line[self.cursor_col:]
        parts = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        if len(parts) == 1:
            self.lines[self.cursor_line] = head + text + tail
            self.cursor_col += len(text)
        else:
            self.lines[self.cursor_line:self.cursor_line + 1] = [head + parts[0], *parts[1:-1], parts[-1] + tail]
            self.cursor_line += len(parts) - 1
            self.cursor_col = len(parts[-1])
        self._changed()

    def invalidate(self) -> None:
        return None

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change(self.get_text())

    def handle_input(self, data: str) -> None:
        if self._paste is not None or PASTE_START in data:
            buffered = (self._paste or "") + data.replace(PASTE_START, "", 1)
            if PASTE_END not in buffered:
                self._paste = buffered
                return
            pasted, rest = buffered.split(PASTE_END, 1)
            self._paste = None
            self.insert_text_at_cursor(pasted.replace("\t", "    "))
            if rest:
                self.handle_input(rest)
            return
        if matches_action(data, "tui.input.newLine"):
            self.insert_text_at_cursor("\n")
        elif matches_action(data, "tui.input.submit"):
            self._submit()
        elif matches_action(data, "tui.editor.undo"):
            if self._edit.undo_stack:
                self.lines, self.cursor_line, self.cursor_col = self._edit.undo_stack.pop()
                self._changed()
        elif matches_action(data, "tui.editor.cursorUp") or matches_action(data, "tui.editor.cursorDown"):
            self._vertical(-1 if matches_action(data, "tui.editor.cursorUp") else 1)
        else:
            self._line_key(data)

    def _submit(self) -> None:
        line = self.lines[self.cursor_line]
        if self.cursor_col > 0 and line[self.cursor_col - 1] == "\\":  # terminals without Shift+Enter
            self.lines[self.cursor_line] = line[:self.cursor_col - 1] + line[self.cursor_col:]
            self.cursor_col -= 1
            self.insert_text_at_cursor("\n")
            return
        if self.disable_submit:
            return
        text = self.get_text().strip()
        self.lines, self.cursor_line, self.cursor_col, self._scroll = [""], 0, 0, 0
        self._edit.undo_stack.clear()
        self._changed()
        if self.on_submit is not None:
            self.on_submit(text)

    def _vertical(self, step: int) -> None:
        target = self.cursor_line + step
        if not 0 <= target < len(self.lines):
            self.cursor_col = 0 if step < 0 else len(self.lines[self.cursor_line])
            return
        column = visible_width(self.lines[self.cursor_line][:self.cursor_col])
        self.cursor_line = target
        self.cursor_col = len(slice_by_column(self.lines[target], 0, column, True))

    def _line_key(self, data: str) -> None:
        line = self.lines[self.cursor_line]
        at_start, at_end = self.cursor_col == 0, self.cursor_col == len(line)
        if matches_action(data, "tui.editor.deleteCharBackward") and at_start and self.cursor_line > 0:
            self._snapshot()
            previous = self.lines[self.cursor_line - 1]
            self.lines[self.cursor_line - 1:self.cursor_line + 1] = [previous + line]
            self.cursor_line, self.cursor_col = self.cursor_line - 1, len(previous)
            self._changed()
            return
        if matches_action(data, "tui.editor.deleteCharForward") and at_end and self.cursor_line < len(self.lines) - 1:
            self._snapshot()
            self.lines[self.cursor_line:self.cursor_line + 2] = [line + self.lines[self.cursor_line + 1]]
            self._changed()
            return
        edited = self._edit.edit(data, line, self.cursor_col)
        if edited is None:
            text = _kitty_text(data)
            if text is None and _is_text(data):
                text = data
            if text is not None:
                self._snapshot()
                self.insert_text_at_cursor(text)
            return
        if edited[0] != line:
            self._snapshot()
            self.lines[self.cursor_line] = edited[0]
            self.cursor_col = edited[1]
            self._changed()
        else:
            self.cursor_col = edited[1]

    def _snapshot(self) -> None:
        self._edit.undo_stack.append((list(self.lines), self.cursor_line, self.cursor_col))

    def _layout(self, width: int) -> tuple[list[str], int]:
        """Visual rows (long lines wrapped at ``width``) with the cursor drawn; the cursor's row."""
        rows: list[str] = []
        cursor_row = 0
        for index, line in enumerate(self.lines):
            pieces = _chunks(line, width)
            if index != self.cursor_line:
                rows.extend(text for text, _ in pieces)
                continue
            for number, (text, start) in enumerate(pieces):
                last = number == len(pieces) - 1
                if start <= self.cursor_col and (self.cursor_col < start + len(text) or last):
                    cursor_row = len(rows)
                    rows.append(_with_cursor(text, self.cursor_col - start, self.focused))
                else:
                    rows.append(text)
        return rows, cursor_row

    def render(self, width: int) -> list[str]:
        pad = min(self.padding_x, max(0, (width - 1) // 2))
        content = max(1, width - 2 * pad)
        rows, cursor_row = self._layout(max(1, content - (0 if pad else 1)))
        visible = max(1, self.max_rows)
        if cursor_row < self._scroll:
            self._scroll = cursor_row
        elif cursor_row >= self._scroll + visible:
            self._scroll = cursor_row - visible + 1
        self._scroll = max(0, min(self._scroll, max(0, len(rows) - visible)))
        shown = rows[self._scroll:self._scroll + visible]
        margin = " " * pad
        body = [margin + row + " " * max(0, content - visible_width(row)) + margin for row in shown]
        below = len(rows) - self._scroll - len(shown)
        return [self._border(width, "↑", self._scroll), *body, self._border(width, "↓", below)]

    def _border(self, width: int, arrow: str, hidden: int) -> str:
        if hidden <= 0:
            return self.border_color("─" * width)
        label = f"─── {arrow} {hidden} more "
        return self.border_color(truncate_to_width(label + "─" * max(0, width - visible_width(label)), width, ""))


def _chunks(line: str, width: int) -> list[tuple[str, int]]:
    """``line`` cut into pieces of at most ``width`` columns: (text, index of its first character)."""
    if visible_width(line) <= width:
        return [(line, 0)]
    pieces: list[tuple[str, int]] = []
    start = used = 0
    index = 0
    for cluster in _graphemes(line):
        columns = visible_width(cluster)
        if used + columns > width and index > start:
            pieces.append((line[start:index], start))
            start, used = index, 0
        used += columns
        index += len(cluster)
    pieces.append((line[start:], start))
    return pieces


__all__ = ["Editor", "EditorTheme", "Input"]
