"""Lists to choose from (pi-tui's ``SelectList``) and to change settings in (``SettingsList``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .keys import matches_action
from .width import truncate_to_width, visible_width, wrap_text_with_ansi

Style = Callable[[str], str]


def _plain(text: str) -> str:
    return text


@dataclass
class SelectItem:
    """One entry of a :class:`SelectList`: ``value`` is what is chosen, ``label`` what is shown
    (default: the value), ``description`` a second column."""

    value: str
    label: str | None = None
    description: str | None = None


@dataclass
class SelectListTheme:
    """How a :class:`SelectList` styles its parts (pi's ``SelectListTheme``);
    :func:`~pi_core.tui.get_select_list_theme` builds one from the current theme."""

    selected_prefix: Style = _plain
    selected_text: Style = _plain
    description: Style = _plain
    scroll_info: Style = _plain
    no_match: Style = _plain


PRIMARY_COLUMN = 32
"""The label column's width when items have descriptions (pi's default; ``primary_column_width=``
changes it)."""


def _page(data: str, index: int, count: int, size: int) -> int | None:
    if matches_action(data, "tui.select.pageUp"):
        return max(0, min(count - 1, index - size))
    if matches_action(data, "tui.select.pageDown"):
        return max(0, min(count - 1, index + size))
    return None


class SelectList:
    """A list to pick one item from (pi's ``SelectList``): ↑/↓ move (wrapping around), PageUp/PageDown
    jump a page, Enter calls ``on_select(item)``, Esc or Ctrl+C calls ``on_cancel()``. At most
    ``max_visible`` items show at once, with a ``(3/12)`` row when there are more."""

    def __init__(self, items: Sequence[SelectItem], max_visible: int = 5, theme: SelectListTheme | None = None,
                 *, primary_column_width: int | None = None) -> None:
        self.items = list(items)
        self.filtered_items = list(self.items)
        self.max_visible = max(1, max_visible)
        self.theme = theme or SelectListTheme()
        self.primary_column_width = primary_column_width
        self.selected_index = 0
        self.on_select: Callable[[SelectItem], Any] | None = None
        self.on_cancel: Callable[[], Any] | None = None
        self.on_selection_change: Callable[[SelectItem], Any] | None = None

    def set_filter(self, text: str) -> None:
        """Keep the items whose value starts with ``text`` (case-insensitive); the selection goes back
        to the first."""
        wanted = text.lower()
        self.filtered_items = [item for item in self.items if item.value.lower().startswith(wanted)]
        self.selected_index = 0

    def set_selected_index(self, index: int) -> None:
        self.selected_index = max(0, min(index, len(self.filtered_items) - 1))

    def get_selected_item(self) -> SelectItem | None:
        items = self.filtered_items
        return items[self.selected_index] if 0 <= self.selected_index < len(items) else None

    def invalidate(self) -> None:
        return None

    def handle_input(self, data: str) -> None:
        count = len(self.filtered_items)
        page = _page(data, self.selected_index, count, self.max_visible)
        if matches_action(data, "tui.select.up") and count:
            self.selected_index = count - 1 if self.selected_index == 0 else self.selected_index - 1
            self._changed()
        elif matches_action(data, "tui.select.down") and count:
            self.selected_index = 0 if self.selected_index == count - 1 else self.selected_index + 1
            self._changed()
        elif page is not None and count and page != self.selected_index:
            self.selected_index = page
            self._changed()
        elif matches_action(data, "tui.select.confirm"):
            item = self.get_selected_item()
            if item is not None and self.on_select is not None:
                self.on_select(item)
        elif matches_action(data, "tui.select.cancel") and self.on_cancel is not None:
            self.on_cancel()

    def _changed(self) -> None:
        item = self.get_selected_item()
        if item is not None and self.on_selection_change is not None:
            self.on_selection_change(item)

    def visible_range(self) -> tuple[int, int]:
        count = len(self.filtered_items)
        start = max(0, min(self.selected_index - self.max_visible // 2, count - self.max_visible))
        return start, min(start + self.max_visible, count)

    def render(self, width: int) -> list[str]:
        items = self.filtered_items
        if not items:
            return [self.theme.no_match("  No matching commands")]
        start, end = self.visible_range()
        column = self._column()
        rows = [self._row(items[index], index == self.selected_index, width, column) for index in range(start, end)]
        if start > 0 or end < len(items):
            rows.append(self.theme.scroll_info(truncate_to_width(f"  ({self.selected_index + 1}/{len(items)})",
                                                                 max(width - 2, 1), "")))
        return rows

    def _column(self) -> int:
        return max(1, self.primary_column_width or PRIMARY_COLUMN)

    def _row(self, item: SelectItem, selected: bool, width: int, column: int) -> str:
        prefix = "→ " if selected else "  "
        description = " ".join((item.description or "").split())
        if description and width > 40:
            primary = max(1, min(column, width - 6))
            label = truncate_to_width(_shown(item), max(1, primary - 2), "")
            spacing = " " * max(1, primary - visible_width(label))
            room = width - 2 - visible_width(label) - len(spacing) - 2
            if room > 10:
                text = truncate_to_width(description, room, "")
                if selected:
                    return self.theme.selected_text(f"{prefix}{label}{spacing}{text}")
                return prefix + label + self.theme.description(spacing + text)
        label = truncate_to_width(_shown(item), max(1, width - 4), "")
        return self.theme.selected_text(prefix + label) if selected else prefix + label


def _shown(item: SelectItem) -> str:
    return item.label or item.value


@dataclass
class SettingItem:
    """One row of a :class:`SettingsList`: ``label`` and its ``current_value``; Enter or Space cycles
    through ``values``, or opens ``submenu(current_value, done)`` (a component that calls
    ``done(new_value)``, ``None`` to keep the value)."""

    id: str
    label: str
    current_value: str
    values: list[str] = field(default_factory=list)
    description: str | None = None
    submenu: Callable[[str, Callable[..., None]], Any] | None = None


@dataclass
class SettingsListTheme:
    """How a :class:`SettingsList` styles its parts (pi's ``SettingsListTheme``);
    :func:`~pi_core.tui.get_settings_list_theme` builds one from the current theme."""

    label: Callable[[str, bool], str] = lambda text, selected: text
    value: Callable[[str, bool], str] = lambda text, selected: text
    description: Style = _plain
    cursor: str = "→ "
    hint: Style = _plain


class SettingsList:
    """Settings to change one by one (pi's ``SettingsList``): ↑/↓ move, Enter or Space changes the
    selected one (``on_change(id, new_value)``), Esc calls ``on_cancel()``. With
    ``enable_search=True`` typing filters the rows (fuzzily, by label)."""

    def __init__(self, items: Sequence[SettingItem], max_visible: int, theme: SettingsListTheme | None,
                 on_change: Callable[[str, str], Any], on_cancel: Callable[[], Any], *,
                 enable_search: bool = False) -> None:
        from .inputs import Input

        self.items = list(items)
        self.filtered_items = list(self.items)
        self.max_visible = max(1, max_visible)
        self.theme = theme or SettingsListTheme()
        self.on_change = on_change
        self.on_cancel = on_cancel
        self.selected_index = 0
        self.search_input = Input() if enable_search else None
        self.submenu: Any = None
        self._submenu_index: int | None = None

    def update_value(self, id: str, value: str) -> None:
        for item in self.items:
            if item.id == id:
                item.current_value = value

    def select_item(self, id: str) -> None:
        for index, item in enumerate(self._shown_items()):
            if item.id == id:
                self.selected_index = index

    def invalidate(self) -> None:
        invalidate = getattr(self.submenu, "invalidate", None)
        if callable(invalidate):
            invalidate()

    def _shown_items(self) -> list[SettingItem]:
        return self.filtered_items if self.search_input is not None else self.items

    def render(self, width: int) -> list[str]:
        if self.submenu is not None:
            return [str(row) for row in self.submenu.render(width)]
        rows: list[str] = []
        if self.search_input is not None:
            rows += [*self.search_input.render(width), ""]
        if not self.items:
            return [*rows, self.theme.hint("  No settings available")]
        shown = self._shown_items()
        if not shown:
            return [*rows, truncate_to_width(self.theme.hint("  No matching settings"), width), *self._hint(width)]
        start = max(0, min(self.selected_index - self.max_visible // 2, len(shown) - self.max_visible))
        end = min(start + self.max_visible, len(shown))
        label_width = min(36, max(visible_width(item.label) for item in self.items))
        for index in range(start, end):
            rows.append(self._row(shown[index], index == self.selected_index, width, label_width))
        if start > 0 or end < len(shown):
            rows.append(self.theme.hint(truncate_to_width(f"  ({self.selected_index + 1}/{len(shown)})",
                                                          max(width - 2, 1), "")))
        selected = shown[self.selected_index] if self.selected_index < len(shown) else None
        if selected is not None and selected.description:
            rows.append("")
            rows += [self.theme.description(f"  {line}") for line in
                     wrap_text_with_ansi(selected.description, max(width - 4, 1))]
        return rows + self._hint(width)

    def _row(self, item: SettingItem, selected: bool, width: int, label_width: int) -> str:
        prefix = self.theme.cursor if selected else "  "
        label = self.theme.label(item.label + " " * max(0, label_width - visible_width(item.label)), selected)
        room = width - visible_width(prefix) - label_width - 2 - 2
        value = self.theme.value(truncate_to_width(item.current_value, max(room, 1), ""), selected)
        return truncate_to_width(f"{prefix}{label}  {value}", width)

    def _hint(self, width: int) -> list[str]:
        text = "  Type to search · Enter/Space to change · Esc to cancel" if self.search_input is not None \
            else "  Enter/Space to change · Esc to cancel"
        return ["", truncate_to_width(self.theme.hint(text), width)]

    def handle_input(self, data: str) -> None:
        if self.submenu is not None:
            handle = getattr(self.submenu, "handle_input", None)
            if callable(handle):
                handle(data)
            return
        shown = self._shown_items()
        page = _page(data, self.selected_index, len(shown), self.max_visible)
        searching = self.search_input is not None and self.search_input.get_value() != ""
        if matches_action(data, "tui.select.up") and shown:
            self.selected_index = len(shown) - 1 if self.selected_index == 0 else self.selected_index - 1
        elif matches_action(data, "tui.select.down") and shown:
            self.selected_index = 0 if self.selected_index == len(shown) - 1 else self.selected_index + 1
        elif page is not None and shown:
            self.selected_index = page
        elif matches_action(data, "tui.select.confirm") or (data == " " and not searching):
            self._activate()
        elif matches_action(data, "tui.select.cancel"):
            self.on_cancel()
        elif self.search_input is not None:
            before = self.search_input.get_value()
            self.search_input.handle_input(data)
            if self.search_input.get_value() != before:
                from .autocomplete import fuzzy_filter

                self.filtered_items = fuzzy_filter(self.items, self.search_input.get_value(), lambda i: i.label)
                self.selected_index = 0

    def _activate(self) -> None:
        shown = self._shown_items()
        if not 0 <= self.selected_index < len(shown):
            return
        item = shown[self.selected_index]
        if item.submenu is not None:
            self._submenu_index = self.selected_index

            def close(value: str | None = None, options: Any = None) -> None:
                if value is not None:
                    item.current_value = value
                    self.on_change(item.id, value)
                self.submenu = None
                if self._submenu_index is not None:
                    self.selected_index, self._submenu_index = self._submenu_index, None

            self.submenu = item.submenu(item.current_value, close)
        elif item.values:
            position = item.values.index(item.current_value) if item.current_value in item.values else -1
            item.current_value = item.values[(position + 1) % len(item.values)]
            self.on_change(item.id, item.current_value)


__all__ = ["SelectItem", "SelectList", "SelectListTheme", "SettingItem", "SettingsList", "SettingsListTheme"]
