"""``ctx.ui`` in the terminal: plugins' dialogs become inline prompts, notices one-line messages in the
scrollback, statuses part of the footer.

Dialogs need the keyboard, which the editor line normally has; :class:`InteractiveUI` asks its
:class:`DialogHost` (the app) for exclusive use of the terminal, so a plugin may open a dialog at any
time — from a command, or from a hook in the middle of a run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from pi_core import UI
from pi_core.ai.abort import AbortSignal, unless_aborted

if TYPE_CHECKING:
    from pi_core import SessionManager

T = TypeVar("T")


class Dialogs(Protocol):
    """How dialogs are drawn: with prompt_toolkit on a terminal, line by line on a pipe."""

    async def select(self, title: str, options: Sequence[str], *,
                     refresh: Callable[[], Awaitable[tuple[Sequence[str], str] | None]] | None = None) -> int | None:
        ...
    async def input(self, title: str, placeholder: str, prefill: str = "", *, secret: bool = False) -> str | None:
        """One line; ``secret``: not shown as typed (where the dialog can hide it)."""
    async def tree(self, state: Any, keymap: Any, title: str) -> tuple[str, str] | None: ...
    async def sessions(self, state: Any, title: str) -> tuple[str, Any] | None: ...
    async def editor(self, title: str, prefill: str) -> str | None: ...


class DialogHost(Protocol):
    def exclusive(self, run: Callable[[], Awaitable[T]]) -> Awaitable[T]:
        """Run ``run`` while nothing else reads the keyboard."""

    def notify(self, message: str, level: str) -> None: ...
    def set_status(self, key: str, text: str | None) -> None: ...
    def set_title(self, title: str) -> None: ...
    def set_widget(self, key: str, lines: list[str] | None, placement: str) -> None: ...
    def editor_text(self) -> str: ...
    def set_editor_text(self, text: str, *, paste: bool = False) -> None: ...
    def show_block(self, title: str, lines: list[str]) -> None: ...


class InteractiveUI(UI):
    """The interactive mode's :class:`pi_core.UI`. ``has_ui`` is true: dialogs really ask the user."""

    has_ui = True

    def __init__(self, host: DialogHost, dialogs: Dialogs) -> None:
        self.host = host
        self.dialogs = dialogs
        self.footer_factory: Callable[..., Any] | None = None
        self.header_factory: Callable[..., Any] | None = None
        self.editor_factory: Callable[..., Any] | None = None
        self.autocomplete_factories: list[Callable[[Any], Any]] = []
        self.input_listeners: list[Callable[[str], Any]] = []
        self.working: dict[str, Any] = {}  # working row, spinner, thinking label, tools expanded

    async def notify(self, message: str, level: str = "info") -> None:  # type: ignore[override]
        self.host.notify(message, level)

    async def select(self, title: str, options: Sequence[str], *, timeout: float | None = None,
                     signal: AbortSignal | None = None) -> str | None:
        index = await self.select_index(title, options, timeout=timeout, signal=signal)
        return None if index is None else list(options)[index]

    async def select_index(self, title: str, options: Sequence[str], *, timeout: float | None = None,
                           signal: AbortSignal | None = None) -> int | None:
        """Like :meth:`select`, but the position of the choice (options may repeat)."""
        if not options:
            return None
        index = await self._ask(lambda: self.dialogs.select(title, list(options)), timeout, signal)
        self._echo(title, None if index is None else list(options)[index])
        return index

    async def confirm(self, title: str, message: str = "", *, timeout: float | None = None,
                      signal: AbortSignal | None = None) -> bool:
        heading = f"{title} — {message}" if message else title
        index = await self._ask(lambda: self.dialogs.select(heading, ["Yes", "No"]), timeout, signal)
        self._echo(heading, "yes" if index == 0 else "no")
        return index == 0

    async def input(self, title: str, placeholder: str = "", *, timeout: float | None = None,
                    signal: AbortSignal | None = None) -> str | None:
        answer = await self._ask(lambda: self.dialogs.input(title, placeholder), timeout, signal)
        self._echo(title, answer)
        return answer

    async def secret(self, title: str, *, timeout: float | None = None,
                     signal: AbortSignal | None = None) -> str | None:
        answer = await self._ask(lambda: self.dialogs.input(title, "", secret=True), timeout, signal)
        self._echo(title, None if answer is None else "(hidden)")
        return answer

    async def editor(self, title: str, prefill: str = "") -> str | None:
        answer = await self._ask(lambda: self.dialogs.editor(title, prefill), None)
        self._echo(title, None if answer is None else f"({answer.count(chr(10)) + 1} lines)")
        return answer

    async def navigate_tree_ui(self, state: Any, keymap: Any = None, *,
                               title: str = "Session tree") -> tuple[str, str] | None:
        """The tree navigator (:mod:`.tree_view`): ``("select", entry_id)``, ``("label", entry_id)`` (the
        user asked to label it) or ``None``. Headless UIs answer ``None``."""
        return await self._ask(lambda: self.dialogs.tree(state, keymap, title), None)

    async def pick_session_ui(self, state: Any, *, title: str = "Resume session") -> tuple[str, Any] | None:
        """The session picker (:mod:`.session_picker`): ``("resume" | "rename" | "delete", info)`` or
        ``None``. Headless UIs answer ``None``."""
        return await self._ask(lambda: self.dialogs.sessions(state, title), None)

    async def input_prefilled(self, title: str, prefill: str) -> str | None:
        answer = await self._ask(lambda: self.dialogs.input(title, "", prefill), None)
        self._echo(title, answer)
        return answer

    async def show(self, title: str, lines: Sequence[str]) -> None:
        self.host.show_block(title, [str(line) for line in lines])

    async def show_earlier_messages(self, count: int | None = None) -> int | None:
        return int(self.host.renderer.history(count))  # type: ignore[attr-defined]

    def key_help(self) -> list[tuple[str, str]]:
        from .commands import KEYS
        from .keybindings import display

        ctx = getattr(getattr(self.host, "session", None), "ctx", None)
        plugin_keys = [(display(s.key), s.description or "(a plugin's shortcut)")
                       for s in (ctx.get_shortcuts() if ctx is not None else [])]
        return [*KEYS, *plugin_keys]

    def get_keybindings(self) -> list[Any]:
        from pi_core import KeyBinding

        from .keybindings import ACTIONS, Keymap

        keymap = getattr(self.host, "keymap", None) or Keymap.defaults()
        return [KeyBinding(a.id, tuple(keymap.keys(a.id)), a.description, a.group,
                           keymap.describe(a.id) if keymap.keys(a.id) else "")
                for a in ACTIONS]

    def rendered_lines(self) -> list[str]:
        rows = getattr(self.host, "rendered_rows", None)
        return list(rows()) if callable(rows) else []

    async def copy_to_clipboard(self, text: str) -> str | None:
        from .commands import copy_to_clipboard

        return await asyncio.to_thread(copy_to_clipboard, text)

    # -- the pickers commands ask for (pi_core.UI answers them with None) ---------------------------

    async def select_model(self, models: Sequence[Any], current: Any = None, *,
                           refresh: Callable[[], Awaitable[tuple[Sequence[Any], str] | None]] | None = None) -> Any:
        def is_current(m: Any) -> bool:
            return current is not None and (m.provider, m.id) == (current.provider, current.id)

        def labels(listed: Sequence[Any]) -> list[str]:
            return [f"{m.provider}/{m.id}" + (f"  {m.name}" if m.name and m.name != m.id else "")
                    + ("  (current)" if is_current(m) else "") for m in listed]

        shown = list(models)
        if refresh is None:
            index = await self.select_index("Model", labels(shown))
            return None if index is None else shown[index]

        async def refreshed() -> tuple[list[str], str] | None:
            nonlocal shown
            result = await refresh()
            if result is None:
                return None
            shown = list(result[0])
            return labels(shown), result[1]

        index = await self._ask(lambda: self.dialogs.select("Model", labels(shown), refresh=refreshed), None)
        self._echo("Model", None if index is None else labels(shown)[index])
        return None if index is None else shown[index]

    async def select_fork_point(self, points: Sequence[Any], *, title: str) -> Any:
        index = await self.select_index(title, [" ".join(p.text.split())[:70] or "(empty)" for p in points])
        return None if index is None else list(points)[index]

    async def select_session(self, load: Callable[[bool], Sequence[Any]], *, exclude: Any = None,
                             title: str = "Resume session") -> Any:
        """The session picker (:mod:`.session_picker`); renaming and deleting happen inside it."""
        from pi_core import SessionManager

        from .session_picker import PickerState, move_to_trash

        state = PickerState(lambda everywhere: list(load(everywhere)), exclude=str(exclude) if exclude else None)
        state.keymap = getattr(self.host, "keymap", None)
        starting = getattr(self.host, "starting", False)
        while True:
            picked = await self.pick_session_ui(state, title=title)
            if picked is None:
                if starting:  # Esc in `pi -r` leaves, as pi does
                    self.host.request_exit()  # type: ignore[attr-defined]
                return None
            action, info = picked
            if action == "resume":
                return info
            if action == "rename":
                name = await self.input_prefilled("New name for the session", info.name or "")
                if name and name.strip():
                    other = SessionManager.open(info.path)
                    try:
                        other.append_session_info(name.strip())
                    finally:
                        other.close()
                    self.host.notify(f"Renamed to {name.strip()}", "info")
            elif action == "delete":
                what = info.name or " ".join(info.first_message.split())[:60]
                if await self.confirm("Delete this session?", f"{what} (moved to the trash)"):
                    self.host.notify(f"Moved to the trash: {move_to_trash(Path(info.path))}", "info")
            state.refresh(reload=True)

    async def select_tree_entry(self, session: SessionManager, *, title: str = "Session tree") -> str | None:
        """The tree navigator (:mod:`.tree_view`); labels are edited inside it."""
        from .tree_view import TreeState

        settings = getattr(getattr(self.host, "session", None), "settings", None)
        mode = settings.get("treeFilterMode", None) if settings is not None and hasattr(settings, "get") else None
        state = TreeState(session.get_tree(), session.get_leaf_id(), mode if isinstance(mode, str) else "default")
        if not state.rows:
            return None
        while True:
            picked = await self.navigate_tree_ui(state, getattr(self.host, "keymap", None), title=title)
            if picked is None:
                return None
            action, entry_id = picked
            if action != "label":
                return entry_id
            label = await self.input_prefilled("Label (empty removes it)", session.get_label(entry_id) or "")
            if label is not None:
                session.append_label_change(entry_id, label.strip() or None)
                state.roots = session.get_tree()
                state.rebuild(select=entry_id)

    async def set_status(self, key: str, text: str | None) -> None:
        self.host.set_status(key, text)

    async def set_title(self, title: str) -> None:
        self.host.set_title(title)

    async def set_widget(self, key: str, lines: Sequence[str] | Callable[..., Any] | None, *,
                         placement: str = "aboveEditor") -> None:
        """Lines (or a component factory ``(tui, theme)``) shown above the editor (``aboveEditor``) or
        under it with the footer (``belowEditor``); ``None`` removes the widget."""
        value: Any = lines if lines is None or callable(lines) else [str(line) for line in lines]
        self.host.set_widget(key, value, placement)

    # -- components (pi_core.tui) -----------------------------------------------------------------

    async def custom(self, factory: Callable[..., Any], *, overlay: bool = False,
                     overlay_options: dict[str, Any] | Callable[[], dict[str, Any]] | None = None,
                     on_handle: Callable[[Any], Any] | None = None) -> Any:
        layer = getattr(self.host, "layer", None)
        if layer is None or not getattr(self.host, "tty", False):  # nothing to draw on: its "cancel" value
            return None
        return await layer.custom(factory, overlay=overlay, options=overlay_options, on_handle=on_handle)

    async def set_footer(self, factory: Callable[..., Any] | None) -> None:
        self.footer_factory = factory
        self._changed("footer")

    async def set_header(self, factory: Callable[..., Any] | None) -> None:
        self.header_factory = factory
        self._changed("header")

    def on_terminal_input(self, handler: Callable[[str], Any]) -> Callable[[], None]:
        self.input_listeners.append(handler)

        def remove() -> None:
            if handler in self.input_listeners:
                self.input_listeners.remove(handler)

        return remove

    async def add_autocomplete_provider(self, factory: Callable[[Any], Any]) -> None:
        self.autocomplete_factories.append(factory)

    async def set_editor_component(self, factory: Callable[..., Any] | None) -> None:
        self.editor_factory = factory
        self._changed("editor")

    def get_editor_component(self) -> Callable[..., Any] | None:
        return self.editor_factory

    async def set_working_message(self, message: str | None = None) -> None:
        self.working["message"] = message
        self._changed("working")

    async def set_working_visible(self, visible: bool) -> None:
        self.working["visible"] = bool(visible)
        self._changed("working")

    async def set_working_indicator(self, frames: Sequence[str] | None = None, *,
                                    interval_ms: int | None = None) -> None:
        self.working["frames"] = None if frames is None else [str(f) for f in frames]
        self.working["interval_ms"] = interval_ms
        self._changed("working")

    async def set_hidden_thinking_label(self, label: str | None = None) -> None:
        self.working["thinking_label"] = label
        self._changed("working")

    def get_tools_expanded(self) -> bool:
        renderer = getattr(self.host, "renderer", None)
        return bool(getattr(renderer, "expand_tools", self.working.get("tools_expanded", False)))

    async def set_tools_expanded(self, expanded: bool) -> None:
        self.working["tools_expanded"] = bool(expanded)
        self._changed("tools")

    def get_thinking_hidden(self) -> bool:
        return bool(getattr(getattr(self.host, "renderer", None), "hide_thinking", False))

    async def set_thinking_hidden(self, hidden: bool) -> None:
        renderer = getattr(self.host, "renderer", None)
        if renderer is not None:
            renderer.hide_thinking = bool(hidden)
            self._changed("thinking")

    @property
    def theme(self) -> Any:
        palette = getattr(self.host, "palette", None) or getattr(self.dialogs, "palette", None)
        return getattr(palette, "theme", None)

    def get_all_themes(self) -> list[dict[str, Any]]:
        catalog = getattr(self.host, "themes", None)
        if catalog is None:
            return []
        return [{"name": name, "path": str(catalog.files[name]) if name in catalog.files else None}
                for name in catalog.names()]

    def get_theme(self, name: str) -> Any:
        catalog = getattr(self.host, "themes", None)
        try:
            return None if catalog is None else catalog.get(name, colour=bool(getattr(self.theme, "colour", True)))
        except ValueError:
            return None

    async def set_theme(self, theme: Any) -> dict[str, Any]:
        switch = getattr(self.host, "switch_theme", None)
        if switch is None:
            return {"success": False, "error": "the terminal is not up yet"}
        error = switch(theme)
        return {"success": True} if error is None else {"success": False, "error": error}

    def _changed(self, what: str) -> None:
        refresh = getattr(self.host, "components_changed", None)
        if refresh is not None:
            refresh(what)

    async def set_editor_text(self, text: str) -> None:
        self.host.set_editor_text(text)

    async def paste_to_editor(self, text: str) -> None:
        self.host.set_editor_text(text, paste=True)

    def get_editor_text(self) -> str:
        return self.host.editor_text()

    async def _ask(self, run: Callable[[], Awaitable[T]], timeout: float | None,
                   signal: AbortSignal | None = None) -> T | None:
        async def bounded() -> T | None:
            if signal is not None and signal.aborted:
                return None
            try:
                return await unless_aborted(run() if timeout is None else asyncio.wait_for(run(), timeout), signal)
            except asyncio.TimeoutError:
                return None
        return await self.host.exclusive(bounded)

    def _echo(self, title: str, answer: Any) -> None:
        shown = "(cancelled)" if answer is None else str(answer).split("\n")[0]
        self.host.notify(f"? {title}: {shown}", "info")


__all__ = ["DialogHost", "Dialogs", "InteractiveUI"]
