"""Start-up and exit housekeeping of the `pi` process: garbage collection is paused while pi starts and is
back on for whatever runs afterwards (a session's tools, a plugin's sub-command), so long runs do not grow;
the exit skips the heap's teardown but keeps what a program may count on from an interpreter's exit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from test_cli_run import pi

PROBE = """
import gc
from pi_core import hookimpl, Tool, ToolResult

def probe():
    print(f"collecting={gc.isenabled()}")

@hookimpl
def register_tools(register):
    register(Tool(name="gcprobe", description="reports the collector", parameters={"type": "object"},
                  execute=lambda params, ctx: ToolResult.text(f"collecting={gc.isenabled()}")))

@hookimpl
def register_cli_commands(register):
    register(probe, name="gcprobe", help="report the collector")
"""


def test_tools_run_with_the_collector_on(tmp_path: Path) -> None:
    ext = tmp_path / "probe.py"
    ext.write_text(textwrap.dedent(PROBE))
    call = json.dumps({"tool_calls": [{"name": "gcprobe", "arguments": {}}]})
    result = pi(tmp_path, tmp_path / "agent", "-e", str(ext), "--provider", "faux", "--model", "echo", "--tools", "gcprobe",
                "--no-session", "-p", call)
    assert result.returncode == 0, result.stderr
    assert "gcprobe (ok): collecting=True" in result.stdout


def test_plugin_sub_commands_run_with_the_collector_on(tmp_path: Path) -> None:
    ext = tmp_path / "probe.py"
    ext.write_text(textwrap.dedent(PROBE))
    result = pi(tmp_path, tmp_path / "agent", "-e", str(ext), "gcprobe")
    assert (result.returncode, result.stdout.strip()) == (0, "collecting=True"), result.stderr


MODULES = """
import sys
from pi_core import hookimpl, Tool, ToolResult

def loaded(params, ctx):
    import httpx  # what a plugin gets: the real client, without httpx's command line behind it
    names = sorted(m for m in ("rich", "click", "pygments") if m in sys.modules)
    return ToolResult.text(f"cli-libraries={names} client={httpx.AsyncClient.__name__}")

@hookimpl
def register_tools(register):
    register(Tool(name="modules", description="reports loaded modules", parameters={"type": "object"},
                  execute=loaded))
"""


def test_a_run_does_not_import_httpxs_command_line(tmp_path: Path) -> None:
    # httpx imports its CLI (click, pygments, rich) on `import httpx`: a tenth of the start-up, never used
    ext = tmp_path / "modules.py"
    ext.write_text(textwrap.dedent(MODULES))
    call = json.dumps({"tool_calls": [{"name": "modules", "arguments": {}}]})
    result = pi(tmp_path, tmp_path / "agent", "-e", str(ext), "--provider", "faux", "--model", "echo",
                "--tools", "modules", "--no-session", "-p", call)
    assert result.returncode == 0, result.stderr
    assert "modules (ok): cli-libraries=[] client=AsyncClient" in result.stdout


EXIT_WORK = """
import atexit, threading, time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from pi_core import hookimpl

OUT = Path({out!r})

def late():
    time.sleep(0.5)
    (OUT / "thread").write_text("done")

threading.Thread(target=late).start()  # not a daemon: the interpreter's exit waits for it
POOL = ThreadPoolExecutor(2)  # never shut down: its idle workers are told to stop at exit, not waited on forever
POOL.submit(int).result()

@atexit.register
def bye():
    (OUT / "atexit").write_text(",".join(sorted(p.name for p in OUT.iterdir())))
    print("exit handler ran")  # buffered (stdout is a pipe): written when pi flushes its streams

@hookimpl
def register_tools(register):
    pass
"""


def test_the_exit_waits_for_threads_and_runs_exit_handlers_in_the_interpreters_order(tmp_path: Path) -> None:
    # pi ends without tearing its heap down; what a plugin may count on from an exit still happens:
    # thread pools are stopped and other threads waited for, then exit handlers run, then the streams
    # are flushed.
    out = tmp_path / "out"
    out.mkdir()
    ext = tmp_path / "exitwork.py"
    ext.write_text(EXIT_WORK.format(out=str(out)))
    prompt = "a long answer " * 5_000  # more than a pipe holds: flushed at the end
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # stdout buffered, as users have it
    result = subprocess.run([sys.executable, "-m", "pi_core", "-e", str(ext), "--provider", "faux", "--model", "echo",
                             "--no-session", "-p", prompt], cwd=tmp_path, capture_output=True, text=True, timeout=30,
                            env={**env, "PI_CODING_AGENT_DIR": str(tmp_path / "agent")})
    assert result.returncode == 0, result.stderr
    assert (out / "thread").read_text() == "done"
    assert (out / "atexit").read_text() == "thread"
    assert result.stdout.count("a long answer") == 5_000 and result.stdout.endswith("\nexit handler ran\n")


def test_the_exit_status_is_the_runs(tmp_path: Path) -> None:
    result = pi(tmp_path, tmp_path / "agent", "--provider", "nosuchprovider", "--no-session", "-p", "hello")
    assert result.returncode == 1
    assert "nosuchprovider" in result.stderr
