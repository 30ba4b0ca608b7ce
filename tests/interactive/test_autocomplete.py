"""The editor's completion in a pseudo-terminal: plugins' autocomplete providers (pi's github-issue-autocomplete
ported, against a local stand-in for the GitHub CLI), and fuzzy matching of ``/`` names (commands, prompt
templates, skills) and ``@`` paths."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from test_interactive_pty import quit_app, running, session_lines  # noqa: F401  (the fixture)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "extensions"
pytestmark = pytest.mark.timeout(120)
ISSUES = [{"number": 12, "title": "Crash when the parser sees a BOM", "state": "OPEN"},
          {"number": 7, "title": "Document the theme tokens", "state": "OPEN"},
          {"number": 123, "title": "Slow startup on network drives", "state": "OPEN"}]


def editor_row(app: Any) -> str:
    return next((row for row in reversed(app.display()) if row.startswith("›")), "")


def fake_gh(tmp_path: Path) -> dict[str, str]:
    """A ``gh`` that answers ``issue list`` with ISSUES (and logs its arguments), first on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (tmp_path / "issues.json").write_text(json.dumps(ISSUES))
    gh = bin_dir / "gh"
    gh.write_text(f"#!/bin/sh\necho \"$@\" >> {tmp_path / 'gh.log'}\ncat {tmp_path / 'issues.json'}\n")
    gh.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}


def github_checkout(project: Path) -> None:
    project.mkdir(exist_ok=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    subprocess.run(["git", "-C", str(project), "remote", "add", "origin", "git@github.com:acme/widgets.git"], check=True)


def test_issue_numbers_complete_from_a_plugin_provider(running, tmp_path: Path) -> None:  # noqa: F811
    github_checkout(tmp_path / "project")
    app = running(env=fake_gh(tmp_path), **{"extensions": [str(EXAMPLES / "github_issue_autocomplete.py")]})
    app.type("see #", enter=False)
    app.wait_for(lambda: "Crash when the parser" in app.text() and "Slow startup" in app.text(), 30)
    assert "--repo acme/widgets --state open" in (tmp_path / "gh.log").read_text()
    app.type("12", enter=False)  # by number: #12 and #123 (the menu follows each key: wait for its last state)
    app.wait_for(lambda: "Slow startup" in "\n".join(app.display()) and "Crash when" in "\n".join(app.display())
                 and "Document the theme" not in "\n".join(app.display()))
    app.send("\x15")  # Ctrl+U
    app.type("see #thme", enter=False)  # fuzzily by title
    app.wait_for(lambda: "[open] Document the theme tokens" in "\n".join(app.display())
                 and "Crash when" not in "\n".join(app.display()))
    app.send("\t")
    app.wait_for(lambda: editor_row(app).rstrip() == "› see #7")
    app.send("\x15")
    app.type("/mod", enter=False)  # what the plugin does not handle is pi's own completion
    app.wait_for(lambda: any("/model" in row for row in app.display()))
    app.send("\x15")
    assert (tmp_path / "gh.log").read_text().count("issue list") == 1  # loaded once per session
    quit_app(app)


def test_slash_menu_is_fuzzy_and_lists_templates_and_skills(running, tmp_path: Path) -> None:  # noqa: F811
    agent = tmp_path / "agent"
    (agent / "prompts").mkdir(parents=True)
    (agent / "prompts" / "review-pr.md").write_text("---\ndescription: Review a pull request\n---\nReview $1\n")
    (agent / "skills" / "release-notes").mkdir(parents=True)
    (agent / "skills" / "release-notes" / "SKILL.md").write_text(
        "---\nname: release-notes\ndescription: Write release notes\n---\nSteps.\n")
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "src").mkdir()
    (tmp_path / "project" / "src" / "parser_utils.py").write_text("x = 1\n")
    app = running()
    app.type("/cmpct", enter=False)  # letters in order
    app.wait_for(lambda: any(row.startswith("/compact") or " /compact" in row for row in app.display()))
    app.send("\x15")
    app.type("/comapct", enter=False)  # a misspelling
    app.wait_for(lambda: any("/compact" in row for row in app.display()))
    app.send("\x15")
    app.type("/rvw", enter=False)
    app.wait_for(lambda: any("/review-pr" in row and "Review a pull request" in row for row in app.display()))
    app.send("\x15")
    app.type("/relnotes", enter=False)
    app.wait_for(lambda: any("/skill:release-notes" in row for row in app.display()))
    app.send("\x15")
    app.type("look at @src/prsutl", enter=False)  # paths fuzzily too
    app.wait_for(lambda: any("parser_utils.py" in row for row in app.display() if not row.startswith("›")))
    app.send("\t")
    app.wait_for(lambda: editor_row(app).rstrip() == "› look at @src/parser_utils.py")
    app.send("\x15")
    quit_app(app)


def test_at_paths_search_the_whole_project_and_skip_ignored_files(running, tmp_path: Path) -> None:  # noqa: F811
    project = tmp_path / "project"
    (project / "src" / "deep").mkdir(parents=True)
    (project / "src" / "deep" / "parser_utils.py").write_text("x = 1\n")
    (project / "build").mkdir()
    (project / "build" / "parser_util_generated.py").write_text("x = 2\n")
    (project / ".gitignore").write_text("build/\n")
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    app = running()
    app.type("see @parser_u", enter=False)  # not in the folder typed (the project's top): found below it
    app.wait_for(lambda: any("src/deep/parser_utils.py" in row for row in app.display() if not row.startswith("›")))
    assert "parser_util_generated" not in "\n".join(app.display())  # .gitignore'd
    app.send("\t")
    app.wait_for(lambda: editor_row(app).rstrip() == "› see @src/deep/parser_utils.py")
    app.send("\x15")
    app.type("see @sr/dp/prs", enter=False)  # a path that names no folder is matched as a whole
    app.wait_for(lambda: any("src/deep/parser_utils.py" in row for row in app.display() if not row.startswith("›")))
    app.send("\t")
    app.wait_for(lambda: editor_row(app).rstrip() == "› see @src/deep/parser_utils.py")
    app.send("\x15")
    quit_app(app)


def test_project_listing_without_git_or_fd_skips_hidden_and_dependency_folders(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from pi_core.modes.interactive import project_files
    from pi_core.modes.interactive.project_files import list_project

    monkeypatch.setattr(project_files.shutil, "which", lambda name: None)  # neither fd nor git

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("")
    for hidden in (".venv", "node_modules", "__pycache__"):
        (tmp_path / hidden).mkdir()
        (tmp_path / hidden / "junk.py").write_text("")
    entries = list_project(tmp_path)
    assert entries == ["pkg/", "pkg/mod.py"]
    assert len(list_project(tmp_path, limit=1)) == 1
