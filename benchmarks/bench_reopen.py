"""Reopening a long session through its index: the CRC check of the indexed part, and the whole open.

    python benchmarks/bench_reopen.py [--entries 100000] [--runs 7]

On a generated session (``gen_session.py``: compactions and branches; kept in ``benchmarks/out/vs_pi``
and reused), in this process, the page cache warm: the CRC-32 of the whole file read in one pass (what the
index check did until 2026-12-07, kept here as the reference), ``prefix_crc`` (two threads, the block sums
chained), and ``SessionManager.open`` with its index in place. Medians of ``--runs``. Results go to
docs/performance.md by hand.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from timing import median_ms  # noqa: E402


def one_pass_crc(path: Path, size: int) -> int:
    crc, left = 0, size
    view = memoryview(bytearray(4 << 20))
    with open(path, "rb") as handle:
        while left:
            count = handle.readinto(view[:min(left, len(view))])
            crc = zlib.crc32(view[:count], crc)
            left -= count
    return crc


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    from gen_session import generate

    source = HERE / "out" / "vs_pi" / f"s{args.entries // 1000}k.jsonl"
    if not source.exists():
        source.parent.mkdir(parents=True, exist_ok=True)
        generate(source, args.entries)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["PI_CODING_AGENT_DIR"] = str(Path(tmp) / "agent")  # an index of this run only
        from pi_core import SessionManager
        from pi_core.session.file_crc import prefix_crc

        size = source.stat().st_size
        SessionManager.open(source, read_only=True).close()  # the first open writes the index
        assert prefix_crc(source, size) == one_pass_crc(source, size)
        print(f"{source.name}: {size / 1e6:.0f} MB, {os.cpu_count()} cores, medians of {args.runs}")
        print(f"CRC-32, one pass (reference)  {median_ms(lambda: one_pass_crc(source, size), args.runs):7.1f} ms")
        print(f"prefix_crc, two threads       {median_ms(lambda: prefix_crc(source, size), args.runs):7.1f} ms")
        print(f"SessionManager.open (indexed) "
              f"{median_ms(lambda: SessionManager.open(source, read_only=True).close(), args.runs):7.1f} ms")


if __name__ == "__main__":
    main()
