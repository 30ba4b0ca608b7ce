"""The terminal interface as a user meets it, this pi against the TypeScript pi 1.6, in a pseudo-terminal.

    python benchmarks/bench_tui.py [--runs 3] [--cases resume,resume100m,stream] [--ts PATH | --no-ts]

Both programs run interactively in a pty (120x40) behind a virtual terminal (pyte, as the tests use it),
each with an isolated home whose ``models.json`` points at ``fake_server.py``.

* ``resume``: ``pi --session FILE`` on a 0.5 MB, ~2,800-line session (``gen_session.py``); time from
  the start of the process until the editor and footer are drawn (ready for input).
* ``resume100m``: the same on a ~100 MB session.
* ``stream``: one answer of 20,000 deltas; the CPU time (user + system) the program spends from the
  prompt being sent until the answer is complete (its usage, ``↓20k``, is in the footer), and the wall
  time of that. While the answer streams, a key is typed every 0.1 s (a different Cyrillic letter each
  time, a letter nothing else prints); its latency is the time until the program writes it (median and
  worst over the runs). The output is read raw, as fast as it comes: a virtual terminal such as pyte
  digests about 0.1 MB/s, so behind the answer's last rows a key would wait for the harness, not for
  the program.

Medians of ``--runs`` runs, the two programs alternating.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_vs_pi import DEFAULT_TS, Server  # noqa: E402
from gen_session import generate  # noqa: E402

COLUMNS, LINES = 120, 40
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


class Program:
    def __init__(self, name: str, argv: list[str], scratch: Path, server: Server, extra_path: str | None) -> None:
        self.name, self.argv = name, argv
        self.home = scratch / name
        agent = self.home / "agent"
        agent.mkdir(parents=True, exist_ok=True)
        models = {"providers": {"fake": {
            "baseUrl": server.url + "/v1", "api": "openai-completions", "apiKey": "fake-key",
            "models": [{"id": "fake-model", "name": "Fake Model", "reasoning": False, "contextWindow": 2_000_000,
                        "maxTokens": 4096, "cost": {"input": 1.0, "output": 2.0, "cacheRead": 0.1,
                                                    "cacheWrite": 1.25}}]}}}
        (agent / "models.json").write_text(json.dumps(models))
        # regular (scrollback) mode for the TypeScript pi: the mode this pi has; no start-up extras
        (agent / "settings.json").write_text(json.dumps({"compaction": {"enabled": False}, "tuiMode": "regular",
                                                          "quietStartup": True, "defaultProjectTrust": "always"}))
        self.work = self.home / "work"
        self.work.mkdir(exist_ok=True)
        env = {**os.environ, "HOME": str(self.home), "PI_CODING_AGENT_DIR": str(agent), "PI_OFFLINE": "1",
               "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0", "TERM": "xterm-256color"}
        for key in ("PYTHONDONTWRITEBYTECODE", "PI_CODING_AGENT_SESSION_DIR", "NO_COLOR"):
            env.pop(key, None)
        if extra_path:
            env["PATH"] = f"{extra_path}:{env['PATH']}"
        self.env = env


class RawPty:
    """A program in a pty whose output is only read, not interpreted (interpreting megabytes of
    transcript would make the harness the bottleneck). Cursor position requests get an answer."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        import fcntl
        import struct
        import subprocess
        import termios

        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", LINES, COLUMNS, 0, 0))
        self.master = master
        self.tail = b""
        self.last_output = time.perf_counter()
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=subprocess.DEVNULL, cwd=cwd, env=env,
                                     start_new_session=True, close_fds=True)
        os.close(slave)

    def pump(self, timeout: float) -> bool:
        import select

        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return True
        try:
            data = os.read(self.master, 1 << 20)
        except OSError:
            return False
        if not data:
            return False
        self.last_output = time.perf_counter()
        for _ in range(data.count(b"\x1b[6n")):
            os.write(self.master, f"\x1b[{LINES};1R".encode())
        self.tail = (self.tail + data)[-8192:]
        return True

    def wait_ready(self, marker: bytes, quiet: float = 0.5, timeout: float = 120) -> float:
        """The time of the last output before ``quiet`` seconds of silence with ``marker`` drawn last."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            if not self.pump(0.02):
                raise RuntimeError(f"the program ended: {self.tail[-2000:]!r}")
            if marker in self.tail[-3000:] and time.perf_counter() - self.last_output >= quiet:
                return self.last_output
        raise RuntimeError(f"not ready: {self.tail[-2000:]!r}")

    def close(self) -> None:
        import signal

        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(5)
        os.close(self.master)


def resume_case(program: Program, file: Path) -> float:
    copy = program.home / "session.jsonl"
    with file.open("rb") as source, copy.open("wb") as target:
        header = json.loads(source.readline())
        header["cwd"] = str(program.work)  # a session of this folder (pi asks about a missing one)
        target.write(json.dumps(header, separators=(",", ":")).encode() + b"\n")
        shutil.copyfileobj(source, target)
    start = time.perf_counter()
    app = RawPty([*program.argv, "--provider", "fake", "--model", "fake-model", "--session", str(copy)],
                 program.env, program.work)
    try:  # b"fake-mode": a footer ending at the last column gets its last letter after a cursor move
        return app.wait_ready(b"fake-mode") - start
    finally:
        app.close()


STREAM_KEYS = [chr(c) for c in range(0x430, 0x450)]
"""Typed while the answer streams: Cyrillic letters, which neither program prints otherwise (the answer is
``tok tok …``), so a key's echo is the first output holding its letter."""
KEY_INTERVAL = 0.1


class RawReader:
    """Reads a :class:`RawPty` in a thread as fast as output comes, keeping each chunk with its arrival time."""

    def __init__(self, app: RawPty) -> None:
        import threading

        self.app = app
        self.chunks: list[tuple[float, bytes]] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        import select

        while True:
            ready, _, _ = select.select([self.app.master], [], [], 0.05)
            if not ready:
                if self.app.proc.poll() is not None:
                    return
                continue
            try:
                data = os.read(self.app.master, 1 << 20)
            except OSError:
                return
            if not data:
                return
            now = time.perf_counter()
            for _ in range(data.count(b"\x1b[6n")):
                os.write(self.app.master, f"\x1b[{LINES};1R".encode())
            with self._lock:
                self.chunks.append((now, data))

    def first(self, needle: bytes, after: float) -> float | None:
        """When ``needle`` first arrived after ``after`` (within one chunk)."""
        with self._lock:
            chunks = list(self.chunks)
        return next((t for t, data in chunks if t >= after and needle in data), None)

    def wait(self, needle: bytes, after: float, timeout: float) -> float:
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            found = self.first(needle, after)
            if found is not None:
                return found
            time.sleep(0.002)
        raise RuntimeError(f"{needle!r} did not appear in {timeout:.0f} s")


def stream_case(program: Program, server: Server, deltas: int) -> tuple[float, float, list[float]]:
    server.script([{"deltas": deltas}])
    app = RawPty([*program.argv, "--provider", "fake", "--model", "fake-model", "--no-session"], program.env,
                 program.work)
    reader = RawReader(app)
    done_marker = f"↓{deltas // 1000}k".encode()  # the footer's output tokens: the answer is complete
    try:
        reader.wait(b"fake-mode", 0.0, 120)
        time.sleep(1.0)  # settled after start-up
        os.write(app.master, b"go")
        time.sleep(0.2)
        before = cpu_seconds(app.proc.pid)
        start = time.perf_counter()
        os.write(app.master, b"\r")
        latencies: list[float] = []
        done: float | None = None
        for letter in STREAM_KEYS:
            time.sleep(KEY_INTERVAL)
            done = reader.first(done_marker, start)
            if done is not None:
                break
            sent = time.perf_counter()
            os.write(app.master, letter.encode())
            latencies.append(reader.wait(letter.encode(), sent, 30) - sent)
        done = done or reader.wait(done_marker, start, 300)
        cpu = cpu_seconds(app.proc.pid) - before
        return cpu, done - start, latencies
    finally:
        app.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cases", default="resume,resume100m,stream")
    parser.add_argument("--deltas", type=int, default=20_000)
    parser.add_argument("--ts", type=Path, default=DEFAULT_TS)
    parser.add_argument("--no-ts", action="store_true")
    parser.add_argument("--dir", type=Path, default=HERE / "out" / "tui")
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="bench-tui-"))
    server = Server(scratch)
    programs = [Program("python", [str(Path(sys.executable).with_name("pi"))], scratch, server, None)]
    if not args.no_ts and args.ts.exists():
        programs.append(Program("ts", [str(args.ts)], scratch, server, str(args.ts.parent)))  # node 22 beside it
    results: dict[str, Any] = {}
    try:
        cases = args.cases.split(",")
        files = {}
        if "resume" in cases:
            files["resume"] = _small_entries(args.dir / "half-mb.jsonl", 2_800)
        if "resume100m" in cases:
            files["resume100m"] = _session(args.dir / "hundred-mb.jsonl", 100)
        for case in cases:
            for program in programs:
                samples: list[Any] = []
                for _ in range(args.runs):
                    if case.startswith("resume"):
                        samples.append(resume_case(program, files[case]))
                    else:
                        samples.append(stream_case(program, server, args.deltas))
                results[f"{case}/{program.name}"] = samples
                _report(case, program.name, samples)
    finally:
        server.close()
        shutil.rmtree(scratch, ignore_errors=True)


def _small_entries(path: Path, lines: int) -> Path:
    """A linear session of ``lines`` lines of everyday size (~190 bytes): prompts, short markdown
    answers with a tool call now and then, small results."""
    if not path.exists():
        from pi_core.session.jsonfmt import dumps

        ms = 1_790_000_000_000
        rows = [{"type": "session", "version": 3, "id": "01a20000-0000-7000-8000-000000002800",
                 "timestamp": "2026-09-21T12:00:00.000Z", "cwd": "/home/user/project"}]
        parent = None
        usage = {"input": 900, "output": 40, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 940,
                 "cost": {"input": 0.0009, "output": 0.00008, "cacheRead": 0, "cacheWrite": 0, "total": 0.00098}}
        for n in range(lines - 1):
            kind = n % 4
            if kind == 0:
                message: dict[str, Any] = {"role": "user", "content": [{"type": "text", "text": f"step {n}: fix it"}],
                                           "timestamp": ms + n}
            elif kind == 1:
                message = {"role": "assistant", "content": [
                    {"type": "text", "text": f"Checking **step {n}**."},
                    {"type": "toolCall", "id": f"c{n}", "name": "read", "arguments": {"path": f"src/m{n % 9}.py"}}],
                    "api": "openai-completions", "provider": "fake", "model": "fake-model", "usage": usage,
                    "stopReason": "toolUse", "timestamp": ms + n}
            elif kind == 2:
                message = {"role": "toolResult", "toolCallId": f"c{n - 1}", "toolName": "read",
                           "content": [{"type": "text", "text": "def f():\n    return 1\n"}], "isError": False,
                           "timestamp": ms + n}
            else:
                message = {"role": "assistant", "content": [{"type": "text", "text": "Done: `f` returns 1."}],
                           "api": "openai-completions", "provider": "fake", "model": "fake-model", "usage": usage,
                           "stopReason": "stop", "timestamp": ms + n}
            entry_id = f"{n:08x}"
            rows.append({"type": "message", "id": entry_id, "parentId": parent,
                         "timestamp": "2026-09-21T12:00:00.000Z", "message": message})
            parent = entry_id
        path.write_text("".join(dumps(r) + "\n" for r in rows))
    print(f"{path.name}: {path.stat().st_size / 1024 / 1024:.2f} MB, {sum(1 for _ in path.open('rb'))} lines")
    return path


def _session(path: Path, megabytes: float) -> Path:
    if not path.exists():
        entries = max(200, int(megabytes * 1024 * 1024 / 190))
        generate(path, entries=entries, seed=7)
        size = path.stat().st_size
        if abs(size / 1024 / 1024 - megabytes) > megabytes * 0.3:  # aim the entry count at the size wanted
            entries = int(entries * megabytes * 1024 * 1024 / size)
            generate(path, entries=entries, seed=7)
    lines = sum(1 for _ in path.open("rb"))
    print(f"{path.name}: {path.stat().st_size / 1024 / 1024:.1f} MB, {lines} lines")
    return path


def _report(case: str, name: str, samples: list[Any]) -> None:
    if case.startswith("resume"):
        print(f"{case:11} {name:7} ready for input: median {statistics.median(samples):.2f} s "
              f"(runs: {', '.join(f'{s:.2f}' for s in samples)})")
        return
    cpu = statistics.median(s[0] for s in samples)
    wall = statistics.median(s[1] for s in samples)
    lat = [x for s in samples for x in s[2]]
    latency = f"{len(lat)} keys typed while it streamed: echo median {statistics.median(lat) * 1000:.0f} ms, " \
        f"worst {max(lat) * 1000:.0f} ms" if lat else "no key typed while it streamed"
    print(f"{case:11} {name:7} CPU {cpu:.2f} s, wall {wall:.2f} s, {latency}")


if __name__ == "__main__":
    main()
