"""MCP costs: time to the first model request with 5 stdio servers configured, in ``pi -p`` and in the modes
that connect servers in the background (RPC, the terminal), and a tool call's overhead over the bare SDK call.

    python benchmarks/bench_mcp.py [--runs 15] [--calls 300] [--skip-print] [--skip-background] [--skip-calls]

*Start-up*: pi against a local fake model server (a thread of this process) in an isolated agent dir; the
time is from starting the child to the server receiving the first request, median of ``--runs``; the cases
of one comparison alternate in rounds of 3 so that load from other work falls on them alike. Goal: 5
servers with the default ``codemode`` exposure add at most 50 ms.

- ``pi -p hi``: no ``mcp.json``; 5 ``codemode`` servers (print and JSON mode start a server only when a
  request or call needs it, so here not at all); 5 ``direct`` servers (the first request waits for them by
  design: it declares their tools).
- ``pi --mode rpc`` with a ``prompt`` written at once, and the terminal interface (``pi hi`` in a
  pseudo-terminal): no ``mcp.json`` against 5 ``codemode`` servers, which these modes connect in the
  background at start (the first prompt waits only for ``direct`` servers), so their start-up competes
  with pi's for the CPU.

*Per call*: one ``echo`` call, each path on its own server process, the three paths interleaved in blocks
of 20 calls (so that a change of load falls on all of them alike), median of ``--calls`` per path after a
warm-up: the bare SDK (``ClientSession.call_tool`` over ``stdio_client``, after ``list_tools``, so the SDK
checks results against the tools' output schemas as it does for pi); pi's MCP tool (the ``Tool.execute``
the plugin registers: time limit, progress, result conversion); and the whole tool pipeline of a session
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
                try:
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.send_header("content-length", str(len(ANSWER)))
                    self.end_headers()
                    self.wfile.write(ANSWER)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # pi was stopped as soon as its request arrived

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


def _env(agent: Path) -> dict[str, str]:
    env = {**os.environ, "HOME": str(agent.parent), "PI_CODING_AGENT_DIR": str(agent), "PI_OFFLINE": "1",
           "TERM": "xterm"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("NO_COLOR", None)
    return env


MODEL = ["--provider", "fake", "--model", "fake-model", "--no-session"]


def _print_run(agent: Path) -> None:
    subprocess.run([sys.executable, "-m", "pi_core", *MODEL, "-p", "hi"], cwd=agent.parent, env=_env(agent),
                   capture_output=True, check=True, timeout=120)


def _rpc_run(agent: Path, endpoint: FirstRequest, before: int) -> None:
    """``pi --mode rpc`` with a prompt already waiting on its stdin; ended once the request arrived."""
    pi = subprocess.Popen([sys.executable, "-m", "pi_core", *MODEL, "--mode", "rpc"], cwd=agent.parent,
                          env=_env(agent), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, start_new_session=True)
    assert pi.stdin is not None
    pi.stdin.write(b'{"type": "prompt", "message": "hi"}\n')
    pi.stdin.flush()
    _until_request(endpoint, before, pi)
    pi.stdin.close()
    _stop(pi)


def _terminal_run(agent: Path, endpoint: FirstRequest, before: int) -> None:
    """The terminal interface (``pi hi``) in a pseudo-terminal whose output is read and dropped."""
    import pty

    master, slave = pty.openpty()
    pi = subprocess.Popen([sys.executable, "-m", "pi_core", *MODEL, "hi"], cwd=agent.parent, env=_env(agent),
                          stdin=slave, stdout=slave, stderr=subprocess.DEVNULL, start_new_session=True)
    os.close(slave)
    drain = threading.Thread(target=_drain, args=(master,), daemon=True)
    drain.start()
    try:
        _until_request(endpoint, before, pi)
    finally:
        _stop(pi)
        os.close(master)


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 65536):
            pass
    except OSError:
        pass


def _until_request(endpoint: FirstRequest, before: int, pi: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120
    while len(endpoint.arrivals) <= before:
        if pi.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"pi ended or stalled before its first request (exit {pi.poll()})")
        time.sleep(0.002)


def _stop(pi: subprocess.Popen[bytes]) -> None:
    """SIGKILL: only the time to the first request is measured (the MCP servers' guards stop them)."""
    import signal

    try:
        os.killpg(pi.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    pi.wait()


def first_request_ms(runs: int, servers: int, exposure: str = "codemode", mode: str = "print") -> list[float]:
    endpoint = FirstRequest()
    agent = agent_dir(endpoint.url, servers, exposure)
    times = []
    try:
        for run in range(runs + 1):  # the first run warms caches and bytecode
            before = len(endpoint.arrivals)
            started = time.perf_counter()
            if mode == "print":
                _print_run(agent)
            elif mode == "rpc":
                _rpc_run(agent, endpoint, before)
            else:
                _terminal_run(agent, endpoint, before)
            if run:
                times.append((endpoint.arrivals[before] - started) * 1000)
    finally:
        endpoint.close()
    return times


def alternating(runs: int, mode: str) -> tuple[list[float], list[float]]:
    """No servers against 5 ``codemode`` servers, alternating in rounds of 3."""
    none: list[float] = []
    five: list[float] = []
    for _ in range(max(1, runs // 3)):
        none += first_request_ms(3, 0, mode=mode)
        five += first_request_ms(3, 5, mode=mode)
    return none, five


# -------------------------------------------------------------------------------------------------
# per call


BLOCK = 20


async def per_call_ms(calls: int) -> tuple[list[float], list[float], list[float]]:
    """The bare SDK call, pi's MCP tool and the session's tool pipeline, interleaved in blocks."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from pi_core import AbortSignal, ToolContext, create_agent_session

    scratch = Path(tempfile.mkdtemp(prefix="pi-bench-mcp-calls-"))
    agent = scratch / "agent"
    agent.mkdir()
    (agent / "mcp.json").write_text(json.dumps({"mcpServers": {
        "bench": {"command": sys.executable, "args": [str(SERVER)], "exposure": "deferred"}}}))
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
    bare: list[float] = []
    tool_times: list[float] = []
    pipeline: list[float] = []
    session = await create_agent_session(scratch, provider="faux", agent_dir=agent, session="memory")
    try:
        with open(os.devnull, "w") as quiet:
            async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as sdk:
                await sdk.initialize()
                await sdk.list_tools()  # as a client does; the SDK then checks results against output schemas
                tool = await _bench_tool(session)
                ctx = ToolContext("bench", scratch, AbortSignal(), session=session.ctx)
                signal = AbortSignal()

                async def bare_call(n: int) -> None:
                    await sdk.call_tool("echo", {"text": f"call {n}"})

                async def tool_call(n: int) -> None:
                    await tool.run({"text": f"call {n}"}, ctx)

                async def pipeline_call(n: int) -> None:
                    outcome = await session.nested_calls.execute("bench", "mcp__bench__echo", {"text": f"call {n}"},
                                                                 signal, None)
                    assert not outcome.is_error, outcome.result.text_content()

                paths = ((bare_call, bare), (tool_call, tool_times), (pipeline_call, pipeline))
                for call, _ in paths:  # warm-up
                    for n in range(BLOCK):
                        await call(n)
                n = 0
                while len(bare) < calls:
                    for call, times in paths:
                        for _ in range(BLOCK):
                            started = time.perf_counter()
                            await call(n)
                            times.append((time.perf_counter() - started) * 1000)
                            n += 1
                session.nested_calls.clear()
    finally:
        await session.close()
    return bare, tool_times, pipeline


async def _bench_tool(session: Any) -> Any:
    for _ in range(1200):
        tool = next((t for t in session.host.tools if t.name == "mcp__bench__echo"), None)
        if tool is not None:
            return tool
        await asyncio.sleep(0.05)
    raise RuntimeError("the bench server did not connect")


def median(values: list[float]) -> float:
    return statistics.median(values)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--skip-print", action="store_true")
    parser.add_argument("--skip-background", action="store_true")
    parser.add_argument("--skip-calls", action="store_true")
    args = parser.parse_args()
    if not args.skip_print:
        none, five = alternating(args.runs, "print")
        direct = median(first_request_ms(max(3, args.runs // 3), 5, "direct"))
        print(f"pi -p: time to the first request, median of {len(none)} (alternating rounds of 3):")
        print(f"  no MCP servers                       {median(none):7.1f} ms")
        print(f"  5 stdio servers (codemode, not started) {median(five):4.1f} ms   "
              f"({median(five) - median(none):+.1f} ms; goal <= +50 ms)")
        print(f"  5 stdio servers (direct, waited for) {direct:7.1f} ms")
    if not args.skip_background:
        for mode, label in (("rpc", "pi --mode rpc, prompt at once"), ("terminal", "terminal (pi hi in a pty)")):
            none, five = alternating(args.runs, mode)
            print(f"{label}: time to the first request, median of {len(none)}:")
            print(f"  no MCP servers                       {median(none):7.1f} ms")
            print(f"  5 stdio servers connecting (codemode) {median(five):6.1f} ms   "
                  f"({median(five) - median(none):+.1f} ms; goal <= +50 ms)")
    if not args.skip_calls:
        bare, tool, pipeline = asyncio.run(per_call_ms(args.calls))
        print(f"one echo call, median of {len(bare)} per path (interleaved in blocks of {BLOCK}):")
        print(f"  bare SDK ClientSession.call_tool     {median(bare):7.3f} ms")
        print(f"  pi's MCP tool (Tool.execute)         {median(tool):7.3f} ms   "
              f"({median(tool) - median(bare):+.3f} ms; goal <= 2 ms)")
        print(f"  session tool pipeline (execute_tool) {median(pipeline):7.3f} ms   "
              f"({median(pipeline) - median(bare):+.3f} ms)")


if __name__ == "__main__":
    main()
