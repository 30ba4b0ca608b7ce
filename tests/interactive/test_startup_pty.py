"""What pi shows when it starts, in a pseudo-terminal: the header lists the context files, skills, prompt
templates and extensions loaded (as pi's does), and the window title is pi's ``π - <name> - <folder>``,
updated when the session is named or changes."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_interactive_pty import quit_app, running  # noqa: F401  (running is a fixture)

pytestmark = pytest.mark.timeout(90)


def test_the_header_lists_what_was_loaded(running, tmp_path: Path) -> None:
    project, agent = tmp_path / "project", tmp_path / "agent"
    project.mkdir()
    (project / "AGENTS.md").write_text("Be brief.\n")
    (agent / "prompts").mkdir(parents=True)
    (agent / "prompts" / "review-pr.md").write_text("---\ndescription: Review a pull request\n---\nReview $1\n")
    (agent / "skills" / "release-notes").mkdir(parents=True)
    (agent / "skills" / "release-notes" / "SKILL.md").write_text(
        "---\nname: release-notes\ndescription: Write release notes\n---\nSteps.\n")
    app = running()
    rows = app.text().split("\n")
    for heading, listed in (("[Context]", "AGENTS.md"), ("[Skills]", "release-notes"), ("[Prompts]", "/review-pr"),
                            ("[Extensions]", "interactive-test")):
        assert heading in rows, app.text()
        assert listed in rows[rows.index(heading) + 1], (heading, rows[rows.index(heading) + 1])
    assert rows.index("[Context]") < rows.index("[Skills]") < rows.index("[Prompts]") < rows.index("[Extensions]")
    quit_app(app)


def test_quiet_startup_leaves_the_listing_out(running, tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "AGENTS.md").write_text("Be brief.\n")
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "settings.json").write_text('{"quietStartup": true}')
    app = running()
    assert "[Context]" not in app.text()
    quit_app(app)


def test_the_window_title_is_pis_and_follows_the_name(running, tmp_path: Path) -> None:
    app = running()
    assert "\x1b]0;π - project\x07".encode() in app.raw
    app.type("/name Alpha work")
    app.wait_for("Session name set: Alpha work")
    app.wait_for(lambda: "\x1b]0;π - Alpha work - project\x07".encode() in app.raw)
    app.type("/new")
    app.wait_for("New session started")
    app.wait_for(lambda: app.raw.rindex("\x1b]0;π - project\x07".encode()) > app.raw.index(b"Alpha work - project"))
    quit_app(app)
