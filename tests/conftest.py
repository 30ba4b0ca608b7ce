"""Shared test setup: every test runs with its own agent dir and HOME, never the developer's."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(home / ".pi" / "agent"))
    for name in ("PI_STRICT_PLUGINS", "PI_DISABLE_PLUGINS", "PI_DISABLE_PLUGIN_AUTOLOAD",
                 "PI_CODING_AGENT_SESSION_DIR"):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def agent_dir(isolated_home: Path) -> Path:
    return Path(os.environ["PI_CODING_AGENT_DIR"])


@pytest.fixture
def pi_exe() -> list[str]:
    """The installed console script when present (what users run), else the module."""
    script = Path(sys.executable).parent / "pi"
    return [str(script)] if script.exists() else [sys.executable, "-m", "pi_core"]
