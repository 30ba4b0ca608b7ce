"""RPC mode (``pi --mode rpc``) as a host sees it, and the HTML export of a large session.

    python benchmarks/bench_rpc.py [--calls 500] [--prompts 50]

Measures, against a real subprocess with a scripted in-process model (no network): start-up to the
first answer, the round trip of ``get_state``, prompt-to-``agent_settled`` for a one-line answer,
event throughput for a long streamed answer, and ``export_session_html`` on a 5,000-message file.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "rpc"))
from rpc_client import RpcProcess


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def round_trips(pi: RpcProcess, calls: int) -> list[float]:
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        pi.call({"type": "get_state"})
        times.append(time.perf_counter() - start)
    return times


def prompts(pi: RpcProcess, count: int) -> list[float]:
    times = []
    for index in range(count):
        start = time.perf_counter()
        pi.prompt(f"message {index}")
        times.append(time.perf_counter() - start)
    return times


def throughput(scratch: Path) -> tuple[int, float]:
    script = scratch / "long.json"
    script.write_text(json.dumps([{"text": "word " * 200_000, "chunk_delay_s": 0}]))
    with RpcProcess(scratch, script=script) as pi:
        start = time.perf_counter()
        events = pi.prompt("go")
        elapsed = time.perf_counter() - start
    return sum(1 for e in events if e["type"] == "message_update"), elapsed


def export_large(scratch: Path, messages: int = 5000) -> tuple[float, int]:
    from pi_core.export_html import export_session_html

    lines = [{"type": "session", "version": 3, "id": "bench", "timestamp": "2026-01-01T00:00:00.000Z",
              "cwd": str(scratch)}]
    for i in range(messages):
        role = "user" if i % 2 == 0 else "assistant"
        message = {"role": role, "timestamp": i, "content": [{"type": "text", "text": f"line {i} <x> " * 20}]}
        lines.append({"type": "message", "id": f"{i:08x}", "parentId": f"{i - 1:08x}" if i else None,
                      "timestamp": "2026-01-01T00:00:01.000Z", "message": message})
    source = scratch / "large.jsonl"
    source.write_text("".join(json.dumps(entry) + "\n" for entry in lines))
    start = time.perf_counter()
    out = export_session_html(source, scratch / "large.html")
    return time.perf_counter() - start, out.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--prompts", type=int, default=50)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="pi-bench-rpc-"))
    start = time.perf_counter()
    with RpcProcess(scratch) as pi:
        pi.call({"type": "get_state"})
        startup = time.perf_counter() - start
        trips = round_trips(pi, args.calls)
        runs = prompts(pi, args.prompts)
    updates, elapsed = throughput(scratch)
    export_time, size = export_large(scratch)
    trips.sort()
    print(f"start-up to first response: {ms(startup)}")
    print(f"get_state round trip: median {ms(statistics.median(trips))}, p99 {ms(trips[int(len(trips) * 0.99) - 1])}")
    print(f"prompt to agent_settled (one-line answer): median {ms(statistics.median(runs))}")
    print(f"long answer: {updates} message_update events in {elapsed:.2f} s ({updates / elapsed:,.0f}/s)")
    print(f"export of 5,000 messages: {ms(export_time)}, {size / 1e6:.1f} MB of HTML")


if __name__ == "__main__":
    main()
