"""Keyboard shortcuts plugins register (``ctx.register_shortcut``): kept per session context, bound by the
terminal, listed by ``/hotkeys`` and ``/help`` through :meth:`ShortcutRegistry.all`; and :class:`KeyBinding`, how the terminal's own keys are bound."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Shortcut:
    """A plugin's key: ``key`` in pi's syntax, made canonical (``"ctrl+shift+p"``); ``handler(ctx)`` runs
    when it is pressed in the editor (it may be async)."""

    key: str
    handler: Callable[[Any], Any]
    description: str = ""


@dataclass(frozen=True)
class KeyBinding:
    """One of the terminal's named key actions as it is bound now (``ctx.ui.get_keybindings()``): pi's
    ``action`` id (``"app.model.select"``), its canonical ``keys`` (pi's defaults with ``keybindings.json``
    applied; empty when unbound), what it does, the ``group`` it is listed under, and ``shown``, the keys as
    help screens write them (``"Shift+Ctrl+P"``)."""

    action: str
    keys: tuple[str, ...]
    description: str
    group: str
    shown: str = ""


class ShortcutRegistry:
    """The shortcuts of one session context; registering a key again replaces it (reported)."""

    def __init__(self) -> None:
        self._items: dict[str, Shortcut] = {}
        self.problems: list[str] = []
        self.version = 0

    def register(self, key: str, handler: Callable[[Any], Any], description: str = "") -> Shortcut:
        from ..modes.interactive.keybindings import KeyError_, normalize

        try:
            canonical = normalize(key)
        except KeyError_ as exc:
            raise ValueError(f"register_shortcut: {exc}") from None
        if not callable(handler):
            raise ValueError(f"register_shortcut({key!r}): the handler is not callable")
        if canonical in self._items:
            self.problems.append(f"shortcut {canonical} registered again; the later one is used")
        shortcut = self._items[canonical] = Shortcut(canonical, handler, description)
        self.version += 1
        return shortcut

    def all(self) -> list[Shortcut]:
        return list(self._items.values())


__all__ = ["KeyBinding", "Shortcut", "ShortcutRegistry"]
