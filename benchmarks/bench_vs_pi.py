"""Long sessions, the turn loop, streaming, listing and start-up: this pi against the TypeScript pi 1.6.

    python benchmarks/bench_vs_pi.py [--runs 5] [--cases open10k,open100k,...] [--ts PATH | --no-ts]
                                     [--api openai-completions|anthropic-messages]
                                     [--baseline OTHER_BUILD/bin/pi] [--json OUT]

Every figure is a whole process as a user runs it (``pi ... -p``), wall time measured here around the
child and peak RSS as ``/usr/bin/time`` reports it, medians of ``--runs`` runs (the two programs
alternate, run by run, so drift on a shared machine affects both alike). Both talk to the same scripted
server (``fake_server.py``, a process of its own whose answers are prebuilt), each in an isolated agent
dir whose ``models.json`` points at it (window 2,000,000 tokens, compaction off, so neither program does
anything but what is measured); ``--api anthropic-messages`` makes both talk Anthropic Messages to it
instead of Chat Completions. The TypeScript pi runs when it is installed (default
``/work/pi-ts/node_modules/.bin/pi``, with the ``node`` beside it).

Cases (sessions from ``gen_session.py``; a fresh copy of the file for every run, since each run appends):

* ``open10k``, ``open100k``: ``pi --session FILE -p`` on a realistic 10,000 / 100,000-entry session
  (compactions, branches, thinking, tool results of varying size) — open it and send one request;
* ``openlinear``: the same on a 100,000-entry session without compaction, everything in the context
  (a 124 MB request); like a user resuming the session, each measured run finds what the run before
  it left (the session's derived index, the converted turns of ``cache/wire``);
* ``openold1``: ``openlinear1`` on the same session as pi 0.73 wrote it (no system prompt snapshot: its
  system message is a model change here);
* ``openlinear1``: the same, but the first time this pi sends that session (no stored turns; this pi
  stores the turns it converted after it exits, from a process of its own, and every run, of either
  program, first waits until those turns are stored, so that no run is measured beside that work);
* ``turns``: 200 tool turns (``read`` of a small file) on a 1,000-entry session; per turn =
  (wall of the 200-turn run − wall of a one-request run on the same session) / 200;
* ``stream``: one answer of 200,000 deltas (``--no-session``);
* ``list``: listing 1,000 session files through each program's library (``SessionManager.list``), in a
  fresh process; the time of the call alone is reported too;
* ``print``: ``pi -p`` one turn against the import floor of this project's libraries (asyncio, httpx,
  pydantic, typer, pluggy, importlib.metadata) in the same run.

Generated files are kept in ``--dir`` (default ``benchmarks/out/vs_pi``) and reused.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from gen_session import generate, generate_folder  # noqa: E402

DEFAULT_TS = Path("/work/pi-ts/node_modules/.bin/pi")
FLOOR = ("import gc; gc.disable(); import asyncio, httpx, httpcore, anyio, anyio._backends._asyncio, h11, "
         "pydantic, pydantic.main, pydantic.fields, pydantic.type_adapter, typer, pluggy, importlib.metadata")
ALL_CASES = ("open10k", "open100k", "openlinear", "openlinear1", "openold1", "turns", "stream", "list", "print")
TURNS = 200
DELTAS = 200_000


class Server:
    def __init__(self, scratch: Path) -> None:
        port_file = scratch / "port"
        port_file.unlink(missing_ok=True)
        self.proc = subprocess.Popen([sys.executable, str(HERE / "fake_server.py"), str(port_file)])
        for _ in range(200):
            if port_file.exists() and port_file.read_text():
                break
            time.sleep(0.05)
        else:
            self.proc.kill()
            raise SystemExit("the fake server did not start")
        self.url = f"http://127.0.0.1:{port_file.read_text()}"

    def script(self, turns: list[dict[str, Any]]) -> None:
        request = urllib.request.Request(self.url + "/_script", data=json.dumps({"turns": turns}).encode(),
                                         method="POST", headers={"content-type": "application/json"})
        urllib.request.urlopen(request).read()

    def stats(self) -> dict[str, Any]:
        return json.loads(urllib.request.urlopen(self.url + "/_stats").read())

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


class Program:
    """One of the two pis, with its own isolated home."""

    def __init__(self, name: str, argv: list[str], scratch: Path, server: Server,
                 extra_path: str | None) -> None:
        self.name, self.argv = name, argv
        self.home = scratch / name
        agent = self.home / "agent"
        agent.mkdir(parents=True, exist_ok=True)
        cost = {"input": 1.0, "output": 2.0, "cacheRead": 0.1, "cacheWrite": 1.25}
        models = {"providers": {
            "fake": {"baseUrl": server.url + "/v1", "api": "openai-completions", "apiKey": "fake-key",
                     "models": [{"id": "fake-model", "name": "Fake Model", "reasoning": False,
                                 "contextWindow": 2_000_000, "maxTokens": 4096, "cost": cost}]},
            "fakeanthropic": {"baseUrl": server.url, "api": "anthropic-messages", "apiKey": "fake-anthropic-key",
                              "models": [{"id": "fake-claude", "name": "Fake Claude", "reasoning": False,
                                          "contextWindow": 2_000_000, "maxTokens": 4096, "cost": cost}]}}}
        (agent / "models.json").write_text(json.dumps(models))
        (agent / "settings.json").write_text(json.dumps({"compaction": {"enabled": False}}))
        self.work = self.home / "work"
        self.work.mkdir(exist_ok=True)
        (self.work / "hello.txt").write_text("hello\n" * 20)
        env = {**os.environ, "HOME": str(self.home), "PI_CODING_AGENT_DIR": str(agent), "PI_OFFLINE": "1",
               "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0"}
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed pi has its bytecode cached
        env.pop("PI_CODING_AGENT_SESSION_DIR", None)
        if extra_path:
            env["PATH"] = f"{extra_path}:{env['PATH']}"
        self.env = env

    def run(self, args: list[str], expect: str | None = None, argv: list[str] | None = None,
            cwd: Path | None = None) -> tuple[float, float, str]:
        cmd = ["/usr/bin/time", "-f", "%M", *(argv or self.argv), *args]
        start = time.perf_counter()
        done = subprocess.run(cmd, env=self.env, cwd=cwd or self.work, capture_output=True, text=True)
        wall = time.perf_counter() - start
        if done.returncode != 0 or (expect is not None and expect not in done.stdout):
            raise RuntimeError(f"{self.name} {args[:4]} failed ({done.returncode}): "
                               f"{done.stdout[-500:]!r} {done.stderr[-2000:]!r}")
        rss_mb = int(done.stderr.strip().splitlines()[-1]) / 1024
        return wall, rss_mb, done.stdout


#: The provider and model the cases talk to (``--api``): the server answers both dialects.
MODEL_ARGS = ["--provider", "fake", "--model", "fake-model"]


def prompt_args(*extra: str) -> list[str]:
    return [*MODEL_ARGS, *extra]


Measure = Callable[["Program"], tuple[float, float]]


def compare(label: str, programs: list[Program], measure: Measure, runs: int) -> dict[str, Any]:
    for program in programs:
        settle(programs)
        measure(program)  # warm the page cache and bytecode
    samples: dict[str, list[tuple[float, float]]] = {p.name: [] for p in programs}
    for _ in range(runs):
        for program in programs:
            settle(programs)  # no run shares the machine with what the run before left behind
            samples[program.name].append(measure(program))
    out: dict[str, Any] = {}
    for name, values in samples.items():
        walls = [v[0] for v in values]
        out[name] = {"wall_s": statistics.median(walls), "min_s": min(walls), "max_s": max(walls),
                     "rss_mb": statistics.median(v[1] for v in values)}
    line = f"{label:12s}"
    for name, row in out.items():
        line += f" | {name}: {row['wall_s'] * 1000:8.1f} ms, {row['rss_mb']:6.0f} MB"
    if "python" in out and "ts" in out:
        out["ratio_wall"] = out["python"]["wall_s"] / out["ts"]["wall_s"]
        out["ratio_rss"] = out["python"]["rss_mb"] / out["ts"]["rss_mb"]
        line += f" | ratio {out['ratio_wall']:.2f}x wall, {out['ratio_rss']:.2f}x memory"
        if "before" in out:
            out["before_ratio_wall"] = out["before"]["wall_s"] / out["ts"]["wall_s"]
            out["before_ratio_rss"] = out["before"]["rss_mb"] / out["ts"]["rss_mb"]
            line += f" (before: {out['before_ratio_wall']:.2f}x, {out['before_ratio_rss']:.2f}x)"
    print(line, flush=True)
    return out


def without_system(source: Path, out: Path) -> None:
    """``source`` as pi 0.73 would have written it: no system message (each becomes a model change)."""
    with open(source, "rb") as lines, open(out, "wb") as written:
        for line in lines:
            if b'"role":"system"' in line[:400]:
                entry = json.loads(line)
                line = json.dumps({"type": "model_change", "id": entry["id"], "parentId": entry["parentId"],
                                   "timestamp": entry["timestamp"], "provider": "fake", "modelId": "fake-model"},
                                  separators=(",", ":")).encode() + b"\n"
            written.write(line)


def fresh_copy(file: Path, program: Program) -> Path:
    """A copy of ``file`` whose header names the program's working folder (pi refuses a missing one)."""
    copy = program.home / "session.jsonl"
    with open(file, "rb") as source, open(copy, "wb") as out:
        header = json.loads(source.readline())
        header["cwd"] = str(program.work)
        out.write(json.dumps(header, separators=(",", ":")).encode() + b"\n")
        shutil.copyfileobj(source, out, 1 << 20)
    return copy


def settle(programs: list[Program]) -> None:
    """Wait until the converted turns the runs before stored are written: ``pi -p`` leaves that to a
    process of its own after it exits, holding each store file's lock (which a reader waits for), and
    a measured run — of either program — must not share the machine with it."""
    if os.name == "nt":  # pragma: no cover
        return
    import fcntl

    for program in programs:
        for store in (program.home / "agent" / "cache" / "wire").glob("*.turns"):
            with open(store, "rb") as handle:
                fcntl.flock(handle, fcntl.LOCK_SH)


def session_case(file: Path, server: Server, first_open: bool = False) -> Measure:
    def measure(program: Program) -> tuple[float, float]:
        copy = fresh_copy(file, program)
        if first_open:  # as if this pi had never sent this session: no stored turns
            shutil.rmtree(program.home / "agent" / "cache" / "wire", ignore_errors=True)
        server.script([{"text": "here is one more answer"}])
        wall, rss, _ = program.run(prompt_args("--session", str(copy), "-p", "one more question"),
                                   expect="one more answer")
        return wall, rss
    return measure


def turns_case(file: Path, server: Server, turns: int) -> Measure:
    def measure(program: Program) -> tuple[float, float]:
        copy = fresh_copy(file, program)
        tool = {"tool": "read", "arguments": {"path": "hello.txt"}}
        server.script([tool] * turns + [{"text": "all files read"}])
        wall, rss, _ = program.run(prompt_args("--session", str(copy), "-p", "read it again and again"),
                                   expect="all files read")
        received = server.stats()["requests"]
        if received != turns + 1:
            raise RuntimeError(f"{program.name}: {received} requests for {turns} tool turns")
        return wall, rss
    return measure


def stream_case(server: Server) -> Measure:
    def measure(program: Program) -> tuple[float, float]:
        server.script([{"deltas": DELTAS}])
        wall, rss, out = program.run(prompt_args("--no-session", "-p", "go"), expect="tok tok")
        if out.count("tok") != DELTAS:
            raise RuntimeError(f"{program.name}: {out.count('tok')} deltas printed")
        return wall, rss
    return measure


LIST_PY = """
import sys, time
t = time.perf_counter()
from pi_core import SessionManager
infos = SessionManager.list(sys.argv[1], sys.argv[2])
print(len(infos), time.perf_counter() - t)
"""
LIST_JS = """
const t = performance.now();
const { SessionManager } = await import(process.argv[3]);
const infos = await SessionManager.list(process.argv[1], process.argv[2]);
console.log(infos.length, (performance.now() - t) / 1000);
"""


def list_case(folder: Path, ts: Path | None, count: int, python: str) -> Measure:
    calls: dict[str, list[float]] = {}

    def measure(program: Program) -> tuple[float, float]:
        if program.name in ("python", "before"):
            interpreter = python if program.name == "python" else str(Path(program.argv[0]).parent / "python")
            argv = [interpreter, "-c", LIST_PY, "/home/user/project", str(folder)]
        else:
            assert ts is not None
            index = ts.resolve().parents[1] / "index.js"
            argv = ["node", "--input-type=module", "-e", LIST_JS, "/home/user/project", str(folder),
                    str(index)]
        wall, rss, out = program.run([], argv=argv)
        found, seconds = out.split()
        if int(found) != count:
            raise RuntimeError(f"{program.name} listed {found} of {count} sessions")
        calls.setdefault(program.name, []).append(float(seconds))
        return wall, rss
    measure.calls = calls  # type: ignore[attr-defined]
    return measure


def floor_measure(program: Program) -> tuple[float, float]:
    wall, rss, _ = program.run([], argv=[sys.executable, "-c", FLOOR])
    return wall, rss


def print_case(server: Server) -> Measure:
    def measure(program: Program) -> tuple[float, float]:
        server.script([{"text": "hello from the fake model"}])
        wall, rss, _ = program.run(prompt_args("-p", "Say hello"), expect="hello from the fake model")
        return wall, rss
    return measure


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cases", default=",".join(ALL_CASES))
    parser.add_argument("--ts", type=Path, default=DEFAULT_TS if DEFAULT_TS.exists() else None)
    parser.add_argument("--no-ts", action="store_true", help="this pi only")
    parser.add_argument("--pi", type=Path, default=Path(sys.executable).parent / "pi")
    parser.add_argument("--dir", type=Path, default=HERE / "out" / "vs_pi")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--api", choices=("openai-completions", "anthropic-messages"), default="openai-completions",
                        help="the dialect both programs speak to the server (default openai-completions)")
    parser.add_argument("--baseline", type=Path, help="another build of this pi to run alongside (\"before\")")
    args = parser.parse_args()
    cases = [c for c in args.cases.split(",") if c]
    unknown = set(cases) - set(ALL_CASES)
    if unknown:
        raise SystemExit(f"unknown cases: {', '.join(sorted(unknown))}")
    ts = None if args.no_ts else args.ts
    if args.api == "anthropic-messages":
        MODEL_ARGS[:] = ["--provider", "fakeanthropic", "--model", "fake-claude"]
    args.dir.mkdir(parents=True, exist_ok=True)
    files = {"open10k": ("s10k.jsonl", 10_000, False), "open100k": ("s100k.jsonl", 100_000, False),
             "openlinear": ("linear100k.jsonl", 100_000, True), "openlinear1": ("linear100k.jsonl", 100_000, True),
             "openold1": ("linear100k.jsonl", 100_000, True), "turns": ("s1k.jsonl", 1_000, False)}
    for case, (name, entries, linear) in files.items():
        if case in cases and not (args.dir / name).exists():
            generate(args.dir / name, entries, linear=linear)
    if "openold1" in cases and not (args.dir / "linear100k-0.73.jsonl").exists():
        without_system(args.dir / "linear100k.jsonl", args.dir / "linear100k-0.73.jsonl")
    if "list" in cases:
        generate_folder(args.dir / "many", 1_000)

    scratch = Path(tempfile.mkdtemp(prefix="pi-bench-vs-"))
    server = Server(scratch)
    results: dict[str, Any] = {"runs": args.runs, "python": sys.version.split()[0]}
    try:
        programs = [Program("python", [str(args.pi)], scratch, server, None)]
        if args.baseline:
            programs.append(Program("before", [str(args.baseline)], scratch, server, None))
        if ts is not None:
            programs.append(Program("ts", [str(ts)], scratch, server, str(ts.parent)))
        print(f"runs per figure: {args.runs}; programs: {', '.join(p.name for p in programs)}", flush=True)
        for case in cases:
            if case in files:
                file = args.dir / files[case][0]
                if case == "turns":
                    base = compare("1 request", programs, session_case(file, server), args.runs)
                    many = compare(f"{TURNS} turns", programs, turns_case(file, server, TURNS), args.runs)
                    row: dict[str, Any] = {"one_request": base, "turns": many}
                    for p in programs:
                        row[f"{p.name}_per_turn_ms"] = (many[p.name]["wall_s"] - base[p.name]["wall_s"]) \
                            / TURNS * 1000
                    line = "per turn    " + "".join(f" | {p.name}: {row[f'{p.name}_per_turn_ms']:.2f} ms"
                                                    for p in programs)
                    if ts is not None:
                        row["ratio"] = row["python_per_turn_ms"] / row["ts_per_turn_ms"]
                        line += f" | ratio {row['ratio']:.2f}x"
                        if args.baseline:
                            row["before_ratio"] = row["before_per_turn_ms"] / row["ts_per_turn_ms"]
                            line += f" (before: {row['before_ratio']:.2f}x)"
                    print(line, flush=True)
                    results[case] = row
                else:
                    if case == "openold1":
                        file = args.dir / "linear100k-0.73.jsonl"
                    results[case] = compare(case, programs, session_case(file, server, case.endswith("1")),
                                            args.runs)
                    results[case]["file_mb"] = file.stat().st_size / 1e6
                    results[case]["request_mb"] = server.stats()["request_bytes"][-1] / 1e6
            elif case == "stream":
                results[case] = compare("stream", programs, stream_case(server), args.runs)
            elif case == "list":
                measure = list_case(args.dir / "many", ts, 1_000, str(args.pi.parent / "python"))
                results[case] = compare("list 1,000", programs, measure, args.runs)
                for name, calls in measure.calls.items():  # type: ignore[attr-defined]
                    results[case][name]["call_s"] = statistics.median(calls[1:])
                print("list call   " + "".join(f" | {n}: {statistics.median(c[1:]) * 1000:.0f} ms"
                                               for n, c in measure.calls.items()), flush=True)  # type: ignore[attr-defined]
            elif case == "print":
                floor = compare("floor", programs[:1], floor_measure, args.runs)
                row = compare("pi -p", programs, print_case(server), args.runs)
                row["floor_s"] = floor["python"]["wall_s"]
                row["ratio_to_floor"] = row["python"]["wall_s"] / row["floor_s"]
                extra = ""
                if args.baseline:
                    row["before_ratio_to_floor"] = row["before"]["wall_s"] / row["floor_s"]
                    extra = f" (before: {row['before_ratio_to_floor']:.2f}x)"
                print(f"pi -p / floor: {row['ratio_to_floor']:.2f}x{extra}", flush=True)
                results[case] = row
    finally:
        server.close()
        shutil.rmtree(scratch, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
