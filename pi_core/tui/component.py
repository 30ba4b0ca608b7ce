"""What a component is (:class:`Component`), what one that shows a text cursor adds (:class:`Focusable`),
and the cursor helpers (pi's ``CURSOR_MARKER`` and ``renderFakeCursor``)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

CURSOR_MARKER = "\x1b_pi:c\x07"
"""Put right before the cell a focused component draws its cursor in (pi's ``CURSOR_MARKER``): a
zero-width escape sequence terminals ignore; the terminal strips it before drawing."""


def render_fake_cursor(text: str) -> str:
    """``text`` (the cell under the cursor, ``" "`` at the end of a line) drawn as a cursor: in reverse
    video (pi's ``renderFakeCursor``)."""
    return f"\x1b[7m{text}\x1b[27m"


@runtime_checkable
class Component(Protocol):
    """What the terminal draws: rows for a width (each at most ``width`` columns, styling allowed).

    Optional members the terminal looks for: ``handle_input(data)`` (a key, raw), ``invalidate()``
    (drop cached rows), ``dispose()`` (the component is gone), ``wants_key_release`` (true: key
    releases reach ``handle_input`` too, see :func:`~pi_core.tui.is_key_release`) and ``focused``
    (:class:`Focusable`)."""

    def render(self, width: int) -> list[str]: ...


@runtime_checkable
class Focusable(Protocol):
    """A component that shows a text cursor: the terminal sets ``focused`` while it has the keyboard
    (pi's ``Focusable``). A container holding an :class:`~pi_core.tui.Input` or
    :class:`~pi_core.tui.Editor` passes its ``focused`` on to it."""

    focused: bool

    def render(self, width: int) -> list[str]: ...


__all__ = ["CURSOR_MARKER", "Component", "Focusable", "render_fake_cursor"]
