"""``pi update`` with pi's custom self-update command: ``PI_SELF_UPDATE_COMMAND`` (split on whitespace) wins
over the global ``selfUpdateCommand`` setting (an argv array); ``{packageName}``, ``{version}`` and
``{installSpec}`` are filled in, and a failing command fails the update."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from test_cli_run import pi

RECORD = "import sys, pathlib; pathlib.Path(sys.argv[1]).write_text(' '.join(sys.argv[2:]))"


def test_the_environment_variable_wins_over_the_setting(tmp_path: Path) -> None:
    agent, out_env, out_setting = tmp_path / "agent", tmp_path / "env.txt", tmp_path / "setting.txt"
    agent.mkdir()
    (tmp_path / "record.py").write_text(RECORD)
    (agent / "settings.json").write_text(json.dumps({"selfUpdateCommand": [
        sys.executable, str(tmp_path / "record.py"), str(out_setting), "upgrade {packageName} as", "{installSpec}"]}))
    by_setting = pi(tmp_path, agent, "update", "--self")
    assert by_setting.returncode == 0, by_setting.stderr
    assert out_setting.read_text() == "upgrade pi-core-agent as pi-core-agent"
    assert "Updated pi-core-agent with:" in by_setting.stdout

    command = f"{sys.executable} {tmp_path / 'record.py'} {out_env} use {{packageName}}@{{version}}"
    by_env = pi(tmp_path, agent, "update", env={"PI_SELF_UPDATE_COMMAND": command})
    assert by_env.returncode == 0, by_env.stderr
    assert out_env.read_text() == "use pi-core-agent@latest"


def test_a_failing_command_fails_the_update(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    failed = pi(tmp_path, agent, "update", "--self",
                env={"PI_SELF_UPDATE_COMMAND": f"{sys.executable} -c raise(SystemExit(3))"})
    assert failed.returncode == 1 and "self-update command failed (exit 3)" in failed.stderr
    assert "Traceback" not in failed.stderr
