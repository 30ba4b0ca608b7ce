"""``--tui-mode`` and ``--verbose`` in the real ``pi``: regular is the only terminal mode here (pi 1.6's
fullscreen mode is refused with the reason), and ``--verbose`` brings back the start-up header that
``quietStartup`` hides."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from test_cli_run import pi

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interactive"))
from ptyterm import PtyApp  # noqa: E402

from pi_core.testing import FakeProviderServer  # noqa: E402

pytestmark = pytest.mark.timeout(180)


@pytest.mark.parametrize(("value", "message"), [
    ("fullscreen", "--tui-mode fullscreen is not available in pi for Python"),
    ("sideways", "--tui-mode must be fullscreen or regular, not 'sideways'"),
])
def test_tui_mode_other_than_regular_is_refused(tmp_path: Path, value: str, message: str) -> None:
    result = pi(tmp_path, tmp_path / "agent", "--tui-mode", value, "--provider", "faux", "--model", "echo",
                "-p", "hi")
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr
    assert result.stdout == ""


def test_tui_mode_regular_runs(tmp_path: Path) -> None:
    result = pi(tmp_path, tmp_path / "agent", "--tui-mode", "regular", "--provider", "faux", "--model", "echo",
                "--no-session", "-p", "hi")
    assert (result.returncode, result.stdout) == (0, "hi\n"), result.stderr


def _start(project: Path, tmp_path: Path, *args: str) -> PtyApp:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env.update({"TERM": "xterm", "PI_NO_OSC52": "1"})
    app = PtyApp([sys.executable, "-m", "pi_core", "--no-session", "--tui-mode", "regular", *args], env=env,
                 cwd=project, stderr=tmp_path / "stderr.txt")
    app.wait_for(lambda: "fake-model" in "\n".join(app.display()), 90)  # the editor and its footer are up
    app.settle(0.3)
    return app


def test_verbose_shows_the_header_quiet_startup_hides(fake_provider_server: FakeProviderServer,
                                                      pi_project: Path, pi_agent_dir: Path, tmp_path: Path) -> None:
    settings = pi_agent_dir / "settings.json"
    settings.write_text(json.dumps({**json.loads(settings.read_text()), "quietStartup": True}))
    for args, header in (((), False), (("--verbose",), True)):
        app = _start(pi_project, tmp_path, *args)
        try:
            assert ("/help for commands" in app.text()) is header, app.text()
        finally:
            app.close()
