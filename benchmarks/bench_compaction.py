"""Preparing a compaction of a 100,000-entry session: everything but the model call.

    python benchmarks/bench_compaction.py [--entries 100000] [--runs 5]

Opens a generated session (``bench_session.py``'s realistic content), then times
``prepare_compaction`` on its whole branch plus the request building (serialising what is to be
summarised); the session open itself is measured by ``bench_session.py``.
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
from pi_core.session.compaction import CompactionSettings, prepare_compaction, summary_request  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    path = Path(tempfile.mkdtemp(prefix="pi-bench-compaction-")) / "session.jsonl"
    generate(path, args.entries)
    manager = SessionManager.open(path, read_only=True)
    context = manager.build_session_context()
    raw_context = context.raw_messages
    prepare, request = [], []
    for _ in range(args.runs):
        start = time.perf_counter()
        branch = manager.get_raw_branch()
        prep = prepare_compaction(branch, CompactionSettings(), context_messages=raw_context)
        middle = time.perf_counter()
        summary_request(prep.messages_to_summarize[-2000:], previous_summary=prep.previous_summary)
        end = time.perf_counter()
        prepare.append(middle - start)
        request.append(end - middle)
    print(f"entries {args.entries}, branch {len(branch)}, to summarise {len(prep.messages_to_summarize)} messages")
    print(f"prepare_compaction      median {statistics.median(prepare) * 1000:.0f} ms (min {min(prepare) * 1000:.0f})")
    print(f"request (last 2,000)    median {statistics.median(request) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
