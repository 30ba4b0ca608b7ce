"""The editor line: a multi-line prompt_toolkit prompt with history, completion of ``/commands`` and
``@paths``, and pi's keys (Enter sends, Shift+Enter / Ctrl+J / Alt+Enter add a line, Alt+Enter while
the agent works queues a follow-up, Esc interrupts, Ctrl+C twice or Ctrl+D exits).

prompt_toolkit is imported here at module level: this module is only imported once the interactive
mode starts.
"""

from __future__ import annotations

import os
import re
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any, Protocol, cast

from prompt_toolkit import PromptSession
from prompt_toolkit.application.current import get_app
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.output import ColorDepth
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout.margins import Margin
from prompt_toolkit.layout.processors import ConditionalProcessor, Processor, Transformation, TransformationInput
from prompt_toolkit.layout.utils import explode_text_fragments
from prompt_toolkit.styles import Style

from .capabilities import use_escape_timeout
from .keybindings import Keymap, private_chars

_AT_PATH = re.compile(r"(?:^|\s)@([^\s@]*)$")
_COMMAND_ARGUMENT = re.compile(r"/([^\s/]+) (.*)")
MAX_PATH_COMPLETIONS = 30


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
    """``/name`` completes command names, prompt templates and skills (with descriptions); ``@partial``
    completes paths under cwd; both match fuzzily (:func:`pi_core.tui.fuzzy_filter`). Plugins stack
    providers on top (``ctx.ui.add_autocomplete_provider``): ``providers()`` lists their factories."""

    def __init__(self, commands: Callable[[], list[tuple[str, str]]], cwd: Path | Callable[[], Path],
                 arguments: Callable[[str, str], Awaitable[list[tuple[str, str]] | None]] | None = None,
                 providers: Callable[[], list[Callable[[Any], Any]]] | None = None,
                 report: Callable[[str], None] | None = None) -> None:
        from .project_files import ProjectFiles

        self.commands = commands
        self._cwd = cwd if callable(cwd) else (lambda: cwd)  # the session's: it moves with /resume
        self.files = ProjectFiles(lambda: self.cwd)
        self.arguments = arguments  # a command's argument completions: (name, typed) -> [(value, description)]
        self.providers = providers or (lambda: [])
        self.report = report or (lambda message: None)
        self.builtin = BuiltinProvider(self)
        self._chain: tuple[list[Any], Any] = ([], self.builtin)
        self._reported: set[str] = set()

    @property
    def cwd(self) -> Path:
        return Path(self._cwd())

    def provider(self) -> Any:
        """The top of the provider stack (rebuilt when plugins add one)."""
        factories = list(self.providers())
        built, top = self._chain
        if factories != built:
            top = self.builtin
            for factory in factories:
                try:
                    top = factory(top) or top
                except Exception as exc:  # noqa: BLE001 - a plugin's bug must not take the editor down
                    self._problem(f"autocomplete provider failed: {exc}")
            self._chain = (factories, top)
        return top

    def _problem(self, message: str) -> None:
        if message not in self._reported:
            self._reported.add(message)
            self.report(message)

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        provider = self.provider()
        if provider is self.builtin:
            yield from self.builtin.completions(document)
            return
        import inspect

        lines, row, col = _position(document)
        answer = provider.get_suggestions(lines, row, col, _options(complete_event))
        if inspect.isawaitable(answer):  # an async provider is asked through get_completions_async
            getattr(answer, "close", lambda: None)()
            return
        yield from self._to_completions(provider, document, answer)

    async def get_completions_async(self, document: Document,
                                    complete_event: CompleteEvent) -> Any:  # AsyncGenerator[Completion, None]
        provider = self.provider()
        if provider is self.builtin:
            for completion in await self.builtin.completions_async(document):
                yield completion
            return
        import inspect

        lines, row, col = _position(document)
        try:
            answer = provider.get_suggestions(lines, row, col, _options(complete_event))
            if inspect.isawaitable(answer):
                answer = await answer
        except Exception as exc:  # noqa: BLE001 - pi's own completions instead
            self._problem(f"autocomplete provider failed: {exc}")
            answer = self.builtin.get_suggestions(lines, row, col, _options(complete_event))
        for completion in self._to_completions(provider, document, answer):
            yield completion

    def _to_completions(self, provider: Any, document: Document, answer: Any) -> Iterable[Completion]:
        from pi_core.tui import AutocompleteItem

        if answer is None:
            return
        items = answer.get("items", []) if isinstance(answer, dict) else getattr(answer, "items", [])
        prefix = str(answer.get("prefix", "") if isinstance(answer, dict) else getattr(answer, "prefix", ""))
        lines, row, col = _position(document)
        before, after = document.text_before_cursor, document.text_after_cursor
        for raw in items:
            item = AutocompleteItem(**raw) if isinstance(raw, dict) else raw
            label = item.label or item.value
            try:
                applied = provider.apply_completion(list(lines), row, col, item, prefix)
            except Exception as exc:  # noqa: BLE001
                self._problem(f"autocomplete provider failed: {exc}")
                applied = None
            completion = _completion_for(applied, before, after) if applied is not None else None
            if completion is None:  # replace the prefix, as pi's default does
                completion = (item.value, -len(prefix))
            text, start = completion
            yield Completion(text, start_position=start, display=label, display_meta=item.description or "")


class BuiltinProvider:
    """pi's own completions as an :class:`~pi_core.tui.AutocompleteProvider` (what ``current`` is for
    the first plugin provider)."""

    trigger_characters = ["/", "@"]

    def __init__(self, completer: PiCompleter) -> None:
        self.completer = completer

    def completions(self, document: Document) -> Iterable[Completion]:
        """Command names and paths (a command's argument completions need :meth:`completions_async`)."""
        return _as_completions(self._suggest(document.text_before_cursor))

    async def completions_async(self, document: Document) -> list[Completion]:
        return list(_as_completions(await self._suggest_async(document.text_before_cursor)))

    def get_suggestions(self, lines: list[str], cursor_line: int, cursor_col: int, options: Any = None) -> Any:
        """Suggestions for the text before the cursor; after ``/command `` an awaitable (the command's
        completions may be ``async``), as pi's ``getSuggestions`` is a promise."""
        text = "\n".join([*lines[:cursor_line], lines[cursor_line][:cursor_col] if cursor_line < len(lines) else ""])
        if _COMMAND_ARGUMENT.fullmatch(text) and self.completer.arguments is not None:
            return self._suggest_async(text)
        return self._suggest(text)

    def apply_completion(self, lines: list[str], cursor_line: int, cursor_col: int, item: Any,
                         prefix: str) -> Any:
        from pi_core.tui import AppliedCompletion

        lines = list(lines) or [""]
        line = lines[cursor_line]
        start = max(cursor_col - len(prefix), 0)
        lines[cursor_line] = line[:start] + item.value + line[cursor_col:]
        return AppliedCompletion(lines, cursor_line, start + len(item.value))

    def should_trigger_file_completion(self, lines: list[str], cursor_line: int, cursor_col: int) -> bool:
        return True

    async def _suggest_async(self, text: str) -> Any:
        """:meth:`_suggest`, after the command's argument completions (awaited) when ``text`` is ``/name args``."""
        from pi_core.tui import AutocompleteItem, AutocompleteSuggestions

        argument = _COMMAND_ARGUMENT.fullmatch(text)
        complete = self.completer.arguments
        if argument is None or complete is None:
            return self._suggest(text)
        name, typed = argument.group(1), argument.group(2)
        try:
            offered = await complete(name, typed)
        except KeyError:  # no command of that name: "/usr/bin ls" is text
            offered = None
        except Exception as exc:  # noqa: BLE001 - a plugin's bug must not take the editor down
            self.completer._problem(f"/{name}: argument completions failed: {exc}")
            offered = None
        if offered:
            items = [AutocompleteItem(value, value, description or None) for value, description in offered]
            return AutocompleteSuggestions(items, typed)
        return self._suggest(text)

    def _suggest(self, text: str) -> Any:
        """Command names after ``/``, paths after ``@`` (the synchronous part of pi's completion)."""
        from pi_core.tui import AutocompleteItem, AutocompleteSuggestions, fuzzy_filter

        completer = self.completer
        if text.startswith("/") and not any(c.isspace() for c in text):
            found = fuzzy_filter(completer.commands(), text[1:], lambda command: command[0])
            items = [AutocompleteItem(f"/{name}", f"/{name}", description) for name, description in found]
            return AutocompleteSuggestions(items, text) if items else None
        match = _AT_PATH.search(text)
        if match:
            items = list(self._paths(match.group(1)))
            return AutocompleteSuggestions(items, "@" + match.group(1)) if items else None
        return None

    def _paths(self, partial: str) -> Iterable[Any]:
        """The typed folder's entries and, inside the project, everything below it (pi's fd search),
        matched fuzzily on the name; nearer and shorter paths first among equals."""
        from pi_core.tui import AutocompleteItem, fuzzy_filter

        folder, _, prefix = partial.rpartition("/")
        base = Path(os.path.expanduser(folder)) if folder else Path(".")
        inside = not base.is_absolute() and not folder.startswith("~")
        directory = base if base.is_absolute() else self.completer.cwd / base
        key = _name
        if inside and (directory.is_dir() or not folder):  # the listing leaves out what .gitignore does
            scope = f"{folder}/" if folder else ""
            found = [p for p in self.completer.files.entries() if p.startswith(scope) and p != scope]
        elif inside:  # no such folder: the whole path is the query ("sr/pars" finds src/parser.py)
            found, prefix, key = list(self.completer.files.entries()), partial, (lambda p: p.rstrip("/"))
        else:
            found = _children(directory, folder, prefix)
        pool = sorted(dict.fromkeys(found), key=lambda p: (p.rstrip("/").count("/"), len(p), p))
        for path in fuzzy_filter(_plausible(pool, prefix, key), prefix, key)[:MAX_PATH_COMPLETIONS]:
            name = _name(path) + ("/" if path.endswith("/") else "")
            yield AutocompleteItem(f"@{path}", name, path.rstrip("/") if path.rstrip("/") != _name(path) else None)


def _as_completions(suggestions: Any) -> Iterable[Completion]:
    if suggestions is None:
        return
    for item in suggestions.items:
        yield Completion(item.value, start_position=-len(suggestions.prefix), display=item.label or item.value,
                         display_meta=item.description or "")


def _name(path: str) -> str:
    return path.rstrip("/").rpartition("/")[2]


def _children(directory: Path, folder: str, prefix: str) -> list[str]:
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return []
    return [(f"{folder}/" if folder else "") + e.name + ("/" if e.is_dir() else "") for e in entries
            if not e.name.startswith(".") or prefix.startswith(".")]


def _plausible(pool: list[str], query: str, key: Callable[[str], str]) -> list[str]:
    """``pool`` narrowed to what can match before the fuzzy ranking scores it: names holding the query's
    letters in order, and (when those are few) the closest misspellings, scored in C by rapidfuzz."""
    wanted = query.strip().lower()
    if not wanted:
        return pool
    hits = [p for p in pool if _in_order(wanted, key(p).lower())]
    if len(hits) >= MAX_PATH_COMPLETIONS or len(wanted) < 3:
        return hits
    try:
        from rapidfuzz import fuzz, process
    except ImportError:  # fuzzy_filter's own fallback scores the whole pool
        return pool
    matched = set(hits)
    rest = [p for p in pool if p not in matched]
    close = process.extract(wanted, [key(p).lower() for p in rest], scorer=fuzz.WRatio, limit=MAX_PATH_COMPLETIONS,
                            score_cutoff=75)
    return [*hits, *(rest[index] for _, _, index in close)]


def _in_order(query: str, text: str) -> bool:
    position = 0
    for char in query:
        position = text.find(char, position) + 1
        if position == 0:
            return False
    return True


def _position(document: Document) -> tuple[list[str], int, int]:
    lines = document.lines or [""]
    return list(lines), document.cursor_position_row, document.cursor_position_col


def _options(event: CompleteEvent) -> Any:
    from pi_core.tui import AutocompleteOptions

    return AutocompleteOptions(signal=_NotAborted(), force=bool(event.completion_requested))


class _NotAborted:
    aborted = False


def _completion_for(applied: Any, before: str, after: str) -> tuple[str, int] | None:
    """A provider's :class:`~pi_core.tui.AppliedCompletion` as prompt_toolkit's text-and-start (which only
    replaces text before the cursor); ``None`` when it changed the text after the cursor."""
    if isinstance(applied, dict):
        lines, row, col = applied.get("lines", []), applied.get("cursor_line", 0), applied.get("cursor_col", 0)
    else:
        lines, row, col = applied.lines, applied.cursor_line, applied.cursor_col
    text = "\n".join(lines)
    index = sum(len(line) + 1 for line in lines[:row]) + col
    new_before, new_after = text[:index], text[index:]
    if new_after != after:
        return None
    common = len(os.path.commonprefix([before, new_before]))
    return new_before[common:], -(len(before) - common)


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


class DrawnCursor(Processor):
    """pi's own cursor, for when the terminal's is hidden (``showHardwareCursor`` off): the cell under the
    cursor in reverse video, a reversed space past the end of the line."""

    def apply_transformation(self, transformation_input: TransformationInput) -> Transformation:
        ti = transformation_input
        document = ti.document
        if ti.lineno != document.cursor_position_row or not get_app().layout.has_focus(ti.buffer_control):
            return Transformation(ti.fragments)
        column = ti.source_to_display(document.cursor_position_col)
        chars: StyleAndTextTuples = list(explode_text_fragments(ti.fragments))
        if column < len(chars):
            style, text, *handler = chars[column]
            chars[column] = cast(Any, (f"{style} reverse", text, *handler))
        else:
            chars.append(("reverse", " "))
        return Transformation(chars)


class BlankMargin(Margin):
    """Empty columns beside the text (``editorPaddingX``)."""

    def __init__(self, width: Callable[[], int]) -> None:
        self.width = width

    def get_width(self, get_ui_content: Callable[[], Any]) -> int:
        return self.width()

    def create_margin(self, window_render_info: Any, width: int, height: int) -> StyleAndTextTuples:
        return []


class EditorSession(PromptSession[str]):
    """The editor line. While ``compact()`` is true (a plugin's editor draws a border under the text)
    the text does not grow to fill the screen and no room is kept for the completion menu until it
    opens, so the border (and the footer) sit right under the text."""

    compact: Callable[[], bool] = staticmethod(lambda: False)
    menu_rows: Callable[[], int] = staticmethod(lambda: 5)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        import importlib

        module = importlib.import_module("prompt_toolkit.shortcuts.prompt")  # the package's `prompt` is a function
        self._prompt_cache: tuple[Any, Any] | None = None
        original = module._split_multiline_prompt
        module._split_multiline_prompt = split_prompt_once  # this session's layout only
        try:
            super().__init__(*args, **kwargs)
        finally:
            module._split_multiline_prompt = original

    def _get_prompt(self) -> Any:
        """The message (the live region over the ``›`` marker) as fragments, made once per message: prompt_toolkit
        asks for it a dozen times per frame, and the answer being written makes it many rows long."""
        message = self.message() if callable(self.message) else self.message
        cached = self._prompt_cache
        if cached is None or cached[0] is not message:
            from prompt_toolkit.formatted_text import to_formatted_text

            cached = self._prompt_cache = (message, to_formatted_text(message, style="class:prompt"))
        return cached[1]

    def _get_default_buffer_control_height(self) -> Any:
        from prompt_toolkit.layout.dimension import Dimension

        if self.compact() and self.default_buffer.complete_state is None:
            return Dimension()
        self.reserve_space_for_menu = self.menu_rows() + 1  # the menu's rows and its meta line
        return super()._get_default_buffer_control_height()


def split_prompt_once(get_prompt_text: Callable[[], Any]) -> tuple[Callable[[], bool], Callable[[], Any],
                                                                   Callable[[], Any]]:
    """prompt_toolkit's split of a multi-line prompt into the rows above the input and the input row's prefix,
    done once per prompt (the same fragments object) and in linear time: prompt_toolkit's own redoes it for
    each call, inserting at the front of a list per character, which costs a frame tens of milliseconds when
    the live region holds a screenful of an answer."""
    from prompt_toolkit.layout.utils import explode_text_fragments

    made: list[Any] = [None, (False, [], [])]

    def parts() -> tuple[bool, list[Any], list[Any]]:
        fragments = get_prompt_text()
        if made[0] is not fragments:
            chars = explode_text_fragments(fragments)
            cut = next((i for i in range(len(chars) - 1, -1, -1) if chars[i][1] == "\n"), -1)
            made[0] = fragments
            made[1] = (cut >= 0, _merged(chars[:max(cut, 0)]), _merged(chars[cut + 1:]))
        return made[1]  # type: ignore[no-any-return]

    return (lambda: parts()[0]), (lambda: list(parts()[1])), (lambda: list(parts()[2]))


def _merged(chars: Any) -> list[tuple[str, str]]:
    """Per-character fragments joined back into runs of one style (what is drawn is the same; prompt_toolkit
    splits these into lines per frame, per fragment)."""
    runs: list[tuple[str, list[str]]] = []
    for style, char, *_ in chars:
        if runs and runs[-1][0] == style:
            runs[-1][1].append(char)
        else:
            runs.append((style, [char]))
    return [(style, "".join(text)) for style, text in runs]


def build_prompt(keys: Keys, *, message: Callable[[], Any], footer: Callable[[], Any],
                 completer: Completer, history: History, keymap: Keymap | Callable[[], Keymap] | None = None,
                 lexer: Any = None, compact: Callable[[], bool] | None = None,
                 padding: Callable[[], int] = lambda: 0, menu_rows: Callable[[], int] = lambda: 5,
                 hardware_cursor: Callable[[], bool] = lambda: True,
                 truecolor: bool = False) -> PromptSession[str]:
    """The main editor line. ``message`` draws the live region above it, ``footer`` the rows below;
    ``lexer`` styles the text (a plugin's editor), ``compact`` says when to keep no room for the menu.
    pi's display settings, asked at each redraw: ``padding`` blank columns right of the text (``editorPaddingX``;
    the message draws the left ones), ``menu_rows`` completions shown at once (``autocompleteMaxVisible``),
    ``hardware_cursor`` the terminal's cursor, else pi's own drawn one (``showHardwareCursor``); ``truecolor``
    draws the live region's colours in 24 bits, as the scrollback's (else prompt_toolkit's own choice)."""
    drawn = Condition(lambda: not hardware_cursor())
    session: PromptSession[str] = EditorSession(
        message=message, multiline=True, prompt_continuation=lambda width, line, wrap: " " * width,
        bottom_toolbar=footer, completer=completer, complete_while_typing=True, history=history,
        key_bindings=_following(keys, keymap), erase_when_done=True, reserve_space_for_menu=6, style=STYLE,
        include_default_pygments_style=False, enable_suspend=True,
        input_processors=[ConditionalProcessor(DrawnCursor(), drawn)],
    )
    session.color_depth = truecolor_depth(truecolor)
    session.menu_rows = menu_rows  # type: ignore[attr-defined]
    from prompt_toolkit.layout.controls import BufferControl
    from prompt_toolkit.layout.dimension import Dimension
    from prompt_toolkit.layout.menus import CompletionsMenuControl

    for window in session.app.layout.find_all_windows():
        if isinstance(window.content, CompletionsMenuControl):
            window.height = lambda: Dimension(min=1, max=menu_rows())
            continue
        if not (isinstance(window.content, BufferControl) and window.content.buffer is session.default_buffer):
            continue
        window.right_margins = [BlankMargin(padding)]
        window.always_hide_cursor = drawn
        if compact is not None:  # the text does not grow to fill the screen
            session.compact = compact  # type: ignore[attr-defined]
            window.dont_extend_height = Condition(compact)
        if lexer is not None:  # set on the control: PromptSession's own wrapper would cache by lexer
            window.content.lexer = lexer
    use_escape_timeout(session.app)  # PI_TUI_ESC_TIMEOUT
    session.app.min_redraw_interval = 0.04  # a fast stream redraws the live region at most 25 times a second
    _draw_keys_at_once(session.app)
    return session


def truecolor_depth(truecolor: bool) -> ColorDepth | None:
    """The editor's colour depth: 24 bits when the terminal takes them, else prompt_toolkit's own choice."""
    return ColorDepth.TRUE_COLOR if truecolor else None


def _following(keys: Keys, keymap: Keymap | Callable[[], Keymap] | None) -> Any:
    """The editor's keys for the keymap of the moment (``/reload`` replaces it with keybindings.json read again)."""
    from prompt_toolkit.key_binding import DynamicKeyBindings

    current = keymap if callable(keymap) else (lambda: keymap)
    made: dict[str, Any] = {}

    def bindings() -> KeyBindings:
        chosen = current()
        if made.get("for") is not chosen:
            made.update({"for": chosen, "keys": key_bindings(keys, chosen)})
        return made["keys"]  # type: ignore[no-any-return]

    return DynamicKeyBindings(bindings)


def _draw_keys_at_once(app: Any) -> None:
    """Typed keys skip the redraw throttle (``min_redraw_interval``), which is there for the stream: a key is
    drawn at the loop's next turn, also while a throttled redraw of the live region is still waiting."""
    from prompt_toolkit.keys import Keys

    not_typed = {Keys.CPRResponse, Keys.Ignore, Keys.Vt100MouseEvent, Keys.WindowsMouseEvent, Keys.ScrollUp,
                 Keys.ScrollDown}  # the terminal's answers and the mouse: the throttle stays
    processor = app.key_processor
    process = processor.process_keys

    def process_keys() -> None:
        if not any(press.key not in not_typed for press in processor.input_queue):
            process()
            return
        throttle, app.min_redraw_interval = app.min_redraw_interval, None
        waiting = app._invalidated  # the live region's throttled redraw is on its way: too late for a key
        try:
            process()
        finally:
            app.min_redraw_interval = throttle
        if waiting and app.is_running:
            app.loop.call_soon(app._redraw)

    processor.process_keys = process_keys


__all__ = ["PiCompleter", "build_prompt", "history_for", "key_bindings"]
