"""The session picker with pi's keys, in a pseudo-terminal: search, named only, all folders, rename,
delete to the trash, resume; and Esc in ``pi -r`` exits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_interactive_pty import running  # noqa: F401  (running is a fixture)
from test_tree_navigator import _message

pytestmark = pytest.mark.timeout(90)


def _session(folder: Path, sid: str, cwd: Path, text: str, minute: int, name: str | None = None) -> Path:
    stamp = f"2026-09-21T12:{minute:02d}:00.000Z"
    rows = [{"type": "session", "version": 3, "id": sid, "timestamp": stamp, "cwd": str(cwd)},
            {**_message("u1", None, "user", text, 1), "timestamp": stamp},
            {**_message("a1", "u1", "assistant", f"reply to {text}", 2), "timestamp": stamp}]
    if name:
        rows.append({"type": "session_info", "id": "n1", "parentId": "a1", "timestamp": stamp, "name": name})
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"2026-09-21T12-{minute:02d}-00-000Z_{sid}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _sessions(tmp_path: Path) -> dict[str, Path]:
    folder, project = tmp_path / "sessions", tmp_path / "project"
    return {"alpha": _session(folder, "01a20000-0000-7000-8000-00000000000a", project, "alpha work", 1),
            "beta": _session(folder, "01a20000-0000-7000-8000-00000000000b", project, "beta work", 2, "Beta named"),
            "other": _session(folder, "01a20000-0000-7000-8000-00000000000c", tmp_path / "elsewhere",
                              "other folder work", 3)}


def test_picker_keys_search_named_all_folders_rename_delete_and_resume(running, tmp_path: Path) -> None:
    files = _sessions(tmp_path)
    app = running(env={"XDG_DATA_HOME": str(tmp_path / "xdg")})
    app.type("/resume")
    app.wait_for("Resume session")
    app.wait_for("alpha work")
    screen = "\n".join(app.display())
    assert "Beta named" in screen and "other folder work" not in screen
    app.send("\x0e")  # Ctrl+N: named only
    app.wait_for(lambda: "alpha work" not in "\n".join(app.display()[-8:]))
    app.send("\x0e")
    app.send("\t")  # all folders
    app.wait_for("other folder work")
    app.send("\t")
    app.wait_for(lambda: "other folder work" not in "\n".join(app.display()))
    app.send("alpha")  # search
    app.wait_for(lambda: "Beta named" not in "\n".join(app.display()))
    app.send("\x12")  # Ctrl+R: rename
    app.wait_for("New name for the session")
    app.type("Alpha renamed")
    app.wait_for("Renamed to Alpha renamed")
    assert json.loads(files["alpha"].read_text().splitlines()[-1])["name"] == "Alpha renamed"
    app.send("\x15")  # clear the search (Ctrl+U in the search line)
    app.send("beta")
    app.wait_for(lambda: "Alpha renamed" not in "\n".join(app.display()[-6:]))
    app.send("\x04")  # Ctrl+D: delete
    app.wait_for("Delete this session?")
    app.send("\r")  # Yes
    app.wait_for("Moved to the trash")
    assert not files["beta"].exists()
    trashed = tmp_path / "xdg" / "Trash" / "files" / files["beta"].name
    assert trashed.exists() and (tmp_path / "xdg" / "Trash" / "info" / f"{trashed.name}.trashinfo").exists()
    app.send("\x15")
    app.send("Alpha")
    app.pump(0.2)
    app.send("\r")
    app.wait_for("Resumed Alpha renamed")
    app.type("back in alpha")
    app.wait_for("echo: back in alpha")
    app.send("\x04")
    assert app.wait_exit() == 0
    assert "back in alpha" in files["alpha"].read_text()


def test_escape_in_pi_r_exits(running, tmp_path: Path) -> None:
    _sessions(tmp_path)
    app = running(initial="/resume", wait_editor=False)
    app.wait_for("Resume session")
    app.send("\x1b")
    assert app.wait_exit() == 0
    assert not list((tmp_path / "sessions").glob("*.jsonl"))[3:]  # no new session was written


def _pick_other(app) -> None:  # type: ignore[no-untyped-def]
    app.type("/resume")
    app.wait_for("Resume session")
    app.send("\t")  # all folders
    app.wait_for("other folder work")
    app.send("other folder work")
    app.wait_for(lambda: not any(word in "\n".join(app.display()[-8:]) for word in ("alpha work", "Beta named")))
    app.send("\r")


def test_a_session_of_another_folder_runs_there(running, tmp_path: Path) -> None:
    files = _sessions(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    app = running([{"text": "Checking.", "tools": [["bash", {"command": "pwd"}]]}, {"text": "checked"}])
    _pick_other(app)
    app.wait_for("Resumed 01a20000-0000-7000-8000-00000000000c")
    app.wait_for(lambda: "elsewhere" in app.display()[-2])  # the footer's folder
    app.type("where am i")
    app.wait_for("checked")
    assert str(tmp_path / "elsewhere") in app.text()  # bash ran there
    app.send("\x04")
    assert app.wait_exit() == 0
    assert "where am i" in files["other"].read_text()


def asked(app, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The question is on screen with its three choices (an earlier answer's echo is in the scrollback)."""
    app.wait_for(lambda: any(row.startswith(f"Session cwd does not exist: {tmp_path / 'elsewhere'}")
                             for row in app.display())
                 and all(any(choice in row for row in app.display()) for choice in ("Continue in", "Fork into"))
                 and any(row.strip() == "Cancel" for row in app.display()))


def test_a_session_whose_folder_is_gone_asks_continue_fork_or_cancel(running, tmp_path: Path) -> None:
    files = _sessions(tmp_path)  # "other" was made in tmp_path/elsewhere, which does not exist
    before = files["other"].read_text()
    app = running([{"text": "Checking.", "tools": [["bash", {"command": "pwd"}]]}, {"text": "checked"}],
                  columns=200)  # the question names the whole folder
    _pick_other(app)
    asked(app, tmp_path)
    app.send("Cancel")
    app.pump(0.2)
    app.send("\r")
    app.wait_for("Resume cancelled")
    _pick_other(app)
    asked(app, tmp_path)
    app.send("Fork")
    app.wait_for(lambda: "Continue in" not in "\n".join(app.display()))
    app.send("\r")
    app.wait_for("Forked into new session")
    forks = [p for p in (tmp_path / "sessions").glob("*.jsonl") if p not in files.values()]
    header = json.loads(forks[0].read_text().splitlines()[0])
    assert header["cwd"] == str(tmp_path / "project") and header["parentSession"] == str(files["other"])
    app.type("where am i")
    app.wait_for("checked")
    assert str(tmp_path / "project") + "\n" in app.text() + "\n"  # bash ran in pi's folder
    _pick_other(app)  # the original again: Continue runs it here without changing its recorded folder
    asked(app, tmp_path)
    app.send("\r")  # the first choice: Continue in <project>
    app.wait_for(f"Resumed session in {tmp_path / 'project'}")
    app.send("\x04")
    assert app.wait_exit() == 0
    assert files["other"].read_text().splitlines()[0] == before.splitlines()[0]  # still the old folder
