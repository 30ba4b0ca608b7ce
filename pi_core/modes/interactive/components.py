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


async def run_custom(factory: Callable[..., Any], theme: Any, keybindings: Any, *, overlay: bool,
                     terminal: Any = None, background: Callable[[], list[str]] | None = None,
                     options: dict[str, Any] | None = None) -> Any:
    """Show the component until it calls ``done``; its value (``None`` when the app ends it).

    Inline under the conversation; ``overlay``: framed, and with ``background`` (the conversation's last
    rows) drawn over them on the whole screen (the alternate screen, so the conversation is as it was
    afterwards), placed by pi's overlay ``options``."""
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
    component = factory(TuiHandle(redraw, width, terminal), theme, keybindings, done)
    if inspect.isawaitable(component):
        component = await component
    if early:
        return early[0]

    over = overlay and background is not None
    placement = dict(options or {})

    def framed(columns: int) -> list[str]:
        inner_width = max(columns - 4, 1)
        wanted = placement.get("width")
        if over and wanted is not None:
            inner_width = max(min(_size(wanted, columns), columns) - 4, max(int(placement.get("min_width", 1)) - 4, 1))
        inner = render_component(component, inner_width)
        span = max([visible(r) for r in inner] + [0]) if wanted is None else inner_width
        body = [f"│ {r}{' ' * (span - visible(r))} │" for r in inner]
        return [f"╭{'─' * (span + 2)}╮", *body, f"╰{'─' * (span + 2)}╯"]

    def rows() -> Any:
        columns = width()
        if not overlay:
            return ANSI("\n".join(render_component(component, columns)))
        if over:
            return ANSI(_composite(background(), framed(columns), columns, height(), placement))
        return ANSI("\n".join(framed(columns)))

    def height() -> int:
        current = app or get_app_or_none()
        return current.output.get_size().rows if current is not None else 24

    keys = KeyBindings()

    @keys.add(Keys.Any)
    def _key(event: Any) -> None:
        handle = getattr(component, "handle_input", None)
        if handle is not None:
            handle("".join(press.data for press in event.key_sequence))
        event.app.invalidate()

    app = Application(layout=Layout(Window(FormattedTextControl(rows, focusable=True), dont_extend_height=not over)),
                      key_bindings=keys, erase_when_done=True, full_screen=over)
    app.ttimeoutlen = 0.05
    app.timeoutlen = 0.1  # a lone Esc reaches the component at once
    try:
        return await app.run_async()
    finally:
        dispose = getattr(component, "dispose", None)
        if callable(dispose):
            dispose()


ANCHORS = ("center", "top-left", "top-right", "bottom-left", "bottom-right", "top-center", "bottom-center",
           "left-center", "right-center")


def _size(value: Any, whole: int) -> int:
    """pi's ``SizeValue``: columns/rows, or a percentage string (``"50%"``)."""
    if isinstance(value, str) and value.endswith("%"):
        return int(whole * float(value[:-1]) / 100)
    return int(value)


def overlay_position(box_width: int, box_height: int, columns: int, rows: int,
                     options: dict[str, Any]) -> tuple[int, int]:
    """Where an overlay's top-left corner goes (row, column), from pi's ``OverlayOptions`` (snake_cased:
    ``anchor``, ``offset_x``/``offset_y``, ``row``/``col``, ``margin``), kept on screen."""
    margin = options.get("margin", 0)
    if isinstance(margin, dict):
        top, right = int(margin.get("top", 0)), int(margin.get("right", 0))
        bottom, left = int(margin.get("bottom", 0)), int(margin.get("left", 0))
    else:
        top = right = bottom = left = int(margin or 0)
    anchor = str(options.get("anchor", "center"))
    vertical = "top" if anchor.startswith("top") else "bottom" if anchor.startswith("bottom") else "middle"
    horizontal = "left" if "left" in anchor else "right" if "right" in anchor else "middle"
    row = {"top": top, "bottom": rows - bottom - box_height}.get(vertical, (rows - box_height) // 2)
    col = {"left": left, "right": columns - right - box_width}.get(horizontal, (columns - box_width) // 2)
    if options.get("row") is not None:
        row = _size(options["row"], rows - box_height) if isinstance(options["row"], str) else int(options["row"])
    if options.get("col") is not None:
        col = _size(options["col"], columns - box_width) if isinstance(options["col"], str) else int(options["col"])
    row += int(options.get("offset_y", 0))
    col += int(options.get("offset_x", 0))
    return max(0, min(row, rows - box_height)), max(0, min(col, columns - box_width))


def _composite(background: list[str], box: list[str], columns: int, rows: int, options: dict[str, Any]) -> str:
    """The screen: the conversation's last rows with the overlay's rows pasted over them."""
    from ...tui import truncate_to_width

    max_height = options.get("max_height")
    if max_height is not None:
        box = box[:max(_size(max_height, rows), 1)]
    box_width = max([visible(r) for r in box] + [0])
    screen = [truncate_to_width(r, columns, "") for r in background[-rows:]]
    screen += [""] * (rows - len(screen))
    top, left = overlay_position(box_width, len(box), columns, rows, options)
    for index, row in enumerate(box):
        at = top + index
        if at >= rows:
            break
        under = screen[at]
        head = truncate_to_width(under, left, "")
        head += " " * (left - visible(head))
        screen[at] = f"{head}\x1b[0m{row}\x1b[0m{_tail(under, left + box_width)}"
    return "\n".join(screen)


def _tail(text: str, start: int) -> str:
    """``text`` from column ``start`` on (plain: the cut-off styling of what is under an overlay is dropped)."""
    from .editor import strip_ansi

    plain = strip_ansi(text)
    out, used = [], 0
    for char in plain:
        w = visible(char)
        if used >= start:
            out.append(char)
        used += w
    return "".join(out)


def visible(text: str) -> int:
    from ...tui import visible_width

    return visible_width(text)


__all__ = ["FooterData", "TuiHandle", "build", "render_component", "run_custom"]
