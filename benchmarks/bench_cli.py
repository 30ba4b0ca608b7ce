"""``pi -p`` one-turn run against a local fake OpenAI-compatible server: wall time and peak memory.

    python benchmarks/bench_cli.py [--runs 10] [--ts /path/to/node_modules/.bin/pi --node-bin DIR]

Runs this project's ``pi`` and, when ``--ts`` is given, the TypeScript pi side by side, each in an
isolated agent dir whose ``models.json`` points at the same server. Peak memory is the max RSS of the
process as ``/usr/bin/time`` reports it; wall time is measured here (``perf_counter`` around the
child). Also measured: the *floor*, a bare interpreter importing only the libraries pi is built on
(asyncio, httpx with httpcore and anyio, pydantic, typer, pluggy, importlib.metadata), with the
collector paused as ``pi`` does — no ``pi`` start-up can be faster than that.

``PYTHONDONTWRITEBYTECODE`` is removed from the children's environment: with it set, every start
compiles pi's modules from source again (about +0.1 s), which is not how an installed ``pi`` runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "cli"))
from fake_openai import FakeOpenAI, write_agent_dir

FLOOR = ("import gc; gc.disable(); import asyncio, httpx, httpcore, anyio, anyio._backends._asyncio, h11, "
         "pydantic, pydantic.main, pydantic.fields, pydantic.type_adapter, typer, pluggy, importlib.metadata")


def measure(cmd: list[str], env: dict[str, str], cwd: Path, expect: str | None) -> tuple[float, int]:
    timed = ["/usr/bin/time", "-f", "%M", *cmd]
    start = time.perf_counter()
    result = subprocess.run(timed, env=env, cwd=cwd, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    rss_kb = result.stderr.strip().splitlines()[-1]
    if expect is not None and expect not in result.stdout:
        raise RuntimeError(f"unexpected answer: {result.stdout!r} {result.stderr!r}")
    return wall, int(rss_kb)


def series(name: str, cmd: list[str], runs: int, extra_path: str | None, *, prompt: bool = True) -> tuple[float, float]:
    scratch = Path(tempfile.mkdtemp(prefix=f"pi-bench-cli-{name.split()[0]}-"))
    walls, rss = [], []
    with FakeOpenAI([{"text": "hello from the fake model"}] * (runs + 2)) as server:
        write_agent_dir(scratch / "agent", server.base_url)
        env = {**os.environ, "HOME": str(scratch), "PI_CODING_AGENT_DIR": str(scratch / "agent"),
               "PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0"}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        if extra_path:
            env["PATH"] = f"{extra_path}:{env['PATH']}"
        args = [*cmd, "--provider", "fake", "--model", "fake-model", "-p", "Say hello"] if prompt else cmd
        expect = "hello" if prompt else None
        measure(args, env, scratch, expect)  # warm the file cache and bytecode
        for _ in range(runs):
            wall, kb = measure(args, env, scratch, expect)
            walls.append(wall)
            rss.append(kb / 1024)
    print(f"{name:14s} wall median {statistics.median(walls) * 1000:.0f} ms (min {min(walls) * 1000:.0f}, "
          f"max {max(walls) * 1000:.0f}); peak RSS median {statistics.median(rss):.0f} MB")
    return statistics.median(walls), statistics.median(rss)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--ts", help="the TypeScript pi executable")
    parser.add_argument("--node-bin", help="directory of the node binary the TypeScript pi needs (>= 22.19)")
    args = parser.parse_args()
    series("library floor", [sys.executable, "-c", FLOOR], args.runs, None, prompt=False)
    ours = series("pi (python)", [str(Path(sys.executable).parent / "pi")], args.runs, None)
    if args.ts:
        theirs = series("pi (ts)", [args.ts], args.runs, args.node_bin)
        print(f"ratio          wall {ours[0] / theirs[0]:.2f}x, memory {ours[1] / theirs[1]:.2f}x (python / ts)")


if __name__ == "__main__":
    main()
