"""Preparing a compaction of a 100,000-entry session: everything but the model call.

    .venv/bin/python benchmarks/bench_compaction.py [--entries 100000] [--runs 5] [--window 200000]

Opens a generated session (``bench_session.py``'s realistic content), then times, on its whole branch:
``prepare_compaction`` (window, cut point, token estimates, file operations, tokens before) and building
every summarization request the compaction would send (the history serialized and cut into pieces that
fit a model of ``--window`` tokens). The session open itself is measured by ``bench_session.py``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_session import generate  # noqa: E402

from pi_core import SessionManager  # noqa: E402
from pi_core.session.compaction import (  # noqa: E402
    CompactionSettings,
    conversation_chunks,
    prepare_compaction,
    summary_request,
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--window", type=int, default=200_000)
    args = parser.parse_args()
    path = Path(tempfile.mkdtemp(prefix="pi-bench-compaction-")) / "session.jsonl"
    generate(path, args.entries)
    manager = SessionManager.open(path, read_only=True)
    settings = CompactionSettings()
    budget = args.window - settings.reserve_tokens - 4000 - 1500  # as the runtime's request budget
    prepare, requests, total = [], [], []
    for _ in range(args.runs):
        start = time.perf_counter()
        branch = manager.get_raw_branch()
        prep = prepare_compaction(branch, settings)
        middle = time.perf_counter()
        chunks = conversation_chunks(prep.messages_to_summarize, budget)
        built = [summary_request(conversation=c, previous_summary=prep.previous_summary) for c in chunks]
        end = time.perf_counter()
        prepare.append(middle - start)
        requests.append(end - middle)
        total.append(end - start)
    print(f"entries {args.entries}, branch {len(branch)}, to summarise {len(prep.messages_to_summarize)} messages, "
          f"{len(built)} request(s) for a {args.window:,}-token window")
    print(f"prepare_compaction          median {statistics.median(prepare) * 1000:.0f} ms")
    print(f"all summarization requests  median {statistics.median(requests) * 1000:.0f} ms")
    print(f"together                    median {statistics.median(total) * 1000:.0f} ms "
          f"(min {min(total) * 1000:.0f}, max {max(total) * 1000:.0f})")


if __name__ == "__main__":
    main()
