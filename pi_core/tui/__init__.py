"""The component model plugins draw the terminal with (pi's ``@earendil-works/pi-tui``, snake_cased).

A component is any object with ``render(width) -> list[str]`` (rows of at most ``width`` columns, ANSI
styling allowed), and optionally ``handle_input(data)`` (a key as raw terminal input, e.g. ``"\\x1b"``
for Escape, ``"\\r"`` for Enter), ``invalidate()`` (drop cached rows), ``dispose()``,
``wants_key_release`` and ``focused``. ``ctx.ui.custom``, ``ctx.ui.set_widget``, ``set_footer`` and
``set_header`` take factories that build one, with pi's arguments in pi's order:
``(tui, theme, keybindings, done)``, ``(tui, theme)``, ``(tui, theme, footer_data)``.
``tui.request_render()`` asks for a redraw after a state change; ``tui.show_overlay(component, options)``
shows another component over the conversation and returns its :class:`OverlayHandle`.

The modules, by what they hold:

* :mod:`.component` — :class:`Component`, :class:`Focusable`, :data:`CURSOR_MARKER`,
  :func:`render_fake_cursor`.
* :mod:`.width` — :func:`visible_width`, :func:`truncate_to_width`, :func:`slice_by_column`,
  :func:`wrap_text_with_ansi` (per grapheme cluster, escape sequences kept).
* :mod:`.keys` — :func:`matches_key`, :func:`parse_key`, :class:`Key`, :func:`is_key_release`,
  :func:`is_key_repeat`.
* :mod:`.layout` — :class:`Container`, :class:`Box`, :class:`Spacer`, :class:`Text`,
  :class:`TruncatedText`, :class:`DynamicBorder`.
* :mod:`.lists` — :class:`SelectList`, :class:`SettingsList` and their items and themes.
* :mod:`.inputs` — :class:`Input`, :class:`Editor`, :class:`EditorTheme`.
* :mod:`.markdown` — :class:`Markdown`.
* :mod:`.loaders` — :class:`Loader`, :class:`CancellableLoader`, :class:`BorderedLoader`.
* :mod:`.themes` — :func:`get_select_list_theme`, :func:`get_settings_list_theme`,
  :func:`get_editor_theme`, :func:`get_markdown_theme`.
* :mod:`.overlay` — :class:`OverlayHandle`.
* :mod:`.custom_editor` — :class:`CustomEditor` for ``ctx.ui.set_editor_component``.
* :mod:`.autocomplete` — :class:`AutocompleteProvider` and its types, :func:`fuzzy_filter`.
* :mod:`.highlight` — :func:`highlight_code`.
"""

from __future__ import annotations

from .autocomplete import (
    AppliedCompletion,
    AutocompleteItem,
    AutocompleteOptions,
    AutocompleteProvider,
    AutocompleteSuggestions,
    fuzzy_filter,
)
from .component import CURSOR_MARKER, Component, Focusable, render_fake_cursor
from .custom_editor import CustomEditor
from .highlight import highlight_code
from .inputs import Editor, EditorTheme, Input
from .keys import Key, is_key_release, is_key_repeat, matches_key, parse_key
from .layout import Box, Container, DynamicBorder, Spacer, Text, TruncatedText
from .lists import SelectItem, SelectList, SelectListTheme, SettingItem, SettingsList, SettingsListTheme
from .loaders import BorderedLoader, CancellableLoader, Loader
from .markdown import Markdown
from .overlay import OverlayHandle, OverlayOptions
from .themes import get_editor_theme, get_markdown_theme, get_select_list_theme, get_settings_list_theme
from .width import slice_by_column, truncate_to_width, visible_width, wrap_text_with_ansi

__all__ = ["AppliedCompletion", "AutocompleteItem", "AutocompleteOptions", "AutocompleteProvider",
           "AutocompleteSuggestions", "BorderedLoader", "Box", "CURSOR_MARKER", "CancellableLoader", "Component",
           "Container", "CustomEditor", "DynamicBorder", "Editor", "EditorTheme", "Focusable", "Input", "Key",
           "Loader", "Markdown", "OverlayHandle", "OverlayOptions", "SelectItem", "SelectList", "SelectListTheme", "SettingItem",
           "SettingsList", "SettingsListTheme", "Spacer", "Text", "TruncatedText", "fuzzy_filter",
           "get_editor_theme", "get_markdown_theme", "get_select_list_theme", "get_settings_list_theme",
           "highlight_code", "is_key_release", "is_key_repeat", "matches_key", "parse_key", "render_fake_cursor",
           "slice_by_column", "truncate_to_width", "visible_width", "wrap_text_with_ansi"]
