"""What controls an overlay while it is shown (pi-tui's ``OverlayHandle``) and where it goes
(pi's ``OverlayOptions``, snake_cased)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, Protocol, TypedDict

Anchor = Literal["center", "top-left", "top-right", "bottom-left", "bottom-right", "top-center", "bottom-center",
                 "left-center", "right-center"]


class OverlayOptions(TypedDict, total=False):
    """Where an overlay goes: ``width`` (columns or ``"50%"``; default: 80 at most), ``min_width``,
    ``max_height`` (rows or a percentage; rows past it are cut), ``anchor`` (``"center"`` by default),
    ``offset_x``/``offset_y``, ``row``/``col`` (absolute or a percentage, instead of the anchor),
    ``margin`` (a number or ``{"top", "right", "bottom", "left"}``), ``visible(columns, rows)`` (drawn
    only while it returns true) and ``non_capturing`` (shown without taking the keyboard)."""

    width: int | str
    min_width: int
    max_height: int | str
    anchor: Anchor
    offset_x: int
    offset_y: int
    row: int | str
    col: int | str
    margin: int | dict[str, int]
    visible: Callable[[int, int], bool]
    non_capturing: bool


class OverlayHandle(Protocol):
    """Controls one shown overlay (``tui.show_overlay`` returns it; ``ctx.ui.custom(..., on_handle=)``
    passes it): :meth:`hide` removes it for good, :meth:`set_hidden` hides and shows it again,
    :meth:`focus` gives it the keyboard and brings it to the front, :meth:`unfocus` gives the keyboard
    back (to the front-most overlay that takes keys, or to what had it before)."""

    def hide(self) -> None: ...
    def set_hidden(self, hidden: bool) -> None: ...
    def is_hidden(self) -> bool: ...
    def focus(self) -> None: ...
    def unfocus(self, options: dict[str, Any] | None = None) -> None: ...
    def is_focused(self) -> bool: ...
    def get_bounds(self) -> dict[str, int] | None: ...


__all__ = ["Anchor", "OverlayHandle", "OverlayOptions"]
