"""Turning session events into terminal output.

Two kinds of output, as users of pi asked for (no wiped scrollback, no flicker):

* **scrollback rows** — finished lines (a user prompt, a finished row of the answer, a tool call
  with its result). Each is handed to :meth:`Output.scroll` exactly once and never redrawn.
* **the live region** — what is still changing: the row of the answer being typed, running tools,
  the "working" spinner, queued messages. :meth:`Renderer.live_rows` describes it; the terminal
  layer redraws only that.

The cost per streamed token is a slice of the new characters plus a width check of the current
row (at most one screen row long): no re-rendering of the message so far.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from . import blocks
from .markdown import MarkdownRenderer, MarkdownStream
from .style import Palette, clip, display_width, wrap


class Output(Protocol):
    def scroll(self, rows: list[str]) -> None:
        """Print finished rows into the scrollback (once)."""

    def live_changed(self) -> None:
        """The live region changed; redraw it when convenient."""


REPLAY_MESSAGES = 30
"""Messages of a resumed session printed at once (the rest on request: ``/history``)."""
LIVE_TEXT_ROWS = 10
DEFER_CHARS = 6_000
"""A text block longer than this is laid out in a worker thread when it ends (the final layout of a long
paragraph takes a good part of a second), so keys typed meanwhile still echo at once; what is printed after it
waits for it, and the scrollback keeps its order."""
"""The most rows of the block being written that the live region shows (the whole block is printed
once it is complete). Redrawing the live region is the streaming's main cost, so it stays small."""


@dataclass
class Stats:
    """Usage figures the footer shows, from the assistant messages seen."""

    context_tokens: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0
    context_known: bool = True
    """False after a compaction until the next answer reports its usage (the footer shows ``?``)."""

    def add(self, message: Any) -> None:
        usage = getattr(message, "usage", None)
        if usage is None:
            return
        tokens = usage.input + usage.output + usage.cache_read + usage.cache_write
        if tokens:  # an aborted or failed reply without usage keeps the last known context size
            self.context_tokens = usage.total_tokens or tokens
            self.context_known = True
        self.input_tokens += usage.input
        self.output_tokens += usage.output
        self.cache_read += usage.cache_read
        self.cache_write += usage.cache_write
        self.cost += float(usage.cost.total or 0)

    @classmethod
    def of(cls, messages: Iterable[Any]) -> Stats:
        """The figures of a conversation so far (a resumed session); context from its last answer,
        unknown when a compaction came after it."""
        stats = cls()
        for message in messages:
            role = getattr(message, "role", None)
            if role == "assistant" and getattr(message, "stop_reason", None) not in ("error", "aborted"):
                stats.add(message)
            elif role == "assistant":
                usage = getattr(message, "usage", None)
                if usage is not None:
                    stats.cost += float(usage.cost.total or 0)
            elif role == "compactionSummary":
                stats.context_known = False
        return stats


@dataclass
class _RunningTool:
    name: str
    args: dict[str, Any]
    started: float = field(default_factory=time.monotonic)
    last_line: str = ""
    call_id: str = ""
    partial: Any = None  # the last ``tool_execution_update`` result
    state: dict[str, Any] = field(default_factory=dict)  # renderers' shared state (ToolRenderContext.state)
    last: dict[str, Any] = field(default_factory=dict)  # what each renderer drew last (last_component)


class _TextStream:
    """One streamed thinking block, cut into finished rows as it arrives (dimmed, wrapped)."""

    def __init__(self, kind: str, palette: Palette, width: Callable[[], int | None]) -> None:
        self.kind = kind
        self.palette = palette
        self.width = width  # asked per row: rows cut after a resize follow it
        self.buf = ""
        self.first = True  # ``buf`` starts a logical line
        self.started = False

    def feed(self, text: str) -> list[str]:
        if not self.started:
            text = text.lstrip("\n")
            if not text:
                return []
            self.started = True
        out: list[str] = []
        while True:
            newline = text.find("\n")
            if newline < 0:
                self._append(text, out)
                return out
            self._append(text[:newline], out)
            out.append(self._row(self.buf))
            self.buf, self.first = "", True
            text = text[newline + 1:]

    def close(self) -> list[str]:
        return [self._row(self.buf)] if self.buf else []

    def live(self, width: int | None, limit: int | None = None) -> list[str]:
        return [self._row(self.buf)] if self.buf else []

    def _append(self, chunk: str, out: list[str]) -> None:
        if not self.buf and not self.first:
            chunk = chunk.lstrip(" ")  # a wrapped row does not start with the spaces of the break
        self.buf += chunk
        width = self.width()
        if width and len(self.buf) > width // 2 and display_width(self.buf) > width:
            rows = wrap(self.buf, width)
            for row in rows[:-1]:
                out.append(self._row(row))
                self.first = False
            self.buf = rows[-1]

    def _row(self, text: str) -> str:
        return self.palette(text, "thinkingText", "italic")


class _MarkdownText:
    """One streamed text block: markdown, printed a finished block at a time (see :mod:`.markdown`)."""

    kind = "text"

    def __init__(self, palette: Palette, width: Callable[[], int | None], *, hyperlinks: bool = True,
                 code_indent: str = "  ") -> None:
        self.width = width  # asked when blocks are laid out: a block finished after a resize takes the new width
        self.stream = MarkdownStream(MarkdownRenderer(palette, hyperlinks=hyperlinks, code_indent=code_indent))
        self.started = False

    def feed(self, text: str) -> list[str]:
        rows = self.stream.feed(text, self.width())
        self.started = self.started or bool(text.strip())
        return rows

    def close(self, width: int | None = None) -> list[str]:
        return self.stream.close(self.width() if width is None else width)

    def size(self) -> int:
        """Characters not laid out yet (what :meth:`close` has to lay out)."""
        return self.stream.pending_size

    def live(self, width: int | None, limit: int | None = None) -> list[str]:
        return self.stream.live(width, limit)


class _Progress:
    """How far the renderer has got through the assistant message being streamed."""

    def __init__(self) -> None:
        self.index = 0
        self.consumed = 0


class Renderer:
    """Consumes session events (``handle``) and writes to an :class:`Output`.

    :param width: current terminal width in columns, or ``None`` for no wrapping (a pipe).
    """

    def __init__(self, out: Output, palette: Palette, width: Callable[[], int | None]) -> None:
        self.out = out
        self.palette = palette
        self.pad = 0
        """pi's ``outputPad``: blank columns left and right of every transcript row (0 or 1)."""
        self.hyperlinks = True
        """Links in answers as OSC 8 hyperlinks; without, as ``text (url)`` (see :mod:`.capabilities`)."""
        self.code_indent = "  "
        """pi's ``markdown.codeBlockIndent``: what code block lines start with."""
        self.working_message: str | None = None  # what plugins set through ctx.ui
        self.working_visible = True
        self.working_frames: list[str] | None = None
        self.working_interval_ms = 100
        self.hidden_thinking_label: str | None = None
        self.lookup_message: Callable[[str], Any] = lambda custom_type: None  # plugins' renderers
        self.lookup_entry: Callable[[str], Any] = lambda custom_type: None  # plugins' entry renderers
        self.lookup_tool: Callable[[str], Any] = lambda name: None  # a tool's renderers (or the tool)
        self.cwd: Callable[[], str] = lambda: ""
        self._failed_renderers: set[int] = set()
        self._columns = width
        self.stats = Stats()
        self.working = False
        self.working_since = 0.0
        self.steering: list[str] = []
        self.follow_ups: list[str] = []
        self.last_answer = ""
        self.running: dict[str, _RunningTool] = {}
        self._stream: _TextStream | _MarkdownText | None = None
        self._progress: _Progress | None = None
        self._pending_calls: list[str] = []
        self._last_row: str | None = None
        self._last_kind = ""
        self.defer_layout = False
        """Lay long blocks out off the event loop (:data:`DEFER_CHARS`); the terminal sets it."""
        self._held: list[tuple[list[str], str]] | None = None  # printed while a block is being laid out
        self._laying_out: Any = None  # that layout (a future), and the rows shown for the block meanwhile
        self._laying_out_rows: list[str] = []
        self.hide_thinking = False
        """``hideThinkingBlock`` / Ctrl+T: thinking shows as one "Thinking…" row instead of its text."""
        self.expand_tools = False
        """Ctrl+O: tool results are printed whole instead of a few lines."""
        self._hidden_thinking: tuple[int, int] | None = None
        self.hidden_history: list[Any] = []
        self._replaying = False
        self._recent_tools: list[tuple[str, dict[str, Any], Any, bool, float | None, _RunningTool]] = []

    # -- scrollback helpers --------------------------------------------------------------------

    def width(self) -> int | None:
        """The columns rows are laid out in: the terminal's, less the padding on both sides."""
        columns = self._columns()
        return columns if columns is None or not self.pad else max(columns - 2 * self.pad, 1)

    def _padded(self, rows: list[str]) -> list[str]:
        if not self.pad:
            return rows
        margin = " " * self.pad
        return [margin + row if row else row for row in rows]

    def scroll(self, rows: list[str], kind: str = "text") -> None:
        if rows:
            self._last_row = rows[-1]
            self._last_kind = kind
            if self._held is not None:  # after the block being laid out
                self._held.append((rows, kind))
            else:
                self.out.scroll(self._padded(rows))

    def gap(self) -> None:
        """A blank row between blocks (never two, none at the very top)."""
        if self._last_row not in (None, ""):
            self.scroll([""])

    def notice(self, text: str, level: str = "info") -> None:
        style = {"info": ("gray",), "warning": ("yellow",), "error": ("red",)}.get(level, ())
        self._end_stream()
        self.scroll([self.palette(line, *style) for line in text.split("\n")])

    def print_block(self, rows: Iterable[str]) -> None:
        """Rows from a command (``/session``, ``/help``...), set off by blank rows."""
        self._end_stream()
        self.gap()
        self.scroll(list(rows))
        self.gap()

    # -- events --------------------------------------------------------------------------------

    def handle(self, event: Any) -> None:
        handler = getattr(self, f"_on_{getattr(event, 'type', '')}", None)
        if handler is not None:
            handler(event)

    def _on_agent_start(self, event: Any) -> None:
        self.working = True
        self.working_since = time.monotonic()
        self.out.live_changed()

    def _on_agent_settled(self, event: Any) -> None:
        self._end_stream()
        self.working = False
        self.running.clear()
        self._pending_calls = []
        self.out.live_changed()

    def _on_message_start(self, event: Any) -> None:
        message = event.message
        role = getattr(message, "role", None)
        if role == "assistant":
            self._progress = _Progress()
        elif role == "user":
            self.user_block(_content_text(message.content))
        elif role == "custom" and getattr(message, "display", True):
            rows = self._plugin_rows(self.lookup_message(message.custom_type), message,
                                     {"expanded": self.expand_tools})
            if rows is None:
                self.notice(f"[{message.custom_type}] {_content_text(message.content)}")
            else:
                self._end_stream()
                self.gap()
                self.scroll(rows)
        elif role == "bashExecution":
            self.bash_block(message)

    def _on_message_update(self, event: Any) -> None:
        if self._progress is not None:
            self._advance(event.message)

    def _on_message_end(self, event: Any) -> None:
        message = event.message
        if getattr(message, "role", None) != "assistant":
            return
        if self._progress is None:
            self._progress = _Progress()
        self._advance(message)
        self._end_stream()
        self._progress = None
        self._pending_calls = []
        self.stats.add(message)
        self.last_answer = message.text() if hasattr(message, "text") else self.last_answer
        self._stop_reason(message)
        self.out.live_changed()

    def _on_tool_execution_start(self, event: Any) -> None:
        if event.parent_tool_call_id:  # a call a tool made (codemode): its caller's block shows the outcome
            return
        self.running[event.tool_call_id] = _RunningTool(event.tool_name, dict(event.args or {}),
                                                         call_id=event.tool_call_id)
        self.out.live_changed()

    def _on_tool_execution_update(self, event: Any) -> None:
        tool = self.running.get(event.tool_call_id)
        if tool is not None:
            tool.partial = event.partial_result
            text = blocks.result_text(event.partial_result).rstrip("\n")
            tool.last_line = text[text.rfind("\n") + 1:] if text else ""
            self.out.live_changed()

    def _on_tool_execution_end(self, event: Any) -> None:
        if event.parent_tool_call_id:
            return
        tool = self.running.pop(event.tool_call_id, None)
        args = tool.args if tool else {}
        duration = time.monotonic() - tool.started if tool else None
        self.tool_block(event.tool_name, args, event.result, failed=bool(event.is_error), duration=duration,
                        call=tool or _RunningTool(event.tool_name, args, call_id=event.tool_call_id))
        self.out.live_changed()

    def _on_queue_update(self, event: Any) -> None:
        self.steering, self.follow_ups = list(event.steering), list(event.follow_up)
        self.out.live_changed()

    def _on_auto_retry_start(self, event: Any) -> None:
        seconds = event.delay_ms / 1000
        self.notice(f"Retrying ({event.attempt}/{event.max_attempts}) in {seconds:g}s: {event.error_message}",
                    "warning")

    def _on_auto_retry_end(self, event: Any) -> None:
        if not event.success:
            self.notice(f"Retry failed after {event.attempt} attempt(s): {event.final_error or 'unknown error'}",
                        "error")

    def _on_compaction_start(self, event: Any) -> None:
        self.notice(f"Compacting the conversation ({event.reason})…")

    def _on_compaction_end(self, event: Any) -> None:
        if not event.error_message and not event.aborted:
            self.stats.context_known = False  # the next answer reports the new size
        if event.error_message:
            self.notice(event.error_message, "error")  # already says which compaction failed, as pi's event does
        elif event.aborted:
            self.notice("Compaction aborted", "warning")
        else:
            self.notice("Compaction done")

    # -- blocks --------------------------------------------------------------------------------

    def user_block(self, text: str) -> None:
        self._end_stream()
        self._recent_tools = []
        self.gap()
        width = self.width()
        rows: list[str] = []
        for line in text.split("\n"):
            rows.extend(wrap(line, width - 2 if width else None))
        marker = self.palette(self.palette.glyphs.user, "bold", "blue")
        self.scroll([f"{marker if i == 0 else ' '} {self.palette(r, 'bold')}" for i, r in enumerate(rows)])
        self.gap()

    def tool_block(self, name: str, args: dict[str, Any], result: Any, *, failed: bool,
                   duration: float | None = None, call: _RunningTool | None = None) -> None:
        self._end_stream()
        if self._last_kind != "tool":
            self.gap()
        call = call or _RunningTool(name, args)
        self._recent_tools = [*self._recent_tools[-19:], (name, args, result, failed, duration, call)]
        self.scroll(self._tool_rows(name, args, result, failed=failed, expanded=self.expand_tools,
                                    duration=duration, call=call), "tool")

    def _render_context(self, call: _RunningTool, slot: str, *, partial: bool, expanded: bool, failed: bool = False,
                        duration: float | None = None) -> Any:
        from ...extensions.renderers import ToolRenderContext

        return ToolRenderContext(args=call.args, tool_call_id=call.call_id, state=call.state,
                                 last_component=call.last.get(slot), cwd=self.cwd(), execution_started=True,
                                 is_partial=partial, expanded=expanded, is_error=failed,
                                 duration_ms=None if duration is None else duration * 1000,
                                 invalidate=self.out.live_changed)

    def _tool_rows(self, name: str, args: dict[str, Any], result: Any, *, failed: bool, expanded: bool,
                   duration: float | None, call: _RunningTool | None = None) -> list[str]:
        """pi's block, with the parts the tool's renderers (``render_call`` / ``render_result``, or those a
        plugin chose with ``ctx.register_tool_renderer``) draw instead."""
        tool = self.lookup_tool(name)
        call = call or _RunningTool(name, args)
        context = self._render_context(call, "call", partial=False, expanded=expanded, failed=failed,
                                       duration=duration)
        call_rows = self._plugin_rows(getattr(tool, "render_call", None), args, context=context,
                                      keep=(call, "call"))
        context = self._render_context(call, "result", partial=False, expanded=expanded, failed=failed,
                                       duration=duration)
        shown = self._plugin_rows(getattr(tool, "render_result", None), result,
                                  {"expanded": expanded, "is_partial": False, "is_error": failed}, context=context,
                                  keep=(call, "result"))
        default = blocks.tool_block(self.palette, name, args, result, self.width(), failed=failed,
                                    expanded=expanded, duration=duration, highlight=not self._replaying)
        if call_rows is None and shown is None:
            return default
        head = default[:1] if call_rows is None else call_rows
        return [*head, *(default[1:] if shown is None else shown)]

    def entry_block(self, entry: Any) -> None:
        """A plugin's ``custom`` session entry, drawn by its entry renderer (nothing without one)."""
        rows = self._plugin_rows(self.lookup_entry(entry.custom_type), entry, {"expanded": self.expand_tools})
        if rows:
            self._end_stream()
            self.gap()
            self.scroll(rows)

    def _plugin_rows(self, render: Any, value: Any, *options: dict[str, Any], context: Any = None,
                     keep: tuple[_RunningTool, str] | None = None) -> list[str] | None:
        """What a plugin's renderer draws, as rows for the width; ``None`` for pi's default (no renderer,
        it returned ``None``, or it failed: reported once as a notice). A tool renderer gets ``context``
        last when it takes it; ``keep`` records what it drew (the next render's ``last_component``)."""
        if render is None:
            return None
        from ...extensions.renderers import call_renderer
        from ...tui import Text
        from .components import render_component

        try:
            if context is None:
                made = render(value, *options, self.palette.theme)
            else:
                made = call_renderer(render, value, *options, self.palette.theme, context=context)
        except Exception as exc:  # a plugin's renderer must not lose the conversation
            if id(render) not in self._failed_renderers:  # drawn again and again while a tool runs
                self._failed_renderers.add(id(render))
                self.notice(f"renderer failed: {exc}", "error")
            return None
        if isinstance(made, (list, tuple, str)):
            made = Text(made)
        if keep is not None:
            keep[0].last[keep[1]] = made
        return None if made is None else render_component(made, self.width() or 80)

    def toggle_tools_expanded(self) -> None:
        """Ctrl+O. The scrollback is printed once, so expanding prints the tool calls since the last
        prompt again, whole; later calls follow the new setting."""
        self.expand_tools = not self.expand_tools
        if not self.expand_tools:
            self.notice("Tool output: collapsed (Ctrl+O expands)")
            return
        recent = [t for t in self._recent_tools if not _fits(t[2])]
        self.notice("Tool output: expanded" + (" — the recent calls in full:" if recent else ""))
        for name, args, result, failed, duration, call in recent:
            self._last_kind = ""
            self.scroll(self._tool_rows(name, args, result, failed=failed, expanded=True, duration=duration,
                                        call=call), "tool")
        self._recent_tools = []

    def bash_block(self, message: Any) -> None:
        result = {"content": [{"type": "text", "text": message.output}]}
        failed = bool(message.exit_code) or bool(message.cancelled)
        self.tool_block("bash", {"command": message.command}, result, failed=failed)

    def _stop_reason(self, message: Any) -> None:
        reason = getattr(message, "stop_reason", None)
        if reason == "error":
            self.notice(f"Error: {message.error_message or 'the model request failed'}", "error")
        elif reason == "aborted":
            self.notice("Aborted", "warning")
        elif reason == "length":
            self.notice("The answer was cut off at the output token limit", "warning")

    # -- streaming -----------------------------------------------------------------------------

    def _advance(self, message: Any) -> None:
        progress = self._progress
        assert progress is not None
        content = message.content
        while progress.index < len(content):
            block = content[progress.index]
            kind = getattr(block, "type", None)
            if kind in ("text", "thinking"):
                value = block.text if kind == "text" else block.thinking
                if len(value) > progress.consumed:
                    self._feed(kind, value[progress.consumed:])
                    progress.consumed = len(value)
            elif kind == "toolCall" and block.name not in self._pending_calls:
                self._pending_calls.append(block.name)
                self.out.live_changed()
            if progress.index == len(content) - 1:
                return
            self._end_stream()
            progress.index += 1
            progress.consumed = 0

    def _feed(self, kind: str, text: str) -> None:
        if kind == "thinking" and self.hide_thinking:
            marker = (id(self._progress), self._progress.index if self._progress else 0)
            if self._hidden_thinking != marker and text.strip():
                self._hidden_thinking = marker
                self._end_stream()
                self.gap()
                label = self.hidden_thinking_label or f"Thinking{self.palette.glyphs.ellipsis}"
                self.scroll([self.palette(label, "dim", "italic")])
            return
        stream = self._stream
        if stream is None or stream.kind != kind:
            self._end_stream()
            stream = self._stream = _TextStream(kind, self.palette, self.width) if kind == "thinking" \
                else _MarkdownText(self.palette, self.width, hyperlinks=self.hyperlinks, code_indent=self.code_indent)
        was_started = stream.started
        rows = stream.feed(text)
        if stream.started and not was_started:
            self.gap()
        self.scroll(rows)
        self.out.live_changed()

    def _end_stream(self) -> None:
        stream, self._stream = self._stream, None
        if stream is None:
            return
        if self.defer_layout and self._held is None and isinstance(stream, _MarkdownText) \
                and stream.size() > DEFER_CHARS:
            self._lay_out_later(stream)
            return
        self.scroll(stream.close())

    def _lay_out_later(self, stream: _MarkdownText) -> None:
        import asyncio

        width = self.width() or 80
        self._laying_out_rows = stream.live(width, LIVE_TEXT_ROWS)  # what was on screen stays until then
        self._held = []
        self._last_row, self._last_kind = self._laying_out_rows[-1] if self._laying_out_rows else "…", "text"
        future = asyncio.get_running_loop().run_in_executor(None, stream.close, width)
        self._laying_out = future
        future.add_done_callback(self._laid_out)

    def _laid_out(self, future: Any) -> None:
        held, self._held = self._held or [], None
        self._laying_out, self._laying_out_rows = None, []
        failed = future.exception() if not future.cancelled() else None
        rows = future.result() if not future.cancelled() and failed is None else []
        if failed is not None:  # a bug in the layout must not silently lose the answer's end
            rows = [self.palette(f"(the rest of the answer could not be shown: {failed})", "red")]
        if rows:
            self.out.scroll(self._padded(rows))
            self._last_row = rows[-1] if not held else self._last_row
        for later, _ in held:
            self.out.scroll(self._padded(later))
        self.out.live_changed()

    async def settled(self) -> None:
        """Wait for a block still being laid out (before the last rows are written at exit)."""
        import asyncio

        future = self._laying_out
        if future is not None:
            await asyncio.wait({future}, timeout=10)

    # -- the live region -----------------------------------------------------------------------

    def live_rows(self, width: int | None = None) -> list[str]:
        """What is still changing, top to bottom (without the input line and footer), padded as the
        transcript is (``width``: the terminal's columns)."""
        width = (max(width - 2 * self.pad, 1) if self.pad else width) if width else self.width() or 80
        return self._padded(self._live_rows(width))

    def _live_rows(self, width: int) -> list[str]:
        p = self.palette
        rows: list[str] = list(self._laying_out_rows)
        if self._stream is not None:
            rows.extend(self._stream.live(width, LIVE_TEXT_ROWS))
        for name in self._pending_calls:
            if name not in {t.name for t in self.running.values()}:
                rows.append(p(f"{p.glyphs.tool} {name} {p.glyphs.ellipsis}", "gray"))
        for tool in self.running.values():
            rows.extend(self._running_rows(tool, width))
        if self.working and self.working_visible:
            rows.append(self._working_row())
        rows.extend(self._queue_rows(width))
        return rows

    def _running_rows(self, tool: _RunningTool, width: int) -> list[str]:
        """A running call: the tool's renderers with pi's partial state (``render_call``, then
        ``render_result`` of the last update with ``is_partial``), or pi's header and the output's last row."""
        p = self.palette
        renderers = self.lookup_tool(tool.name)
        expanded = self.expand_tools
        context = self._render_context(tool, "call", partial=True, expanded=expanded)
        head = self._plugin_rows(getattr(renderers, "render_call", None), tool.args, context=context,
                                 keep=(tool, "call"))
        shown = None
        if tool.partial is not None:
            context = self._render_context(tool, "result", partial=True, expanded=expanded)
            shown = self._plugin_rows(getattr(renderers, "render_result", None), tool.partial,
                                      {"expanded": expanded, "is_partial": True, "is_error": False},
                                      context=context, keep=(tool, "result"))
        rows = [self._running_row(tool, width)] if head is None else head
        if shown is not None:
            return [*rows, *shown[:LIVE_TEXT_ROWS]]
        if tool.last_line.strip():
            rows.append("  " + p(clip(tool.last_line.replace("\t", "    "), width - 4, p.glyphs.ellipsis), "gray"))
        return rows

    def _running_row(self, tool: _RunningTool, width: int) -> str:
        elapsed = time.monotonic() - tool.started
        head = blocks.header(self.palette, tool.name, tool.args, width - 8, running=self.spinner())
        return f"{head} {self.palette(f'{elapsed:.0f}s', 'gray')}" if elapsed >= 1 else head

    def _working_row(self) -> str:
        elapsed = time.monotonic() - self.working_since
        p = self.palette
        spinner = self.spinner()
        message = self.working_message or "Working" + p.glyphs.ellipsis
        return (f"{p(spinner, 'cyan')} " if spinner else "") + f"{p(message, 'cyan')} " \
            f"{p(f'{elapsed:.0f}s · esc to interrupt', 'gray')}"

    def _queue_rows(self, width: int) -> list[str]:
        rows = []
        for label, items in (("steer", self.steering), ("follow-up", self.follow_ups)):
            for text in items:
                line = " ".join(text.split())
                rows.append(self.palette(clip(f"  queued {label}: {line}", width, self.palette.glyphs.ellipsis),
                                         "yellow"))
        return rows

    def spinner(self) -> str:
        # plugins may replace the frames (set_working_indicator); [] shows none
        frames = self.palette.glyphs.spinner if self.working_frames is None else self.working_frames
        if not frames:
            return ""
        return frames[int(time.monotonic() * 1000 / self.working_interval_ms) % len(frames)]

    # -- history -------------------------------------------------------------------------------

    def replay(self, messages: list[Any], limit: int = REPLAY_MESSAGES) -> None:
        """Print an existing conversation (a resumed session): its last ``limit`` messages, and a row
        saying how many earlier ones ``/history`` can show."""
        shown = [m for m in messages if getattr(m, "role", None) != "system"]
        self.hidden_history = shown[:-limit] if len(shown) > limit else []
        if self.hidden_history:
            count = len(self.hidden_history)
            self.notice(f"{self.palette.glyphs.ellipsis} {count:,} earlier message{'s' if count != 1 else ''} "
                        "(/history shows them)")
        self._print_messages(shown[-limit:] if len(shown) > limit else shown, shown)

    def history(self, count: int | None = None) -> int:
        """Print the ``count`` messages before those :meth:`replay` showed (all when ``None``); returns
        how many were printed. They come after the later ones in the scrollback, under a heading."""
        hidden = self.hidden_history
        if not hidden:
            return 0
        chosen = hidden if count is None or count >= len(hidden) else hidden[-count:]
        first = len(hidden) - len(chosen) + 1
        self.print_block([self.palette(f"Earlier messages {first:,}-{len(hidden):,} of the session:", "bold")])
        self._print_messages(chosen, hidden)
        self.hidden_history = hidden[:len(hidden) - len(chosen)]
        self.notice("(end of the earlier messages)")
        return len(chosen)

    def _print_messages(self, messages: list[Any], context: list[Any]) -> None:
        calls: dict[str, Any] = {}
        for message in context:  # tool results need their call's arguments, which may come earlier
            if getattr(message, "role", None) == "assistant":
                for block in message.content:
                    if getattr(block, "type", None) == "toolCall":
                        calls[block.id] = block
        self._replaying = True  # file views are not highlighted here: a resume must be ready at once
        try:
            for message in messages:
                self._replay_one(message, calls)
            self._end_stream()
        finally:
            self._replaying = False

    def _replay_one(self, message: Any, calls: dict[str, Any]) -> None:
        role = getattr(message, "role", None)
        if role == "assistant":
            for block in message.content:
                if getattr(block, "type", None) == "toolCall":
                    calls[block.id] = block
            self._on_message_start(_Event(message))
            self._on_message_end(_Event(message))
        elif role == "toolResult":
            call = calls.get(message.tool_call_id)
            ms = getattr(message, "duration_ms", None)
            args = getattr(call, "arguments", {})
            self.tool_block(message.tool_name, args, message, failed=message.is_error,
                            duration=ms / 1000 if ms else None,
                            call=_RunningTool(message.tool_name, dict(args or {}), call_id=message.tool_call_id))
        elif isinstance(message, EntryItem):
            self.entry_block(message.entry)
        elif role in ("compactionSummary", "branchSummary"):
            self.notice(f"[{role}] {clip(' '.join(message.summary.split()), 200)}")
        else:
            self._on_message_start(_Event(message))


@dataclass
class _Event:
    message: Any


@dataclass
class EntryItem:
    """A plugin's ``custom`` entry among the messages :meth:`Renderer.replay` prints (at its place on the
    branch)."""

    entry: Any
    role: str = "customEntry"


def _fits(result: Any) -> bool:
    """Whether a collapsed preview already showed the whole result."""
    text = blocks.result_text(result).rstrip("\n")
    return text.count("\n") + 1 <= blocks.TAIL_LINES


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(block.text)
        elif kind == "image":
            parts.append("[image]")
    return "\n".join(parts)


__all__ = ["EntryItem", "Output", "Renderer", "Stats"]
