"""A remembered trust decision applies the project's ``.pi/settings.json`` even when the project has no
extensions (trust gates the settings file on its own)."""

from __future__ import annotations

import json
from pathlib import Path

from test_cli_run import pi


def _project(tmp_path: Path) -> tuple[Path, Path]:
    project, agent = tmp_path / "project", tmp_path / "agent"
    (project / ".pi").mkdir(parents=True)
    agent.mkdir()
    # The project names its model; without the settings file the run has none to use.
    (project / ".pi" / "settings.json").write_text(json.dumps({"defaultProvider": "faux", "defaultModel": "echo"}))
    return project, agent


def test_a_trusted_project_without_extensions_gets_its_settings(tmp_path: Path) -> None:
    project, agent = _project(tmp_path)
    assert pi(project, agent, "trust").returncode == 0
    result = pi(project, agent, "-p", "from the project settings")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "from the project settings"


def test_an_untrusted_project_keeps_its_settings_unread(tmp_path: Path) -> None:
    project, agent = _project(tmp_path)
    assert pi(project, agent, "trust", "--no").returncode == 0
    untrusted = pi(project, agent, "-p", "x")
    assert untrusted.stdout.strip() != "x"  # the project's defaultModel was not used
