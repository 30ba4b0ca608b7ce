"""A scripted HTTP/1.1 server on 127.0.0.1 (real sockets, asyncio) for the provider tests.

Each request is answered by the next scripted :class:`Reply`: a status, headers and a body sent as the
given chunks (HTTP chunked encoding, optional pauses), or cut off mid-body to simulate a dropped
connection. Every request is recorded (method, path, headers, parsed JSON body).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Reply:
    status: int = 200
    chunks: list[bytes] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": "text/event-stream"})
    delay: float = 0.0
    """Seconds before the response starts."""
    chunk_delay: float = 0.0
    """Seconds between body chunks."""
    cut_after: int | None = None
    """Close the connection after this many chunks, without finishing the body."""


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


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


class FakeServer:
    """``async with FakeServer([Reply(...), ...]) as server: server.url``"""

    def __init__(self, replies: Iterable[Reply | Callable[[Recorded], Reply]] = ()) -> None:
        self.replies = list(replies)
        self.requests: list[Recorded] = []
        self.disconnects = 0
        self._server: asyncio.Server | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def __aenter__(self) -> FakeServer:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

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
            self.requests.append(request)
            reply = self.replies.pop(0) if self.replies else json_reply(500, {"error": {"message": "script exhausted"}})
            if callable(reply):  # a reply that depends on the request
                reply = reply(request)
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


def split_every(data: bytes, size: int) -> list[bytes]:
    return [data[i:i + size] for i in range(0, len(data), size)]
