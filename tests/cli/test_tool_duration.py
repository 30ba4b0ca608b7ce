"""``tool_execution_end`` carries pi's ``durationMs`` (how long the tool ran) in the JSON event stream."""

from __future__ import annotations

import json
from pathlib import Path

from test_cli_run import pi


def test_tool_execution_end_has_duration_ms(tmp_path: Path) -> None:
    call = json.dumps({"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 0.2; echo done"}}]})
    result = pi(tmp_path, tmp_path / "agent", "--provider", "faux", "--model", "echo", "--no-session",
                "--mode", "json", "-p", call)
    assert result.returncode == 0, result.stderr
    (end,) = [json.loads(line) for line in result.stdout.splitlines() if '"tool_execution_end"' in line]
    assert end["toolName"] == "bash" and end["isError"] is False
    assert isinstance(end["durationMs"], int) and end["durationMs"] >= 200  # at least the sleep it ran
