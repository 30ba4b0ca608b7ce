"""Helpers for the tool tests: load a built-in tool through its plugin hook and run it."""

from __future__ import annotations

import asyncio
import importlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pi_core import AbortController, Tool, ToolContext, ToolResult

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "tools"


def load_tool(name: str) -> Tool:
    """The tool a built-in plugin registers, obtained the way the plugin host obtains it."""
    module = importlib.import_module(f"plugins.tools.{name}")
    registered: list[Tool] = []
    module.register_tools(lambda item, replaces=None: registered.append(item))
    (tool,) = [t for t in registered if t.name == name]
    return tool


def run_tool(tool: Tool, params: dict[str, Any], cwd: Path, *, timeout: float = 30, **ctx: Any) -> ToolResult:
    """Run a tool to completion in a fresh event loop, the arguments first passed through its shim."""
    if tool.prepare_arguments is not None:
        params = tool.prepare_arguments(params)
    context = ToolContext(tool_call_id="call_1", cwd=cwd, **ctx)

    async def go() -> ToolResult:
        return await asyncio.wait_for(tool.run(params, context), timeout)

    return asyncio.run(go())


def run_tool_error(tool: Tool, params: dict[str, Any], cwd: Path, **ctx: Any) -> str:
    """The error text a failing call produces, whether the tool raised or returned an error result."""
    try:
        result = run_tool(tool, params, cwd, **ctx)
    except Exception as e:  # the loop turns exceptions into error results with this text
        return str(e)
    assert result.is_error, f"expected an error, got {result.text_content()!r}"
    return result.text_content()


def recorded_results(scenario: str, tool: str) -> list[dict[str, Any]]:
    data = json.loads((FIXTURES / "pi-1.6.0-tool-results.json").read_text())
    return [r for r in data if r["scenario"] == scenario and r["tool"] == tool]


@pytest.fixture
def workspace(tmp_path: Path):
    """Copy a recorded workspace_before into tmp_path and return its path."""

    def make(scenario: str) -> Path:
        dest = tmp_path / scenario
        shutil.copytree(FIXTURES / scenario / "workspace_before", dest)
        return dest

    return make


@pytest.fixture
def abort() -> AbortController:
    return AbortController()
