"""Streams shaped exactly like the scripted server the pi 1.6.0 recordings were made with
(``shared/tools/fake_llm.py``, re-implemented here), so that our events and messages can be compared
with what pi printed for the same bytes."""

from __future__ import annotations

import json
import time
from typing import Any


def estimate_tokens(obj: Any) -> int:
    return max(1, len(json.dumps(obj, ensure_ascii=False)) // 4)


def split_text(text: str, size: int) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), max(1, size))]


def args_text(call: dict[str, Any]) -> str:
    args = call.get("arguments", {})
    return args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)


def openai_turn(turn: dict[str, Any], body: dict[str, Any], seq: int) -> list[bytes]:
    """The SSE chunks of one scripted turn for ``POST /v1/chat/completions``."""
    model, created, cid = body.get("model", "fake-model"), int(time.time()), "chatcmpl-fake%04d" % seq
    text, thinking, calls = turn.get("text") or "", turn.get("thinking") or "", turn.get("tool_calls") or []
    finish = turn.get("finish_reason") or ("tool_calls" if calls else "stop")
    usage_in = turn.get("usage") or {}
    prompt = int(usage_in.get("prompt_tokens", estimate_tokens(body)))
    completion = int(usage_in.get("completion_tokens",
                                  max(1, (len(text) + len(thinking) + sum(len(args_text(c)) for c in calls)) // 4)))
    size = int(turn.get("chunk_size") or 8)
    out: list[bytes] = []

    def emit(delta: Any = None, finish_reason: Any = None, usage: Any = None, choices: bool = True) -> None:
        chunk: dict[str, Any] = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model}
        chunk["choices"] = [{"index": 0, "delta": delta or {}, "finish_reason": finish_reason}] if choices else []
        if usage is not None:
            chunk["usage"] = usage
        out.append(b"data: " + json.dumps(chunk, ensure_ascii=False).encode() + b"\n\n")

    emit({"role": "assistant", "content": ""})
    for piece in split_text(thinking, size):
        emit({"reasoning_content": piece})
    for piece in split_text(text, size):
        emit({"content": piece})
    for i, call in enumerate(calls):
        call_id = call.get("id") or "call_fake_%d_%d" % (seq, i)
        emit({"tool_calls": [{"index": i, "id": call_id, "type": "function",
                              "function": {"name": call["name"], "arguments": ""}}]})
        for piece in split_text(args_text(call), max(size, 16)):
            emit({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
    emit({}, finish_reason=finish)
    if (body.get("stream_options") or {}).get("include_usage"):
        emit(None, usage={"prompt_tokens": prompt, "completion_tokens": completion,
                          "total_tokens": prompt + completion}, choices=False)
    out.append(b"data: [DONE]\n\n")
    return out


def anthropic_turn(turn: dict[str, Any], body: dict[str, Any], seq: int) -> list[bytes]:
    """The SSE chunks of one scripted turn for ``POST /v1/messages``."""
    model, mid = body.get("model", "fake-model"), "msg_fake%04d" % seq
    text, thinking, calls = turn.get("text") or "", turn.get("thinking") or "", turn.get("tool_calls") or []
    stop = turn.get("finish_reason") or ("tool_use" if calls else "end_turn")
    usage_in = turn.get("usage") or {}
    in_tokens = int(usage_in.get("prompt_tokens", estimate_tokens(body)))
    out_tokens = int(usage_in.get("completion_tokens",
                                  max(1, (len(text) + len(thinking) + sum(len(args_text(c)) for c in calls)) // 4)))
    size = int(turn.get("chunk_size") or 8)
    out: list[bytes] = []

    def ev(name: str, obj: Any) -> None:
        out.append(f"event: {name}\n".encode() + b"data: " + json.dumps(obj, ensure_ascii=False).encode() + b"\n\n")

    ev("message_start", {"type": "message_start", "message": {
        "id": mid, "type": "message", "role": "assistant", "model": model, "content": [], "stop_reason": None,
        "stop_sequence": None, "usage": {"input_tokens": in_tokens, "output_tokens": 1,
                                         "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}})
    idx = 0
    if thinking:
        ev("content_block_start", {"type": "content_block_start", "index": idx,
                                   "content_block": {"type": "thinking", "thinking": "", "signature": ""}})
        for piece in split_text(thinking, size):
            ev("content_block_delta", {"type": "content_block_delta", "index": idx,
                                       "delta": {"type": "thinking_delta", "thinking": piece}})
        ev("content_block_delta", {"type": "content_block_delta", "index": idx,
                                   "delta": {"type": "signature_delta", "signature": "fakesig%04d" % seq}})
        ev("content_block_stop", {"type": "content_block_stop", "index": idx})
        idx += 1
    if text:
        ev("content_block_start", {"type": "content_block_start", "index": idx,
                                   "content_block": {"type": "text", "text": ""}})
        for piece in split_text(text, size):
            ev("content_block_delta", {"type": "content_block_delta", "index": idx,
                                       "delta": {"type": "text_delta", "text": piece}})
        ev("content_block_stop", {"type": "content_block_stop", "index": idx})
        idx += 1
    for i, call in enumerate(calls):
        ev("content_block_start", {"type": "content_block_start", "index": idx, "content_block": {
            "type": "tool_use", "id": call.get("id") or "toolu_fake_%d_%d" % (seq, i), "name": call["name"], "input": {}}})
        for piece in split_text(args_text(call), max(size, 16)):
            ev("content_block_delta", {"type": "content_block_delta", "index": idx,
                                       "delta": {"type": "input_json_delta", "partial_json": piece}})
        ev("content_block_stop", {"type": "content_block_stop", "index": idx})
        idx += 1
    ev("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                         "usage": {"output_tokens": out_tokens}})
    ev("message_stop", {"type": "message_stop"})
    return out
