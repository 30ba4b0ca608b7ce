"""The session picker (``pi -r``, ``/resume``) with pi's keys: type to search, Tab switches between
this folder's sessions and all of them, Ctrl+S cycles the order (threaded: forks under the session they
came from, newest activity first; recent; relevance to the search), Ctrl+N shows named sessions only,
Ctrl+P shows the file paths, Ctrl+R renames, Ctrl+D deletes (to the trash; Ctrl+Backspace too while the
search is empty), Enter resumes, Esc cancels. The keys are pi's ``app.session.*`` actions of
``keybindings.json``. :class:`PickerState` is the model; :func:`run_picker` draws it.

The search is pi's: each word must match the session's name, id, first message or folder (a word held
in the name ranks first, one held elsewhere next, the word's letters in order in the name or folder
last); ``"a phrase"`` matches as a whole and ``re:pattern`` is a regular expression."""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .capabilities import use_escape_timeout
from .style import Palette, clip


SORTS = ("threaded", "recent", "relevance")
"""The orders Ctrl+S cycles through, pi's default first."""


class PickerState:
    def __init__(self, load: Callable[[bool], list[Any]], *, exclude: str | None = None) -> None:
        self.load = load
        self.exclude = exclude
        self.keymap: Any = None
        """The keys (``app.session.*`` of ``keybindings.json``); pi's defaults when ``None``."""
        self.all_folders = False
        self.sort = SORTS[0]
        self.named_only = False
        self.show_paths = False
        self.query = ""
        self.cursor = 0
        self._cache: dict[bool, list[Any]] = {}
        self.rows: list[Any] = []
        self.tree_prefix: dict[str, str] = {}
        """Threaded order: the branch lines drawn before a forked session's title, by its path."""
        self.refresh()

    def refresh(self, reload: bool = False) -> None:
        if reload:
            self._cache.clear()
        infos = self._cache.get(self.all_folders)
        if infos is None:
            infos = self._cache[self.all_folders] = [i for i in self.load(self.all_folders)
                                                     if str(i.path) != self.exclude]
        rows = sorted((i for i in infos if not self.named_only or (i.name or "").strip()),
                      key=lambda i: i.modified, reverse=True)
        self.tree_prefix = {}
        if self.query.strip():
            scored = [(score, i) for i in rows if (score := search_score(i, self.query)) is not None]
            if self.sort != "recent":  # best first, the newest among equals (a stable sort keeps that order)
                scored.sort(key=lambda pair: pair[0])
            rows = [i for _, i in scored]
        elif self.sort == "threaded":
            rows, self.tree_prefix = threaded(rows)
        self.rows = rows
        self.cursor = min(self.cursor, max(len(rows) - 1, 0))

    def toggle(self, what: str) -> None:
        if what == "folders":
            self.all_folders = not self.all_folders
        elif what == "sort":
            self.sort = SORTS[(SORTS.index(self.sort) + 1) % len(SORTS)]
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
        return f"{where}, {self.sort}{named}"

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
            branch = p(self.tree_prefix.get(str(info.path), ""), "dim")
            out.append(f"{pointer} {p(when, 'muted')}  {branch}{title}{p(count, 'muted')}{p(extra, 'dim')}")
        if len(self.rows) > height:
            out.append(p(f"  ({self.cursor + 1}/{len(self.rows)})", "muted"))
        return out


def _title(info: Any) -> str:
    return info.name or " ".join(str(info.first_message).split())


def threaded(infos: list[Any]) -> tuple[list[Any], dict[str, str]]:
    """pi's threaded order: a forked session under the one it came from (``parent_session_path``), each
    level by the newest activity in its subtree; the branch lines to draw before each forked title."""
    by_path = {_key(i.path): i for i in infos}
    children: dict[str | None, list[Any]] = {}
    for info in infos:
        parent = _key(info.parent_session_path) if info.parent_session_path else None
        children.setdefault(parent if parent in by_path else None, []).append(info)
    latest: dict[str, Any] = {}

    def newest(info: Any) -> Any:
        key = _key(info.path)
        if key not in latest:
            latest[key] = max([info.modified, *(newest(c) for c in children.get(key, []))])
        return latest[key]

    rows: list[Any] = []
    prefix: dict[str, str] = {}

    def walk(nodes: list[Any], lines: str, depth: int) -> None:
        ordered = sorted(nodes, key=newest, reverse=True)
        for position, info in enumerate(ordered):
            last = position == len(ordered) - 1
            rows.append(info)
            if depth:
                prefix[str(info.path)] = lines + ("└─ " if last else "├─ ")
            walk(children.get(_key(info.path), []), lines + ("   " if last else "│  ") if depth else "", depth + 1)

    walk(children.get(None, []), "", 0)
    return rows, prefix


def _key(path: Any) -> str:
    return os.path.realpath(str(path))


def search_score(info: Any, query: str) -> float | None:
    """How well ``info`` matches pi's search ``query`` (lower is better), ``None`` when it does not."""
    text = query.strip()
    if text.startswith("re:"):
        try:
            pattern = re.compile(text[3:].strip(), re.IGNORECASE)
        except re.error:
            return None
        if info.name and pattern.search(info.name):
            return 0.0
        fields = (info.id, str(info.first_message), str(info.cwd))
        return _TIER if text[3:].strip() and any(pattern.search(f) for f in fields) else None
    total = 0.0
    for token, phrase in _tokens(text):
        score = _token_score(info, token.lower(), phrase)
        if score is None:
            return None
        total += score
    return total


_TIER = 1_000_000.0


def _tokens(text: str) -> list[tuple[str, bool]]:
    """Words, and ``"quoted phrases"`` (with an unclosed quote, plain words)."""
    if text.count('"') % 2:
        return [(word, False) for word in text.split()]
    out: list[tuple[str, bool]] = []
    for index, part in enumerate(text.split('"')):
        if index % 2:
            if part.strip():
                out.append((" ".join(part.split()), True))
        else:
            out.extend((word, False) for word in part.split())
    return out


def _token_score(info: Any, token: str, phrase: bool) -> float | None:
    def norm(value: str) -> str:
        return " ".join(value.lower().split()) if phrase else value.lower()

    name = norm(info.name or "")
    if token in name:
        return float(name.index(token))
    if any(token in norm(str(field)) for field in (info.id, info.first_message, info.cwd)):
        return _TIER
    if phrase:
        return None
    spans = [span for field in (info.name or "", str(info.cwd)) if (span := _in_order(token, field.lower())) is not None]
    return 2 * _TIER + min(spans) if spans else None


def _in_order(token: str, text: str) -> int | None:
    """The length of the shortest stretch of ``text`` that holds ``token``'s letters in order, or ``None``."""
    best: int | None = None
    for start in (i for i, char in enumerate(text) if char == token[0]):
        position = start
        for char in token[1:]:
            position = text.find(char, position + 1)
            if position < 0:
                break
        else:
            best = position - start + 1 if best is None else min(best, position - start + 1)
            continue
        break
    return best


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

    keymap = state.keymap

    def shown(action: str) -> str:
        from .keybindings import display

        keys = keymap.keys(action) if keymap is not None and action in keymap.bindings else [_DEFAULTS[action]]
        return display(keys[0]) if keys else "(unbound)"

    def header() -> Any:
        hint = (f"  Tab all folders · {shown('app.session.toggleSort')} sort · "
                f"{shown('app.session.toggleNamedFilter')} named · {shown('app.session.togglePath')} paths · "
                f"{shown('app.session.rename')} rename · {shown('app.session.delete')} delete")
        return ANSI(p(title, "bold") + p(f" ({state.status()})", "muted") + p(hint, "dim"))

    def body() -> Any:
        size = shutil.get_terminal_size((80, 24))
        return ANSI("\n".join(state.render(p, size.columns - 1, max(size.lines - 6, 5))))

    keys = KeyBindings()

    def bind(action: str, handler: Callable[[Any], None], **options: Any) -> None:
        from .keybindings import normalize, to_prompt_toolkit

        given = keymap.keys(action) if keymap is not None and action in keymap.bindings else [_DEFAULTS[action]]
        for key in given:
            keys.add(*to_prompt_toolkit(normalize(key)), eager=True, **options)(handler)

    for key, delta in (("up", -1), ("down", 1), ("pageup", -10), ("pagedown", 10)):
        keys.add(key)(lambda event, delta=delta: state.move(delta))
    keys.add("c-i", eager=True)(lambda event: state.toggle("folders"))
    for action, what in (("app.session.toggleSort", "sort"), ("app.session.toggleNamedFilter", "named"),
                         ("app.session.togglePath", "paths")):
        bind(action, lambda event, what=what: state.toggle(what))

    def finish(action: str) -> Callable[[Any], None]:
        def handler(event: Any) -> None:
            chosen = state.selected()
            if chosen is not None:
                event.app.exit(result=(action, chosen))
        return handler

    keys.add("enter")(finish("resume"))
    bind("app.session.rename", finish("rename"))
    bind("app.session.delete", finish("delete"))
    from prompt_toolkit.filters import Condition

    nothing_typed = Condition(lambda: not query.text)  # with a search typed, Ctrl+Backspace edits it
    bind("app.session.deleteNoninvasive", finish("delete"), filter=nothing_typed)
    if "ctrl+backspace" in (keymap.keys("app.session.deleteNoninvasive") if keymap is not None
                            and "app.session.deleteNoninvasive" in keymap.bindings else ["ctrl+backspace"]):
        keys.add("c-h", filter=nothing_typed)(finish("delete"))  # what most terminals send for it
    keys.add("escape")(lambda event: event.app.exit(result=None))
    keys.add("c-c")(lambda event: event.app.exit(result=None))
    layout = Layout(HSplit([
        Window(FormattedTextControl(header), dont_extend_height=True),
        Window(BufferControl(query), height=1, get_line_prefix=lambda *_: ANSI(p("search: ", "muted"))),
        Window(FormattedTextControl(body), dont_extend_height=True),
    ]), focused_element=query)
    app: Application[tuple[str, Any] | None] = Application(layout=layout, key_bindings=keys, erase_when_done=True,
                                                           full_screen=False)
    use_escape_timeout(app)
    return await app.run_async()


_DEFAULTS = {"app.session.toggleSort": "ctrl+s", "app.session.toggleNamedFilter": "ctrl+n",
             "app.session.togglePath": "ctrl+p", "app.session.rename": "ctrl+r", "app.session.delete": "ctrl+d",
             "app.session.deleteNoninvasive": "ctrl+backspace"}
"""pi's keys for the picker's actions (``keybindings.json`` may change them)."""


__all__ = ["SORTS", "PickerState", "move_to_trash", "run_picker", "search_score", "threaded"]
