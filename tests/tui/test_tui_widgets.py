"""The components plugins build screens from (``pi_core.tui``): layout, lists, inputs, markdown, loaders."""

from __future__ import annotations

import asyncio
from typing import Any

from pi_core import UI
from pi_core.tui import (
    CURSOR_MARKER,
    BorderedLoader,
    Box,
    CancellableLoader,
    Container,
    DynamicBorder,
    Editor,
    Input,
    Loader,
    Markdown,
    SelectItem,
    SelectList,
    SettingItem,
    SettingsList,
    Spacer,
    Text,
    TruncatedText,
    get_editor_theme,
    get_select_list_theme,
    get_settings_list_theme,
    visible_width,
)

UP, DOWN, ENTER, ESC, LEFT, BACKSPACE = "\x1b[A", "\x1b[B", "\r", "\x1b", "\x1b[D", "\x7f"
THEME = UI().theme  # the headless theme: same calls, plain text


def typed(component: Any, text: str) -> None:
    for char in text:
        component.handle_input(char)


def test_text_wraps_pads_and_draws_nothing_when_empty() -> None:
    assert Text("hello world foo", 1, 1).render(8) == ["", " hello", " world", " foo", ""]
    assert Text(["one", "two"]).render(10) == ["one", "two"]
    assert Text("").render(10) == [] and Text("   ").render(10) == []
    shaded = Text("hi", 0, 0, lambda s: f"<{s}>").render(4)
    assert shaded == ["<hi  >"]
    assert TruncatedText("a long line here\nsecond").render(8) == ["a long …"]


def test_containers_stack_children_and_boxes_pad_them() -> None:
    layout = Container([Text("title"), Spacer(2), DynamicBorder(lambda s: f"[{s}]")])
    assert layout.render(5) == ["title", "", "", "[─────]"]
    layout.remove_child(layout.children[1])
    assert layout.render(3) == ["tit", "le", "[───]"]
    box = Box(2, 1)
    assert box.render(10) == []
    box.add_child(Text("hi"))
    assert box.render(8) == ["        ", "  hi    ", "        "]


def test_select_list_moves_wraps_pages_and_chooses() -> None:
    items = [SelectItem(f"v{n}", f"item {n}", f"about {n}" if n == 0 else None) for n in range(12)]
    chosen: list[str] = []
    cancelled: list[bool] = []
    listing = SelectList(items, 5, get_select_list_theme(THEME))
    listing.on_select = lambda item: chosen.append(item.value)
    listing.on_cancel = lambda: cancelled.append(True)
    rows = listing.render(60)
    assert rows[0].startswith("→ item 0") and rows[0].endswith("about 0") and len(rows) == 6
    assert rows[-1].strip() == "(1/12)"
    listing.handle_input(UP)  # wraps to the last
    assert listing.get_selected_item() == items[11]
    listing.handle_input(DOWN)
    listing.handle_input("\x1b[6~")  # PageDown: a page of 5
    assert listing.selected_index == 5
    listing.handle_input(ENTER)
    listing.handle_input("\x03")
    assert chosen == ["v5"] and cancelled == [True]
    listing.set_filter("v1")
    assert [i.value for i in listing.filtered_items] == ["v1", "v10", "v11"]
    listing.set_filter("zzz")
    assert listing.render(40) == ["  No matching commands"]


def test_settings_list_cycles_values_and_opens_submenus() -> None:
    changes: list[tuple[str, str]] = []
    closed: list[bool] = []

    class Submenu:
        def __init__(self, current: str, done: Any) -> None:
            self.current, self.done = current, done

        def render(self, width: int) -> list[str]:
            return [f"submenu for {self.current}"]

        def handle_input(self, data: str) -> None:
            self.done("picked" if data == ENTER else None)

    items = [SettingItem("read", "read", "enabled", ["enabled", "disabled"], description="Read files"),
             SettingItem("mode", "mode", "a", submenu=lambda current, done: Submenu(current, done))]
    settings = SettingsList(items, 5, get_settings_list_theme(THEME), lambda i, v: changes.append((i, v)),
                            lambda: closed.append(True))
    rows = settings.render(40)
    assert rows[0].startswith("→ read  enabled") and "  Read files" in rows
    assert rows[-1].strip() == "Enter/Space to change · Esc to cancel"
    settings.handle_input(" ")
    settings.handle_input(ENTER)
    assert changes == [("read", "disabled"), ("read", "enabled")]
    settings.handle_input(DOWN)
    settings.handle_input(ENTER)
    assert settings.render(40) == ["submenu for a"]
    settings.handle_input(ENTER)
    assert changes[-1] == ("mode", "picked") and items[1].current_value == "picked"
    settings.handle_input(ESC)
    assert closed == [True]


def test_settings_list_search_filters_by_label() -> None:
    items = [SettingItem(name, name, "on", ["on", "off"]) for name in ("bash", "read", "grep")]
    settings = SettingsList(items, 5, None, lambda i, v: None, lambda: None, enable_search=True)
    typed(settings, "rd")
    assert [row for row in settings.render(40) if "  on" in row] == ["→ read  on"]


def test_input_edits_scrolls_and_draws_its_cursor() -> None:
    field = Input()
    submitted: list[str] = []
    field.on_submit = submitted.append
    typed(field, "hello world")
    field.handle_input("\x17")  # Ctrl+W: the last word
    assert field.get_value() == "hello "
    field.handle_input("\x19")  # Ctrl+Y yanks it back
    field.handle_input(LEFT)
    field.handle_input(BACKSPACE)
    assert field.get_value() == "hello word"
    field.handle_input("\x1b[200~pasted\nline\x1b[201~")
    assert field.get_value() == "hello worpastedlined"
    field.handle_input(ENTER)
    assert submitted == ["hello worpastedlined"]
    field.focused = True
    row = field.render(12)[0]
    assert visible_width(row) == 12 and CURSOR_MARKER in row and row.startswith("> ")
    field.handle_input("\x1f")  # Ctrl+- (undo)
    assert field.get_value() != "hello worpastedlined"


def test_editor_takes_several_lines_and_submits_trimmed() -> None:
    got: list[str] = []
    editor = Editor(None, get_editor_theme(THEME))
    editor.on_submit = got.append
    typed(editor, "first")
    editor.handle_input("\n")  # Ctrl+J: a new line
    typed(editor, "second\\")
    editor.handle_input(ENTER)  # after a backslash Enter is a new line too
    typed(editor, "third ")
    rows = editor.render(20)
    assert rows[0] == "─" * 20 and rows[-1] == "─" * 20 and [r.strip() for r in rows[1:3]] == ["first", "second"]
    editor.handle_input(UP)
    editor.handle_input(BACKSPACE)
    assert editor.get_text() == "first\nsecon\nthird "
    editor.handle_input(ENTER)
    assert got == ["first\nsecon\nthird"] and editor.get_text() == ""
    editor.set_text("x" * 50)
    assert len(editor.render(20)) == 2 + 3  # wrapped to the width, between the rules


def test_markdown_renders_with_the_theme_and_caches_per_width() -> None:
    view = Markdown("# Title\n\nSome **bold** text and `code`.", 1, 0, THEME)
    rows = view.render(30)
    assert rows[0].endswith("Title") and any("Some" in r and "text and" in r for r in rows)
    assert view.render(30) == rows
    view.set_text("changed")
    assert view.render(30) == [" changed"]


def test_loaders_spin_while_the_loop_runs_and_cancel_on_escape() -> None:
    renders: list[int] = []

    class Tui:
        def request_render(self) -> None:
            renders.append(1)

    async def run() -> None:
        loader = Loader(Tui(), lambda s: s, lambda s: s, "Working", {"frames": ["a", "b"], "interval_ms": 10})
        first = loader.render(20)
        seen = {tuple(first)}
        for _ in range(200):  # a loaded machine may tick late: wait for the second frame, not for a time
            await asyncio.sleep(0.01)
            seen.add(tuple(loader.render(20)))
            if len(seen) > 1:
                break
        assert first == ["", " a Working"] and ("", " b Working") in seen and renders
        loader.stop()
        stopped_at = loader.render(20)
        await asyncio.sleep(0.05)
        assert loader.render(20) == stopped_at
        cancellable = CancellableLoader(Tui(), lambda s: s, lambda s: s, "Waiting")
        aborted: list[bool] = []
        cancellable.on_abort = lambda: aborted.append(True)
        cancellable.handle_input(ESC)
        assert cancellable.aborted and cancellable.signal.aborted and aborted == [True]
        cancellable.dispose()
        bordered = BorderedLoader(Tui(), THEME, "Summarizing")
        rows = bordered.render(30)
        assert rows[0] == "─" * 30 and any("Summarizing" in r for r in rows) and any("esc cancel" in r for r in rows)
        bordered.handle_input(ESC)
        assert bordered.signal.aborted
        bordered.dispose()

    asyncio.run(run())
    assert len(renders) > 3
