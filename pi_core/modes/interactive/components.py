"""Plugins' components (:mod:`pi_core.tui`) in the terminal: what their factories get (``tui``,
``footer_data``) and how their rows are drawn. Widgets, footers and headers are rendered into the live
region or the scrollback; ``ctx.ui.custom`` components and overlays are the :mod:`.layer`'s."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ...tui import truncate_to_width


class TuiHandle:
    """The ``tui`` argument of component factories: ``request_render()`` redraws, ``columns`` is the
    terminal's width; ``stop()`` hands the terminal to another program (cooked mode, pi's keys off)
    and ``start()`` takes it back (pi's ``tui.stop()`` / ``tui.start()``)."""

    def __init__(self, redraw: Callable[[], None], columns: Callable[[], int], terminal: Any = None) -> None:
        self._redraw = redraw
        self._columns = columns
        self._terminal = terminal

    def request_render(self, force: bool = False) -> None:
        self._redraw()

    def stop(self) -> None:
        """Give the terminal away (e.g. to run ``vim`` with ``subprocess.run``): pending rows are written,
        the terminal goes back to the mode pi found it in, Ctrl+C goes to the program alone."""
        if self._terminal is not None:
            self._terminal.hand_out()

    def start(self) -> None:
        """Take the terminal back after :meth:`stop`; pi redraws."""
        if self._terminal is not None:
            self._terminal.take_back()

    @property
    def columns(self) -> int:
        return self._columns()

    @property
    def rows(self) -> int:
        import shutil

        return shutil.get_terminal_size((80, 24)).lines


class FooterData:
    """The ``footer_data`` argument of ``set_footer`` factories (pi's ``FooterDataProvider``)."""

    def __init__(self, branch: Callable[[], str | None], statuses: Callable[[], dict[str, str]]) -> None:
        self._branch = branch
        self._statuses = statuses

    def get_git_branch(self) -> str | None:
        return self._branch()

    def get_extension_statuses(self) -> dict[str, str]:
        return dict(self._statuses())


_NOT_DRAWN = re.compile(r"\x1b[\]_P^X][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b\[[0-?]*[ -/]*[@-ln-~]")
"""OSC (hyperlinks), APC (the cursor marker) and CSI sequences other than styling: prompt_toolkit draws
only SGR codes, and a cursor move inside a row would break the screen."""


def render_component(component: Any, width: int) -> list[str]:
    """A component's rows, each cut to ``width`` and holding only styling codes; a component that fails
    shows its error instead of breaking the screen."""
    try:
        rows = component.render(width)
    except Exception as exc:  # a plugin's bug must not take the terminal down
        rows = [f"[component error: {exc}]"]
    return [truncate_to_width(_NOT_DRAWN.sub("", str(row)), width) for row in rows]


def build(factory: Callable[..., Any], *args: Any) -> Any:
    """What a factory returns; lists of lines are accepted in place of a component."""
    from ...tui import Text

    made = factory(*args)
    if isinstance(made, (list, tuple, str)):
        return Text(made)
    return made


__all__ = ["FooterData", "TuiHandle", "build", "render_component"]
