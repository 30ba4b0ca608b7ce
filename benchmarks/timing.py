"""Timing helpers shared by the scripts of benchmarks/."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_ms(fn: Callable[[], object], runs: int, *, warm: bool = False) -> float:
    """The median wall time of ``runs`` calls of ``fn``, in milliseconds (``warm``: one untimed call first)."""
    if warm:
        fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000
