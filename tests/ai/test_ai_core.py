"""Building blocks: cost arithmetic, the SSE decoder, partial JSON, the stream writer's invariants and
event JSON shapes."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ai_helpers import run

from pi_core.ai import (
    EventStream,
    Model,
    ModelCost,
    SSEDecoder,
    StreamWriter,
    Usage,
    calculate_cost,
    format_http_error,
    iter_sse,
    iter_sse_batches,
    parse_partial_json,
    parse_tool_arguments,
    repair_json,
)

FAKE = Model(id="fake-model", api="openai-completions", provider="fake",
             cost=ModelCost(input=1.0, output=2.0, cache_read=0.1, cache_write=1.25))


# --- cost ------------------------------------------------------------------------------------------

def test_cost_equals_pis_figures_to_the_bit() -> None:
    # from b_json_tools: input 1393, output 11 -> input 0.001393, output 2.2e-05, total 0.001415
    usage = Usage(input=1393, output=11, total_tokens=1404)
    cost = calculate_cost(FAKE, usage)
    assert (cost.input, cost.output, cost.cache_read, cost.cache_write, cost.total) == (0.001393, 2.2e-05, 0, 0, 0.001415)
    assert cost.to_json() == {"input": 0.001393, "output": 2.2e-05, "cacheRead": 0, "cacheWrite": 0, "total": 0.001415,
                              "totalFromProvider": False}
    other = calculate_cost(FAKE, Usage(input=1645, output=10))
    assert other.output == 1.9999999999999998e-05 and other.total == 0.001665  # as pi printed them
    assert calculate_cost(FAKE, Usage(input=1486, output=4)).total == 0.0014939999999999999


def test_cost_buckets_and_tiers() -> None:
    usage = Usage(input=1_000_000, output=1_000_000, cache_read=1_000_000, cache_write=1_000_000)
    cost = calculate_cost(FAKE, usage)
    assert (cost.input, cost.output, cost.cache_read, cost.cache_write, cost.total) == (1, 2, 0.1, 1.25, 4.35)
    tiered = Model.model_validate({"id": "t", "api": "a", "provider": "p", "cost": {
        "input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75,
        "tiers": [{"inputTokensAbove": 200000, "input": 6, "output": 22.5, "cacheRead": 0.6, "cacheWrite": 7.5}]}})
    assert calculate_cost(tiered, Usage(input=100_000)).input == 0.3
    assert calculate_cost(tiered, Usage(input=300_000)).input == 1.8


# --- SSE -------------------------------------------------------------------------------------------

def decode(chunks: list[bytes]) -> list[tuple[str, str]]:
    decoder = SSEDecoder()
    events = [e for chunk in chunks for e in decoder.feed(chunk)] + decoder.flush()
    return [(e.event, e.data) for e in events]


def test_sse_framing_rules() -> None:
    stream = (b": comment\nevent: a\ndata: one\ndata:two\n\nretry: 10\nid: 7\ndata:  spaced\n\n"
              b"event: ignored-without-data\n\ndata: last")
    assert decode([stream]) == [("a", "one\ntwo"), ("message", " spaced"), ("message", "last")]


def test_sse_every_split_and_line_ending() -> None:
    text = 'event: x\ndata: {"a": "héllo ✓"}\n\ndata: second\n\n'.encode()
    for ending in (b"\n", b"\r\n", b"\r"):
        data = text.replace(b"\n", ending)
        want = [("x", '{"a": "héllo ✓"}'), ("message", "second")]
        for cut in range(len(data) + 1):
            assert decode([data[:cut], data[cut:]]) == want, (ending, cut)
        assert decode([bytes([b]) for b in data]) == want


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(
    st.text(alphabet="ab é✓{}\":,", max_size=12).map(lambda t: f"data: {t}\n\n"),
    st.text(alphabet="ab é✓{}\":,", max_size=12).map(lambda t: f"event: delta\ndata: {t}\n\n"),
    st.sampled_from(["event: x\ndata: y\n\n", ": keep-alive\n", "data:tight\n\n", "data: a\ndata: b\n\n",
                     "id: 9\ndata: z\n\n", "\n", "data: \n\n", "retry: 5\n", "event: \ndata: e\n\n",
                     "event: x\n\n", "event: a: b\ndata: c\n\n", "event: x\ndata: a\ndata: b\n\n",
                     "event:tight\ndata: d\n\n", "data: d\nevent: after\n\n"])), max_size=12),
       st.lists(st.integers(min_value=0, max_value=400), max_size=4))
def test_sse_whole_chunks_decode_as_byte_by_byte(parts: list[str], cuts: list[int]) -> None:
    # feeding whole chunks takes the fast path for `data:` and `event:` + `data:` events; byte by byte goes
    # line by line
    data = "".join(parts).encode()
    points = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    chunks = [data[a:b] for a, b in zip(points, points[1:])]
    def full(pieces: list[bytes]) -> list[tuple[str, str, str | None, int | None]]:
        decoder = SSEDecoder()
        events = [e for piece in pieces for e in decoder.feed(piece)] + decoder.flush()
        return [(e.event, e.data, e.id, e.retry) for e in events]

    assert full(chunks) == full([bytes([b]) for b in data])

    async def through(iterate: Any) -> tuple[list[Any], list[int]]:
        reads: list[int] = []

        async def source() -> Any:
            for chunk in chunks:
                yield chunk

        async def pause() -> None:
            reads.append(len(seen))

        seen: list[Any] = []
        async for item in iterate(source(), pause):
            seen.extend(item if isinstance(item, list) else [item])
            assert item != []  # a batch is never empty
        return [(e.event, e.data, e.id, e.retry) for e in seen], reads

    events, reads = asyncio.run(through(iter_sse))
    batched, batch_reads = asyncio.run(through(iter_sse_batches))
    assert events == batched == full(chunks)
    assert reads == batch_reads and len(reads) == len(chunks)  # the reader paused after each read either way


# --- partial JSON ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "value"), [
    ("", {}), ("  ", {}), ('{"path": "src/ma', {"path": "src/ma"}), ('{"a": [1, 2', {"a": [1, 2]}),
    ('{"a": 1, "b"', {"a": 1}), ('{"cmd": "echo\nhi"}', {"cmd": "echo\nhi"}), ("not json", {}),
])
def test_partial_json(text: str, value: object) -> None:
    assert parse_partial_json(text) == value


def test_final_tool_arguments_and_repair() -> None:
    assert parse_tool_arguments('{"a": 1}') == ({"a": 1}, None)
    args, error = parse_tool_arguments('{"a": "x')
    assert args == {"a": "x"} and error.startswith("Invalid JSON")
    assert parse_tool_arguments("[1]") == ({}, "Tool arguments must be a JSON object, got list")
    assert json.loads(repair_json('{"t": "a\tb\nc"}')) == {"t": "a\tb\nc"}


# --- stream writer ----------------------------------------------------------------------------------

def test_writer_keeps_the_invariants_and_pi_json_shapes() -> None:
    async def scenario() -> list:
        writer = StreamWriter(FAKE, EventStream())
        text = writer.text_start()
        writer.text_delta(text, "Hel")
        writer.text_delta(text, "lo")
        call = writer.toolcall_start("call_1", "read")
        writer.toolcall_delta(call, "")
        writer.toolcall_delta(call, '{"path": "a')
        assert writer.message.content[call].arguments == {"path": "a"}
        writer.toolcall_delta(call, '.py"}')
        writer.set_usage(input=10, output=5)
        writer.finish("toolUse")
        writer.fail("too late")  # ignored: the stream already ended
        return [e async for e in writer.events]

    events = run(scenario())
    shapes = [e.to_json() for e in events]
    assert shapes[1:4] == [{"type": "text_start", "contentIndex": 0},
                           {"type": "text_delta", "contentIndex": 0, "delta": "Hel"},
                           {"type": "text_delta", "contentIndex": 0, "delta": "lo"}]
    assert shapes[4] == {"type": "toolcall_start", "contentIndex": 1, "id": "call_1", "toolName": "read"}
    assert shapes[8:10] == [{"type": "text_end", "contentIndex": 0, "content": "Hello"},
                           {"type": "toolcall_end", "contentIndex": 1, "toolCall": {
                               "type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "a.py"}}}]
    done = shapes[-1]
    assert done["type"] == "done" and done["reason"] == "toolUse" and done["message"]["stopReason"] == "toolUse"
    assert [e.type for e in events].count("done") == 1 and events[-1].message is events[0].partial


def test_writer_failure_leaves_blocks_open_and_drops_scratch() -> None:
    async def scenario():
        writer = StreamWriter(FAKE, EventStream())
        call = writer.toolcall_start("c", "write")
        writer.toolcall_delta(call, '{"path": "x", "content": "ab')
        writer.fail("503: overloaded", status=503)
        return [e async for e in writer.events], writer.message

    events, message = run(scenario())
    assert events[-1].type == "error" and events[-1].to_json()["error"]["errorMessage"] == "503: overloaded"
    assert message.content[0].arguments == {"path": "x", "content": "ab"}
    assert message.to_json()["content"][0] == {"type": "toolCall", "id": "c", "name": "write",
                                               "arguments": {"path": "x", "content": "ab"}}


def test_the_terminal_callback_sees_the_final_event_before_any_consumer() -> None:
    async def scenario(fail: bool) -> tuple[list[str], Any]:
        events = EventStream()
        writer = StreamWriter(FAKE, events)
        seen: list[str] = []

        def stamp(event: Any) -> None:
            seen.append(f"{event.type} while {len(events._queue)} queued")
            event.message.thinking_level = "high"

        events.on_terminal(stamp)
        writer.text_delta(writer.text_start(), "hi")
        writer.fail("boom") if fail else writer.finish()
        writer.finish()  # a second terminal event is ignored, and so not seen
        received = [e async for e in events]
        return seen, received[-1]

    for fail in (False, True):
        seen, last = run(scenario(fail))
        kind = "error" if fail else "done"
        # start, text_start, text_delta, (text_end: a failure leaves blocks open) and itself
        assert seen == [f"{kind} while {4 if fail else 5} queued"]
        assert last.type == kind and last.message.thinking_level == "high"


def test_long_text_accumulates_without_quadratic_copies() -> None:
    async def scenario() -> str:
        writer = StreamWriter(FAKE, EventStream(high_water=1 << 30))
        index = writer.text_start()
        for _ in range(100_000):
            writer.text_delta(index, "word ")
        writer.finish()
        return writer.message.text()

    assert run(scenario(), timeout=30) == "word " * 100_000


def test_error_text_formats() -> None:
    assert format_http_error(400, '{"error":{"message":"fake bad request","type":"invalid_request_error"}}') == \
        '400: {"message":"fake bad request","type":"invalid_request_error"}'
    assert format_http_error(500, "") == "500 status code (no body)"
    assert format_http_error(400, '{"error":{"message":"ü"}}') == '400: {"message":"ü"}'
    assert format_http_error(503, "upstream down", "google", "Service Unavailable") == \
        '{"error":{"message":"upstream down","code":503,"status":"Service Unavailable"}}'
    long = format_http_error(500, "x" * 5000)
    assert long.endswith("... [truncated 1000 chars]")
