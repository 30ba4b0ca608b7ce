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
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

WORDS = ("the of and to in is that it for on are as with be this have from or one had by word but "
         "not what all were when your can said there use an each which she do how their if will up "
         "other about out many then them these so some would make like into time has look two more "
         "write go see number no way could people my than first water been call who its now find").split()


def prose(rng: random.Random, n: int) -> str:
    words = []
    size = 0
    while size < n:
        word = rng.choice(WORDS)
        words.append(word + ("\n" if rng.random() < 0.06 else ""))
        size += len(word) + 1
    return " ".join(words)


def code(rng: random.Random, n: int) -> str:
    lines, size = [], 0
    while size < n:
        indent = "    " * rng.randint(0, 3)
        line = f"{indent}def {rng.choice(WORDS)}_{rng.randint(0, 99)}(x, y):  # {rng.choice(WORDS)} é"
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)


def usage(rng: random.Random) -> dict:
    i, o = rng.randint(1_000, 150_000), rng.randint(5, 2_000)
    return {"input": i, "output": o, "cacheRead": rng.randint(0, i), "cacheWrite": 0, "reasoning": 0,
            "totalTokens": i + o, "cost": {"input": i * 3e-6, "output": o * 1.5e-5, "cacheRead": 0,
                                           "cacheWrite": 0, "total": i * 3e-6 + o * 1.5e-5,
                                           "totalFromProvider": False}}


def system_message(ts: int) -> dict:
    tools = [{"name": n, "description": prose(random.Random(n), 300),
              "parameters": {"type": "object", "required": ["path"],
                             "properties": {"path": {"type": "string", "description": "file"}}}}
             for n in ("read", "bash", "edit", "write", "grep", "find", "ls")]
    return {"role": "system", "content": "", "sections": {"preamble": prose(random.Random(1), 2000),
                                                          "tools": "tools", "cwd": "/home/user/p"},
            "timestamp": ts, "toolsAdded": tools}


def message(rng: random.Random, k: int, ts: int) -> dict:
    if k % 40 == 1:
        return {"role": "user", "content": [{"type": "text", "text": prose(rng, rng.randint(20, 600))}],
                "timestamp": ts}
    if k % 2 == 0:
        content: list[dict] = []
        if rng.random() < 0.3:
            content.append({"type": "thinking", "thinking": prose(rng, rng.randint(50, 400)),
                            "thinkingSignature": os.urandom(rng.randint(100, 300)).hex()})
        if rng.random() < 0.5:
            content.append({"type": "text", "text": prose(rng, rng.randint(20, 300))})
        content.append({"type": "toolCall", "id": f"call_{rng.getrandbits(64):016x}",
                        "name": rng.choice(["read", "bash", "edit", "write"]),
                        "arguments": {"path": f"src/{rng.choice(WORDS)}.py",
                                      "oldText": code(rng, rng.randint(0, 160)),
                                      "newText": code(rng, rng.randint(0, 160))}})
        return {"role": "assistant", "content": content, "api": "anthropic-messages",
                "provider": "anthropic", "model": "claude-sonnet-4-5", "usage": usage(rng),
                "stopReason": "toolUse", "timestamp": ts, "responseId": f"msg_{rng.getrandbits(64):x}",
                "durationMs": rng.randint(300, 9_000)}
    return {"role": "toolResult", "toolCallId": f"call_{rng.getrandbits(64):016x}", "toolName": "read",
            "content": [{"type": "text", "text": code(rng, int(rng.expovariate(1 / 1_000)))}],
            "isError": rng.random() < 0.05, "durationMs": rng.randint(1, 900), "timestamp": ts}


def generate(path: Path, entries: int, seed: int = 3) -> None:
    """A linear session (the whole file is on the path) with a few side branches and extras."""
    from pi_core.session.ids import iso_from_ms
    from pi_core.session.jsonfmt import dumps

    rng = random.Random(seed)
    ms = 1_790_000_000_000
    header = {"type": "session", "version": 3, "id": "01a20000-0000-7000-8000-000000000000",
              "timestamp": iso_from_ms(ms), "cwd": "/home/user/project"}
    with open(path, "w", encoding="utf-8") as out:
        out.write(dumps(header) + "\n")
        parent = None
        for k in range(entries):
            ms += rng.randint(5, 3_000)
            entry = {"type": "message", "id": f"{k:08x}", "parentId": parent,
                     "timestamp": iso_from_ms(ms)}
            if k == 0:
                entry["message"] = system_message(ms)
            elif k % 997 == 0:
                entry = {**entry, "type": "label", "targetId": parent, "label": "checkpoint"}
            elif k % 499 == 0:
                entry = {"type": "custom", "customType": "plugin.state", "data": {"k": k},
                         **{x: entry[x] for x in ("id", "parentId", "timestamp")}}
            else:
                entry["message"] = message(rng, k, ms)
            out.write(dumps(entry) + "\n")
            parent = entry["id"]


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
