"""A scripted streaming model server for whole-process benchmarks (a process of its own): OpenAI Chat
Completions at ``/v1/chat/completions``, Anthropic Messages at ``/v1/messages``.

    python benchmarks/fake_server.py PORT_FILE

It writes the port it listens on (127.0.0.1) to ``PORT_FILE``. The harness sets a script before each
run with ``POST /_script`` (``{"turns": [...]}``; each request takes the next turn, in the dialect
of the path it was sent to; the last one repeats) and reads what was received with ``GET /_stats``. A turn is one of

* ``{"text": "..."}`` — an answer in a few deltas;
* ``{"tool": "read", "arguments": {...}}`` — one tool call;
* ``{"deltas": 200000}`` — an answer of that many four-character deltas.

Answers are prebuilt bytes, so the server spends next to no time per request while the measured
program runs; request bodies (``content-length`` or chunked) are read and counted, never parsed.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

_BASE = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1, "model": "fake-model"}


def _event(choices: list[dict[str, Any]], **extra: Any) -> bytes:
    return b"data: " + json.dumps({**_BASE, "choices": choices, **extra}, separators=(",", ":")).encode() + b"\n\n"


def _delta(delta: dict[str, Any], finish: str | None = None) -> bytes:
    return _event([{"index": 0, "delta": delta, "finish_reason": finish}])


def _end(finish: str, completion: int) -> bytes:
    usage = {"prompt_tokens": 1000, "completion_tokens": completion, "total_tokens": 1000 + completion}
    return _delta({}, finish) + _event([], usage=usage) + b"data: [DONE]\n\n"


def build(turn: dict[str, Any]) -> bytes:
    """The SSE body answering one request with ``turn``."""
    parts = [_delta({"role": "assistant", "content": ""})]
    if "deltas" in turn:
        one = _delta({"content": "tok "})
        parts.append(one * int(turn["deltas"]))
        parts.append(_end("stop", int(turn["deltas"])))
    elif "tool" in turn:
        arguments = json.dumps(turn.get("arguments") or {})
        call = {"index": 0, "id": f"call_{turn.get('n', 0):06d}", "type": "function",
                "function": {"name": turn["tool"], "arguments": ""}}
        parts.append(_delta({"tool_calls": [call]}))
        parts.append(_delta({"tool_calls": [{"index": 0, "function": {"arguments": arguments}}]}))
        parts.append(_end("tool_calls", 20))
    else:
        text = str(turn.get("text", "done"))
        for i in range(0, len(text), 16):
            parts.append(_delta({"content": text[i:i + 16]}))
        parts.append(_end("stop", 10))
    return b"".join(parts)


def _anthropic_event(kind: str, **data: Any) -> bytes:
    return f"event: {kind}\ndata: ".encode() + json.dumps({"type": kind, **data}, separators=(",", ":")).encode() \
        + b"\n\n"


def build_anthropic(turn: dict[str, Any]) -> bytes:
    """The same answer as :func:`build`, as an Anthropic Messages stream."""
    start = {"id": "msg_bench", "type": "message", "role": "assistant", "model": "fake-claude", "content": [],
             "stop_reason": None, "usage": {"input_tokens": 1000, "output_tokens": 1}}
    parts = [_anthropic_event("message_start", message=start)]
    if "tool" in turn:
        block = {"type": "tool_use", "id": f"toolu_{turn.get('n', 0):06d}", "name": turn["tool"], "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(turn.get("arguments") or {})}
        stop, output = "tool_use", 20
    else:
        block, stop = {"type": "text", "text": ""}, "end_turn"
        text = "tok " * int(turn["deltas"]) if "deltas" in turn else str(turn.get("text", "done"))
        delta, output = {"type": "text_delta", "text": text}, int(turn.get("deltas", 10))
    parts.append(_anthropic_event("content_block_start", index=0, content_block=block))
    if "deltas" in turn:
        one = _anthropic_event("content_block_delta", index=0, delta={"type": "text_delta", "text": "tok "})
        parts.append(one * int(turn["deltas"]))
    elif block["type"] == "text":
        parts += [_anthropic_event("content_block_delta", index=0,
                                   delta={"type": "text_delta", "text": text[i:i + 16]})
                  for i in range(0, len(text), 16)]
    else:
        parts.append(_anthropic_event("content_block_delta", index=0, delta=delta))
    parts.append(_anthropic_event("content_block_stop", index=0))
    parts.append(_anthropic_event("message_delta", delta={"stop_reason": stop}, usage={"output_tokens": output}))
    parts.append(_anthropic_event("message_stop"))
    return b"".join(parts)


class State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.set_script([{"text": "hello from the fake model"}])

    def set_script(self, turns: list[dict[str, Any]]) -> None:
        with self.lock:
            built: dict[str, tuple[bytes, bytes]] = {}
            bodies: list[tuple[bytes, bytes]] = []
            for n, turn in enumerate(turns):
                turn = {**turn, "n": n} if "tool" in turn else turn  # tool call ids must differ per turn
                key = json.dumps(turn, sort_keys=True)
                if key not in built:  # built now, in both dialects: nothing is built while a program runs
                    built[key] = (build(turn), build_anthropic(turn))
                bodies.append(built[key])
            self.bodies, self.next, self.requests, self.request_bytes = bodies, 0, 0, []

    def take(self, size: int, dialect: str = "openai") -> bytes:
        with self.lock:
            body = self.bodies[min(self.next, len(self.bodies) - 1)][dialect == "anthropic"]
            self.next += 1
            self.requests += 1
            self.request_bytes.append(size)
            return body


STATE = State()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        return None

    def _body(self) -> bytes:
        if "chunked" in (self.headers.get("transfer-encoding") or "").lower():
            parts = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("content-length") or 0))

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        view = memoryview(body)
        for i in range(0, len(body), 1 << 20):
            self.wfile.write(view[i:i + (1 << 20)])

    def do_GET(self) -> None:  # noqa: N802
        if self.path == "/_stats":
            with STATE.lock:
                data = {"requests": STATE.requests, "request_bytes": STATE.request_bytes}
            self._send(200, json.dumps(data).encode(), "application/json")
        else:
            self._send(404, b"{}", "application/json")

    def do_POST(self) -> None:  # noqa: N802
        body = self._body()
        if self.path == "/_script":
            STATE.set_script(json.loads(body)["turns"])
            self._send(200, b"{}", "application/json")
            return
        dialect = "anthropic" if self.path.startswith("/v1/messages") else "openai"
        self._send(200, STATE.take(len(body), dialect), "text/event-stream")


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    Path(sys.argv[1]).write_text(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main()
