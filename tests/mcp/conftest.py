"""The workspace fixture of the MCP tests (their helpers are in mcp_helpers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path
