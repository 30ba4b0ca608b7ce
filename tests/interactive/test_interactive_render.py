"""The renderer on recorded event streams (pi 1.6.0 JSON-mode recordings, replayed as the runtime
emits them) and on synthetic streams: what goes to the scrollback, once, and what stays live."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_core import (
    AgentStartEvent,
    AssistantMessage,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    ToolResult,
    UserMessage,
)
from pi_core.modes.interactive.blocks import summarize_args
from pi_core.modes.interactive.commands import parse
from plugins.commands.model import match_models
from pi_core.modes.interactive.footer import format_tokens
from pi_core.modes.interactive.markdown import MarkdownStream
from pi_core.modes.interactive.render import Renderer
from pi_core.modes.interactive.style import Palette, display_width, strip_ansi, wrap
from pi_core.runtime.events import AgentSettledEvent, QueueUpdateEvent

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "interactive"


class Sink:
    def __init__(self) -> None:
        self.rows: list[str] = []
        self.calls = 0
        self.live = 0

    def scroll(self, rows: list[str]) -> None:
        self.rows.extend(rows)
        self.calls += 1

    def live_changed(self) -> None:
        self.live += 1


def renderer(width: int | None = 80, colour: bool = False) -> tuple[Renderer, Sink]:
    sink = Sink()
    return Renderer(sink, Palette(colour), lambda: width), sink


class Replay:
    """Turns a pi JSON-mode recording back into the runtime's event objects, rebuilding the live
    partial message from the deltas as a provider stream does."""

    def __init__(self, path: Path) -> None:
        self.records = [json.loads(line) for line in path.read_text().splitlines()]
        self.partial: AssistantMessage | None = None

    def events(self) -> list[Any]:
        out: list[Any] = []
        for record in self.records:
            event = self._event(record)
            if event is not None:
                out.append(event)
        return out

    def _event(self, r: dict[str, Any]) -> Any:
        kind = r["type"]
        if kind == "agent_start":
            return AgentStartEvent()
        if kind == "agent_settled":
            return AgentSettledEvent()
        if kind == "message_start":
            message = _message(r["message"])
            if message.role == "assistant":
                self.partial = message
            return MessageStartEvent(message)
        if kind == "message_update":
            self._apply(r["assistantMessageEvent"])
            return MessageUpdateEvent(self.partial, r["assistantMessageEvent"])
        if kind == "message_end":
            return MessageEndEvent(_message(r["message"]))
        if kind == "tool_execution_start":
            return ToolExecutionStartEvent(r["toolCallId"], r["toolName"], r["args"])
        if kind == "tool_execution_update":
            return ToolExecutionUpdateEvent(r["toolCallId"], r["toolName"], r["args"], _result(r["partialResult"]))
        if kind == "tool_execution_end":
            return ToolExecutionEndEvent(r["toolCallId"], r["toolName"], _result(r["result"]), r.get("isError", False))
        return None

    def _apply(self, update: dict[str, Any]) -> None:
        content = self.partial.content  # type: ignore[union-attr]
        kind, index = update["type"], update.get("contentIndex")
        if kind == "text_start":
            content.append(TextContent(text=""))
        elif kind == "thinking_start":
            content.append(ThinkingContent(thinking=""))
        elif kind == "text_delta":
            content[index].text += update["delta"]
        elif kind == "thinking_delta":
            content[index].thinking += update["delta"]
        elif kind == "toolcall_start":
            content.append(ToolCall(id=update["id"], name=update["toolName"]))
        elif kind == "toolcall_end":
            content[index] = ToolCall.model_validate(update["toolCall"])


def _message(data: dict[str, Any]) -> Any:
    from pydantic import TypeAdapter

    from pi_core import Message

    return TypeAdapter(Message).validate_python(data)


def _result(data: dict[str, Any]) -> ToolResult:
    return ToolResult(content=[TextContent(text=b["text"]) for b in data.get("content", []) if b["type"] == "text"],
                      details=data.get("details"))


def test_a_recorded_tool_session_prints_each_block_once() -> None:
    render, sink = renderer()
    for event in Replay(FIXTURES / "pi16_json_tools.jsonl").events():
        render.handle(event)
    text = "\n".join(sink.rows)
    assert "› Modernize hello.py to use an f-string." in text
    assert "Let me read the file first." in text
    assert "● read  hello.py\n  def greet(name):\n      return \"Hello, \" + name" in text
    assert "● bash  ls\n  hello.py\n  notes.md" in text
    assert "● edit  hello.py (1 edit)\n   1 def greet(name):\n  -2     return \"Hello, \" + name\n" \
           "  +2     return f\"Hello, {name}!\"" in text
    assert "I updated `hello.py` to use an f-string." in text  # no colour: markdown left as written
    assert text.count("Let me read the file first.") == 1
    assert all(display_width(row) <= 80 for row in sink.rows)
    assert "" not in sink.rows[:1] and "\n\n\n" not in "\n".join(sink.rows)
    assert render.live_rows() == []  # all settled
    assert render.stats.context_tokens > 0


def test_recorded_tool_errors_are_red_blocks() -> None:
    render, sink = renderer(colour=True)
    for event in Replay(FIXTURES / "pi16_tool_errors.jsonl").events():
        render.handle(event)
    plain = [strip_ansi(r) for r in sink.rows]
    failures = [r for r in plain if r.startswith("✗ ")]
    assert [r.split()[1] for r in failures] == ["edit", "edit", "read", "bash", "no_such_tool", "read"]
    error_row = next(r for r in sink.rows if "Could not find the exact text" in r)
    assert "\x1b[31m" in error_row
    assert "  Command exited with code 3" in plain
    assert "All those calls failed, as expected." in plain


def _stream(render: Renderer, chunks: list[str], *, thinking: bool = False) -> AssistantMessage:
    message = AssistantMessage()
    render.handle(MessageStartEvent(message))
    block: Any = ThinkingContent(thinking="") if thinking else TextContent(text="")
    message.content.append(block)
    for chunk in chunks:
        if thinking:
            block.thinking += chunk
        else:
            block.text += chunk
        render.handle(MessageUpdateEvent(message, None))
    return message


@settings(max_examples=150, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("ab cd  efghij\n") + ["漢", "é"]), max_size=300),
       cuts=st.lists(st.integers(min_value=0, max_value=300), max_size=40),
       width=st.integers(min_value=4, max_value=40))
def test_streaming_in_any_chunks_prints_the_same_rows_as_the_whole_text(text: str, cuts: list[int],
                                                                       width: int) -> None:
    points = sorted({c for c in cuts if c < len(text)} | {0, len(text)})
    chunks = [text[a:b] for a, b in zip(points, points[1:])]
    streamed, sink = renderer(width)
    message = _stream(streamed, chunks)
    streamed.handle(MessageEndEvent(message))
    whole, whole_sink = renderer(width)
    whole.handle(MessageEndEvent(AssistantMessage(content=[TextContent(text=text)])))
    assert sink.rows == whole_sink.rows
    assert all(display_width(r) <= width for r in sink.rows)


def test_finished_blocks_reach_the_scrollback_while_the_answer_streams() -> None:
    # Markdown is laid out a block at a time: a paragraph is printed once the next block has begun,
    # the block being written stays in the live region (the rows used to be printed one by one).
    render, sink = renderer(40)
    first = "streaming " * 11
    message = _stream(render, [w + " " for w in first.split()] + ["\n\n", "second ", "para"])
    printed = [r for r in sink.rows if r]
    assert printed and all(r.startswith("streaming") for r in printed)  # the first paragraph, wrapped...
    assert all(len(r) <= 40 for r in printed)
    assert render.live_rows() == ["", "second para"]  # ...the second one is live
    before = len(sink.rows)
    message.content[0].text += " tail"
    render.handle(MessageUpdateEvent(message, None))
    assert len(sink.rows) == before  # the growing block is not printed yet
    render.handle(MessageEndEvent(message))
    assert sink.rows[-1] == "second para tail"
    assert sum(len(r) for r in sink.rows) <= len(message.text()) + 2  # nothing printed twice


def test_thinking_is_dim_and_text_is_not() -> None:
    render, sink = renderer(colour=True)
    message = _stream(render, ["Considering options.\n"], thinking=True)
    message.content.append(TextContent(text="The answer."))
    render.handle(MessageEndEvent(message))
    thinking_row = next(r for r in sink.rows if "Considering" in r)
    answer_row = next(r for r in sink.rows if "The answer." in r)
    assert thinking_row.startswith("\x1b[90;3m")  # the theme's thinkingText, italic
    assert "\x1b[" not in answer_row


def test_markdown_styling_with_colour() -> None:
    render, sink = renderer(colour=True)
    text = "# Title\nUse `pip` and **care**.\n```\ncode line\n```\nafter"
    render.handle(MessageEndEvent(AssistantMessage(content=[TextContent(text=text)])))
    rows = {strip_ansi(r): r for r in sink.rows}
    assert "\x1b[35;1;4m" in rows["Title"]  # mdHeading, bold, underlined (h1)
    assert rows["Use pip and care."] == "Use \x1b[36mpip\x1b[0m and \x1b[1mcare\x1b[0m."
    assert "  code line" in rows and rows["```"].startswith("\x1b[90m")
    assert rows["after"] == "after"


def test_running_tools_and_queue_are_live_until_done() -> None:
    render, sink = renderer()
    render.handle(AgentStartEvent())
    render.handle(ToolExecutionStartEvent("c1", "bash", {"command": "make test"}))
    render.handle(ToolExecutionUpdateEvent("c1", "bash", {}, ToolResult.text("building...\nrunning 12 tests")))
    render.handle(QueueUpdateEvent(["also lint"], ["then commit"]))
    live = "\n".join(render.live_rows(80))
    assert "bash  make test" in live and "running 12 tests" in live and "Working" in live
    assert "queued steer: also lint" in live and "queued follow-up: then commit" in live
    assert sink.rows == []
    render.handle(ToolExecutionEndEvent("c1", "bash", ToolResult.text("ok\n" * 20)))
    render.handle(QueueUpdateEvent([], []))
    render.handle(AgentSettledEvent())
    assert render.live_rows(80) == []
    assert sink.rows[0] == "● bash  make test"  # a command shows its last lines (where the summary is)
    assert sink.rows[1:] == ["  … 15 earlier lines (ctrl+o to expand)"] + ["  ok"] * 5


def test_user_prompt_block_and_aborted_answer() -> None:
    render, sink = renderer(30)
    render.handle(MessageStartEvent(UserMessage(content="a prompt that is long enough to wrap\nsecond")))
    render.handle(MessageEndEvent(AssistantMessage(stop_reason="aborted")))
    assert sink.rows[:3] == ["› a prompt that is long enough", "  to wrap", "  second"]
    assert sink.rows[-1] == "Aborted"


def test_replay_of_a_resumed_conversation() -> None:
    render, sink = renderer()
    call = ToolCall(id="t1", name="read", arguments={"path": "a.py", "offset": 10, "limit": 5})
    from pi_core import ToolResultMessage

    render.replay([UserMessage(content="look"), AssistantMessage(content=[TextContent(text="Reading."), call]),
                   ToolResultMessage(tool_call_id="t1", tool_name="read", content=[TextContent(text="x = 1")]),
                   AssistantMessage(content=[TextContent(text="Done.")])])
    assert sink.rows == ["› look", "", "Reading.", "", "● read  a.py:10-14", "  x = 1", "", "Done."]


def test_wrap_is_greedy_and_cuts_long_words() -> None:
    assert wrap("aaa bbb ccc", 7) == ["aaa bbb", "ccc"]
    assert wrap("abcdefghij", 4) == ["abcd", "efgh", "ij"]
    assert wrap("漢字漢字", 5) == ["漢字", "漢字"]
    assert wrap("short", None) == ["short"]


def test_argument_summaries() -> None:
    assert summarize_args("bash", {"command": "ls\n-la"}) == "ls -la"
    assert summarize_args("read", {"path": "x.py"}) == "x.py"
    assert summarize_args("write", {"path": "x.py", "content": "a\nb"}) == "x.py (2 lines)"
    assert summarize_args("grep", {"pattern": "TODO", "path": "src"}) == "TODO src"
    assert summarize_args("custom", {"n": 1}) == '{"n": 1}'


def test_command_parsing_and_model_matching() -> None:
    from pi_core import Model

    assert parse("/model gpt 4") == ("model", "gpt 4")
    assert parse("/quit") == ("quit", "")
    assert parse("not a command") is None and parse("/ spaced") is None and parse("//x") is None
    models = [Model(id="claude-sonnet-4-5", name="Claude Sonnet", api="a", provider="anthropic"),
              Model(id="gpt-5", name="GPT-5", api="o", provider="openai"),
              Model(id="gpt-5-mini", name="GPT-5 mini", api="o", provider="openai")]
    assert [m.id for m in match_models(models, "gpt-5")] == ["gpt-5"]
    assert [m.id for m in match_models(models, "GPT")] == ["gpt-5", "gpt-5-mini"]
    assert [m.id for m in match_models(models, "anthropic/claude-sonnet-4-5")] == ["claude-sonnet-4-5"]
    assert [m.id for m in match_models(models, "sonnet")] == ["claude-sonnet-4-5"]


def test_token_counts_as_the_footer_shows_them() -> None:
    assert [format_tokens(n) for n in (950, 1000, 1_234, 12_345, 200_000, 1_500_000, 12_500_000)] == \
        ["950", "1k", "1.2k", "12k", "200k", "1.5M", "13M"]  # pi's rounding


def test_a_long_answer_is_laid_out_off_the_loop_and_what_follows_waits_for_it() -> None:
    import asyncio
    import threading

    from pi_core.modes.interactive.render import DEFER_CHARS

    text = "word " * (DEFER_CHARS // 5 + 400)

    async def scenario() -> tuple[list[str], list[str], set[str], list[str]]:
        render, sink = renderer(60)
        render.defer_layout = True
        threads: set[str] = set()
        close = MarkdownStream.close

        def close_noting_the_thread(self: MarkdownStream, width: int | None) -> list[str]:
            threads.add(threading.current_thread().name)
            return close(self, width)

        MarkdownStream.close = close_noting_the_thread  # type: ignore[method-assign]
        try:
            message = _stream(render, [text[i:i + 50] for i in range(0, len(text), 50)])
            render.handle(MessageEndEvent(message))
            render.notice("after the answer")
            live_meanwhile = render.live_rows()
            held = list(sink.rows)
            await render.settled()
        finally:
            MarkdownStream.close = close  # type: ignore[method-assign]
        return held, sink.rows, threads, live_meanwhile

    held, rows, threads, live_meanwhile = asyncio.run(scenario())
    assert held == []  # nothing is printed ahead of the answer being laid out...
    assert live_meanwhile and all("word" in r for r in live_meanwhile if r)  # ...its end stays on screen
    assert threading.main_thread().name not in threads  # laid out in a worker thread
    whole, whole_sink = renderer(60)
    whole.handle(MessageEndEvent(AssistantMessage(content=[TextContent(text=text)])))
    assert rows == [*whole_sink.rows, "after the answer"]  # the same rows, then what came after, in order


def test_output_pad_pads_scrollback_and_live_rows_and_narrows_the_layout() -> None:
    """``outputPad: 1`` (pi's transcript padding): a column left of every row, the layout two columns narrower;
    the live region is padded as the scrollback is, so nothing shifts when a block is printed."""
    render, sink = renderer(20)
    render.pad = 1
    text = "alpha beta gamma delta epsilon"
    message = _stream(render, [text + "\n\n", "still open"])
    assert render.live_rows(20) == ["", " still open"]  # a blank row stays blank
    render.handle(MessageEndEvent(message))
    rows = [r for r in sink.rows if r]
    assert rows == [" alpha beta gamma", " delta epsilon", " still open"]
    assert all(display_width(r) <= 19 for r in rows)  # 18 columns of text after the pad


def test_code_block_indent_and_link_style_reach_the_answers() -> None:
    render, sink = renderer(60)
    render.code_indent, render.hyperlinks = "    ", False
    render.handle(MessageEndEvent(AssistantMessage(content=[TextContent(
        text="See [docs](https://example.com/d).\n\n```\ncode()\n```")])))
    assert "See docs (https://example.com/d)." in sink.rows
    assert "    code()" in sink.rows
