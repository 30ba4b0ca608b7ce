"""The session picker (``pi -r``, ``/resume``) with pi's keys: type to search, Tab switches between
this folder's sessions and all of them, Ctrl+S sorts by time or name, Ctrl+N shows named sessions
only, Ctrl+P shows the file paths, Ctrl+R renames, Ctrl+D deletes (to the trash), Enter resumes,
Esc cancels. :class:`PickerState` is the model; :func:`run_picker` draws it."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .style import Palette, clip


class PickerState:
    def __init__(self, load: Callable[[bool], list[Any]], *, exclude: str | None = None) -> None:
        self.load = load
        self.exclude = exclude
        self.all_folders = False
        self.sort = "recent"
        self.named_only = False
        self.show_paths = False
        self.query = ""
        self.cursor = 0
        self._cache: dict[bool, list[Any]] = {}
        self.rows: list[Any] = []
        self.refresh()

    def refresh(self, reload: bool = False) -> None:
        if reload:
            self._cache.clear()
        infos = self._cache.get(self.all_folders)
        if infos is None:
            infos = self._cache[self.all_folders] = [i for i in self.load(self.all_folders)
                                                     if str(i.path) != self.exclude]
        rows = [i for i in infos if not self.named_only or i.name]
        if self.query:
            needle = self.query.lower()
            rows = [i for i in rows if needle in _title(i).lower() or needle in str(i.cwd).lower()
                    or needle in i.id.lower()]
        if self.sort == "name":
            rows.sort(key=lambda i: _title(i).lower())
        else:
            rows.sort(key=lambda i: i.modified, reverse=True)
        self.rows = rows
        self.cursor = min(self.cursor, max(len(rows) - 1, 0))

    def toggle(self, what: str) -> None:
        if what == "folders":
            self.all_folders = not self.all_folders
        elif what == "sort":
            self.sort = "name" if self.sort == "recent" else "recent"
        elif what == "named":
            self.named_only = not self.named_only
        elif what == "paths":
            self.show_paths = not self.show_paths
        self.cursor = 0
        self.refresh()

    def set_query(self, text: str) -> None:
        self.query = text
        self.cursor = 0
        self.refresh()

    def move(self, delta: int) -> None:
        if self.rows:
            self.cursor = max(0, min(len(self.rows) - 1, self.cursor + delta))

    def selected(self) -> Any:
        return self.rows[self.cursor] if self.rows else None

    def status(self) -> str:
        where = "all folders" if self.all_folders else "this folder"
        named = ", named only" if self.named_only else ""
        return f"{where}, by {'name' if self.sort == 'name' else 'time'}{named}"

    def render(self, p: Palette, width: int, height: int) -> list[str]:
        if not self.rows:
            return [p("  (no sessions" + (" match" if self.query else "") + ")", "muted")]
        start = max(0, min(self.cursor - height // 2, len(self.rows) - height))
        out = []
        for index in range(start, min(start + height, len(self.rows))):
            info = self.rows[index]
            when = info.modified.astimezone().strftime("%Y-%m-%d %H:%M")
            from .footer import folder_label

            extra = f"  {info.path}" if self.show_paths else (f"  {folder_label(info.cwd)}" if self.all_folders
                                                               else "")
            count = f"  ({info.message_count} messages)"
            title = _title(info)
            room = max(width - 4 - len(when) - len(count), 10)
            title = clip(title, max(room - min(len(extra), room // 2), 10), p.glyphs.ellipsis)
            extra = clip(extra, max(room - len(title), 0), p.glyphs.ellipsis) if extra else ""
            title = p(title, "accent") if info.name else title
            pointer = p(p.glyphs.user, "accent", "bold") if index == self.cursor else " "
            out.append(f"{pointer} {p(when, 'muted')}  {title}{p(count, 'muted')}{p(extra, 'dim')}")
        if len(self.rows) > height:
            out.append(p(f"  ({self.cursor + 1}/{len(self.rows)})", "muted"))
        return out


def _title(info: Any) -> str:
    return info.name or " ".join(str(info.first_message).split())


def move_to_trash(path: Path) -> Path:
    """Move a session file to the freedesktop trash (``$XDG_DATA_HOME/Trash``) with its ``.trashinfo``,
    so it can be restored; returns where it went."""
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "Trash"
    files, info = base / "files", base / "info"
    files.mkdir(parents=True, exist_ok=True)
    info.mkdir(parents=True, exist_ok=True)
    target = files / path.name
    counter = 1
    while target.exists() or (info / f"{target.name}.trashinfo").exists():
        target = files / f"{path.stem}.{counter}{path.suffix}"
        counter += 1
    (info / f"{target.name}.trashinfo").write_text(
        f"[Trash Info]\nPath={quote(str(path.resolve()))}\nDeletionDate={time.strftime('%Y-%m-%dT%H:%M:%S')}\n")
    shutil.move(str(path), str(target))
    return target


async def run_picker(palette: Palette, state: PickerState, title: str) -> tuple[str, Any] | None:
    """Show the picker; ``("resume" | "rename" | "delete", info)`` or ``None`` (Esc)."""
    from prompt_toolkit.application import Application
    from prompt_toolkit.buffer import Buffer
    from prompt_toolkit.formatted_text import ANSI
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import HSplit, Layout, Window
    from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl

    p = palette
    query = Buffer(on_text_changed=lambda buf: state.set_query(buf.text))

    def header() -> Any:
        hint = "  Tab all folders · Ctrl+S sort · Ctrl+N named · Ctrl+P paths · Ctrl+R rename · Ctrl+D delete"
        return ANSI(p(title, "bold") + p(f" ({state.status()})", "muted") + p(hint, "dim"))

    def body() -> Any:
        size = shutil.get_terminal_size((80, 24))
        return ANSI("\n".join(state.render(p, size.columns - 1, max(size.lines - 6, 5))))

    keys = KeyBindings()
    for key, delta in (("up", -1), ("down", 1), ("pageup", -10), ("pagedown", 10)):
        keys.add(key)(lambda event, delta=delta: state.move(delta))
    for key, what in (("c-i", "folders"), ("c-s", "sort"), ("c-n", "named"), ("c-p", "paths")):
        keys.add(key, eager=True)(lambda event, what=what: state.toggle(what))

    def finish(action: str) -> Callable[[Any], None]:
        def handler(event: Any) -> None:
            chosen = state.selected()
            if chosen is not None:
                event.app.exit(result=(action, chosen))
        return handler

    keys.add("enter")(finish("resume"))
    keys.add("c-r", eager=True)(finish("rename"))
    keys.add("c-d", eager=True)(finish("delete"))
    keys.add("escape")(lambda event: event.app.exit(result=None))
    keys.add("c-c")(lambda event: event.app.exit(result=None))
    layout = Layout(HSplit([
        Window(FormattedTextControl(header), dont_extend_height=True),
        Window(BufferControl(query), height=1, get_line_prefix=lambda *_: ANSI(p("search: ", "muted"))),
        Window(FormattedTextControl(body), dont_extend_height=True),
    ]), focused_element=query)
    app: Application[tuple[str, Any] | None] = Application(layout=layout, key_bindings=keys, erase_when_done=True,
                                                           full_screen=False)
    app.ttimeoutlen, app.timeoutlen = 0.05, 0.1
    return await app.run_async()


__all__ = ["PickerState", "move_to_trash", "run_picker"]
