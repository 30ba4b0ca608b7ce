"""The session tree navigator (``/tree``, double Escape): the whole tree of the session file, its
branches indented, the current branch marked, any entry selectable.

Keys as pi binds them (remappable with ``app.tree.*`` in keybindings.json): Up/Down, PageUp/PageDown,
Enter chooses, Esc cancels; Ctrl+Left / Alt+Left folds the branch under the entry (or goes to the start of
the segment), Ctrl+Right / Alt+Right unfolds (or goes to the next branch point); Shift+L sets a label;
Shift+T shows label times; Ctrl+X copies the entry's text; filters Ctrl+D default, Ctrl+T without tool results,
Ctrl+U user messages only, Ctrl+L labelled only, Ctrl+A everything, Ctrl+O / Shift+Ctrl+O cycle. Typing filters
by text.

:class:`TreeState` holds the rows and the keys' effects (no terminal needed); :func:`run_tree` draws it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .capabilities import use_escape_timeout
from .style import Palette, clip

FILTERS = ("default", "no-tools", "user-only", "labeled-only", "all")
_SETTINGS_TYPES = {"model_change", "thinking_level_change", "label", "session_info", "custom"}


@dataclass
class Row:
    id: str
    depth: int
    text: str
    kind: str
    on_path: bool
    label: str | None
    label_time: str | None
    folded: int = 0
    branch_point: bool = False


def describe(raw: dict[str, Any]) -> tuple[str, str]:
    """``(kind, one line)`` for a tree entry: ``user``, ``assistant``, ``tool``, ``bash``, ``summary``,
    ``setting`` or ``other``."""
    kind = raw.get("type", "")
    if kind == "message":
        message = raw.get("message") or {}
        role = message.get("role")
        text = _text(message.get("content"))
        if role == "user":
            return "user", f"user: {text}"
        if role == "assistant":
            calls = [b.get("name", "?") for b in message.get("content") or [] if isinstance(b, dict)
                     and b.get("type") == "toolCall"]
            shown = text or (f"[calls {', '.join(calls)}]" if calls else "(no text)")
            return "assistant", f"assistant: {shown}" + (f" [calls {', '.join(calls)}]" if calls and text else "")
        if role == "toolResult":
            return "tool", f"{message.get('toolName', 'tool')}: {text or '(no output)'}"
        if role == "bashExecution":
            return "bash", f"!{message.get('command', '')}"
        return "other", f"{role}: {text}"
    if kind == "custom_message":
        return "user" if raw.get("display", True) else "other", f"[{raw.get('customType', 'custom')}] " \
            f"{_text(raw.get('content'))}"
    if kind == "compaction":
        return "summary", f"[compaction] {raw.get('summary', '')}"
    if kind == "branch_summary":
        return "summary", f"[branch summary] {raw.get('summary', '')}"
    if kind == "model_change":
        return "setting", f"[model {raw.get('provider', '')}/{raw.get('modelId', '')}]"
    if kind == "thinking_level_change":
        return "setting", f"[thinking {raw.get('thinkingLevel', '')}]"
    if kind == "session_info":
        return "setting", f"[name {raw.get('name', '')}]"
    if kind == "label":
        return "setting", f"[label {raw.get('label') or '(removed)'}]"
    if kind == "custom":
        return "setting", f"[{raw.get('customType', 'custom')}]"
    return "other", f"[{kind}]"


def copy_text(raw: dict[str, Any]) -> str | None:
    """An entry's whole text, as pi copies it from the tree: a message's text (an answer without text: its
    error), a shell command, a summary, a label; ``None`` when the entry holds no text."""
    kind = raw.get("type", "")
    if kind == "message":
        message = raw.get("message") or {}
        if message.get("role") == "bashExecution":
            return message.get("command") or None
        text = _full_text(message.get("content"))
        return text or (message.get("errorMessage") if message.get("role") == "assistant" else None) or None
    if kind == "custom_message":
        return _full_text(raw.get("content")) or None
    if kind in ("compaction", "branch_summary"):
        return raw.get("summary") or None
    if kind == "label":
        return raw.get("label") or None
    return None


def _full_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text")


def _text(content: Any) -> str:
    if isinstance(content, str):
        text = content
    else:
        text = " ".join(b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text")
    return " ".join(text.split())


class TreeState:
    """The navigator's model: which entries show, where the cursor is, what is folded."""

    def __init__(self, roots: list[Any], leaf_id: str | None, filter_mode: str = "default") -> None:
        self.roots = roots
        self.leaf_id = leaf_id
        self.filter_mode = filter_mode if filter_mode in FILTERS else "default"
        self.folded: set[str] = set()
        self.query = ""
        self.show_label_times = False
        self.status = ""
        """A passing message under the title (what Ctrl+X did)."""
        self.path = self._path_ids()
        self.rows: list[Row] = []
        self.cursor = 0
        self.rebuild(select=leaf_id)

    def _path_ids(self) -> set[str]:
        parents: dict[str, str | None] = {}
        stack = list(self.roots)
        while stack:
            node = stack.pop()
            for child in node.children:
                parents[child.id] = node.id
                stack.append(child)
        out: set[str] = set()
        current = self.leaf_id
        while current is not None and current not in out:
            out.add(current)
            current = parents.get(current)
        return out

    # -- rows --------------------------------------------------------------------------------------

    def visible(self, raw: dict[str, Any], label: str | None) -> bool:
        kind, text = describe(raw)
        mode = self.filter_mode
        if mode == "all":
            shown = True
        elif mode == "user-only":
            shown = kind == "user"
        elif mode == "labeled-only":
            shown = label is not None
        elif mode == "no-tools":
            shown = kind not in ("tool", "setting")
        else:
            shown = kind != "setting"
        if shown and self.query:
            shown = self.query.lower() in (text + " " + (label or "")).lower()
        return shown

    def rebuild(self, select: str | None = None) -> None:
        keep = select or (self.rows[self.cursor].id if self.rows else None)
        rows: list[Row] = []
        # iterative DFS; a node with several children indents each child's branch one step
        stack: list[tuple[Any, int]] = [(root, 0) for root in reversed(self.roots)]
        while stack:
            node, depth = stack.pop()
            raw = node.raw
            children = node.children
            if self.visible(raw, node.label):
                kind, text = describe(raw)
                rows.append(Row(node.id, depth, text, kind, node.id in self.path, node.label, node.label_timestamp,
                                branch_point=len(children) > 1))
            if node.id in self.folded:
                if rows and rows[-1].id == node.id:
                    rows[-1].folded = _count(node) - 1
                continue
            child_depth = depth + 1 if len(children) > 1 else depth
            for child in reversed(children):
                stack.append((child, child_depth))
        self.rows = rows
        ids = [r.id for r in rows]
        if keep in ids:
            self.cursor = ids.index(keep)
        else:
            self.cursor = min(self.cursor, max(len(rows) - 1, 0))

    # -- keys --------------------------------------------------------------------------------------

    def move(self, delta: int) -> None:
        if self.rows:
            self.cursor = max(0, min(len(self.rows) - 1, self.cursor + delta))

    def selected(self) -> str | None:
        return self.rows[self.cursor].id if self.rows else None

    def fold_or_up(self) -> None:
        row = self.rows[self.cursor] if self.rows else None
        if row is None:
            return
        node = self._node(row.id)
        if node is not None and node.children and row.id not in self.folded:
            self.folded.add(row.id)
            self.rebuild(select=row.id)
            return
        for index in range(self.cursor - 1, -1, -1):  # the start of this segment: the previous branch point
            if self.rows[index].branch_point or self.rows[index].depth < row.depth:
                self.cursor = index
                return
        self.cursor = 0

    def unfold_or_down(self) -> None:
        row = self.rows[self.cursor] if self.rows else None
        if row is None:
            return
        if row.id in self.folded:
            self.folded.discard(row.id)
            self.rebuild(select=row.id)
            return
        for index in range(self.cursor + 1, len(self.rows)):
            if self.rows[index].branch_point or self.rows[index].depth != row.depth:
                self.cursor = index
                return
        self.cursor = len(self.rows) - 1

    def set_filter(self, mode: str) -> None:
        self.filter_mode = "default" if self.filter_mode == mode and mode != "default" else mode
        self.rebuild()

    def cycle_filter(self, step: int) -> None:
        self.filter_mode = FILTERS[(FILTERS.index(self.filter_mode) + step) % len(FILTERS)]
        self.rebuild()

    def set_query(self, text: str) -> None:
        self.query = text
        self.rebuild()

    def selected_text(self) -> str | None:
        """The selected entry's text to copy (Ctrl+X)."""
        entry_id = self.selected()
        node = self._node(entry_id) if entry_id else None
        return copy_text(node.raw) if node is not None else None

    def _node(self, entry_id: str) -> Any:
        stack = list(self.roots)
        while stack:
            node = stack.pop()
            if node.id == entry_id:
                return node
            stack.extend(node.children)
        return None

    # -- drawing -----------------------------------------------------------------------------------

    def render(self, p: Palette, width: int, height: int) -> list[str]:
        if not self.rows:
            return [p("  (nothing matches this filter)", "muted")]
        start = max(0, min(self.cursor - height // 2, len(self.rows) - height))
        out = []
        for index in range(start, min(start + height, len(self.rows))):
            row = self.rows[index]
            indent = "  " * row.depth
            mark = "•" if row.on_path else " "
            label = ""
            if row.label:
                label = f"[{row.label}" + (f" {row.label_time[:16]}" if self.show_label_times and row.label_time
                                           else "") + "] "
            tail = " ← current" if row.id == self.leaf_id else ""
            folded = f" (+{row.folded} folded)" if row.folded else ""
            room = max(width - len(indent) - 4 - len(label) - len(tail) - len(folded), 10)
            body = clip(row.text, room, p.glyphs.ellipsis)
            styled = p(body, _kind_style(row.kind)) if _kind_style(row.kind) else body
            pointer = p(p.glyphs.user, "accent", "bold") if index == self.cursor else " "
            out.append(f"{pointer}{indent}{mark} {p(label, 'warning') if label else ''}{styled}"
                       f"{p(folded, 'muted')}{p(tail, 'accent')}")
        if len(self.rows) > height:
            out.append(p(f"  ({self.cursor + 1}/{len(self.rows)})", "muted"))
        return out


def _kind_style(kind: str) -> str | None:
    return {"user": "accent", "tool": "muted", "setting": "dim", "summary": "warning", "bash": "bashMode"}.get(kind)


def _count(node: Any) -> int:
    total, stack = 0, [node]
    while stack:
        current = stack.pop()
        total += 1
        stack.extend(current.children)
    return total


async def run_tree(palette: Palette, state: TreeState, keymap: Any, *, title: str) -> tuple[str, str] | None:
    """Show the navigator until the user chooses; returns ``("select", id)``, ``("label", id)`` or
    ``None`` (cancelled)."""
    import shutil

    from prompt_toolkit.application import Application
    from prompt_toolkit.buffer import Buffer
    from prompt_toolkit.formatted_text import ANSI
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import HSplit, Layout, Window
    from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl

    query = Buffer(on_text_changed=lambda buf: state.set_query(buf.text))
    p = palette

    def header() -> Any:
        hint = (f"  filter: {state.filter_mode} · Enter continue from here · Esc cancel · "
                "Shift+L label · Ctrl+X copy · Ctrl+←/→ fold · Ctrl+O filters")
        status = f"\n{p(state.status, 'accent')}" if state.status else ""
        return ANSI(p(title, "bold") + p(hint, "muted") + status)

    def body() -> Any:
        size = shutil.get_terminal_size((80, 24))
        return ANSI("\n".join(state.render(p, size.columns - 1, max(size.lines - 6, 5))))

    keys = KeyBindings()

    def bind(action: str, defaults: tuple[str, ...], handler: Callable[[Any], None]) -> None:
        sequences = keymap.sequences(action) if keymap is not None and action in keymap.bindings else \
            [_pt(d) for d in defaults]
        for sequence in sequences:
            keys.add(*sequence, eager=True)(handler)

    from .keybindings import normalize, to_prompt_toolkit

    def _pt(spec: str) -> tuple[str, ...]:
        return to_prompt_toolkit(normalize(spec))

    for key, delta in (("up", -1), ("down", 1), ("pageup", -10), ("pagedown", 10)):
        keys.add(key)(lambda event, delta=delta: state.move(delta))
    keys.add("enter")(lambda event: event.app.exit(result=("select", state.selected()) if state.selected()
                                                        else None))
    keys.add("escape")(lambda event: event.app.exit(result=None))
    keys.add("c-c")(lambda event: event.app.exit(result=None))
    bind("app.tree.foldOrUp", ("ctrl+left", "alt+left"), lambda event: state.fold_or_up())
    bind("app.tree.unfoldOrDown", ("ctrl+right", "alt+right"), lambda event: state.unfold_or_down())
    bind("app.tree.editLabel", ("shift+l",), lambda event: event.app.exit(
        result=("label", state.selected())) if state.selected() else None)
    bind("app.tree.toggleLabelTimestamp", ("shift+t",),
         lambda event: setattr(state, "show_label_times", not state.show_label_times))
    for action, key, mode in (("app.tree.filter.default", "ctrl+d", "default"),
                              ("app.tree.filter.noTools", "ctrl+t", "no-tools"),
                              ("app.tree.filter.userOnly", "ctrl+u", "user-only"),
                              ("app.tree.filter.labeledOnly", "ctrl+l", "labeled-only"),
                              ("app.tree.filter.all", "ctrl+a", "all")):
        bind(action, (key,), lambda event, mode=mode: state.set_filter(mode))
    bind("app.message.copy", ("ctrl+x",), lambda event: _copy_selected(state, event.app))
    bind("app.tree.filter.cycleForward", ("ctrl+o",), lambda event: state.cycle_filter(1))
    bind("app.tree.filter.cycleBackward", ("shift+ctrl+o",), lambda event: state.cycle_filter(-1))

    layout = Layout(HSplit([
        Window(FormattedTextControl(header), dont_extend_height=True),
        Window(BufferControl(query), height=1, get_line_prefix=lambda *_: ANSI(p("search: ", "muted"))),
        Window(FormattedTextControl(body), dont_extend_height=True),
    ]), focused_element=query)
    app: Application[tuple[str, str] | None] = Application(layout=layout, key_bindings=keys, erase_when_done=True,
                                                           full_screen=False)
    use_escape_timeout(app)
    return await app.run_async()


def _copy_selected(state: TreeState, app: Any) -> None:
    """Ctrl+X: the selected entry's text to the clipboard (in a thread: the clipboard program may take a
    moment); the navigator stays open and says what happened."""
    import asyncio

    from .commands import copy_to_clipboard

    text = state.selected_text()
    if not text:
        state.status = "Selected entry has no text to copy"
        return

    async def copy() -> None:
        how = await asyncio.to_thread(copy_to_clipboard, text)
        state.status = "Copied selected message to clipboard" if how else "No clipboard available"
        app.invalidate()

    app.create_background_task(copy())


__all__ = ["FILTERS", "Row", "TreeState", "copy_text", "describe", "run_tree"]
