"""Cost of the interactive renderer per streamed token, and of drawing its live region.

    .venv/bin/python benchmarks/bench_interactive.py [--deltas 200000] [--runs 5]

Feeds one long markdown answer as small deltas (4 characters, as providers send them) through the
renderer at 80 columns with colour on, the way the runtime emits ``message_update`` events (a live
partial message growing in place), and reports microseconds per delta. Then times one live-region
draw (``live_rows`` + prompt_toolkit's ANSI parsing, what happens at most ~30 times a second) with a
running tool and queued messages. The goal (docs/performance.md): per-delta cost independent of the
answer's length, and well under the ~20 µs a provider spends per delta.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pi_core import (  # noqa: E402
    AgentStartEvent,
    AssistantMessage,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    TextContent,
    ToolExecutionStartEvent,
)
from pi_core.modes.interactive.render import Renderer  # noqa: E402
from pi_core.modes.interactive.style import Palette  # noqa: E402
from pi_core.runtime.events import QueueUpdateEvent  # noqa: E402

PARAGRAPH = ("The renderer prints **finished rows** once and keeps only the `current row` live; "
             "this sentence is long enough to wrap at eighty columns several times over.\n")


class NullOutput:
    def __init__(self) -> None:
        self.rows = 0

    def scroll(self, rows: list[str]) -> None:
        self.rows += len(rows)

    def live_changed(self) -> None:
        return None


def stream_once(deltas: int, *, render_it: bool = True) -> tuple[float, int]:
    """Microseconds per delta (growing the partial message, plus rendering when ``render_it``)."""
    out = NullOutput()
    render = Renderer(out, Palette(True), lambda: 80)
    text = (PARAGRAPH * (deltas * 4 // len(PARAGRAPH) + 1))[: deltas * 4]
    message = AssistantMessage(content=[TextContent(text="")])
    block = message.content[0]
    render.handle(MessageStartEvent(message))
    event = MessageUpdateEvent(message, None)
    handle = render.handle if render_it else (lambda event: None)
    start = time.perf_counter()
    for i in range(0, len(text), 4):
        block.text += text[i:i + 4]
        handle(event)
    render.handle(MessageEndEvent(message))
    return (time.perf_counter() - start) / deltas * 1e6, out.rows


def live_draw(runs: int) -> float:
    from prompt_toolkit.formatted_text import ANSI, to_formatted_text

    render = Renderer(NullOutput(), Palette(True), lambda: 80)
    render.handle(AgentStartEvent())
    render.handle(ToolExecutionStartEvent("c1", "bash", {"command": "pytest -q tests/"}))
    render.handle(QueueUpdateEvent(["also run the linter"], ["then write the changelog"]))
    start = time.perf_counter()
    for _ in range(runs):
        to_formatted_text(ANSI("\n".join([*render.live_rows(80), "› "])))
    return (time.perf_counter() - start) / runs * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--deltas", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    for count in (args.deltas // 10, args.deltas):
        total = statistics.median(stream_once(count)[0] for _ in range(args.runs))
        growth = statistics.median(stream_once(count, render_it=False)[0] for _ in range(args.runs))
        print(f"{count:>7} deltas: {total:.2f} µs per delta in all, of which {growth:.2f} µs is growing the "
              f"message itself; renderer: {total - growth:.2f} µs per delta")
    print(f"live region draw (tool + queue + spinner): {live_draw(2000):.1f} µs")


if __name__ == "__main__":
    main()
