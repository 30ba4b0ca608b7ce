"""Agent-loop overhead per turn: the faux provider, 200 turns that each call a trivial tool.

    python benchmarks/bench_loop.py [--turns 200] [--runs 5]

Reports, per turn: the whole run through ``AgentSession`` (session file written, hooks dispatched),
the same with an in-memory session, and the cost of the faux model stream alone (fixed usage
figures, so it does no per-request token estimation); the difference is the loop's own overhead (request building, validation, tool dispatch,
events, persistence), which is what the goal (≤ 2 ms per turn) is about.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from pi_core import Tool, ToolCapabilities, ToolResult, create_agent_session, hookimpl
from pi_core.ai import Context, UserMessage, stream
from pi_core.ai.faux import FauxProvider, FauxTurn, faux_text, faux_tool_call


class Trivial:
    __name__ = "bench-trivial"

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(Tool(name="noop", description="does nothing", parameters={"type": "object", "properties": {
            "i": {"type": "number"}}}, execute=lambda params, ctx: ToolResult.text("ok"),
            capabilities=ToolCapabilities(concurrency_safe=True)))


USAGE = {"input": 1000, "output": 10}  # fixed counts: the faux model then does no per-request estimation


def script(faux: FauxProvider, turns: int) -> None:
    faux.set_responses([FauxTurn([faux_tool_call("noop", {"i": i})], usage=USAGE) for i in range(turns)]
                       + [FauxTurn([faux_text("done")], usage=USAGE)])


async def one_run(turns: int, session_kind: str, cwd: Path) -> float:
    faux = FauxProvider(seed=1)
    script(faux, turns)
    session = await create_agent_session(cwd, model=faux.model, plugins=[faux, Trivial()], tools=["noop"],
                                         session=session_kind)
    start = time.perf_counter()
    await session.prompt("go")
    elapsed = time.perf_counter() - start
    await session.close()
    assert sum(1 for m in session.messages if m.role == "toolResult") == turns
    return elapsed / (turns + 1)


async def stream_only(turns: int) -> float:
    faux = FauxProvider(seed=1)
    script(faux, turns)
    context = Context(system_prompt="s", messages=[UserMessage(content="go")])
    start = time.perf_counter()
    for _ in range(turns + 1):
        async for _event in stream(faux.model, context):
            pass
    return (time.perf_counter() - start) / (turns + 1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="pi-bench-loop-"))
    os.environ["PI_CODING_AGENT_DIR"] = str(scratch / "agent")
    results: dict[str, list[float]] = {"file session": [], "memory session": [], "faux stream only": []}
    for _ in range(args.runs):
        results["file session"].append(asyncio.run(one_run(args.turns, "new", scratch)))
        results["memory session"].append(asyncio.run(one_run(args.turns, "memory", scratch)))
        results["faux stream only"].append(asyncio.run(stream_only(args.turns)))
    medians = {k: statistics.median(v) * 1000 for k, v in results.items()}
    for name, value in medians.items():
        print(f"{name:18s} {value:6.3f} ms per turn (runs: {', '.join(f'{v * 1000:.3f}' for v in results[name])})")
    print(f"{'loop overhead':18s} {medians['file session'] - medians['faux stream only']:6.3f} ms per turn "
          f"(file session minus faux stream)")


if __name__ == "__main__":
    main()
