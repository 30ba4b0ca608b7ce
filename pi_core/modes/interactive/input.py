"""The editor line: a multi-line prompt_toolkit prompt with history, completion of ``/commands`` and
``@paths``, and pi's keys (Enter sends, Shift+Enter / Ctrl+J / Alt+Enter add a line, Alt+Enter while
the agent works queues a follow-up, Esc interrupts, Ctrl+C twice or Ctrl+D exits).

prompt_toolkit is imported here at module level: this module is only imported once the interactive
mode starts.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.styles import Style

from .keybindings import Keymap, private_chars

_AT_PATH = re.compile(r"(?:^|\s)@([^\s@]*)$")
_COMMAND_ARGUMENT = re.compile(r"/([^\s/]+) (.*)")
MAX_PATH_COMPLETIONS = 60


class Keys(Protocol):
    """What the key bindings ask of the app."""

    def is_working(self) -> bool: ...
    def set_submit_kind(self, kind: str) -> None: ...
    def interrupt(self) -> None: ...
    def ctrl_c(self, buffer: Any) -> None: ...
    def ctrl_d(self) -> None: ...
    def key_action(self, action: str, event: KeyPressEvent) -> None:
        """Run one of the application actions of :mod:`.keybindings` (``app.model.select``...)."""


class PiCompleter(Completer):
    """``/name`` completes command names (with descriptions); ``@partial`` completes paths under cwd."""

    def __init__(self, commands: Callable[[], list[tuple[str, str]]], cwd: Path,
                 arguments: Callable[[str, str], list[tuple[str, str]]] | None = None) -> None:
        self.commands = commands
        self.cwd = cwd
        self.arguments = arguments  # a command's own argument completions: (name, typed) -> (value, description)

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        text = document.text_before_cursor
        if text.startswith("/") and not any(c.isspace() for c in text):
            prefix = text[1:]
            for name, description in self.commands():
                if name.startswith(prefix):
                    yield Completion(f"/{name}", start_position=-len(text), display=f"/{name}",
                                     display_meta=description)
            return
        argument = _COMMAND_ARGUMENT.fullmatch(text)
        offered = self.arguments(argument.group(1), argument.group(2)) if argument and self.arguments else []
        if argument and offered:
            typed = argument.group(2)
            for value, description in offered:
                yield Completion(value, start_position=-len(typed), display=value, display_meta=description)
            return
        match = _AT_PATH.search(text)
        if match:
            yield from self._paths(match.group(1))

    def _paths(self, partial: str) -> Iterable[Completion]:
        folder, _, prefix = partial.rpartition("/")
        base = Path(os.path.expanduser(folder)) if folder else Path(".")
        directory = base if base.is_absolute() else self.cwd / base
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            return
        shown = 0
        for entry in entries:
            if not entry.name.startswith(prefix) or (entry.name.startswith(".") and not prefix.startswith(".")):
                continue
            is_dir = entry.is_dir()
            name = entry.name + ("/" if is_dir else "")
            full = f"{folder}/{name}" if folder else name
            yield Completion(f"@{full}", start_position=-len(partial) - 1, display=name)
            shown += 1
            if shown >= MAX_PATH_COMPLETIONS:
                return


def history_for(agent_dir: Path) -> History:
    """Prompt history kept across sessions in ``<agent dir>/interactive-history`` (in memory if that
    cannot be written)."""
    path = agent_dir / "interactive-history"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(exist_ok=True)
    except OSError:
        return InMemoryHistory()
    return FileHistory(str(path))


APP_ACTIONS = ("app.model.select", "app.model.cycleForward", "app.model.cycleBackward", "app.thinking.cycle",
               "app.thinking.toggle", "app.tools.expand", "app.message.copy", "app.message.dequeue",
               "app.editor.external", "app.clipboard.pasteImage", "app.suspend", "app.session.new",
               "app.session.tree", "app.session.fork", "app.session.resume")
"""Actions the app carries out itself (:meth:`Keys.key_action`)."""


def key_bindings(keys: Keys, keymap: Keymap | None = None) -> KeyBindings:
    """The editor's keys, from ``keymap`` (pi's defaults plus ``keybindings.json``)."""
    keymap = keymap or Keymap.defaults()
    bindings = KeyBindings()
    working = Condition(keys.is_working)

    def bind(action: str, handler: Callable[[KeyPressEvent], None], **options: Any) -> None:
        for sequence in keymap.sequences(action):
            bindings.add(*sequence, **options)(handler)

    def submit(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        state = buffer.complete_state
        if state is not None and state.current_completion is not None:
            buffer.apply_completion(state.current_completion)
            return
        keys.set_submit_kind("enter")
        buffer.validate_and_handle()

    def follow_up(event: KeyPressEvent) -> None:
        if keys.is_working():
            keys.set_submit_kind("followUp")
            event.current_buffer.validate_and_handle()
        else:
            event.current_buffer.insert_text("\n")

    def newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    def escape(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.complete_state is not None:
            buffer.cancel_completion()
        elif keys.is_working():
            keys.interrupt()
        else:
            keys.key_action("app.interrupt", event)

    def ctrl_d(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.text:
            buffer.delete()
        else:
            keys.ctrl_d()

    bind("tui.input.submit", submit)
    bind("app.message.followUp", follow_up)
    bind("tui.input.newLine", newline)
    bind("app.interrupt", escape, eager=False)
    bind("app.clear", lambda event: keys.ctrl_c(event.current_buffer))
    bind("app.exit", ctrl_d)
    bind("tui.editor.historyPrevious", lambda event: event.current_buffer.history_backward())
    bind("tui.editor.historyNext", lambda event: event.current_buffer.history_forward())
    for action in APP_ACTIONS:  # eager: Ctrl+X must not wait for prompt_toolkit's Ctrl+X chords
        bind(action, lambda event, action=action: keys.key_action(action, event), eager=True)

    bound = {sequence for action in keymap.bindings for sequence in keymap.sequences(action)}
    for char in private_chars():  # an extended key no action uses is not typed into the editor
        if (char,) not in bound:
            bindings.add(char)(lambda event: None)

    return bindings


STYLE = Style.from_dict({
    "bottom-toolbar": "noreverse",
    "bottom-toolbar.text": "",
    "completion-menu": "bg:#303030 #d0d0d0",
    "completion-menu.completion.current": "bg:#005f87 #ffffff",
    "completion-menu.meta.completion": "bg:#262626 #a0a0a0",
    "completion-menu.meta.completion.current": "bg:#005f87 #ffffff",
    "placeholder": "#808080",
})


class EditorSession(PromptSession[str]):
    """The editor line. While ``compact()`` is true (a plugin's editor draws a border under the text)
    the text does not grow to fill the screen and no room is kept for the completion menu until it
    opens, so the border (and the footer) sit right under the text."""

    compact: Callable[[], bool] = staticmethod(lambda: False)

    def _get_default_buffer_control_height(self) -> Any:
        from prompt_toolkit.layout.dimension import Dimension

        if self.compact() and self.default_buffer.complete_state is None:
            return Dimension()
        return super()._get_default_buffer_control_height()


def build_prompt(keys: Keys, *, message: Callable[[], Any], footer: Callable[[], Any],
                 completer: Completer, history: History, keymap: Keymap | None = None,
                 lexer: Any = None, compact: Callable[[], bool] | None = None) -> PromptSession[str]:
    """The main editor line. ``message`` draws the live region above it, ``footer`` the rows below;
    ``lexer`` styles the text (a plugin's editor), ``compact`` says when to keep no room for the menu."""
    session: PromptSession[str] = EditorSession(
        message=message, multiline=True, prompt_continuation=lambda width, line, wrap: " " * width,
        bottom_toolbar=footer, completer=completer, complete_while_typing=True, history=history,
        key_bindings=key_bindings(keys, keymap), erase_when_done=True, reserve_space_for_menu=6, style=STYLE,
        include_default_pygments_style=False, enable_suspend=True,
    )
    from prompt_toolkit.layout.controls import BufferControl

    for window in session.app.layout.find_all_windows():
        if not (isinstance(window.content, BufferControl) and window.content.buffer is session.default_buffer):
            continue
        if compact is not None:  # the text does not grow to fill the screen
            session.compact = compact  # type: ignore[attr-defined]
            window.dont_extend_height = Condition(compact)
        if lexer is not None:  # set on the control: PromptSession's own wrapper would cache by lexer
            window.content.lexer = lexer
    session.app.ttimeoutlen = 0.05  # Esc is answered at once (Alt+key sequences arrive in one read)
    session.app.timeoutlen = 0.1  # ...and so is a lone Esc, which also starts Alt+key bindings
    session.app.min_redraw_interval = 0.04  # a fast stream redraws the live region at most 25 times a second
    return session


__all__ = ["PiCompleter", "build_prompt", "history_for", "key_bindings"]
