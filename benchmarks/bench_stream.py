"""Streaming overhead of the model layer against a bare httpx client.

A local server (a separate process, 127.0.0.1) sends one Chat Completions answer as N small deltas
(default 200,000). Measured in the same run:

* bare: httpx streams the body, splits SSE lines, ``json.loads`` each chunk and joins the deltas;
* pi:   ``pi_core.ai.complete()`` through the ``openai-completions`` plugin (SSE decoder, event objects,
        the live partial message, usage, the final message).

Target: pi's time to the final message ≤ 2× bare. Memory: tracemalloc peak of a pi run for several N
(should grow with the answer's text only, not with copies per delta).

    .venv/bin/python benchmarks/bench_stream.py [--deltas 200000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
TOKEN = "tok "


def build_body(deltas: int) -> bytes:
    def chunk(delta: dict, finish: str | None = None) -> bytes:
        data = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1, "model": "bench",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return b"data: " + json.dumps(data, separators=(",", ":")).encode() + b"\n\n"

    parts = [chunk({"role": "assistant", "content": ""})]
    one = chunk({"content": TOKEN})
    parts += [one] * deltas
    parts.append(chunk({}, "stop"))
    parts.append(b'data: {"id":"chatcmpl-bench","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":%d,'
                 b'"total_tokens":%d}}\n\ndata: [DONE]\n\n' % (deltas, deltas + 10))
    return b"".join(parts)


def serve(port_file: str, deltas: int) -> None:
    """The server process: answer every POST with the same prebuilt SSE body."""
    body = build_body(deltas)
    head = (b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: %d\r\n"
            b"connection: close\r\n\r\n" % len(body))
    listener = socket.create_server(("127.0.0.1", 0))
    Path(port_file).write_text(str(listener.getsockname()[1]))
    while True:
        conn, _ = listener.accept()
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            header, _, rest = data.partition(b"\r\n\r\n")
            length = next((int(line.split(b":")[1]) for line in header.split(b"\r\n")
                           if line.lower().startswith(b"content-length")), 0)
            while len(rest) < length:
                rest += conn.recv(65536)
            conn.sendall(head)
            view = memoryview(body)
            for i in range(0, len(body), 65536):
                conn.sendall(view[i:i + 65536])


async def bare(url: str) -> str:
    import httpx

    parts: list[str] = []
    async with httpx.AsyncClient(timeout=60) as client:
        async with client.stream("POST", url + "/chat/completions", json={"model": "bench", "stream": True}) as r:
            async for line in r.aiter_lines():
                if line.startswith("data: ") and line != "data: [DONE]":
                    choices = json.loads(line[6:]).get("choices")
                    if choices:
                        content = choices[0]["delta"].get("content")
                        if content:
                            parts.append(content)
    return "".join(parts)


async def pi(url: str) -> str:
    import httpx

    from pi_core.ai import ApiProvider, Context, Model, ModelRegistry, UserMessage, complete
    from plugins.providers.openai_completions import API, stream_completions

    registry = ModelRegistry([ApiProvider(API, stream_completions)], load_files=False)
    model = Model(id="bench", api=API, provider="bench", base_url=url, context_window=1_000_000, max_tokens=100_000)
    async with httpx.AsyncClient(timeout=60) as client:
        message = await complete(model, Context(messages=[UserMessage(content="go")]), registry=registry,
                                 api_key="k", client=client)
    assert message.stop_reason == "stop", message.error_message
    return message.text()


def timed(fn, url: str, deltas: int) -> float:
    start = time.perf_counter()
    text = asyncio.run(fn(url))
    elapsed = time.perf_counter() - start
    assert len(text) == deltas * len(TOKEN), (fn.__name__, len(text))
    return elapsed


def start_server(deltas: int, tmp: Path) -> tuple[subprocess.Popen, str]:
    port_file = tmp / f"port-{deltas}"
    port_file.unlink(missing_ok=True)
    proc = subprocess.Popen([sys.executable, __file__, "--serve", str(port_file), "--deltas", str(deltas)])
    for _ in range(600):
        if port_file.exists() and port_file.read_text():
            return proc, f"http://127.0.0.1:{port_file.read_text()}/v1"
        time.sleep(0.05)
    proc.kill()
    raise SystemExit("server did not start")


def memory_peak(url: str) -> int:
    tracemalloc.start()
    asyncio.run(pi(url))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--deltas", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--serve")
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.deltas)
        return
    import tempfile

    tmp = Path(tempfile.mkdtemp())
    proc, url = start_server(args.deltas, tmp)
    try:
        timed(bare, url, args.deltas), timed(pi, url, args.deltas)  # warm up imports and the server
        bare_t = [timed(bare, url, args.deltas) for _ in range(args.repeat)]
        pi_t = [timed(pi, url, args.deltas) for _ in range(args.repeat)]
    finally:
        proc.kill()
    print(f"deltas: {args.deltas}  body: {len(build_body(args.deltas)) / 1e6:.1f} MB")
    print(f"bare httpx : best {min(bare_t):.3f}s  median {statistics.median(bare_t):.3f}s")
    print(f"pi_core.ai : best {min(pi_t):.3f}s  median {statistics.median(pi_t):.3f}s")
    print(f"ratio (median pi / median bare): {statistics.median(pi_t) / statistics.median(bare_t):.2f}x (target <= 2)")
    print("memory (tracemalloc peak during one pi run; the answer itself is 4 bytes per delta):")
    for n in (25_000, 50_000, 100_000, args.deltas):
        proc, url = start_server(n, tmp)
        try:
            peak = memory_peak(url)
        finally:
            proc.kill()
        print(f"  {n:>7} deltas: peak {peak / 1e6:6.2f} MB  ({peak / n:.0f} B/delta, text {n * len(TOKEN) / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
