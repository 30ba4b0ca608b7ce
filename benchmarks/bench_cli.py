"""``pi -p`` one-turn run against a local fake OpenAI-compatible server: wall time and peak memory.

    python benchmarks/bench_cli.py [--runs 10] [--ts /path/to/node_modules/.bin/pi --node-bin DIR]

Runs this project's ``pi`` and, when ``--ts`` is given, the TypeScript pi side by side, each in an
isolated agent dir whose ``models.json`` points at the same server. Peak memory is the max RSS of the
process as ``/usr/bin/time`` reports it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "cli"))
from fake_openai import FakeOpenAI, write_agent_dir  # noqa: E402  (the test suite's fake server)


def measure(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, int]:
    timed = ["/usr/bin/time", "-f", "%e %M", *cmd]
    result = subprocess.run(timed, env=env, cwd=cwd, capture_output=True, text=True, check=True)
    wall, rss_kb = result.stderr.strip().splitlines()[-1].split()
    if "hello" not in result.stdout:
        raise RuntimeError(f"unexpected answer: {result.stdout!r} {result.stderr!r}")
    return float(wall), int(rss_kb)


def series(name: str, cmd: list[str], runs: int, extra_path: str | None) -> tuple[float, float]:
    scratch = Path(tempfile.mkdtemp(prefix=f"pi-bench-cli-{name}-"))
    walls, rss = [], []
    with FakeOpenAI([{"text": "hello from the fake model"}] * (runs + 1)) as server:
        write_agent_dir(scratch / "agent", server.base_url)
        env = {**os.environ, "HOME": str(scratch), "PI_CODING_AGENT_DIR": str(scratch / "agent"),
               "PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0"}
        if extra_path:
            env["PATH"] = f"{extra_path}:{env['PATH']}"
        args = [*cmd, "--provider", "fake", "--model", "fake-model", "-p", "Say hello"]
        measure(args, env, scratch)  # warm the file cache and bytecode
        for _ in range(runs):
            wall, kb = measure(args, env, scratch)
            walls.append(wall)
            rss.append(kb / 1024)
    print(f"{name:12s} wall median {statistics.median(walls):.2f} s (min {min(walls):.2f}, max {max(walls):.2f}); "
          f"peak RSS median {statistics.median(rss):.0f} MB")
    return statistics.median(walls), statistics.median(rss)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--ts", help="the TypeScript pi executable")
    parser.add_argument("--node-bin", help="directory of the node binary the TypeScript pi needs (>= 22.19)")
    args = parser.parse_args()
    ours = series("pi (python)", [str(Path(sys.executable).parent / "pi")], args.runs, None)
    if args.ts:
        theirs = series("pi (ts)", [args.ts], args.runs, args.node_bin)
        print(f"ratio        wall {ours[0] / theirs[0]:.2f}x, memory {ours[1] / theirs[1]:.2f}x (python / ts)")


if __name__ == "__main__":
    main()
