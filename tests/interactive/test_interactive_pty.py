"""The interactive mode as a user meets it: the real program in a pseudo-terminal, read through a
virtual terminal (pyte), with scripted model turns."""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from ptyterm import PtyApp

DRIVER = Path(__file__).with_name("drive_app.py")
pytestmark = pytest.mark.timeout(60)


def start(tmp_path: Path, turns: list[dict[str, Any]] | None = None, *, env: dict[str, str] | None = None,
          columns: int = 80, wait_editor: bool = True, **script: Any) -> PtyApp:
    (tmp_path / "project").mkdir(exist_ok=True)
    (tmp_path / "project" / "notes.txt").write_text("one\ntwo\n")
    config = {"cwd": str(tmp_path / "project"), "agent_dir": str(tmp_path / "agent"),
              "session_dir": str(tmp_path / "sessions"), "turns": turns or [], **script}
    path = tmp_path / "script.json"
    path.write_text(json.dumps(config))
    child_env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    child_env.update({"TERM": "xterm", "PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "PI_NO_OSC52": "1"},
                     **(env or {}))
    app = PtyApp([sys.executable, str(DRIVER), str(path)], env=child_env, cwd=tmp_path / "project",
                 stderr=tmp_path / "stderr.txt", columns=columns)
    if wait_editor:
        app.wait_for(lambda: "thinking" in app.display()[-1], 30)  # the editor and its footer are up
        app.settle(0.2)
    return app


@pytest.fixture
def running(tmp_path: Path):  # type: ignore[no-untyped-def]
    apps: list[PtyApp] = []

    def launch(*args: Any, **kwargs: Any) -> PtyApp:
        app = start(tmp_path, *args, **kwargs)
        apps.append(app)
        return app

    yield launch
    for app in apps:
        app.close()
        assert b"\x1b[3J" not in app.raw, "the scrollback must never be erased"
        assert b"\x1b[2J" not in app.raw, "the screen must never be cleared"


def session_lines(tmp_path: Path) -> list[dict[str, Any]]:
    files = sorted((tmp_path / "sessions").glob("*.jsonl"))
    assert files, "no session file was written"
    return [json.loads(line) for line in files[-1].read_text().splitlines()]


def wait_idle(app: PtyApp, timeout: float = 30.0) -> None:
    """Until the agent is done for good. The working row's spinner redraws it while the agent works, so a
    quiet terminal without the row means the run is over; a screen read between two writes of a redraw (the
    answer moved to the scrollback, the live rows not yet drawn again) may miss the row while the run goes on."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        app.wait_for(lambda: "Working" not in "\n".join(app.display()), max(deadline - time.monotonic(), 0.1))
        app.settle(0.3, timeout=2)
        if "Working" not in "\n".join(app.display()):
            return
    raise AssertionError(f"the agent was still working after {timeout} s:\n{app.text()}")


def quit_app(app: PtyApp) -> int:
    app.send("\x04")  # Ctrl+D on the empty editor
    return app.wait_exit()


def test_streams_the_answer_and_shows_tool_blocks(running, tmp_path: Path) -> None:
    app = running([{"thinking": "Looking around first.", "text": "Listing the folder.", "tools": [["ls", {}]]},
                   {"text": "Found **notes.txt** in the folder; " + "it has two lines. " * 8}])
    app.type("what is here?")
    app.wait_for("it has two lines. it has two lines.")
    app.settle()
    text = app.text()
    assert "› what is here?" in text
    assert "Looking around first." in text
    # a loaded machine may take 0.1 s or more for ls: the header then ends in "Took 0.2s"
    assert re.search(r"● ls(  Took [\d.]+m?s)?\n  notes\.txt", text), text
    assert "Found notes.txt in the folder" in text  # bold markers become styling
    assert all(len(row) <= 80 for row in app.scrollback())
    assert quit_app(app) == 0
    records = session_lines(tmp_path)
    roles = [r["message"]["role"] for r in records if r["type"] == "message"]
    assert roles == ["system", "user", "assistant", "toolResult", "assistant"]
    assert (tmp_path / "agent" / "shutdown.log").read_text() == "shutdown quit\n"


def test_text_appears_while_it_streams(running) -> None:
    app = running([{"text": "alpha " * 30 + "omega-end", "delta_delay": 0.05}])
    app.type("go")
    app.wait_for("alpha alpha alpha")
    assert "omega-end" not in app.text(), "the first words show before the answer is complete"
    app.wait_for("omega-end")
    quit_app(app)


def test_escape_interrupts_a_slow_stream(running, tmp_path: Path) -> None:
    app = running([{"text": "word " * 400, "delta_delay": 0.05}])
    app.type("write a lot")
    app.wait_for("word word word")
    app.wait_for("Working")
    app.send("\x1b")
    app.wait_for("Aborted", timeout=15)  # the stream would take 20 s more
    app.settle()
    assert "Working" not in "\n".join(app.display())
    assert quit_app(app) == 0
    assistant = [r["message"] for r in session_lines(tmp_path) if r.get("message", {}).get("role") == "assistant"]
    assert assistant[-1]["stopReason"] == "aborted"


def test_escape_interrupts_a_running_tool(running) -> None:
    app = running([{"text": "Waiting.", "tools": [["slow", {}]]}, {"text": "after the tool"}])
    app.type("wait")
    app.wait_for(lambda: "slow" in "\n".join(app.display()) and "Working" in "\n".join(app.display()))
    app.send("\x1b")
    app.wait_for("slow tool was interrupted", timeout=5)
    app.settle()
    assert "after the tool" not in app.text()
    quit_app(app)


def test_enter_while_working_queues_steering_and_delivers_it(running, tmp_path: Path) -> None:
    app = running([{"text": "Starting.", "tools": [["bash", {"command": "sleep 2.5; echo slept"}]]},
                   {"text": "steered answer"}])
    app.type("do the slow thing")
    app.wait_for(lambda: "bash" in "\n".join(app.display()))
    app.type("also check the tests")
    app.wait_for("queued steer: also check the tests", timeout=3)
    app.wait_for("› also check the tests")
    app.wait_for("steered answer")
    app.settle()
    assert "queued steer" not in "\n".join(app.display())
    quit_app(app)
    users = [r["message"]["content"][0]["text"] for r in session_lines(tmp_path)
             if r.get("message", {}).get("role") == "user"]
    assert users == ["do the slow thing", "also check the tests"]


def test_alt_enter_while_working_queues_a_follow_up(running, tmp_path: Path) -> None:
    app = running([{"text": "Starting.", "tools": [["bash", {"command": "sleep 2.5"}]]}, {"text": "first done"}])
    app.type("start")
    app.wait_for(lambda: "bash" in "\n".join(app.display()))
    app.send("and then this")
    app.pump(0.1)
    app.send("\x1b\r")
    app.wait_for("queued follow-up: and then this", timeout=3)
    app.wait_for("echo: and then this")  # delivered after the run, answered by the echo model
    text = app.text()
    assert text.index("first done") < text.index("› and then this")
    quit_app(app)


def test_model_and_name_commands(running, tmp_path: Path) -> None:
    app = running()
    app.type("/model faux-2")
    app.wait_for("Model: faux/faux-2")
    app.wait_for(lambda: "faux/faux-2" in "\n".join(app.display()))  # the footer follows
    app.type("/name my refactor")
    app.wait_for("Session name set: my refactor")
    app.type("/name")
    app.wait_for("Session name: my refactor")
    app.type("hi")
    app.wait_for("echo: hi")
    app.type("/session")
    app.wait_for("Tool results:")
    assert "Name:    my refactor" in app.text()
    assert quit_app(app) == 0
    records = session_lines(tmp_path)
    assert {"type": "model_change", "provider": "faux", "modelId": "faux-2"}.items() <= \
        [r for r in records if r["type"] == "model_change"][-1].items()
    assert [r["name"] for r in records if r["type"] == "session_info"] == ["my refactor"]
    assistant = [r["message"] for r in records if r.get("message", {}).get("role") == "assistant"]
    assert assistant[-1]["model"] == "faux-2"


def test_model_picker_dialog(running) -> None:
    app = running()
    app.type("/model")
    app.wait_for("faux/faux-2")
    app.send("two")  # filter by name
    app.pump(0.2)
    app.send("\r")
    app.wait_for("Model: faux/faux-2")
    quit_app(app)


def test_plugin_commands_use_dialogs_and_status(running) -> None:
    app = running()
    app.type("/pi", enter=False)
    app.wait_for("pick a fruit (select dialog)")  # completion menu with the description
    app.send("\x15")  # Ctrl+U: clear the line
    app.type("/pick")
    app.wait_for("Pick a fruit")
    app.send("\x1b[B")  # down
    app.pump(0.1)
    app.send("\r")
    app.wait_for("picked banana")
    app.type("/ask")
    app.wait_for("Your name")
    app.type("Ada")
    app.wait_for("Really?")
    app.send("\r")
    app.wait_for("hello Ada (True)")
    app.wait_for(lambda: "name=Ada ok=True" in "\n".join(app.display()))
    quit_app(app)


def test_at_path_completion(running) -> None:
    app = running()
    app.type("summarise @no", enter=False)
    app.send("\t")
    app.wait_for("summarise @notes.txt")
    app.send("\x15")
    quit_app(app)


def test_ctrl_c_twice_exits_cleanly(running, tmp_path: Path) -> None:
    app = running()
    app.type("hello")
    app.wait_for("echo: hello")
    app.type("draft", enter=False)
    app.send("\x03")  # clears the draft
    app.settle(0.2)
    assert "draft" not in "\n".join(app.display())
    app.send("\x03")
    app.wait_for("Press Ctrl+C again to exit")
    app.send("\x03")
    assert app.wait_exit() == 0
    assert (tmp_path / "agent" / "shutdown.log").read_text() == "shutdown quit\n"
    records = session_lines(tmp_path)
    assert records[-1]["message"]["role"] == "assistant"


def test_history_is_kept_across_runs(running, tmp_path: Path) -> None:
    app = running()
    app.type("remember this line")
    app.wait_for("echo: remember this line")
    quit_app(app)
    again = running()
    again.send("\x1b[A")  # up: the previous run's prompt
    again.wait_for(lambda: "remember this line" in "\n".join(again.display()))
    again.send("\x15")  # Ctrl+U: Ctrl+D only exits on an empty editor
    quit_app(again)


def test_new_and_resume(running, tmp_path: Path) -> None:
    app = running()
    app.type("first session prompt")
    app.wait_for("echo: first session prompt")
    app.type("/new")
    app.wait_for("New session started")
    app.type("second session prompt")
    app.wait_for("echo: second session prompt")
    app.type("/resume")
    app.wait_for("Resume session")
    app.type("first")
    app.wait_for("Resumed")
    app.type("back again")
    app.wait_for("echo: back again")
    quit_app(app)
    files = sorted((tmp_path / "sessions").glob("*.jsonl"))
    assert len(files) == 2
    texts = {f: f.read_text() for f in files}
    first = next(f for f, t in texts.items() if "first session prompt" in t)
    assert "back again" in texts[first]
    assert (tmp_path / "agent" / "shutdown.log").read_text().split("\n")[:3] == \
        ["shutdown new", "shutdown resume", "shutdown quit"]


def test_footer_shows_folder_branch_tokens_cost_context_and_model(running, tmp_path: Path) -> None:
    (tmp_path / "project").mkdir(exist_ok=True)
    (tmp_path / "project" / ".git").mkdir(exist_ok=True)
    (tmp_path / "project" / ".git" / "HEAD").write_text("ref: refs/heads/feature/footer\n")
    app = running(columns=200)
    rows = app.display()
    assert rows[-2].endswith("project (feature/footer)")
    assert rows[-1].startswith("0.0%/200k (auto)") and rows[-1].endswith("(faux) faux-1 • thinking off")
    app.type("/name footer work")
    app.wait_for(lambda: app.display()[-2].endswith("(feature/footer) • footer work"))
    app.type("hello there")
    app.wait_for("echo: hello there")
    app.settle()
    stats = app.display()[-1]
    assert re.match(r"↑\d+ ↓\d+ 0\.\d%/200k \(auto\) +\(faux\) faux-1 • thinking off$", stats), stats
    quit_app(app)


def test_no_color_sends_no_colours(running) -> None:
    app = running(env={"NO_COLOR": "1"})
    app.type("hello")
    app.wait_for("echo: hello")
    quit_app(app)
    colours = re.findall(rb"\x1b\[[0-9;]*(?:3[0-7]|9[0-7]|38;[0-9;]+)m", bytes(app.raw))
    assert colours == []


def test_without_a_terminal_it_is_a_line_repl(tmp_path: Path) -> None:
    import subprocess

    (tmp_path / "project").mkdir()
    config = {"cwd": str(tmp_path / "project"), "agent_dir": str(tmp_path / "agent"),
              "session_dir": str(tmp_path / "sessions"),
              "turns": [{"text": "Listing.", "tools": [["ls", {}]]}, {"text": "done listing"}]}
    (tmp_path / "script.json").write_text(json.dumps(config))
    result = subprocess.run([sys.executable, str(DRIVER), str(tmp_path / "script.json")],
                            input="list please\n/name piped\nsecond\n/quit\n", capture_output=True, text=True,
                            timeout=60, env={**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent")})
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "\x1b" not in out
    assert "> list please" in out or "› list please" in out
    assert "done listing" in out
    assert "Session name set: piped" in out
    assert "echo: second" in out
    assert out.index("done listing") < out.index("echo: second")
    records = session_lines(tmp_path)
    assert [r["name"] for r in records if r["type"] == "session_info"] == ["piped"]


def test_help_tools_thinking_and_copy(running, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"  # a PATH without clipboard programs: /copy falls back to printing
    bin_dir.mkdir()
    app = running([{"text": "the answer to copy"}], env={"PATH": str(bin_dir), "DISPLAY": ""})
    app.type("/help")
    # the help block arrives in pieces on a loaded machine: wait for each part rather than check once
    app.wait_for("/resume")
    app.wait_for(lambda: "pick a fruit (select dialog)" in app.text() and "queue as follow-up" in app.text())
    app.type("/tools")
    app.wait_for("4 active")
    assert re.search(r"● slow +waits until aborted", app.text())
    app.type("/thinking high")
    app.wait_for("Thinking level: high")
    app.wait_for(lambda: "faux-1 • high" in app.display()[-1])  # pi's footer: model • level
    app.type("/thinking loud")
    app.wait_for("Unknown thinking level 'loud'")
    app.type("/copy")
    app.wait_for("There is no answer to copy yet")
    app.type("question")
    app.wait_for("the answer to copy")
    app.type("/copy")
    app.wait_for("No clipboard available; here is the last answer:")
    assert app.text().count("the answer to copy") == 2
    quit_app(app)


def test_keys_typed_while_a_command_starts_reach_the_editor(running) -> None:
    app = running()
    app.type("/nap 1.5")
    app.wait_for("napping")
    app.send("typed early")  # the editor is away for the command's first moment
    app.wait_for("nap over")
    app.wait_for(lambda: app.display()[-3:].count("› typed early") == 1 or "› typed early" in app.display())
    assert app.text().count("typed early") == 1, "keys typed meanwhile must not be echoed into the scrollback"
    app.send("\x15")  # Ctrl+U
    app.type("/nap 1")
    app.wait_for(lambda: app.text().count("napping") == 2)
    app.send("\x04")  # Ctrl+D before the editor is back: it still means "exit" once the editor has it
    assert app.wait_exit() == 0


def test_bang_runs_a_shell_command_for_the_user(running, tmp_path: Path) -> None:
    app = running()
    app.type("!echo from-the-shell")
    # A call that took 0.1 s or more carries "Took 0.1s" on its header line (a loaded machine).
    took = r"(  Took \d+\.\ds)?"
    app.wait_for(lambda: re.search(r"● bash  echo from-the-shell" + took + r"\n  from-the-shell", app.text()) is not None)
    app.type("!!echo private-output; exit 4")
    app.wait_for("(exit code 4)")
    app.wait_for("(not added to the model's context)")
    assert re.search(r"✗ bash  echo private-output; exit 4" + took + r"\n  private-output", app.text())
    app.type("!sleep 30")
    app.wait_for(lambda: "sleep 30" in "\n".join(app.display()))
    app.send("\x1b")
    app.wait_for("(cancelled)", timeout=10)
    app.type("hi")  # the file is written once the session holds a conversation message
    app.wait_for("echo: hi")
    quit_app(app)
    bash = [r["message"] for r in session_lines(tmp_path) if r.get("message", {}).get("role") == "bashExecution"]
    assert [b["command"] for b in bash] == ["echo from-the-shell", "echo private-output; exit 4", "sleep 30"]
    assert bash[1].get("excludeFromContext") is True


def test_plugin_widgets_and_editor_text(running) -> None:
    app = running()
    app.type("/widget")
    app.wait_for("editor had 'prefilled by a plugin'")
    app.settle()
    screen = app.display()
    editor = next(i for i, row in enumerate(screen) if row.startswith("› prefilled by a plugin"))
    assert screen[editor - 3:editor - 1] == ["TODO: write docs", "TODO: ship"]  # over the editor's top rule
    assert set(screen[editor - 1]) == {"─"}
    below = next(i for i, row in enumerate(screen) if row == "below the editor")
    assert set(screen[below - 1]) == {"─"}  # under the editor's bottom rule, over the footer
    assert below > editor and "project" in screen[below + 1] and "thinking" in screen[below + 2]
    app.send("\r")  # the prefilled text is sent like typed text
    app.wait_for("echo: prefilled by a plugin")
    quit_app(app)


def test_compact_tree_fork_and_clone_commands(running, tmp_path: Path) -> None:
    (tmp_path / "agent").mkdir(exist_ok=True)
    (tmp_path / "agent" / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 10}}))
    app = running([{"text": "answer one " * 30}, {"text": "answer two " * 30}, {"text": "SUMMARY OF EARLIER TURNS"},
                   {"text": "BRANCH SUMMARY TEXT"}])
    app.type("question one " * 10)
    app.wait_for("answer one answer one")
    app.settle(1.0, timeout=15)
    app.type("question two " * 10)
    app.wait_for("answer two answer two")
    app.settle(1.0, timeout=15)
    app.type("/compact keep the facts")
    app.wait_for("Compacted:")
    assert "Compaction failed" not in app.text()
    app.type("/tree")  # the tree navigator (test_tree_navigator.py has its keys)
    app.wait_for("Session tree")
    app.send("\x15")  # Ctrl+U: user messages only; the cursor lands on the last one
    app.wait_for("filter: user-only")
    app.send("\r")
    app.wait_for("Summarise the branch")
    app.send("\x1b[B")  # "Summarize the branch"
    app.send("\r")
    app.wait_for("Moved to the selected point")
    app.settle()
    assert "question two question two" in "\n".join(app.display()[-12:])  # back in the editor
    app.send("\x15")  # Ctrl+U: clear the editor line
    app.type("/clone")
    app.wait_for("Cloned into")
    quit_app(app)
    files = sorted((tmp_path / "sessions").glob("*.jsonl"))
    assert len(files) == 2
    original = next(f for f in files if '"compaction"' in f.read_text())
    kinds = [json.loads(line)["type"] for line in original.read_text().splitlines()]
    assert "compaction" in kinds and "branch_summary" in kinds


def _long_session(path: Path, turns: int) -> None:
    rows: list[dict[str, Any]] = [{"type": "session", "version": 3, "id": "01a20000-0000-7000-8000-000000000001",
                                   "timestamp": "2026-09-21T12:00:00.000Z", "cwd": str(path.parent.parent / "project")}]
    parent = None
    for n in range(turns * 2):
        if n % 2 == 0:
            message: dict[str, Any] = {"role": "user", "content": [{"type": "text", "text": f"question {n // 2}"}],
                                       "timestamp": 1_790_000_000_000 + n}
        else:
            message = {"role": "assistant", "content": [{"type": "text", "text": f"answer **{n // 2}**"}],
                       "api": "x", "provider": "faux", "model": "faux-1", "stopReason": "stop",
                       "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15,
                                 "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0.001}},
                       "timestamp": 1_790_000_000_000 + n}
        rows.append({"type": "message", "id": f"{n:08x}", "parentId": parent,
                     "timestamp": "2026-09-21T12:00:00.000Z", "message": message})
        parent = f"{n:08x}"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_resuming_a_long_session_shows_the_tail_and_history_on_demand(running, tmp_path: Path) -> None:
    (tmp_path / "sessions").mkdir()
    file = tmp_path / "sessions" / "long.jsonl"
    _long_session(file, 1500)  # 3,000 messages
    app = running(session=str(file))
    text = app.text()
    assert "answer 1499" in text and "question 1499" in text
    assert "question 10\n" not in text + "\n"
    assert "2,970 earlier messages (/history shows them)" in text
    app.type("/history 4")
    app.wait_for("Earlier messages 2,967-2,970 of the session:")
    app.wait_for("(end of the earlier messages)")
    text = app.text()
    assert text.index("question 1483") < text.index("answer 1484") < text.index("(end of the earlier messages)")
    assert "question 1482" not in text
    app.type("and now")
    app.wait_for("echo: and now")
    quit_app(app)
    assert json.loads(file.read_text().splitlines()[-1])["message"]["content"][0]["text"] == "echo: and now"
