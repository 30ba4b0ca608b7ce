"""Start-up housekeeping of the `pi` process: garbage collection is paused while pi starts and is back
on for whatever runs afterwards (a session's tools, a plugin's sub-command), so long runs do not grow."""

from __future__ import annotations

import json
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
