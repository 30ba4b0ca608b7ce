"""The session picker with pi's keys, in a pseudo-terminal: search, named only, all folders, rename,
delete to the trash, resume; and Esc in ``pi -r`` exits."""

from __future__ import annotations

import json
from typing import Any
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
    app.send("other folder work")  # the best match is first (the other sessions match it loosely, by folder)
    app.wait_for(lambda: any(r.startswith("› 2026") and "other folder work" in r for r in app.display()))
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


def _info(name: str | None, first: str, minute: int, path: str, parent: str | None = None,
          cwd: str = "/home/me/shop") -> Any:
    from datetime import datetime, timezone

    from pi_core import SessionInfo

    stamp = datetime(2026, 9, 21, 12, minute, tzinfo=timezone.utc)
    return SessionInfo(Path(path), f"id-{path}", cwd, name, parent, stamp, stamp, 2, first)


def test_threaded_order_nests_forks_and_the_search_ranks_as_pis() -> None:
    from pi_core.modes.interactive.session_picker import PickerState, search_score

    infos = [_info(None, "root work", 1, "/s/root.jsonl"),
             _info(None, "fork of root", 5, "/s/fork.jsonl", parent="/s/root.jsonl"),
             _info(None, "fork of fork", 2, "/s/fork2.jsonl", parent="/s/fork.jsonl"),
             _info("Checkout bug", "the total is off", 3, "/s/named.jsonl"),
             _info(None, "parser rewrite", 4, "/s/parser.jsonl", cwd="/home/me/compiler")]
    state = PickerState(lambda everywhere: list(infos))
    assert state.sort == "threaded"  # pi's default: a fork under the session it came from
    assert [i.first_message for i in state.rows] == ["root work", "fork of root", "fork of fork", "parser rewrite",
                                                     "the total is off"]  # by the newest activity in each tree
    assert state.tree_prefix == {"/s/fork.jsonl": "└─ ", "/s/fork2.jsonl": "   └─ "}
    state.toggle("sort")
    assert state.sort == "recent"
    assert [i.first_message for i in state.rows][:2] == ["fork of root", "parser rewrite"]  # flat, newest first
    state.toggle("sort")
    state.set_query("chk")  # letters in order in the name
    assert [i.name for i in state.rows] == ["Checkout bug"]
    state.set_query("total")  # a word of the first message
    assert [i.first_message for i in state.rows] == ["the total is off"]
    state.set_query("cmplr")  # letters in order in the folder
    assert [i.first_message for i in state.rows] == ["parser rewrite"]
    named, text = infos[3], infos[0]
    assert search_score(named, "checkout") < search_score(text, "root")  # a hit in the name ranks first
    assert search_score(infos[4], '"parser rewrite"') is not None and search_score(infos[4], '"rewrite parser"') is None
    assert search_score(infos[4], "re:pars(er|ing)") is not None and search_score(infos[0], "re:^fork") is None
    assert state.sort == "relevance"
    state.toggle("sort")
    assert state.sort == "threaded"  # the cycle comes round


def test_picker_sort_paths_ctrl_backspace_and_remapped_keys(running, tmp_path: Path) -> None:
    files = _sessions(tmp_path)
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "keybindings.json").write_text(json.dumps({"app.session.toggleSort": "ctrl+o"}))
    app = running(env={"XDG_DATA_HOME": str(tmp_path / "xdg")}, columns=200)
    app.type("/resume")
    app.wait_for("(this folder, threaded)")
    assert "Ctrl+O sort" in app.text()  # the header names the key as bound now
    app.send("\x13")  # Ctrl+S: not the sort key any more
    app.pump(0.3)
    assert "(this folder, threaded)" in "\n".join(app.display())
    app.send("\x0f")  # Ctrl+O
    app.wait_for("(this folder, recent)")
    app.send("\x0f")
    app.wait_for("(this folder, relevance)")
    app.send("\x10")  # Ctrl+P: the file paths
    app.wait_for(lambda: str(files["alpha"]) in "\n".join(app.display()))
    app.send("beta")
    app.wait_for(lambda: "alpha work" not in "\n".join(app.display()))
    app.send("\x08")  # Ctrl+Backspace with a search typed: it edits the search
    app.wait_for(lambda: any(r.startswith("search: bet") and not r.startswith("search: beta") for r in app.display()))
    app.send("\x15")  # the search emptied: now Ctrl+Backspace deletes the selected session
    app.pump(0.2)
    app.send("\x08")
    app.wait_for("Delete this session?")
    app.send("\x1b")  # No
    app.wait_for("Resume session")
    app.send("\x1b")
    app.wait_for(lambda: "Resume session" not in "\n".join(app.display()))
    assert all(path.exists() for path in files.values())
    app.send("\x04")
    assert app.wait_exit() == 0
