"""Components that show work in progress (pi-tui's ``Loader`` and ``CancellableLoader``, pi's
``BorderedLoader``): a spinner and a message, redrawn by themselves while the event loop runs."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from .layout import Container, DynamicBorder, Spacer, Text
from .keys import matches_action

Style = Callable[[str], str]
FRAMES = ("⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏")
INTERVAL_MS = 80


class Loader(Text):
    """A spinner and a message (pi's ``Loader``): ``spinner_color_fn`` styles the frame,
    ``message_color_fn`` the message. It advances a frame every ``interval_ms`` and asks ``tui`` to
    redraw, from :meth:`start` (called at once) until :meth:`stop`. ``indicator`` replaces the frames:
    ``{"frames": [...], "interval_ms": 120}`` (``[]``: no spinner), drawn as given."""

    def __init__(self, tui: Any, spinner_color_fn: Style, message_color_fn: Style, message: str = "Loading...",
                 indicator: dict[str, Any] | None = None) -> None:
        super().__init__("", 1, 0)
        self.tui = tui
        self.spinner_color_fn = spinner_color_fn
        self.message_color_fn = message_color_fn
        self.message = message
        self.frames: list[str] = list(FRAMES)
        self.interval_ms = INTERVAL_MS
        self.current_frame = 0
        self._verbatim = False
        self._timer: asyncio.TimerHandle | None = None
        self.set_indicator(indicator)

    def render(self, width: int) -> list[str]:
        return ["", *super().render(width)]

    def start(self) -> None:
        self._update()
        self.stop()
        if len(self.frames) > 1:
            self._schedule()

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def dispose(self) -> None:
        self.stop()

    def set_message(self, message: str) -> None:
        self.message = message
        self._update()

    def set_indicator(self, indicator: dict[str, Any] | None = None) -> None:
        self._verbatim = indicator is not None
        frames: Sequence[str] | None = (indicator or {}).get("frames")
        self.frames = list(FRAMES) if frames is None else [str(f) for f in frames]
        interval = (indicator or {}).get("interval_ms") or (indicator or {}).get("intervalMs")
        self.interval_ms = int(interval) if interval and int(interval) > 0 else INTERVAL_MS
        self.current_frame = 0
        self.start()

    def invalidate(self) -> None:
        super().invalidate()
        self._update()

    def _schedule(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # made outside the event loop (a test): it stays on its first frame
            return
        self._timer = loop.call_later(self.interval_ms / 1000, self._tick)

    def _tick(self) -> None:
        self.current_frame = (self.current_frame + 1) % len(self.frames)
        self._update()
        self._schedule()

    def _update(self) -> None:
        frame = self.frames[self.current_frame] if self.frames else ""
        shown = frame if self._verbatim else self.spinner_color_fn(frame)
        self.set_text(f"{shown} " * bool(shown) + self.message_color_fn(self.message))
        request = getattr(self.tui, "request_render", None)
        if callable(request):
            request()


class CancellableLoader(Loader):
    """A :class:`Loader` that Esc (or Ctrl+C) cancels (pi's ``CancellableLoader``): ``signal`` is
    aborted and ``on_abort()`` is called. Pass ``signal`` to the work it waits for."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        from ..ai.abort import AbortController

        self._controller = AbortController()
        self.on_abort: Callable[[], Any] | None = None
        super().__init__(*args, **kwargs)

    @property
    def signal(self) -> Any:
        return self._controller.signal

    @property
    def aborted(self) -> bool:
        return bool(self._controller.signal.aborted)

    def handle_input(self, data: str) -> None:
        if matches_action(data, "tui.select.cancel"):
            self._controller.abort()
            if self.on_abort is not None:
                self.on_abort()


class BorderedLoader(Container):
    """A loader between two rules, for a ``ctx.ui.custom`` component (pi's ``BorderedLoader``):
    ``BorderedLoader(tui, theme, "Summarizing…")``. Cancellable by default (Esc aborts ``signal`` and
    calls ``on_abort``, and a hint says so); ``cancellable=False`` for work that cannot stop."""

    def __init__(self, tui: Any, theme: Any, message: str, *, cancellable: bool = True) -> None:
        super().__init__()
        from ..ai.abort import AbortController

        self.cancellable = cancellable
        border: Style = lambda text: theme.fg("border", text)  # noqa: E731
        accent: Style = lambda text: theme.fg("accent", text)  # noqa: E731
        muted: Style = lambda text: theme.fg("muted", text)  # noqa: E731
        self.add_child(DynamicBorder(border))
        self.loader: Loader = CancellableLoader(tui, accent, muted, message) if cancellable \
            else Loader(tui, accent, muted, message)
        self._controller = AbortController()
        self.add_child(self.loader)
        if cancellable:
            self.add_child(Spacer(1))
            self.add_child(Text(theme.fg("dim", "esc cancel"), 1, 0))
        self.add_child(Spacer(1))
        self.add_child(DynamicBorder(border))

    @property
    def signal(self) -> Any:
        if isinstance(self.loader, CancellableLoader):
            return self.loader.signal
        return self._controller.signal

    @property
    def on_abort(self) -> Callable[[], Any] | None:
        return self.loader.on_abort if isinstance(self.loader, CancellableLoader) else None

    @on_abort.setter
    def on_abort(self, handler: Callable[[], Any] | None) -> None:
        if isinstance(self.loader, CancellableLoader):
            self.loader.on_abort = handler

    def handle_input(self, data: str) -> None:
        if isinstance(self.loader, CancellableLoader):
            self.loader.handle_input(data)

    def dispose(self) -> None:
        self.loader.dispose()


__all__ = ["BorderedLoader", "CancellableLoader", "Loader"]
