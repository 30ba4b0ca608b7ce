"""Start-up and plugin-framework costs.

    python benchmarks/bench_startup.py [--runs 20]

Measures: `pi --version` cold start (fresh process, median), building the plugin host with every
built-in plugin (in a fresh process: imports included; and warm: modules already imported), and the
dispatcher's cost per notify call with 0 and 10 handlers. Results go to docs/performance.md by hand.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent


def cold(cmd: list[str], runs: int, env: dict[str, str]) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, env=env)
        times.append(time.perf_counter() - start)
    return times


def host_build_fresh_process(runs: int, env: dict[str, str]) -> list[float]:
    code = ("import time; t=time.perf_counter(); from pi_core import build_plugin_host; "
            "h=build_plugin_host(); print(time.perf_counter()-t, len(h.records))")
    out = []
    for _ in range(runs):
        result = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env)
        out.append(float(result.stdout.split()[0]))
    return out


def host_build_warm(runs: int) -> tuple[list[float], int]:
    from pi_core import build_plugin_host

    build_plugin_host()  # imports every plugin module once
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        host = build_plugin_host()
        times.append(time.perf_counter() - start)
    return times, len(host.records)


def notify_cost(handlers: int, calls: int = 200_000) -> float:
    from pi_core import TurnStartEvent, hookimpl
    from pi_core.extensions.dispatch import Dispatcher
    from pi_core.extensions.manager import PiPluginManager

    pm = PiPluginManager()
    for i in range(handlers):
        class Plugin:
            @hookimpl
            def message_update(self, event: object) -> None:
                return None

        pm.register(Plugin(), name=f"p{i}")
    dispatch = Dispatcher(pm)
    event = TurnStartEvent()

    async def loop() -> float:
        start = time.perf_counter()
        for _ in range(calls):
            await dispatch.call("message_update", event)
        return (time.perf_counter() - start) / calls

    return asyncio.run(loop())


def fmt(values: list[float], unit: float = 1e3, suffix: str = "ms") -> str:
    return (f"median {statistics.median(values) * unit:.1f} {suffix} "
            f"(min {min(values) * unit:.1f}, max {max(values) * unit:.1f}, n={len(values)})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="pi-bench-"))
    env = {**os.environ, "HOME": str(scratch), "PI_CODING_AGENT_DIR": str(scratch / "agent")}
    os.environ.update({"HOME": env["HOME"], "PI_CODING_AGENT_DIR": env["PI_CODING_AGENT_DIR"]})
    os.chdir(scratch)
    print("python -c pass          ", fmt(cold([sys.executable, "-c", "pass"], args.runs, env)))
    print("pi --version            ", fmt(cold([str(BIN / "pi"), "--version"], args.runs, env)))
    print("pi plugins --json       ", fmt(cold([str(BIN / "pi"), "plugins", "--json"], max(5, args.runs // 4), env)))
    print("host build, new process ", fmt(host_build_fresh_process(max(5, args.runs // 4), env)))
    warm, count = host_build_warm(args.runs)
    print(f"host build, warm ({count} plugins)", fmt(warm))
    for handlers in (0, 1, 10):
        print(f"notify, {handlers:2d} handlers       {notify_cost(handlers) * 1e6:.2f} µs per call")


if __name__ == "__main__":
    main()
