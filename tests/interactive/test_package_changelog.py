"""pi's "Extension Updates" notice: a package's changelog entries newer than the version seen last time,
shown once on a fresh start, recorded in the user settings under pi's key."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from test_interactive_pty import quit_app, running  # noqa: F401  (running is a fixture)

PLUGIN = '''
from pi_core import Tool, ToolResult, hookimpl

async def run(params, ctx):
    return ToolResult.text("noted")

@hookimpl
def register_tools(register):
    register(Tool(name="note", description="Takes a note.", execute=run, parameters={"type": "object"}))
'''


def release(package: Path, version: str, notes: dict[str, str]) -> None:
    (package / "package.json").write_text(json.dumps({"name": "pi-notes", "version": version}))
    text = "# Changelog\n\n" + "".join(f"## [{v}] - 2026-12-0{i + 1}\n\n- {line}\n\n"
                                        for i, (v, line) in enumerate(notes.items()))
    (package / "CHANGELOG.md").write_text(text)


def setup(tmp_path: Path, **settings: object) -> Path:
    package = tmp_path / "pi-notes"
    (package / "extensions").mkdir(parents=True)
    (package / "extensions" / "note.py").write_text(textwrap.dedent(PLUGIN))
    release(package, "1.0.0", {"1.0.0": "First release of notes", "0.9.0": "A preview"})
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "settings.json").write_text(json.dumps({"packages": [str(package)], **settings}))
    return package


def recorded(tmp_path: Path) -> dict[str, str]:
    return json.loads((tmp_path / "agent" / "settings.json").read_text()).get("extensionChangelogVersions", {})


def test_first_start_records_the_version_and_an_update_shows_only_the_new_entries(running, tmp_path: Path) -> None:
    package = setup(tmp_path)
    key = json.dumps({"source": str(package), "scope": "user"}, separators=(",", ":"))

    app = running()
    assert "Extension Updates" not in app.text()  # first sight of the package: nothing to show
    assert quit_app(app) == 0
    assert recorded(tmp_path) == {key: "1.0.0"}

    release(package, "1.1.0", {"1.1.0": "Notes can be tagged", "1.0.0": "First release of notes"})
    app = running()
    text = app.text()
    assert "Extension Updates" in text
    assert "pi-notes [1.1.0] - 2026-12-01" in text and "Notes can be tagged" in text
    assert "First release of notes" not in text  # seen before
    assert quit_app(app) == 0
    assert recorded(tmp_path) == {key: "1.1.0"}

    app = running()
    assert "Extension Updates" not in app.text()  # shown once
    assert quit_app(app) == 0


def test_collapsed_changelog_is_one_line_per_package_and_a_package_without_extensions_shows_none(
        running, tmp_path: Path) -> None:
    package = setup(tmp_path, collapseChangelog=True)
    themes_only = tmp_path / "themes-only"
    (themes_only / "themes").mkdir(parents=True)
    (themes_only / "themes" / "dusk.json").write_text(json.dumps({"name": "dusk", "vars": {}, "colors": {}}))
    (themes_only / "package.json").write_text(json.dumps({"name": "dusk-theme", "version": "2.0.0"}))
    (themes_only / "CHANGELOG.md").write_text("## [2.0.0]\n\n- Darker\n")
    settings = json.loads((tmp_path / "agent" / "settings.json").read_text())
    settings["packages"].append(str(themes_only))
    (tmp_path / "agent" / "settings.json").write_text(json.dumps(settings))

    assert quit_app(running()) == 0
    release(package, "1.2.0", {"1.2.0": "Faster search", "1.1.0": "Tags"})
    app = running()
    text = app.text()
    assert "Updated pi-notes to v1.2.0." in text
    assert "Faster search" not in text and "Extension Updates" not in text
    assert "dusk" not in text.lower()  # themes only: pi shows no changelog for it
    assert quit_app(app) == 0
    assert list(recorded(tmp_path).values()) == ["1.2.0"]


def test_a_resumed_session_shows_no_package_notes(running, tmp_path: Path) -> None:
    package = setup(tmp_path)
    app = running([{"text": "hello there"}])
    app.type("hi")
    app.wait_for("hello there")
    assert quit_app(app) == 0
    release(package, "1.1.0", {"1.1.0": "Notes can be tagged"})
    session = sorted((tmp_path / "sessions").glob("*.jsonl"))[-1]
    app = running(session=str(session))
    assert "Notes can be tagged" not in app.text()
    assert quit_app(app) == 0
