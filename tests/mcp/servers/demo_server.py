"""A real MCP server for the tests, written with the SDK's server API (FastMCP).

``python demo_server.py [--http PORT] [--hang] [--stubborn] [--instructions TEXT]``: stdio by default,
streamable HTTP on 127.0.0.1 with ``--http``. ``--hang`` never answers (it reads nothing);
``--stubborn`` starts a child that ignores the end of stdin and SIGTERM (for orphan checks).
Over HTTP, ``--unavailable METHOD`` (repeatable) answers the next request of that JSON-RPC method with
503 Service Unavailable, once per occurrence, and ``--requests FILE`` appends a line per request
received (the method, and for ``tools/call`` the tool and its arguments).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import subprocess
import sys
import time
from typing import Any

from mcp.server.fastmcp import Context, FastMCP
from mcp.types import ImageContent, TextContent, ToolAnnotations

PNG = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f0e0000000049454e44ae426082")).decode()


def build(instructions: str | None) -> FastMCP:
    server = FastMCP("demo", instructions=instructions)

    @server.tool(description="Echo the given text back, prefixed with 'echo:'.",
                 annotations=ToolAnnotations(readOnlyHint=True))
    def echo(text: str) -> str:
        return f"echo:{text}"

    @server.tool(description="Add two integers and return the sum.", annotations=ToolAnnotations(readOnlyHint=True))
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool(description="Delete a record permanently.",
                 annotations=ToolAnnotations(destructiveHint=True, openWorldHint=True))
    def delete_record(record_id: str) -> str:
        return f"deleted {record_id}"

    @server.tool(description="Wait for the given seconds, reporting progress, then answer.")
    async def slow(seconds: float, ctx: Context) -> str:
        steps = max(1, int(seconds / 0.2))
        for step in range(steps):
            await ctx.report_progress(step, steps)
            await asyncio.sleep(seconds / steps)
        return f"slept {seconds}"

    @server.tool(description="Wait for the given seconds without reporting progress, then answer.")
    async def stall(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return f"stalled {seconds}"

    waiting: dict[str, list[Any]] = {}

    async def rendezvous(group: str, count: int) -> str:
        arrived = waiting.setdefault(group, [0, asyncio.Event()])
        arrived[0] += 1
        if arrived[0] >= count:
            arrived[1].set()
        await asyncio.wait_for(arrived[1].wait(), 20)
        return f"met {count}"

    @server.tool(description="Wait until `count` calls of the same group wait at once, then answer (20 s at most).",
                 annotations=ToolAnnotations(readOnlyHint=True))
    async def meet(group: str, count: int) -> str:
        return await rendezvous(group, count)

    @server.tool(description="Like meet, but without the read-only hint (a tool that may change things).")
    async def meet_writing(group: str, count: int) -> str:
        return await rendezvous(group, count)

    def extra(text: str) -> str:
        return f"extra:{text}"

    @server.tool(description="Make the tool `extra` appear (or disappear again) and tell the client that the "
                             "tool list changed.")
    async def toggle_extra(ctx: Context) -> str:
        if "extra" not in {tool.name for tool in await server.list_tools()}:
            server.add_tool(extra, name="extra", description="A tool that appears at run time.")
            added = True
        else:
            server.remove_tool("extra")
            added = False
        await ctx.session.send_tool_list_changed()
        return "added extra" if added else "withdrew extra"

    @server.tool(description="Crash the server process in the middle of the call.")
    def crash() -> str:
        sys.stderr.write("demo server: crashing on purpose\n")
        sys.stderr.flush()
        os._exit(3)

    @server.tool(description="Return a very large text result of the given size in kilobytes.")
    def huge(kilobytes: int) -> str:
        line = "0123456789abcdef" * 4 + "\n"
        return (line * (kilobytes * 1024 // len(line) + 1))[: kilobytes * 1024]

    @server.tool(description="Return a tiny PNG image with a caption.")
    def picture() -> list[TextContent | ImageContent]:
        return [TextContent(type="text", text="a red dot"), ImageContent(type="image", data=PNG, mimeType="image/png")]

    @server.tool(description="Fail with an error result.")
    def fail(reason: str) -> str:
        raise ValueError(f"failed because {reason}")

    @server.tool(description="Report the server process id, its environment variables DEMO_VALUE and DEMO_OTHER, "
                             "and its working directory.")
    def whoami() -> str:
        return (f"pid={os.getpid()} pgid={os.getpgrp()} DEMO_VALUE={os.environ.get('DEMO_VALUE', '')} "
                f"DEMO_OTHER={os.environ.get('DEMO_OTHER', '')} cwd={os.getcwd()}")

    @server.resource("demo://readme", name="readme", description="The demo README", mime_type="text/plain")
    def readme() -> str:
        return "Demo server README: tools echo and add."

    @server.resource("demo://records/{record_id}", name="record", description="One record by its id",
                     mime_type="application/json")
    def record(record_id: str) -> str:
        return f'{{"id": "{record_id}", "kind": "record"}}'

    @server.resource("demo://logo.png", name="logo", description="The demo logo", mime_type="image/png")
    def logo() -> bytes:
        return base64.b64decode(PNG)

    @server.resource("ui://demo/widget", name="widget", description="An MCP App view", mime_type="text/html")
    def widget() -> str:
        return "<html></html>"

    return server


class Unavailable:
    """ASGI middleware: 503 for the planned requests, every request noted in a file."""

    def __init__(self, app: Any, plan: list[str], log: str | None) -> None:
        self.app, self.plan, self.log = app, list(plan), log

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        messages = [await receive()]
        while messages[-1].get("more_body"):
            messages.append(await receive())
        request = json.loads(b"".join(m.get("body", b"") for m in messages) or b"{}")
        method = request.get("method") if isinstance(request, dict) else None
        if self.log:
            params = request.get("params") or {}
            what = f"{method} {params.get('name')} {json.dumps(params.get('arguments'))}" if method == "tools/call" \
                else str(method)
            with open(self.log, "a") as handle:
                handle.write(what + "\n")
        if method in self.plan:
            self.plan.remove(method)
            await send({"type": "http.response.start", "status": 503, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"busy, try again"})
            return
        replay = iter(messages)

        async def received() -> Any:
            return next(replay, None) or await receive()

        await self.app(scope, received, send)


def serve_http(server: FastMCP, port: int, unavailable: list[str], log: str | None) -> None:
    import uvicorn

    app = Unavailable(server.streamable_http_app(), unavailable, log)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int)
    parser.add_argument("--hang", action="store_true")
    parser.add_argument("--stubborn", action="store_true")
    parser.add_argument("--instructions")
    parser.add_argument("--unavailable", action="append", default=[])
    parser.add_argument("--requests")
    args = parser.parse_args()
    sys.stderr.write(f"demo server starting (pid {os.getpid()})\n")
    sys.stderr.flush()
    if args.hang:
        while True:
            time.sleep(60)
    if args.stubborn:
        subprocess.Popen([sys.executable, "-c", "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                          "while True: time.sleep(1)"], stdin=subprocess.DEVNULL)
    server = build(args.instructions)
    if args.http and (args.unavailable or args.requests):
        serve_http(server, args.http, args.unavailable, args.requests)
    elif args.http:
        server.settings.host, server.settings.port = "127.0.0.1", args.http
        server.settings.log_level = "WARNING"
        server.run("streamable-http")
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
