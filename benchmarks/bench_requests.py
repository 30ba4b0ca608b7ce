"""Request building on a long session, provider by provider: the first request and the next turn's.

    python benchmarks/bench_requests.py [--entries 20000] [--runs 3] [--apis anthropic-messages,...]

A resumed session (``gen_session.py --linear``: one branch, everything in the context) is opened as the
agent opens it; for each API the request body is built as its provider builds it (``build_payload`` and
the body encoding), in this process, with the provider's turn cache empty and no stored turns: the
first request of a process on that session. Then one tool turn is appended and the body built again:
what every later turn of the conversation costs. Medians of ``--runs``. Results go to
docs/performance.md by hand.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

#: API -> (provider module, base url)
APIS = {
    "openai-completions": ("openai_completions", "http://127.0.0.1:9/v1"),
    "anthropic-messages": ("anthropic", "http://127.0.0.1:9"),
    "openai-responses": ("openai_responses", "http://127.0.0.1:9/v1"),
    "google-generative-ai": ("google", "http://127.0.0.1:9"),
    "mistral-conversations": ("mistral", "http://127.0.0.1:9"),
    "bedrock-converse-stream": ("amazon_bedrock", "http://127.0.0.1:9"),
}


def build(api: str, module: Any, model: Any, context: Any) -> int:
    from pi_core.ai.options import StreamOptions
    from pi_core.ai.wire import body_bytes

    built = module.build_payload(model, context, StreamOptions(api_key="k"))
    payload = built[0] if isinstance(built, tuple) else built
    return len(body_bytes(payload))


def context_of(messages: Any) -> Any:
    """The request context as the agent loop builds it (a ``MessageList`` stays one: nothing typed)."""
    import asyncio

    from pi_core.agent.loop import LoopConfig, build_context
    from pi_core.ai.abort import AbortController
    from pi_core.session import convert_to_llm

    config = LoopConfig(model=None, stream=None, system_prompt="s", tools=[],  # type: ignore[arg-type]
                        convert_to_llm=convert_to_llm)
    return asyncio.run(build_context(messages, config, AbortController().signal))


def measure(api: str, session: Path, runs: int) -> dict[str, float]:
    from pi_core import SessionManager
    from pi_core.ai import Model, TurnCache
    from pi_core.ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage

    name, url = APIS[api]
    module = importlib.import_module(f"plugins.providers.{name}")
    model = Model(id="bench-model", api=api, provider="bench", base_url=url, context_window=10_000_000,
                  max_tokens=4096, reasoning=True, input=["text", "image"])
    first, nxt, size = [], [], 0
    for _ in range(runs):
        if hasattr(module, "_TURNS"):
            module._TURNS = TurnCache(store=None)  # noqa: SLF001 - a first request, nothing stored
        manager = SessionManager.open(session, read_only=True)
        messages = manager.build_session_context().message_list()
        start = time.perf_counter()
        size = build(api, module, model, context_of(messages))
        first.append(time.perf_counter() - start)
        call = ToolCall(id="toolu_bench", name="read", arguments={"path": "a.txt"})
        messages.append(AssistantMessage(content=[TextContent(text="again"), call], api=api, provider="bench",
                                         model="bench-model", stop_reason="toolUse"))
        messages.append(ToolResultMessage(tool_call_id=call.id, tool_name="read", content=[TextContent(text="x")]))
        start = time.perf_counter()
        build(api, module, model, context_of(messages))
        nxt.append(time.perf_counter() - start)
        manager.close()
    return {"first_s": statistics.median(first), "next_s": statistics.median(nxt), "mb": size / 1e6}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--apis", default=",".join(APIS))
    args = parser.parse_args()
    from gen_session import generate

    with tempfile.TemporaryDirectory() as tmp:
        import os

        os.environ["PI_CODING_AGENT_DIR"] = str(Path(tmp) / "agent")  # no index or stored turns of ours
        session = Path(tmp) / "linear.jsonl"
        generate(session, args.entries, linear=True)
        print(f"{args.entries} entries, {session.stat().st_size / 1e6:.0f} MB, medians of {args.runs}")
        for api in args.apis.split(","):
            row = measure(api, session, args.runs)
            print(f"{api:24} first request {row['first_s'] * 1000:8.1f} ms   next turn "
                  f"{row['next_s'] * 1000:8.1f} ms   body {row['mb']:.1f} MB", flush=True)


if __name__ == "__main__":
    main()
