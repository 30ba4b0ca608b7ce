"""Fake sign-in and model servers for the auth tests: real HTTP on 127.0.0.1, in a thread, so both
in-process code and ``pi`` subprocesses can talk to them.

:class:`FakeHTTP` routes ``(method, path)`` to a handler that gets the recorded request and returns a
:class:`Answer`. :class:`OAuthServer` is an authorization server (authorize redirect, code exchange
checking PKCE, refresh with rotating refresh tokens, device code), and the ``*_sse`` helpers write the
streaming bodies model backends send.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    raw: bytes
    body: Any


@dataclass
class Answer:
    status: int = 200
    body: bytes | str | Any = b""
    headers: dict[str, str] = field(default_factory=dict)

    def encoded(self) -> tuple[bytes, dict[str, str]]:
        headers = dict(self.headers)
        body = self.body
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
            headers.setdefault("content-type", "application/json")
        if isinstance(body, str):
            body = body.encode()
        return body, headers


Handler = Callable[[Request], Answer]


class FakeHTTP:
    """``with FakeHTTP() as server: server.route("POST", "/token", handler); server.url``"""

    def __init__(self) -> None:
        self.routes: dict[tuple[str, str], Handler] = {}
        self.requests: list[Request] = []
        self.lock = threading.Lock()
        fake = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return None

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                parts = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                try:
                    body: Any = json.loads(raw) if raw else None
                except ValueError:
                    body = {k: v[0] for k, v in parse_qs(raw.decode()).items()}
                request = Request(self.command, parts.path, query, {k.lower(): v for k, v in self.headers.items()},
                                  raw, body)
                with fake.lock:
                    fake.requests.append(request)
                handler = fake.routes.get((self.command, parts.path)) or fake.routes.get(("*", parts.path))
                answer = handler(request) if handler else Answer(404, {"error": f"no route {parts.path}"})
                data, headers = answer.encoded()
                self.send_response(answer.status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _serve  # noqa: N815

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def route(self, method: str, path: str, handler: Handler) -> None:
        self.routes[(method, path)] = handler

    def requests_to(self, path: str) -> list[Request]:
        with self.lock:
            return [r for r in self.requests if r.path == path]

    def __enter__(self) -> FakeHTTP:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def challenge_of(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


class OAuthServer:
    """An authorization server's token endpoint (and friends) on a :class:`FakeHTTP`.

    ``issue_code(challenge)`` hands out an authorization code bound to a PKCE challenge; the token
    endpoint exchanges it only with the matching verifier. Refresh tokens rotate: each may be used once.
    ``refresh_delay`` slows refreshes down (to make two processes overlap). Requests may be JSON or form.
    """

    def __init__(self, http: FakeHTTP, token_path: str, *, expires_in: int = 3600, prefix: str = "tok") -> None:
        self.http, self.expires_in, self.prefix = http, expires_in, prefix
        self.codes: dict[str, str] = {}
        self.refresh_tokens: dict[str, bool] = {}
        self.access_tokens: list[str] = []
        self.refresh_calls = 0
        self.refresh_delay = 0.0
        self.fail_refresh: str | None = None
        self.extra_fields: dict[str, Any] = {}
        self.access_maker: Callable[[int], str] | None = None
        http.route("POST", token_path, self._token)

    def issue_code(self, challenge: str) -> str:
        code = "code-" + secrets.token_hex(4)
        self.codes[code] = challenge
        return code

    def new_refresh(self) -> str:
        token = f"{self.prefix}-refresh-{len(self.refresh_tokens) + 1}"
        self.refresh_tokens[token] = True
        return token

    def _tokens(self) -> dict[str, Any]:
        n = len(self.access_tokens) + 1
        access = self.access_maker(n) if self.access_maker else f"{self.prefix}-access-{n}"
        self.access_tokens.append(access)
        return {"access_token": access, "refresh_token": self.new_refresh(), "expires_in": self.expires_in,
                "token_type": "bearer", **self.extra_fields}

    def _token(self, request: Request) -> Answer:
        body = request.body or {}
        grant = body.get("grant_type")
        if grant == "authorization_code":
            challenge = self.codes.pop(body.get("code", ""), None)
            if challenge is None or challenge_of(body.get("code_verifier", "")) != challenge:
                return Answer(400, {"error": "invalid_grant", "error_description": "bad code or verifier"})
            with self.http.lock:
                return Answer(200, self._tokens())
        if grant == "refresh_token":
            time.sleep(self.refresh_delay)
            with self.http.lock:
                self.refresh_calls += 1
                if self.fail_refresh:
                    return Answer(400, {"error": "invalid_grant", "error_description": self.fail_refresh})
                if not self.refresh_tokens.get(body.get("refresh_token", "")):
                    return Answer(400, {"error": "invalid_grant", "error_description": "refresh token reused"})
                self.refresh_tokens[body["refresh_token"]] = False
                return Answer(200, self._tokens())
        return Answer(400, {"error": "unsupported_grant_type"})


# -- model backends ------------------------------------------------------------------------------------
def anthropic_sse(text: str = "hello", tool: tuple[str, dict[str, Any]] | None = None) -> Answer:
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": {"id": "msg_1", "usage": {"input_tokens": 5}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": text}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0})]
    stop = "end_turn"
    if tool is not None:
        name, args = tool
        events += [("content_block_start", {"type": "content_block_start", "index": 1, "content_block": {
                        "type": "tool_use", "id": "toolu_1", "name": name, "input": {}}}),
                   ("content_block_delta", {"type": "content_block_delta", "index": 1, "delta": {
                        "type": "input_json_delta", "partial_json": json.dumps(args)}}),
                   ("content_block_stop", {"type": "content_block_stop", "index": 1})]
        stop = "tool_use"
    events += [("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop},
                                  "usage": {"output_tokens": 2}}),
               ("message_stop", {"type": "message_stop"})]
    body = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)
    return Answer(200, body, {"content-type": "text/event-stream"})


def chat_sse(text: str = "hello") -> Answer:
    chunks = [{"id": "c1", "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}}]},
              {"id": "c1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
               "usage": {"prompt_tokens": 5, "completion_tokens": 2}}]
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    return Answer(200, body, {"content-type": "text/event-stream"})


def responses_sse(text: str = "hello", *, terminal: str = "response.completed") -> Answer:
    events = [
        {"type": "response.created", "response": {"id": "resp_1"}},
        {"type": "response.output_item.added", "output_index": 0,
         "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []}},
        {"type": "response.content_part.added", "output_index": 0, "content_index": 0,
         "part": {"type": "output_text", "text": ""}},
        {"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": text},
        {"type": "response.output_item.done", "output_index": 0, "item": {
            "type": "message", "id": "msg_1", "role": "assistant",
            "content": [{"type": "output_text", "text": text}]}},
        {"type": terminal, "response": {"id": "resp_1", "status": "completed",
                                        "usage": {"input_tokens": 5, "output_tokens": 2, "total_tokens": 7}}}]
    body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    return Answer(200, body, {"content-type": "text/event-stream"})


def unauthorized(message: str = "invalid token") -> Answer:
    return Answer(401, {"type": "error", "error": {"type": "authentication_error", "message": message}})


def bearer(request: Request) -> str | None:
    value = request.headers.get("authorization", "")
    return value[7:] if value.lower().startswith("bearer ") else None


# -- registries of the built-in providers -----------------------------------------------------------------
def builtin_registry(agent_dir: Any, env: dict[str, str] | None = None, models_json: dict[str, Any] | None = None,
                     auth_json: dict[str, Any] | None = None, process_env: bool = False) -> Any:
    """A registry of every built-in provider plugin, with this agent dir's files; its environment is
    ``env`` (default: empty), or the process's with ``process_env``."""
    import importlib
    from pathlib import Path

    from pi_core.ai import ModelRegistry
    from pi_core.extensions.discovery import BUILTIN_PLUGINS

    agent = Path(agent_dir)
    agent.mkdir(parents=True, exist_ok=True)
    if models_json is not None:
        (agent / "models.json").write_text(json.dumps(models_json))
    if auth_json is not None:
        (agent / "auth.json").write_text(json.dumps(auth_json))
    items: list[Any] = []
    for _, module in BUILTIN_PLUGINS:
        if module.startswith("plugins.providers."):
            importlib.import_module(module).register_providers(lambda item, replaces=None: items.append(item))
    apis = [i for i in items if hasattr(i, "stream")]
    providers = [i for i in items if not hasattr(i, "stream")]
    return ModelRegistry(apis, providers, agent_dir=agent, env=None if process_env else (env or {}))


def now_ms() -> int:
    return int(time.time() * 1000)


class ScriptedLogin:
    """A LoginInteraction that answers from a list and records what it was told."""

    def __init__(self, answers: list[str]) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[str, str]] = []
        self.events: list[Any] = []

    async def _next(self, kind: str, message: str) -> str:
        self.asked.append((kind, message))
        return self.answers.pop(0)

    async def select(self, message: str, options: Any) -> str:
        answer = await self._next("select", message)
        return next(o.id for o in options if answer in (o.id, o.label))

    async def secret(self, message: str) -> str:
        return await self._next("secret", message)

    async def text(self, message: str, placeholder: str = "") -> str:
        return await self._next("text", message)

    async def manual_code(self, message: str, placeholder: str = "") -> str:
        return await self._next("manual_code", message)

    def notify(self, event: Any) -> None:
        self.events.append(event)
