"""A scripted OpenAI Chat Completions server in a thread (127.0.0.1, real sockets) for CLI tests.

Turns use the conformance ``script.json`` shape: ``{"text": ..., "tool_calls": [{id, name, arguments}],
"error": {"status": 400, "message": ...}, "delay": seconds, "chunk_delay": seconds}``. Each request is
answered by the next turn and recorded. A tool call may give ``raw_arguments`` (the exact text sent)
instead of ``arguments``.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


class FakeOpenAI:
    def __init__(self, turns: list[dict[str, Any]]) -> None:
        self.turns = list(turns)
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return None

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                    turn = server.turns.pop(0) if server.turns else {"text": "(script exhausted)"}
                server._answer(self, turn, len(server.requests))

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _answer(self, handler: BaseHTTPRequestHandler, turn: dict[str, Any], seq: int) -> None:
        time.sleep(turn.get("delay", 0))
        error = turn.get("error")
        if error:
            data = json.dumps({"message": error["message"], "type": "invalid_request_error"}).encode()
            handler.send_response(error["status"])
            handler.send_header("content-type", "application/json")
            handler.send_header("content-length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
            return
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.end_headers()
        for chunk in _chunks(turn, seq):
            try:
                handler.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                handler.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                return
            time.sleep(turn.get("chunk_delay", 0))
        handler.wfile.write(b"data: [DONE]\n\n")


def _chunks(turn: dict[str, Any], seq: int) -> list[dict[str, Any]]:
    base = {"id": f"chatcmpl-fake{seq:04d}", "object": "chat.completion.chunk", "model": "fake-model"}
    out = []
    text = turn.get("text")
    if text:
        for i in range(0, len(text), 8):
            out.append({**base, "choices": [{"index": 0, "delta": {"content": text[i:i + 8]}}]})
    for index, call in enumerate(turn.get("tool_calls") or []):
        args = call["raw_arguments"] if "raw_arguments" in call else json.dumps(call["arguments"])
        out.append({**base, "choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": index, "id": call["id"], "type": "function", "function": {"name": call["name"], "arguments": ""}}]}}]})
        for i in range(0, len(args), 10):
            out.append({**base, "choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": index, "function": {"arguments": args[i:i + 10]}}]}}]})
    finish = "tool_calls" if turn.get("tool_calls") else "stop"
    out.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    out.append({**base, "choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}})
    return out


def write_agent_dir(agent: Path, base_url: str, settings: dict[str, Any] | None = None) -> None:
    """models.json with a custom provider ``fake`` pointing at the server, as the conformance runs do."""
    agent.mkdir(parents=True, exist_ok=True)
    models = {"providers": {"fake": {"baseUrl": base_url, "api": "openai-completions", "apiKey": "fake-key",
                                     "models": [{"id": "fake-model", "name": "Fake Model", "reasoning": False,
                                                 "contextWindow": 128000, "maxTokens": 4096,
                                                 "cost": {"input": 1.0, "output": 2.0, "cacheRead": 0.1,
                                                          "cacheWrite": 1.25}}]}}}
    (agent / "models.json").write_text(json.dumps(models))
    (agent / "settings.json").write_text(json.dumps(settings or {}))
