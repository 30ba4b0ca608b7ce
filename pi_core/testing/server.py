"""A local model server for tests: real sockets on 127.0.0.1, speaking the providers' streaming formats.

``FakeProviderServer`` answers each request with the next scripted reply and records every request
(method, path, headers, JSON body). A reply is one of:

* a *turn* — what the model says, written once and encoded for whichever API asked:
  OpenAI Chat Completions (``POST .../chat/completions``), Anthropic Messages (``.../v1/messages``) or
  Google Gemini (``...:streamGenerateContent``). A turn is a string (text), a dict in the conformance
  scripts' shape (``{"text", "thinking", "tool_calls": [{"name", "arguments" | "raw_arguments", "id"?}], "error": {"status",
  "message"}, "usage": {"prompt_tokens", "completion_tokens"}, "delay", "chunk_delay"}``), or the faux
  provider's blocks (``faux_text``/``faux_thinking``/``faux_tool_call``, a list of them, ``faux_error``);
* a :class:`Reply` — exact bytes: status, headers, body chunks, pauses, a connection cut;
* a callable ``(Recorded) -> reply`` deciding when the request arrives.

The server runs its own event loop in a background thread, so it serves synchronous code, ``async``
tests and ``pi`` subprocesses alike: ``with FakeProviderServer([...]) as server`` or ``async with``.
When the script runs out, requests get an HTTP 500 saying so.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Reply:
    """Exact response bytes. ``chunks`` are sent with HTTP chunked encoding, ``chunk_delay`` apart."""

    status: int = 200
    chunks: list[bytes] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": "text/event-stream"})
    delay: float = 0.0
    """Seconds before the response starts."""
    chunk_delay: float = 0.0
    """Seconds between body chunks."""
    cut_after: int | None = None
    """Close the connection after this many chunks, without finishing the body."""


@dataclass
class Recorded:
    """One request as the server received it; ``body`` is parsed JSON when it was JSON."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any

    @property
    def api(self) -> str:
        return api_for_path(self.path)

    def __getitem__(self, key: str) -> Any:
        """``request["body"]`` works as ``request.body`` (for tests written against plain dicts)."""
        if key not in ("method", "path", "headers", "body"):
            raise KeyError(key)
        return getattr(self, key)


def sse(events: Iterable[str | tuple[str, Any] | dict[str, Any]], *, named: bool = False) -> list[bytes]:
    """SSE chunks: a dict is ``data: <json>``; ``(name, obj)`` adds ``event: name``; a str is sent raw."""
    out: list[bytes] = []
    for item in events:
        if isinstance(item, str):
            out.append(item.encode())
        elif isinstance(item, tuple):
            name, obj = item
            out.append(f"event: {name}\ndata: {json.dumps(obj)}\n\n".encode())
        elif named:
            out.append(f"event: {item['type']}\ndata: {json.dumps(item)}\n\n".encode())
        else:
            out.append(f"data: {json.dumps(item)}\n\n".encode())
    return out


def json_reply(status: int, body: Any, headers: dict[str, str] | None = None) -> Reply:
    data = body if isinstance(body, (bytes, str)) else json.dumps(body)
    data = data.encode() if isinstance(data, str) else data
    return Reply(status=status, chunks=[data] if data else [],
                 headers={"content-type": "application/json", **(headers or {})})


def split_every(data: bytes, size: int) -> list[bytes]:
    return [data[i:i + size] for i in range(0, len(data), size)]


def api_for_path(path: str) -> str:
    """Which API a request path belongs to (``openai-completions``, ``anthropic-messages``, ``google``)."""
    if "/chat/completions" in path:
        return "openai-completions"
    if "/messages" in path:
        return "anthropic-messages"
    if ":streamGenerateContent" in path or ":generateContent" in path:
        return "google-generative-ai"
    if path.rstrip("/").endswith("/responses"):
        return "openai-responses"
    return "unknown"


# -------------------------------------------------------------------------------------------------
# turns


def as_turn(script: Any) -> dict[str, Any]:
    """A reply script in the dict shape (strings, faux blocks and faux turns converted)."""
    from ..ai.faux import FauxTurn
    from ..ai.types import TextContent, ThinkingContent, ToolCall

    if isinstance(script, dict):
        return script
    if isinstance(script, str):
        return {"text": script}
    blocks: list[Any]
    turn: dict[str, Any] = {}
    if isinstance(script, FauxTurn):
        blocks = list(script.blocks)
        if script.error:
            turn["error"] = {"status": script.status or 500, "message": script.error}
        if script.delay:
            turn["delay"] = script.delay
    elif isinstance(script, list):
        blocks = script
    else:
        blocks = [script]
    for block in blocks:
        if isinstance(block, str | TextContent):
            turn["text"] = turn.get("text", "") + (block if isinstance(block, str) else block.text)
        elif isinstance(block, ThinkingContent):
            turn["thinking"] = turn.get("thinking", "") + block.thinking
        elif isinstance(block, ToolCall):
            turn.setdefault("tool_calls", []).append({"id": block.id, "name": block.name,
                                                      "arguments": dict(block.arguments)})
        else:
            raise TypeError(f"cannot script a model reply from {block!r}")
    return turn


def _estimate(obj: Any) -> int:
    return max(1, len(json.dumps(obj, ensure_ascii=False)) // 4)


def _split(text: str, size: int) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), max(1, size))]


def _args(call: dict[str, Any]) -> str:
    if "raw_arguments" in call:  # the exact text to send (a malformed stream, a repair test)
        return str(call["raw_arguments"])
    args = call.get("arguments", {})
    return args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)


def _out_tokens(turn: dict[str, Any]) -> int:
    calls = turn.get("tool_calls") or []
    size = len(turn.get("text") or "") + len(turn.get("thinking") or "") + sum(len(_args(c)) for c in calls)
    return int((turn.get("usage") or {}).get("completion_tokens", max(1, size // 4)))


def _in_tokens(turn: dict[str, Any], body: Any) -> int:
    return int((turn.get("usage") or {}).get("prompt_tokens", _estimate(body)))


def openai_chunks(turn: dict[str, Any], body: dict[str, Any], seq: int) -> list[bytes]:
    """The SSE body of one turn for ``POST /v1/chat/completions``."""
    model, created, cid = body.get("model", "fake-model"), int(time.time()), "chatcmpl-fake%04d" % seq
    text, thinking, calls = turn.get("text") or "", turn.get("thinking") or "", turn.get("tool_calls") or []
    finish = turn.get("finish_reason") or ("tool_calls" if calls else "stop")
    size = int(turn.get("chunk_size") or 8)
    out: list[bytes] = []

    def emit(delta: Any = None, finish_reason: Any = None, usage: Any = None, choices: bool = True) -> None:
        chunk: dict[str, Any] = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model}
        chunk["choices"] = [{"index": 0, "delta": delta or {}, "finish_reason": finish_reason}] if choices else []
        if usage is not None:
            chunk["usage"] = usage
        out.append(b"data: " + json.dumps(chunk, ensure_ascii=False).encode() + b"\n\n")

    emit({"role": "assistant", "content": ""})
    for piece in _split(thinking, size):
        emit({"reasoning_content": piece})
    for piece in _split(text, size):
        emit({"content": piece})
    for i, call in enumerate(calls):
        call_id = call.get("id") or "call_fake_%d_%d" % (seq, i)
        emit({"tool_calls": [{"index": i, "id": call_id, "type": "function",
                              "function": {"name": call["name"], "arguments": ""}}]})
        for piece in _split(_args(call), max(size, 16)):
            emit({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
    emit({}, finish_reason=finish)
    if (body.get("stream_options") or {}).get("include_usage"):
        prompt, completion = _in_tokens(turn, body), _out_tokens(turn)
        emit(None, usage={"prompt_tokens": prompt, "completion_tokens": completion,
                          "total_tokens": prompt + completion}, choices=False)
    out.append(b"data: [DONE]\n\n")
    return out


def anthropic_chunks(turn: dict[str, Any], body: dict[str, Any], seq: int) -> list[bytes]:
    """The SSE body of one turn for ``POST /v1/messages``."""
    model, mid = body.get("model", "fake-model"), "msg_fake%04d" % seq
    text, thinking, calls = turn.get("text") or "", turn.get("thinking") or "", turn.get("tool_calls") or []
    stop = turn.get("finish_reason") or ("tool_use" if calls else "end_turn")
    size = int(turn.get("chunk_size") or 8)
    out: list[bytes] = []

    def ev(name: str, obj: Any) -> None:
        out.append(f"event: {name}\n".encode() + b"data: " + json.dumps(obj, ensure_ascii=False).encode() + b"\n\n")

    ev("message_start", {"type": "message_start", "message": {
        "id": mid, "type": "message", "role": "assistant", "model": model, "content": [], "stop_reason": None,
        "stop_sequence": None, "usage": {"input_tokens": _in_tokens(turn, body), "output_tokens": 1,
                                         "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}})
    index = 0

    def block(start: dict[str, Any], deltas: list[dict[str, Any]]) -> None:
        nonlocal index
        ev("content_block_start", {"type": "content_block_start", "index": index, "content_block": start})
        for delta in deltas:
            ev("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
        ev("content_block_stop", {"type": "content_block_stop", "index": index})
        index += 1

    if thinking:
        block({"type": "thinking", "thinking": "", "signature": ""},
              [{"type": "thinking_delta", "thinking": p} for p in _split(thinking, size)]
              + [{"type": "signature_delta", "signature": "fakesig%04d" % seq}])
    if text:
        block({"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in _split(text, size)])
    for i, call in enumerate(calls):
        block({"type": "tool_use", "id": call.get("id") or "toolu_fake_%d_%d" % (seq, i), "name": call["name"],
               "input": {}}, [{"type": "input_json_delta", "partial_json": p} for p in _split(_args(call), max(size, 16))])
    ev("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                         "usage": {"output_tokens": _out_tokens(turn)}})
    ev("message_stop", {"type": "message_stop"})
    return out


def google_chunks(turn: dict[str, Any], body: dict[str, Any], seq: int) -> list[bytes]:
    """The SSE body of one turn for ``POST .../models/{id}:streamGenerateContent?alt=sse``."""
    text, thinking, calls = turn.get("text") or "", turn.get("thinking") or "", turn.get("tool_calls") or []
    size = int(turn.get("chunk_size") or 8)
    usage = {"promptTokenCount": _in_tokens(turn, body), "candidatesTokenCount": _out_tokens(turn)}
    usage["totalTokenCount"] = usage["promptTokenCount"] + usage["candidatesTokenCount"]
    parts: list[dict[str, Any]] = [{"text": p, "thought": True} for p in _split(thinking, size)]
    parts += [{"text": p} for p in _split(text, size)]
    parts += [{"functionCall": {"name": c["name"], "args": c.get("arguments") or {},
                                "id": c.get("id") or "call_fake_%d_%d" % (seq, i)}} for i, c in enumerate(calls)]
    finish = turn.get("finish_reason") or "STOP"
    out = []
    for n, part in enumerate(parts or [{"text": ""}]):
        candidate: dict[str, Any] = {"content": {"parts": [part], "role": "model"}, "index": 0}
        if n == max(len(parts), 1) - 1:
            candidate["finishReason"] = finish
        chunk = {"candidates": [candidate], "usageMetadata": usage, "modelVersion": "fake-model",
                 "responseId": "fake%04d" % seq}
        out.append(b"data: " + json.dumps(chunk, ensure_ascii=False).encode() + b"\n\n")
    return out


_ENCODERS: dict[str, Callable[[dict[str, Any], dict[str, Any], int], list[bytes]]] = {
    "openai-completions": openai_chunks, "anthropic-messages": anthropic_chunks, "google-generative-ai": google_chunks,
}


def error_reply(api: str, status: int, message: str) -> Reply:
    """An HTTP error in the shape the API's servers send."""
    if api == "anthropic-messages":
        body: Any = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    elif api == "google-generative-ai":
        body = {"error": {"code": status, "message": message, "status": "INVALID_ARGUMENT"}}
    else:
        body = {"error": {"message": message, "type": "invalid_request_error"}}
    return json_reply(status, body)


def encode_turn(turn: dict[str, Any], request: Recorded, seq: int) -> Reply:
    """The :class:`Reply` that answers ``request`` with ``turn`` in the request's API's format."""
    api = request.api
    error = turn.get("error")
    if error:
        return Reply(**{**error_reply(api, int(error.get("status", 500)), str(error.get("message", "error"))).__dict__,
                        "delay": float(turn.get("delay", 0))})
    encoder = _ENCODERS.get(api)
    if encoder is None:
        return error_reply(api, 404, f"the fake server does not speak {api} ({request.path})")
    body = request.body if isinstance(request.body, dict) else {}
    return Reply(chunks=encoder(turn, body, seq), delay=float(turn.get("delay", 0)),
                 chunk_delay=float(turn.get("chunk_delay", 0)))


# -------------------------------------------------------------------------------------------------
# the server


class FakeProviderServer:
    """``with FakeProviderServer(["Hello!"]) as server: server.url`` — see the module docstring."""

    def __init__(self, replies: Iterable[Any] = ()) -> None:
        self.replies: list[Any] = list(replies)
        self.requests: list[Recorded] = []
        self.disconnects = 0
        self.port = 0
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None

    # -- scripting -----------------------------------------------------------------------------

    def script(self, *replies: Any) -> FakeProviderServer:
        """Queue more replies (turns, :class:`Reply` objects or callables)."""
        with self._lock:
            self.replies.extend(replies)
        return self

    @property
    def pending(self) -> int:
        return len(self.replies)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def base_url_for(self, api: str = "openai-completions") -> str:
        """The ``baseUrl`` a provider of that API uses to reach this server."""
        return self.url + {"openai-completions": "/v1", "openai-responses": "/v1",
                           "google-generative-ai": "/v1beta"}.get(api, "")

    @property
    def bodies(self) -> list[Any]:
        """The JSON bodies received, in order (what the model was sent)."""
        return [r.body for r in self.requests]

    # -- life ----------------------------------------------------------------------------------

    def start(self) -> FakeProviderServer:
        if self._thread is not None:
            return self
        ready = threading.Event()

        def serve() -> None:
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)  # this thread's own loop
            self._loop = loop
            self._server = loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", 0))
            self.port = self._server.sockets[0].getsockname()[1]
            ready.set()
            loop.run_forever()
            # Connections still open (a client that went away mid-reply) are cancelled and awaited
            # here, so none is left to be torn down by the garbage collector after the loop closed.
            self._server.close()
            pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
            for task in pending:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(self._server.wait_closed())
            loop.close()

        self._thread = threading.Thread(target=serve, name="pi-fake-provider", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("the fake provider server did not start")
        return self

    def stop(self) -> None:
        if self._thread is None or self._loop is None:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._thread = None

    def __enter__(self) -> FakeProviderServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> FakeProviderServer:
        return self.start()

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self.stop)

    # -- models.json ---------------------------------------------------------------------------

    def provider_config(self, api: str = "openai-completions", *, model: str = "fake-model",
                        reasoning: bool = False) -> dict[str, Any]:
        """A ``models.json`` provider entry that points ``api`` at this server."""
        return {"baseUrl": self.base_url_for(api), "api": api, "apiKey": "fake-key",
                "models": [{"id": model, "name": "Fake Model", "reasoning": reasoning, "input": ["text", "image"],
                            "contextWindow": 128000, "maxTokens": 4096,
                            "cost": {"input": 1.0, "output": 2.0, "cacheRead": 0.1, "cacheWrite": 1.25}}]}

    def write_models_json(self, agent_dir: Path | str, *, default: str = "openai-completions",
                          settings: dict[str, Any] | None = None) -> None:
        """Write ``models.json`` (providers ``fake`` (OpenAI), ``fake-anthropic``, ``fake-google``, all
        model ``fake-model``) and a ``settings.json`` choosing the ``default`` API's provider."""
        agent = Path(agent_dir)
        agent.mkdir(parents=True, exist_ok=True)
        providers = {"fake": self.provider_config("openai-completions"),
                     "fake-anthropic": self.provider_config("anthropic-messages"),
                     "fake-google": self.provider_config("google-generative-ai")}
        (agent / "models.json").write_text(json.dumps({"providers": providers}, indent=2))
        name = {"openai-completions": "fake", "anthropic-messages": "fake-anthropic",
                "google-generative-ai": "fake-google"}[default]
        path = agent / "settings.json"
        existing = json.loads(path.read_text()) if path.exists() else {}
        path.write_text(json.dumps({**existing, "defaultProvider": name, "defaultModel": "fake-model",
                                    **(settings or {})}, indent=2))

    # -- HTTP ----------------------------------------------------------------------------------

    async def _read_request(self, reader: asyncio.StreamReader) -> Recorded:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        raw = await reader.readexactly(int(headers.get("content-length", "0")))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        return Recorded(method, path, headers, body)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await self._read_request(reader)
            with self._lock:
                self.requests.append(request)
                seq = len(self.requests)
                reply = self.replies.pop(0) if self.replies else None
            if reply is None:
                reply = json_reply(500, {"error": {"message": "fake provider: script exhausted"}})
            if callable(reply):  # a reply that depends on the request
                reply = reply(request)
            if not isinstance(reply, Reply):
                reply = encode_turn(as_turn(reply), request, seq)
            await self._respond(reply, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            self.disconnects += 1
        finally:
            writer.close()

    async def _respond(self, reply: Reply, writer: asyncio.StreamWriter) -> None:
        if reply.delay:
            await asyncio.sleep(reply.delay)
        head = [f"HTTP/1.1 {reply.status} X", "transfer-encoding: chunked", "connection: close"]
        head += [f"{k}: {v}" for k, v in reply.headers.items()]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
        for n, chunk in enumerate(reply.chunks):
            if reply.cut_after is not None and n >= reply.cut_after:
                await writer.drain()
                writer.transport.abort()
                return
            if chunk:
                writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            await writer.drain()
            if reply.chunk_delay:
                await asyncio.sleep(reply.chunk_delay)
        if reply.cut_after is not None:
            writer.transport.abort()
            return
        writer.write(b"0\r\n\r\n")
        await writer.drain()


__all__ = ["FakeProviderServer", "Recorded", "Reply", "anthropic_chunks", "api_for_path", "as_turn", "encode_turn",
           "error_reply", "google_chunks", "json_reply", "openai_chunks", "split_every", "sse"]
