"""MCP costs: ``pi -p`` time to the first model request with 5 stdio servers configured, and a tool
call's overhead over the bare SDK call.

    python benchmarks/bench_mcp.py [--runs 15] [--calls 300]

*Start-up*: ``pi -p`` against a local fake model server (a thread of this process) in an isolated agent
dir; the time is from starting the child to the server receiving the first request, median of
``--runs`` (the first two cases alternate in rounds of 3). Compared: no ``mcp.json``; 5 stdio servers with
the default ``codemode`` exposure (in ``-p``/JSON mode they start only when a call needs them, so here not
at all); 5 with ``direct`` exposure (the first prompt waits for them by design: its
request declares their tools). Goal: the 5 ``codemode`` servers add at most 50 ms.

*Per call*: one ``echo`` call, median of ``--calls`` after a warm-up, each path on its own server process:
the bare SDK (``ClientSession.call_tool`` over ``stdio_client``, after ``list_tools``, so the SDK checks
results against the tools' output schemas as it does for pi); pi's MCP tool (the ``Tool.execute`` the
plugin registers: time limit, progress, result conversion); and the whole tool pipeline of a session
(``ToolContext.execute_tool``: argument validation, ``before_tool_call``/``after_tool_call``, events, the
nested-call record). Goal: pi's tool adds at most 2 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SERVER = Path(__file__).with_name("mcp_echo_server.py")
ANSWER = (b'data: {"id":"b","object":"chat.completion.chunk","created":1,"model":"fake-model","choices":[{"index":0,'
          b'"delta":{"role":"assistant","content":"ok"},"finish_reason":null}]}\n\n'
          b'data: {"id":"b","object":"chat.completion.chunk","created":1,"model":"fake-model","choices":[{"index":0,'
          b'"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}\n\n'
          b"data: [DONE]\n\n")


class FirstRequest:
    """An OpenAI-compatible endpoint that notes when each request arrives (``time.perf_counter``)."""

    def __init__(self) -> None:
        self.arrivals: list[float] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return None

            def do_POST(self) -> None:  # noqa: N802
                outer.arrivals.append(time.perf_counter())
                self.rfile.read(int(self.headers.get("content-length") or 0))
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(ANSWER)))
                self.end_headers()
                self.wfile.write(ANSWER)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.httpd.shutdown()


def agent_dir(base_url: str, servers: int, exposure: str) -> Path:
    scratch = Path(tempfile.mkdtemp(prefix=f"pi-bench-mcp-{servers}-"))
    agent = scratch / "agent"
    agent.mkdir()
    (agent / "models.json").write_text(json.dumps({"providers": {"fake": {
        "baseUrl": base_url, "api": "openai-completions", "apiKey": "k",
        "models": [{"id": "fake-model", "name": "F", "contextWindow": 128000, "maxTokens": 4096}]}}}))
    (agent / "settings.json").write_text("{}")
    if servers:
        entries = {f"s{n}": {"command": sys.executable, "args": [str(SERVER)], "exposure": exposure} for n in range(servers)}
        (agent / "mcp.json").write_text(json.dumps({"mcpServers": entries}))
    return agent


def first_request_ms(runs: int, servers: int, exposure: str = "codemode") -> list[float]:
    endpoint = FirstRequest()
    agent = agent_dir(endpoint.url, servers, exposure)
    env = {**os.environ, "HOME": str(agent.parent), "PI_CODING_AGENT_DIR": str(agent), "PI_OFFLINE": "1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    command = [sys.executable, "-m", "pi_core", "--provider", "fake", "--model", "fake-model", "--no-session",
               "-p", "hi"]
    times = []
    try:
        for run in range(runs + 1):  # the first run warms caches and bytecode
            before = len(endpoint.arrivals)
            started = time.perf_counter()
            subprocess.run(command, cwd=agent.parent, env=env, capture_output=True, check=True, timeout=120)
            if run:
                times.append((endpoint.arrivals[before] - started) * 1000)
    finally:
        endpoint.close()
    return times


# -------------------------------------------------------------------------------------------------
# per call


async def bare_sdk_ms(calls: int) -> list[float]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
    times = []
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()  # as a client does; the SDK then checks results against output schemas
            for n in range(calls + 20):
                started = time.perf_counter()
                await session.call_tool("echo", {"text": f"call {n}"})
                if n >= 20:
                    times.append((time.perf_counter() - started) * 1000)
    return times


async def pi_paths_ms(calls: int) -> tuple[list[float], list[float]]:
    """pi's MCP tool alone, and the session's whole tool pipeline, in a real SDK session."""
    from pi_core import AbortSignal, ToolContext, create_agent_session

    scratch = Path(tempfile.mkdtemp(prefix="pi-bench-mcp-calls-"))
    agent = scratch / "agent"
    agent.mkdir()
    (agent / "mcp.json").write_text(json.dumps({"mcpServers": {
        "bench": {"command": sys.executable, "args": [str(SERVER)], "exposure": "deferred"}}}))
    session = await create_agent_session(scratch, provider="faux", agent_dir=agent, session="memory")
    try:
        tool = None
        for _ in range(600):
            tool = next((t for t in session.host.tools if t.name == "mcp__bench__echo"), None)
            if tool is not None:
                break
            await asyncio.sleep(0.05)
        assert tool is not None, "the bench server did not connect"
        ctx = ToolContext("bench", scratch, AbortSignal(), session=session.ctx)
        direct = []
        for n in range(calls + 20):
            started = time.perf_counter()
            await tool.run({"text": f"call {n}"}, ctx)
            if n >= 20:
                direct.append((time.perf_counter() - started) * 1000)
        pipeline = []
        signal = AbortSignal()
        for n in range(calls + 20):
            started = time.perf_counter()
            outcome = await session.nested_calls.execute("bench", "mcp__bench__echo", {"text": f"call {n}"}, signal, None)
            if n >= 20:
                pipeline.append((time.perf_counter() - started) * 1000)
            assert not outcome.is_error, outcome.result.text_content()
        session.nested_calls.clear()
        return direct, pipeline
    finally:
        await session.close()


def median(values: list[float]) -> float:
    return statistics.median(values)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    # the two cases alternate in rounds so that load from other work on the machine falls on both alike
    rounds = max(1, args.runs // 3)
    runs_none: list[float] = []
    runs_five: list[float] = []
    for _ in range(rounds):
        runs_none += first_request_ms(3, 0)
        runs_five += first_request_ms(3, 5)
    none, five = median(runs_none), median(runs_five)
    direct = median(first_request_ms(max(3, args.runs // 3), 5, "direct"))
    print(f"time to the first request, median of {len(runs_none)} (in {rounds} alternating rounds):")
    print(f"  no MCP servers                      {none:7.1f} ms")
    print(f"  5 stdio servers (codemode)          {five:7.1f} ms   ({five - none:+.1f} ms; goal <= +50 ms)")
    print(f"  5 stdio servers (direct, waited for) {direct:6.1f} ms")
    bare = asyncio.run(bare_sdk_ms(args.calls))
    tool, pipeline = asyncio.run(pi_paths_ms(args.calls))
    print(f"one echo call, median of {args.calls}:")
    print(f"  bare SDK ClientSession.call_tool    {median(bare):7.3f} ms")
    print(f"  pi's MCP tool (Tool.execute)        {median(tool):7.3f} ms   (+{median(tool) - median(bare):.3f} ms; goal <= 2 ms)")
    print(f"  session tool pipeline (execute_tool) {median(pipeline):6.3f} ms   (+{median(pipeline) - median(bare):.3f} ms)")


if __name__ == "__main__":
    main()
