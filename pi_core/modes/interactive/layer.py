"""Plugins' components that take the keyboard: ``ctx.ui.custom`` components and overlays.

A :class:`Layer` holds what is open: inline components (``custom()`` without ``overlay``; the last one
opened is shown under the conversation) and overlays (drawn over the conversation's last rows, placed
by pi's ``OverlayOptions``). Keys go to the focused one, raw. Focus follows pi's rules: a new inline
component or capturing overlay takes it; a hidden or removed overlay hands it to the front-most visible
capturing overlay, else to what had it before; :class:`Handle` moves it.

While something takes keys, the layer has the terminal (the editor is put away, as for a dialog): an
inline prompt_toolkit application while only inline components are open, a full-screen one on the
alternate screen while an overlay is visible (the conversation is exactly as it was when it closes).
With nothing left that takes keys — every overlay hidden, or only non-capturing ones — the editor
comes back; the layer takes the terminal again when an overlay shows. In scrollback mode the editor
cannot be drawn under an overlay, so non-capturing overlays show only while the layer has the terminal.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ...tui import is_key_release, slice_by_column, truncate_to_width, visible_width
from .capabilities import use_escape_timeout
from .components import TuiHandle, render_component

KEY_RELEASE_ON = "\x1b[>3u"
"""Push kitty keyboard flags 1 (disambiguate) and 2 (report key repeat and release)."""
KEY_RELEASE_OFF = "\x1b[<u"
DEFAULT_WIDTH = 80
"""An overlay without a ``width`` is at most this wide (pi's default)."""


class LayerHost(Protocol):
    """What the layer needs from the interactive app."""

    stdout: Any
    keymap: Any
    terminal_handoff: Any

    def exclusive(self, run: Callable[[], Awaitable[Any]]) -> Awaitable[Any]: ...
    def overlay_background(self) -> list[str]: ...
    def notify(self, message: str, level: str) -> None: ...
    def current_theme(self) -> Any: ...


@dataclass(eq=False)
class _Request:
    factory: Callable[..., Any]
    overlay: bool
    options: Any
    on_handle: Callable[[Any], Any] | None
    future: asyncio.Future[Any]
    component: Any = None
    entry: _Overlay | None = None
    closed: bool = False


@dataclass(eq=False)
class _Overlay:
    component: Any
    options: Any
    pre_focus: Any
    focus_order: int
    hidden: bool = False
    bounds: dict[str, int] | None = None

    def resolved(self) -> dict[str, Any]:
        options = self.options() if callable(self.options) else self.options
        return dict(options or {})

    @property
    def capturing(self) -> bool:
        return not self.resolved().get("non_capturing", self.resolved().get("nonCapturing", False))


class Handle:
    """pi's ``OverlayHandle`` for one overlay (see :class:`pi_core.tui.OverlayHandle`)."""

    def __init__(self, layer: Layer, entry: _Overlay) -> None:
        self._layer = layer
        self._entry = entry

    def hide(self) -> None:
        self._layer.remove_overlay(self._entry)

    def set_hidden(self, hidden: bool) -> None:
        self._layer.set_hidden(self._entry, hidden)

    def is_hidden(self) -> bool:
        return self._entry.hidden

    def focus(self) -> None:
        self._layer.focus_overlay(self._entry)

    def unfocus(self, options: dict[str, Any] | None = None) -> None:
        self._layer.unfocus_overlay(self._entry, options)

    def is_focused(self) -> bool:
        return self._layer.focus is self._entry.component

    def get_bounds(self) -> dict[str, int] | None:
        entry = self._entry
        if entry not in self._layer.overlays or not self._layer.visible(entry) or entry.bounds is None:
            return None
        return dict(entry.bounds)

    # pi's camelCase names, for code ported as it is
    setHidden = set_hidden
    isHidden = is_hidden
    isFocused = is_focused
    getBounds = get_bounds


class LayerTui(TuiHandle):
    """The ``tui`` of components the layer shows: :class:`TuiHandle` plus pi's overlay calls."""

    def __init__(self, layer: Layer) -> None:
        super().__init__(layer.request_render, lambda: layer.size()[0], layer.host.terminal_handoff)
        self._layer = layer

    def show_overlay(self, component: Any, options: dict[str, Any] | None = None) -> Handle:
        """Show ``component`` over the conversation (pi's ``tui.showOverlay``); its :class:`Handle`."""
        return self._layer.show_overlay(component, options)

    def hide_overlay(self) -> None:
        """Remove the overlay shown last."""
        if self._layer.overlays:
            self._layer.remove_overlay(self._layer.overlays[-1])

    def has_overlay(self) -> bool:
        return any(self._layer.visible(entry) for entry in self._layer.overlays)

    def set_focus(self, component: Any) -> None:
        self._layer.set_focus(component)

    @property
    def rows(self) -> int:
        return self._layer.size()[1]

    @property
    def terminal(self) -> Any:
        return self

    showOverlay = show_overlay
    hideOverlay = hide_overlay
    hasOverlay = has_overlay
    requestRender = TuiHandle.request_render


class Layer:
    """The open ``custom`` components and overlays of one interactive run."""

    def __init__(self, host: LayerHost) -> None:
        self.host = host
        self.bases: list[_Request] = []
        self.overlays: list[_Overlay] = []
        self.focus: Any = None
        self._queue: list[_Request] = []
        self._order = itertools.count(1)
        self._serving = False
        self._app: Any = None
        self._mode: str | None = None
        self._release_on = False
        self._closed = False
        self.tui = LayerTui(self)

    # -- what plugins call -------------------------------------------------------------------------------

    async def custom(self, factory: Callable[..., Any], *, overlay: bool, options: Any = None,
                     on_handle: Callable[[Any], Any] | None = None) -> Any:
        if self._closed:
            return None
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._queue.append(_Request(factory, overlay, options, on_handle, future))
        if self._serving:
            asyncio.ensure_future(self._build_queued())
        else:
            self._serve_soon()
        return await future

    def show_overlay(self, component: Any, options: Any = None) -> Handle:
        entry = _Overlay(component, options, self.focus, next(self._order))
        self.overlays.append(entry)
        if entry.capturing and self.visible(entry):
            self.set_focus(component)
        self._changed()
        return Handle(self, entry)

    def remove_overlay(self, entry: _Overlay) -> None:
        if entry not in self.overlays:
            return
        self.overlays.remove(entry)
        for other in self.overlays:  # what pointed back at the removed overlay points at what it pointed at
            if other.pre_focus is entry.component:
                other.pre_focus = entry.pre_focus
        if self.focus is entry.component:
            top = self._front_capturing()
            self.set_focus(top.component if top else entry.pre_focus)
        self._changed()

    def set_hidden(self, entry: _Overlay, hidden: bool) -> None:
        if entry.hidden == hidden:
            return
        entry.hidden = hidden
        if hidden and self.focus is entry.component:
            top = self._front_capturing()
            self.set_focus(top.component if top else entry.pre_focus)
        elif not hidden and entry.capturing and self.visible(entry):
            entry.focus_order = next(self._order)
            self.set_focus(entry.component)
        self._changed()

    def focus_overlay(self, entry: _Overlay) -> None:
        if entry not in self.overlays or not self.visible(entry):
            return
        entry.focus_order = next(self._order)
        self.set_focus(entry.component)
        self._changed()

    def unfocus_overlay(self, entry: _Overlay, options: dict[str, Any] | None) -> None:
        if self.focus is not entry.component and not options:
            return
        top = self._front_capturing()
        fallback = top.component if top is not None and top is not entry else entry.pre_focus
        self.set_focus(options.get("target") if options else fallback)
        self._changed()

    def set_focus(self, component: Any) -> None:
        previous, self.focus = self.focus, component
        if previous is not component and hasattr(previous, "focused"):
            previous.focused = False
        if component is not None and hasattr(component, "focused"):
            component.focused = True
        self._key_release_mode()

    @property
    def app(self) -> Any:
        """The prompt_toolkit application showing the layer, while it runs."""
        return self._app

    def request_render(self) -> None:
        if self._app is not None and self._app.is_running:
            self._app.invalidate()

    def visible(self, entry: _Overlay) -> bool:
        if entry.hidden:
            return False
        test = entry.resolved().get("visible")
        return bool(test(*self.size())) if callable(test) else True

    def size(self) -> tuple[int, int]:
        app = self._app
        if app is not None:
            try:
                size = app.output.get_size()
                return size.columns, size.rows
            except Exception:  # an output without a size (a pipe): the usual terminal
                pass
        import shutil

        size = shutil.get_terminal_size((80, 24))
        return size.columns, size.lines

    def close(self) -> None:
        """The run is over: what is still open gets its "cancel" value."""
        self._closed = True
        for request in [*self._queue, *self.bases]:
            if not request.future.done():
                request.future.set_result(None)
        for entry in list(self.overlays):
            self._dispose(entry.component)
        self.overlays.clear()
        self._queue.clear()
        self.bases.clear()

    # -- focus and what is on screen ---------------------------------------------------------------------

    def _front_capturing(self) -> _Overlay | None:
        shown = [e for e in self.overlays if e.capturing and self.visible(e)]
        return max(shown, key=lambda e: e.focus_order) if shown else None

    def _keyed(self) -> Any:
        """The component keys go to: the focused one while it is on screen, else the front-most capturing
        overlay or the inline component shown."""
        shown = [e.component for e in self.overlays if self.visible(e)]
        if self.focus is not None and (self.focus in shown or (self.bases and self.focus is self.bases[-1].component)):
            return self.focus
        top = self._front_capturing()
        if top is not None:
            return top.component
        return self.bases[-1].component if self.bases else None

    def _wanted_mode(self) -> str | None:
        if any(self.visible(e) for e in self.overlays) and (self.bases or self._front_capturing() is not None):
            return "overlay"
        return "inline" if self.bases else None

    def _changed(self) -> None:
        wanted = self._wanted_mode()
        if self._serving:
            if wanted != self._mode and self._app is not None and self._app.is_running:
                self._app.exit()
            self.request_render()
        elif wanted is not None:
            self._serve_soon()

    def _key_release_mode(self) -> None:
        wanted = bool(getattr(self.focus, "wants_key_release", False)) and self._app is not None
        if wanted != self._release_on:
            self._write(KEY_RELEASE_ON if wanted else KEY_RELEASE_OFF)
            self._release_on = wanted

    def _write(self, text: str) -> None:
        try:
            self.host.stdout.write(text)
            self.host.stdout.flush()
        except (OSError, ValueError):
            pass

    # -- running -----------------------------------------------------------------------------------------

    def _serve_soon(self) -> None:
        if self._serving or self._closed:
            return
        self._serving = True
        asyncio.ensure_future(self.host.exclusive(self._serve))

    async def _serve(self) -> None:
        try:
            await self._build_queued()
            while not self._closed:
                mode = self._wanted_mode()
                if mode is None:
                    break
                await self._run(mode)
        finally:
            self._serving = False
            self._mode = None
        if self._queue and not self._closed:  # asked for while the terminal was being handed back
            self._serve_soon()

    async def _build_queued(self) -> None:
        while self._queue:
            request = self._queue.pop(0)
            await self._build(request)
        self._changed()

    async def _build(self, request: _Request) -> None:
        def done(value: Any = None) -> None:
            self._finish(request, value)

        try:
            made = request.factory(self.tui, self.host.current_theme(), self.host.keymap, done)
            if inspect.isawaitable(made):
                made = await made
        except Exception as exc:  # a plugin's factory that fails: reported, the call returns None
            self.host.notify(f"custom component failed: {exc}", "error")
            self._finish(request, None)
            return
        if request.closed:  # done() was called while it was being built (e.g. after tui.stop())
            self._dispose(made)
            return
        request.component = made
        if request.overlay:
            options = request.options
            if options is None and getattr(made, "width", None):
                options = {"width": made.width}
            request.entry = self.show_overlay(made, options)._entry
            if request.on_handle is not None:
                request.on_handle(Handle(self, request.entry))
        else:
            self.bases.append(request)
            self.set_focus(made)

    def _finish(self, request: _Request, value: Any) -> None:
        if request.closed:
            return
        request.closed = True
        if request.entry is not None:
            self.remove_overlay(request.entry)
        elif request in self.bases:
            self.bases.remove(request)
            if self.focus is request.component:
                top = self._front_capturing()
                self.set_focus(top.component if top else self.bases[-1].component if self.bases else None)
            self._changed()
        if request.component is not None:
            self._dispose(request.component)
        if not request.future.done():
            request.future.set_result(value)

    def _dispose(self, component: Any) -> None:
        dispose = getattr(component, "dispose", None)
        if callable(dispose):
            try:
                dispose()
            except Exception as exc:  # a plugin's bug must not keep the layer from closing
                self.host.notify(f"component dispose failed: {exc}", "error")

    async def _run(self, mode: str) -> None:
        from prompt_toolkit.application import Application
        from prompt_toolkit.key_binding import KeyBindings
        from prompt_toolkit.keys import Keys
        from prompt_toolkit.layout import Layout, Window
        from prompt_toolkit.layout.controls import FormattedTextControl

        keys = KeyBindings()

        @keys.add(Keys.Any)
        def _key(event: Any) -> None:
            for press in event.key_sequence:
                self._dispatch(press.data)
            event.app.invalidate()

        over = mode == "overlay"
        control = FormattedTextControl(self._screen if over else self._inline, focusable=True, show_cursor=False)
        app: Application[Any] = Application(layout=Layout(Window(control, dont_extend_height=not over)),
                                            key_bindings=keys, erase_when_done=True, full_screen=over)
        use_escape_timeout(app)  # PI_TUI_ESC_TIMEOUT: a lone Esc reaches the component at once
        restore = raw_keys(app)
        self._app, self._mode = app, mode
        self._key_release_mode()
        try:
            await app.run_async()
        finally:
            restore()
            self._app = None
            self._key_release_mode()

    def _dispatch(self, data: str) -> None:
        target = self._keyed()
        if target is None or (is_key_release(data) and not getattr(target, "wants_key_release", False)):
            return
        handle = getattr(target, "handle_input", None)
        if not callable(handle):
            return
        try:
            handle(data)
        except Exception as exc:  # a plugin's key handler must not end the terminal
            self.host.notify(f"component failed on a key: {exc}", "error")

    # -- drawing -----------------------------------------------------------------------------------------

    def _inline(self) -> Any:
        from prompt_toolkit.formatted_text import ANSI

        self._check_mode()
        columns, _ = self.size()
        rows = render_component(self.bases[-1].component, columns) if self.bases else []
        return ANSI("\n".join(rows))

    def _screen(self) -> Any:
        from prompt_toolkit.formatted_text import ANSI

        self._check_mode()
        columns, rows = self.size()
        under = list(self.host.overlay_background())
        if self.bases:
            under += render_component(self.bases[-1].component, columns)
        return ANSI(self.composite(under, columns, rows))

    def _check_mode(self) -> None:
        """A ``visible`` test may change with the terminal's size: leave for the right kind of screen."""
        app = self._app
        if app is not None and self._wanted_mode() != self._mode and app.is_running:
            asyncio.get_running_loop().call_soon(lambda: app.exit() if app.is_running else None)

    def composite(self, under: list[str], columns: int, rows: int) -> str:
        """The screen: the last ``rows`` of ``under`` with the visible overlays pasted over them, the one
        focused last on top (pi's compositing)."""
        screen = [truncate_to_width(row, columns, "") for row in under[-rows:]]
        screen += [""] * (rows - len(screen))
        for entry in sorted((e for e in self.overlays if self.visible(e)), key=lambda e: e.focus_order):
            options = entry.resolved()
            width, max_height = resolve_size(options, columns, rows)
            lines = render_component(entry.component, width)
            if max_height is not None:
                lines = lines[:max_height]
            top, left = resolve_position(options, width, len(lines), columns, rows)
            entry.bounds = {"row": top, "col": left, "width": width, "height": len(lines)}
            for index, line in enumerate(lines):
                if 0 <= top + index < rows:
                    screen[top + index] = paste(screen[top + index], line, left, width, columns)
        return "\n".join(screen)


def paste(base: str, line: str, column: int, width: int, columns: int) -> str:
    """``line`` drawn over ``base`` from ``column``, ``width`` columns wide; what is left and right of
    it stays (pi's ``compositeTuiLine``)."""
    head = slice_by_column(base, 0, column, True)
    head += " " * max(0, column - visible_width(head))
    tail = slice_by_column(base, column + width, max(0, columns - column - width), True)
    middle = truncate_to_width(line, width, "", pad=True)
    return f"{head}\x1b[0m{middle}\x1b[0m{tail}"


def _size_value(value: Any, whole: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, str):
        match = re.fullmatch(r"(\d+(?:\.\d+)?)%", value.strip())
        return int(whole * float(match.group(1)) / 100) if match else None
    return int(value)


def _margins(options: dict[str, Any]) -> tuple[int, int, int, int]:
    margin = options.get("margin", 0)
    if isinstance(margin, dict):
        return tuple(max(0, int(margin.get(side, 0) or 0)) for side in ("top", "right", "bottom", "left"))  # type: ignore[return-value]
    value = max(0, int(margin or 0))
    return value, value, value, value


def resolve_size(options: dict[str, Any], columns: int, rows: int) -> tuple[int, int | None]:
    """An overlay's width and its ``max_height`` on this terminal (pi's ``resolveOverlayLayout``)."""
    top, right, bottom, left = _margins(options)
    room_x, room_y = max(1, columns - left - right), max(1, rows - top - bottom)
    width = _size_value(options.get("width"), columns)
    width = min(DEFAULT_WIDTH, room_x) if width is None else width
    minimum = options.get("min_width", options.get("minWidth"))
    if minimum is not None:
        width = max(width, int(minimum))
    width = max(1, min(width, room_x))
    height = _size_value(options.get("max_height", options.get("maxHeight")), rows)
    return width, None if height is None else max(1, min(height, room_y))


def resolve_position(options: dict[str, Any], width: int, height: int, columns: int, rows: int) -> tuple[int, int]:
    """Where an overlay's top-left corner goes (row, column), from pi's anchor, ``row``/``col``, offsets
    and margins; it stays on screen."""
    top, right, bottom, left = _margins(options)
    room_x, room_y = max(1, columns - left - right), max(1, rows - top - bottom)
    anchor = str(options.get("anchor", "center"))
    row = _place(options.get("row"), top, room_y, height, _anchor_row(anchor, top, room_y, height))
    col = _place(options.get("col"), left, room_x, width, _anchor_col(anchor, left, room_x, width))
    row += int(options.get("offset_y", options.get("offsetY", 0)) or 0)
    col += int(options.get("offset_x", options.get("offsetX", 0)) or 0)
    row = max(top, min(row, rows - bottom - height))
    col = max(left, min(col, columns - right - width))
    return row, col


def _place(value: Any, margin: int, room: int, size: int, anchored: int) -> int:
    if value is None:
        return anchored
    if isinstance(value, str):
        match = re.fullmatch(r"(\d+(?:\.\d+)?)%", value.strip())
        return margin + int(max(0, room - size) * float(match.group(1)) / 100) if match else anchored
    return int(value)


def _anchor_row(anchor: str, margin: int, room: int, height: int) -> int:
    if anchor.startswith("top"):
        return margin
    if anchor.startswith("bottom"):
        return margin + room - height
    return margin + (room - height) // 2


def _anchor_col(anchor: str, margin: int, room: int, width: int) -> int:
    if anchor in ("top-left", "left-center", "bottom-left"):
        return margin
    if anchor in ("top-right", "right-center", "bottom-right"):
        return margin + room - width
    return margin + (room - width) // 2


# -- keys, raw ------------------------------------------------------------------------------------------

_CPR = re.compile(r"^\x1b\[\d+;\d+R$")
_REPLY = re.compile(r"^\x1b\[\?[\d;]*[uc]$")


def sequence_length(text: str) -> int | None:
    """How long the key at the start of ``text`` is (pi's input splitting); ``None``: not complete yet."""
    if text[0] != "\x1b":
        return 1
    if len(text) == 1:
        return None
    second = text[1]
    if second == "[":
        return _csi_length(text)
    if second == "O":
        return 3 if len(text) >= 3 else None
    if second in "]_P^X":
        ends = [i for i in (text.find("\x07", 2), text.find("\x1b\\", 2)) if i >= 0]
        return None if not ends else min(ends) + (1 if min(ends) == text.find("\x07", 2) else 2)
    if second == "\x1b":
        inner = sequence_length(text[1:])
        return None if inner is None else inner + 1
    if second < " " and second not in "\r\x08":  # Esc, then another key typed quickly (Esc, Ctrl+D)
        return 1
    return 2


def _csi_length(text: str) -> int | None:
    if text.startswith("\x1b[200~"):
        end = text.find("\x1b[201~")
        return None if end < 0 else end + 6
    if text.startswith("\x1b[M"):
        return 6 if len(text) >= 6 else None
    for index in range(2, len(text)):
        code = ord(text[index])
        if 0x40 <= code <= 0x7E and not (index == 2 and text[index] == "["):
            return index + 1
        if not 0x20 <= code <= 0x3F and text[index] != "[":
            return index
    return None


class RawKeyParser:
    """Splits terminal input into keys as pi's terminal does, keeping each key's bytes whole (kitty
    sequences, releases included); prompt_toolkit's parser would take unknown sequences apart."""

    def __init__(self, emit: Callable[[Any], None]) -> None:
        self._emit = emit
        self._buffer = ""

    def feed(self, data: str) -> None:
        self._buffer += data
        self._drain(final=False)

    def flush(self) -> None:
        self._drain(final=True)

    def feed_and_flush(self, data: str) -> None:
        self.feed(data)
        self.flush()

    def _drain(self, *, final: bool) -> None:
        while self._buffer:
            size = sequence_length(self._buffer)
            if size is None:
                if not final:
                    return
                size = len(self._buffer)
            chunk, self._buffer = self._buffer[:size], self._buffer[size:]
            self._key(chunk)

    def _key(self, chunk: str) -> None:
        from prompt_toolkit.key_binding.key_processor import KeyPress
        from prompt_toolkit.keys import Keys

        if _CPR.match(chunk):
            self._emit(KeyPress(Keys.CPRResponse, chunk))
        elif _REPLY.match(chunk) or chunk[:2] in ("\x1b]", "\x1b_", "\x1bP", "\x1b^", "\x1bX"):
            return  # the terminal answering a query, not a key
        else:
            self._emit(KeyPress(chunk if len(chunk) == 1 else Keys.Any, chunk))


def raw_keys(app: Any) -> Callable[[], None]:
    """Give ``app``'s input the raw splitter (terminals only; other inputs keep prompt_toolkit's); returns
    what puts prompt_toolkit's back (the input is shared with the editor)."""
    source = app.input
    if not (hasattr(source, "vt100_parser") and hasattr(source, "_buffer")):
        return lambda: None
    original = source.vt100_parser
    source.vt100_parser = RawKeyParser(lambda press: source._buffer.append(press))

    def restore() -> None:
        source.vt100_parser = original

    return restore


__all__ = ["Handle", "Layer", "LayerTui", "RawKeyParser", "paste", "resolve_position", "resolve_size"]
