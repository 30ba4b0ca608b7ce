"""Plugins' components (:mod:`pi_core.tui`) in the terminal: ``ctx.ui.custom`` runs one as a small
inline prompt_toolkit application that forwards every key, raw, to its ``handle_input`` until it calls
``done(value)``; widgets, footers and headers are rendered into the live region or the scrollback."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from ...tui import truncate_to_width


class TuiHandle:
    """The ``tui`` argument of component factories: ``request_render()`` redraws, ``columns`` is the
    terminal's width."""

    def __init__(self, redraw: Callable[[], None], columns: Callable[[], int]) -> None:
        self._redraw = redraw
        self._columns = columns

    def request_render(self) -> None:
        self._redraw()

    @property
    def columns(self) -> int:
        return self._columns()


class FooterData:
    """The ``footer_data`` argument of ``set_footer`` factories (pi's ``FooterDataProvider``)."""

    def __init__(self, branch: Callable[[], str | None], statuses: Callable[[], dict[str, str]]) -> None:
        self._branch = branch
        self._statuses = statuses

    def get_git_branch(self) -> str | None:
        return self._branch()

    def get_extension_statuses(self) -> dict[str, str]:
        return dict(self._statuses())


def render_component(component: Any, width: int) -> list[str]:
    """A component's rows, each cut to ``width``; a component that fails shows its error instead of
    breaking the screen."""
    try:
        rows = component.render(width)
    except Exception as exc:  # a plugin's bug must not take the terminal down
        rows = [f"[component error: {exc}]"]
    return [truncate_to_width(str(row), width) for row in rows]


def build(factory: Callable[..., Any], *args: Any) -> Any:
    """What a factory returns; lists of lines are accepted in place of a component."""
    from ...tui import Text

    made = factory(*args)
    if isinstance(made, (list, tuple, str)):
        return Text(made)
    return made


async def run_custom(factory: Callable[..., Any], theme: Any, keybindings: Any, *, overlay: bool) -> Any:
    """Show the component until it calls ``done``; its value (``None`` when the app ends it)."""
    from prompt_toolkit.application import Application, get_app_or_none
    from prompt_toolkit.formatted_text import ANSI
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.keys import Keys
    from prompt_toolkit.layout import Layout, Window
    from prompt_toolkit.layout.controls import FormattedTextControl

    app: Application[Any] | None = None

    def width() -> int:
        current = app or get_app_or_none()
        return current.output.get_size().columns if current is not None else 80

    def redraw() -> None:
        if app is not None:
            app.invalidate()

    def done(value: Any = None) -> None:
        if app is not None and app.is_running and not app.future.done():  # type: ignore[union-attr]
            app.exit(result=value)
        else:
            early.append(value)

    early: list[Any] = []
    component = factory(TuiHandle(redraw, width), theme, keybindings, done)
    if inspect.isawaitable(component):
        component = await component
    if early:
        return early[0]

    def rows() -> Any:
        columns = width()
        if not overlay:
            return ANSI("\n".join(render_component(component, columns)))
        inner = render_component(component, max(columns - 4, 1))
        span = max([visible(r) for r in inner] + [0])
        body = [f"│ {r}{' ' * (span - visible(r))} │" for r in inner]
        return ANSI("\n".join([f"╭{'─' * (span + 2)}╮", *body, f"╰{'─' * (span + 2)}╯"]))

    keys = KeyBindings()

    @keys.add(Keys.Any)
    def _key(event: Any) -> None:
        handle = getattr(component, "handle_input", None)
        if handle is not None:
            handle("".join(press.data for press in event.key_sequence))
        event.app.invalidate()

    app = Application(layout=Layout(Window(FormattedTextControl(rows, focusable=True), dont_extend_height=True)),
                      key_bindings=keys, erase_when_done=True, full_screen=False)
    app.ttimeoutlen = 0.05
    app.timeoutlen = 0.1  # a lone Esc reaches the component at once
    try:
        return await app.run_async()
    finally:
        dispose = getattr(component, "dispose", None)
        if callable(dispose):
            dispose()


def visible(text: str) -> int:
    from ...tui import visible_width

    return visible_width(text)


__all__ = ["FooterData", "TuiHandle", "build", "render_component", "run_custom"]
