"""The edit matcher on big files: ambiguous, tolerant and not-found edits must stay linear.

    .venv/bin/python benchmarks/bench_edit.py [--lines 100000] [--runs 3]

Prints the median wall time of each case for files of lines/10, lines/2 and lines lines, so the growth
is visible (linear: 10x the lines, about 10x the time). Before the linear scan, an ambiguous edit of a
100,000-line file took 22-45 s.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pi_core import Edit, EditError, apply_edits  # noqa: E402

CASES = {
    "ambiguous, exact": "x = 1",
    "ambiguous, trailing whitespace": "x = 1  \n",
    "ambiguous, indentation (3 lines)": "x = 1\n  x = 0\n  x = 1",
    "ambiguous, indentation (1000 lines)": "\n".join(["x = 1", "x = 0"] * 500),
    "not found (1 line)": "    y = compute(7)",
    "not found (200 lines)": "\n".join(f"    other_{i} = compute({i})" for i in range(200)),
    "unique, exact": "unique = True",
}


def content(lines: int) -> str:
    return "".join(f"    x = {i % 2}\n" for i in range(lines)) + "    unique = True\n"


def time_case(text: str, old: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        try:
            apply_edits(text, [Edit(old, "replacement")])
        except EditError:
            pass
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    sizes = [args.lines // 10, args.lines // 2, args.lines]
    texts = {n: content(n) for n in sizes}
    print(f"{'case':40}" + "".join(f"{n:>12,} lines" for n in sizes))
    for name, old in CASES.items():
        row = [time_case(texts[n], old, args.runs) for n in sizes]
        print(f"{name:40}" + "".join(f"{t:>17.3f}s" for t in row))


if __name__ == "__main__":
    main()
