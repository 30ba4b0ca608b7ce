"""pi's theme options in the real ``pi`` on a terminal: ``--theme PATH`` loads a theme file for the run,
``--use-theme NAME`` chooses one, ``--no-themes`` drops the discovered and configured themes (``--theme``
paths still load). A theme that cannot be found is reported on screen, so the screen says what loaded."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interactive"))
from ptyterm import PtyApp  # noqa: E402

from pi_core.modes.interactive.theme import TOKENS  # noqa: E402
from pi_core.testing import FakeProviderServer  # noqa: E402

pytestmark = pytest.mark.timeout(240)


def theme_file(path: Path, name: str) -> Path:
    colours = {t: "#808080" for t in TOKENS if t not in ("scrollbarTrack", "scrollbarThumb", "searchMatchBg",
                                                         "searchMatchText", "thinkingMax")}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"name": name, "vars": {}, "colors": colours}))
    return path


def screen_of(project: Path, tmp_path: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env.update({"TERM": "xterm", "PI_NO_OSC52": "1"})
    app = PtyApp([sys.executable, "-m", "pi_core", "--no-session", *args], env=env, cwd=project,
                 stderr=tmp_path / "stderr.txt")
    try:
        app.wait_for(lambda: "fake-model" in "\n".join(app.display()), 90)  # the editor and its footer are up
        app.settle(0.3)
        return app.text()
    finally:
        app.close()


def test_theme_path_use_theme_and_no_themes(fake_provider_server: FakeProviderServer, pi_project: Path,
                                            pi_agent_dir: Path, tmp_path: Path) -> None:
    theme_file(pi_agent_dir / "themes" / "agent-hot.json", "agent-hot")
    theme_file(pi_project / "mine.json", "mine")
    loaded = screen_of(pi_project, tmp_path, "--theme", "mine.json", "--use-theme", "mine")
    assert "no theme named" not in loaded
    discovered = screen_of(pi_project, tmp_path, "--use-theme", "agent-hot")
    assert "no theme named" not in discovered
    dropped = screen_of(pi_project, tmp_path, "--no-themes", "--theme", "mine.json", "--use-theme", "agent-hot")
    assert "no theme named 'agent-hot'" in dropped
    kept = screen_of(pi_project, tmp_path, "--no-themes", "--theme", "mine.json", "--use-theme", "mine")
    assert "no theme named" not in kept
    unknown = screen_of(pi_project, tmp_path, "--use-theme", "mine")  # the file was for those runs only
    assert "no theme named 'mine'" in unknown
