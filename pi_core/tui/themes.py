"""pi's component themes built from the current theme (``ctx.ui.theme`` or a factory's ``theme``):
pi's ``getSelectListTheme()`` and friends, which read pi's global theme, take it as an argument here."""

from __future__ import annotations

from typing import Any

from .inputs import EditorTheme
from .lists import SelectListTheme, SettingsListTheme


def get_select_list_theme(theme: Any) -> SelectListTheme:
    """A :class:`~pi_core.tui.SelectList`'s looks in ``theme``'s colours, as pi's lists look."""
    return SelectListTheme(selected_prefix=lambda text: theme.fg("accent", text),
                           selected_text=lambda text: theme.fg("accent", text),
                           description=lambda text: theme.fg("muted", text),
                           scroll_info=lambda text: theme.fg("muted", text),
                           no_match=lambda text: theme.fg("muted", text))


def get_settings_list_theme(theme: Any) -> SettingsListTheme:
    """A :class:`~pi_core.tui.SettingsList`'s looks in ``theme``'s colours, as pi's settings look."""
    return SettingsListTheme(label=lambda text, selected: theme.fg("accent", text) if selected else text,
                             value=lambda text, selected: theme.fg("accent" if selected else "muted", text),
                             description=lambda text: theme.fg("dim", text),
                             cursor=theme.fg("accent", "→ "),
                             hint=lambda text: theme.fg("dim", text))


def get_editor_theme(theme: Any) -> EditorTheme:
    """An :class:`~pi_core.tui.Editor`'s looks in ``theme``'s colours (pi's editor border)."""
    return EditorTheme(border_color=lambda text: theme.fg("borderMuted", text),
                       select_list=get_select_list_theme(theme))


def get_markdown_theme(theme: Any) -> Any:
    """What :class:`~pi_core.tui.Markdown` draws with: the theme itself (its ``md*`` colours)."""
    return theme


__all__ = ["get_editor_theme", "get_markdown_theme", "get_select_list_theme", "get_settings_list_theme"]
