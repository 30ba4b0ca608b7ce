"""Session store benchmarks (issue #3). Not part of the test run.

    .venv/bin/python benchmarks/bench_session.py            # full run (~100 MB file; a few minutes)
    .venv/bin/python benchmarks/bench_session.py --quick    # 10,000 entries, for a smoke check

Measures, each heavy case in a fresh subprocess so peak memory is its own:

1. open a 100,000-entry session (~100 MB of realistic content) and build its context, against merely
   reading the file and ``json.loads``-ing every line (same run, same file), time and peak RSS;
   plus what materialising every message as a pydantic model costs on top (``context.messages`` is
   lazy);
2. appending: time per entry without fsync, on a small and on the large session;
3. projection of a 10,000-entry path;
4. listing 1,000 session files.

Files go to ``benchmarks/out/`` (git-ignored) unless ``--dir`` says otherwise.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

sys.path.insert(0, str(HERE))
from gen_session import generate as _generate  # noqa: E402


def generate(path: Path, entries: int, seed: int = 3) -> None:
    """A linear session (the whole file is on the path): ``gen_session.py --linear``."""
    _generate(path, entries, seed, linear=True)


# ---------------------------------------------------------------------------------------------
# measured in subprocesses


def _rss_peak() -> int:
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


_LOADS = "with open(P, 'rb') as f:\n    data = [json.loads(line) for line in f if line.strip()]\n"
_OPEN = "m = SessionManager.open(P, read_only=True)\nctx = m.build_session_context()\n"
CHILD = {
    "json_loads": _LOADS,
    "json_loads_nogc": "import gc\ngc.disable()\n" + _LOADS + "gc.enable()\n",
    "open_and_build": _OPEN,
    "open_for_writing_and_build": "m = SessionManager.open(P)\nctx = m.build_session_context()\n"
                                  "m.close()\n",
    "materialise_messages": _OPEN + "T0 = time.perf_counter()\ntyped = list(ctx.messages)\n",
    "convert_to_llm": _OPEN + "T0 = time.perf_counter()\nllm = ctx.to_llm()\n",
}


def run_child(case: str, path: Path) -> dict:
    code = (
        "import json, resource, sys, time\n"
        f"sys.path.insert(0, {str(HERE.parent)!r})\n"
        "from pi_core import SessionManager\n"
        "def rss(): return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024\n"
        f"P = {str(path)!r}\nbase = rss()\nT0 = time.perf_counter()\n"
        + CHILD[case]
        + "print(json.dumps({'seconds': time.perf_counter() - T0, 'peak_growth': rss() - base}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def bench_open(path: Path, repeats: int) -> dict:
    size = path.stat().st_size
    results: dict[str, list[dict]] = {case: [] for case in CHILD}
    for _ in range(repeats):  # interleaved, so drift affects every case alike
        for case in CHILD:
            results[case].append(run_child(case, path))
    out = {"file_bytes": size}
    for case, runs in results.items():
        out[case] = {"seconds": statistics.median(r["seconds"] for r in runs),
                     "peak_x_file": statistics.median(r["peak_growth"] for r in runs) / size}
    out["ratio_vs_json_loads"] = out["open_and_build"]["seconds"] / out["json_loads"]["seconds"]
    return out


def bench_append(path: Path, small_dir: Path, count: int) -> dict:
    from pi_core import SessionManager
    from pi_core.ai.types import AssistantMessage, TextContent, Usage

    message = AssistantMessage(content=[TextContent(text="x" * 400)], provider="p", model="m",
                               usage=Usage(input=1234, output=56), stop_reason="stop")
    out = {}
    small = SessionManager.create("/home/user/project", small_dir)
    small.append_message({"role": "user", "content": "start", "timestamp": 1})
    for label, manager in (("small_session", small), ("large_session", SessionManager.open(path))):
        size_before = manager.session_file.stat().st_size
        times = []
        for _ in range(count):
            t0 = time.perf_counter()
            manager.append_message(message)
            times.append(time.perf_counter() - t0)
        grown = manager.session_file.stat().st_size - size_before
        manager.close()
        times.sort()
        out[label] = {"median_ms": statistics.median(times) * 1e3,
                      "p99_ms": times[int(len(times) * 0.99)] * 1e3,
                      "bytes_per_entry": grown / count}
    return out


def bench_projection(directory: Path, entries: int = 10_000, repeats: int = 21) -> dict:
    from pi_core import SessionManager

    path = directory / "path10k.jsonl"
    generate(path, entries, seed=5)
    manager = SessionManager.open(path, read_only=True)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        context = manager.build_session_context()
        times.append(time.perf_counter() - t0)
    return {"entries_on_path": len(manager.get_raw_branch()), "messages": len(context.raw_messages),
            "median_ms": statistics.median(times) * 1e3, "max_ms": max(times) * 1e3}


def bench_listing(directory: Path, files: int = 1_000) -> dict:
    from pi_core import SessionManager

    folder = directory / "many"
    folder.mkdir(exist_ok=True)
    rng = random.Random(9)
    total = 0
    for n in range(files):
        path = folder / f"2026-01-01T00-00-00-000Z_{n:08d}.jsonl"
        if not path.exists():
            generate(path, rng.choice([20, 60, 200, 600]), seed=n)
        total += path.stat().st_size
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        infos = SessionManager.list_all(folder)
        times.append(time.perf_counter() - t0)
    assert len(infos) == files
    return {"files": files, "total_mb": total / 1e6, "median_s": statistics.median(times),
            "max_s": max(times)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--dir", type=Path, default=HERE / "out" / "session")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    entries = 10_000 if args.quick else 100_000
    big = args.dir / f"big{entries}.jsonl"
    if not big.exists():
        generate(big, entries)
    results = {"python": sys.version.split()[0], "entries": entries,
               "open_and_build": bench_open(big, args.repeats)}
    work = args.dir / "work"
    work.mkdir(exist_ok=True)
    appended = args.dir / "append-target.jsonl"
    appended.write_bytes(big.read_bytes())
    results["append"] = bench_append(appended, work / f"small-{time.time_ns()}", 2_000)
    appended.unlink()
    results["projection_10k"] = bench_projection(work)
    results["listing"] = bench_listing(args.dir, 100 if args.quick else 1_000)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
