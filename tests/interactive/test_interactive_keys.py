"""pi's application keys in the real program, in a pseudo-terminal read through pyte: one test per key
(thinking and model cycling, the model selector, tool output, thinking blocks, the external editor,
copy, dequeue, double Escape, paste, Shift+Enter) and keybindings.json remapping."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from test_interactive_pty import quit_app, running, session_lines, wait_idle  # noqa: F401  (running is a fixture)

pytestmark = pytest.mark.timeout(90)

SHIFT_TAB = "\x1b[Z"
CTRL_SHIFT_P_KITTY = "\x1b[112;6u"
ALT_UP = "\x1b[1;3A"


def footer(app) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(app.display()[-3:])


def screen(app) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(app.display())


def script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def test_shift_tab_cycles_the_thinking_level(running, tmp_path: Path) -> None:
    app = running()
    assert "thinking off" in footer(app)
    app.send(SHIFT_TAB)
    app.wait_for(lambda: "minimal" in footer(app))
    app.send(SHIFT_TAB)
    app.wait_for(lambda: "• low" in footer(app) or "thinking low" in footer(app))
    app.type("hi")
    app.wait_for("echo: hi")
    quit_app(app)
    levels = [r["thinkingLevel"] for r in session_lines(tmp_path) if r["type"] == "thinking_level_change"]
    assert levels[-2:] == ["minimal", "low"]


def test_ctrl_p_cycles_models_and_shift_ctrl_p_goes_back(running, tmp_path: Path) -> None:
    app = running()
    assert "faux/faux-1" in footer(app) or "faux-1" in footer(app)
    app.send("\x10")  # Ctrl+P
    app.wait_for(lambda: "faux-2" in footer(app))
    app.send(CTRL_SHIFT_P_KITTY)  # Shift+Ctrl+P as the kitty protocol reports it
    app.wait_for(lambda: "faux-1" in footer(app))
    app.type("hello")
    app.wait_for("echo: hello")
    assert "hello" in app.text() and "\x1b" not in screen(app)
    quit_app(app)
    changes = [r["modelId"] for r in session_lines(tmp_path) if r["type"] == "model_change"]
    assert changes[-2:] == ["faux-2", "faux-1"]


def test_ctrl_l_opens_the_model_selector(running) -> None:
    app = running()
    app.type("half typed", enter=False)
    app.send("\x0c")  # Ctrl+L
    app.wait_for("faux/faux-2")
    app.send("two")
    app.pump(0.2)
    app.send("\r")
    app.wait_for("Model: faux/faux-2")
    app.wait_for(lambda: "› half typed" in screen(app))  # the draft survives the selector
    app.send("\x15")
    quit_app(app)


def test_ctrl_o_expands_tool_output(running) -> None:
    app = running([{"text": "Counting.", "tools": [["bash", {"command": "seq 1 30"}]]}, {"text": "counted"}])
    app.type("count")
    app.wait_for("counted")
    app.settle()
    text = app.text()
    assert "25 earlier lines (ctrl+o to expand)" in text
    assert "\n  30" in text and "\n  3\n" not in text  # collapsed: the last lines only
    app.send("\x0f")  # Ctrl+O
    app.wait_for("Tool output: expanded")
    app.wait_for(lambda: "\n  3\n  4\n" in app.text())
    app.send("\x0f")
    app.wait_for("Tool output: collapsed")
    quit_app(app)


def test_ctrl_t_hides_thinking_blocks(running) -> None:
    app = running([{"thinking": "first secret reasoning", "text": "first answer"},
                   {"thinking": "second secret reasoning", "text": "second answer"}])
    app.type("one")
    app.wait_for("first answer")
    assert "first secret reasoning" in app.text()
    app.send("\x14")  # Ctrl+T
    app.wait_for("Thinking blocks: hidden")
    app.type("two")
    app.wait_for("second answer")
    text = app.text()
    assert "second secret reasoning" not in text
    assert "Thinking…" in text[text.index("› two"):]
    quit_app(app)


def test_hide_thinking_block_setting(running, tmp_path: Path) -> None:
    (tmp_path / "agent").mkdir(exist_ok=True)
    (tmp_path / "agent" / "settings.json").write_text(json.dumps({"hideThinkingBlock": True}))
    app = running([{"thinking": "hidden reasoning", "text": "visible answer"}])
    app.type("go")
    app.wait_for("visible answer")
    assert "hidden reasoning" not in app.text() and "Thinking…" in app.text()
    quit_app(app)


def test_quiet_startup_hides_the_header(running, tmp_path: Path) -> None:
    (tmp_path / "agent").mkdir(exist_ok=True)
    (tmp_path / "agent" / "settings.json").write_text(json.dumps({"quietStartup": True}))
    app = running()
    assert "pi 0.1.0" not in app.text() and "/help for commands" not in app.text()
    app.type("still works")
    app.wait_for("echo: still works")
    quit_app(app)


def test_ctrl_g_edits_the_prompt_in_the_external_editor(running, tmp_path: Path) -> None:
    editor = script(tmp_path / "fake-editor", 'printf "%s and more from the editor" "$(cat "$1")" > "$1"\n')
    app = running(env={"VISUAL": str(editor)})
    app.type("draft", enter=False)
    app.send("\x07")  # Ctrl+G
    app.wait_for("draft and more from the editor")
    app.send("\r")
    app.wait_for("echo: draft and more from the editor")
    quit_app(app)


def test_external_editor_setting_wins_over_visual(running, tmp_path: Path) -> None:
    chosen = script(tmp_path / "chosen-editor", 'printf "from the setting" > "$1"\n')
    ignored = script(tmp_path / "other-editor", 'printf "from VISUAL" > "$1"\n')
    (tmp_path / "agent").mkdir(exist_ok=True)
    (tmp_path / "agent" / "settings.json").write_text(json.dumps({"externalEditor": str(chosen)}))
    app = running(env={"VISUAL": str(ignored)})
    app.send("\x07")
    app.wait_for(lambda: "› from the setting" in screen(app))
    app.send("\x15")
    quit_app(app)


def _fake_xclip(tmp_path: Path, targets: str, data_file: Path | None = None) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    copied = tmp_path / "copied.txt"
    body = f"""case "$*" in
  *-o*TARGETS*|*TARGETS*-o*) printf '{targets}' ;;
  *-o*) {f'cat "{data_file}"' if data_file else 'exit 1'} ;;
  *) cat > "{copied}" ;;
esac
"""
    script(bin_dir / "xclip", body)
    return bin_dir


def test_ctrl_x_copies_the_last_answer(running, tmp_path: Path) -> None:
    bin_dir = _fake_xclip(tmp_path, "")
    app = running([{"text": "the answer to copy"}],
                  env={"PATH": f"{bin_dir}:{os.environ['PATH']}", "DISPLAY": ":0", "WAYLAND_DISPLAY": ""})
    app.type("question")
    app.wait_for("the answer to copy")
    app.send("\x18")  # Ctrl+X
    app.wait_for("Copied the last answer")
    assert (tmp_path / "copied.txt").read_text() == "the answer to copy"
    quit_app(app)


def test_ctrl_v_pastes_an_image_as_a_file_path(running, tmp_path: Path) -> None:
    png = tmp_path / "image.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n fake image bytes")
    bin_dir = _fake_xclip(tmp_path, "TARGETS\\nimage/png\\n", png)
    app = running(env={"PATH": f"{bin_dir}:{os.environ['PATH']}", "DISPLAY": ":0", "WAYLAND_DISPLAY": ""})
    app.type("look at", enter=False)
    app.send("\x16")  # Ctrl+V
    app.wait_for("pi-clipboard-")
    row = next(r for r in app.display() if "pi-clipboard-" in r)
    pasted = Path(row.split("look at ", 1)[1].strip())
    assert pasted.suffix == ".png" and pasted.read_bytes() == png.read_bytes()
    pasted.unlink()
    app.send("\x15")
    quit_app(app)


def test_alt_up_takes_queued_messages_back(running) -> None:
    app = running([{"text": "Starting.", "tools": [["bash", {"command": "sleep 6"}]]}, {"text": "run done"}])
    app.type("start")
    app.wait_for(lambda: "sleep 6" in screen(app))
    app.type("steer me later")
    app.wait_for("queued steer: steer me later")
    app.send(ALT_UP)
    app.wait_for(lambda: "queued steer" not in screen(app) and "› steer me later" in screen(app))
    app.wait_for("run done")
    assert "› steer me later" not in app.scrollback()  # never delivered
    app.send("\x15")
    quit_app(app)


def test_double_escape_opens_the_tree(running) -> None:
    app = running()
    app.type("a first prompt")
    app.wait_for("echo: a first prompt")
    app.send("\x1b")
    app.pump(0.15)
    app.send("\x1b")
    app.wait_for("Session tree")
    app.send("\x1b")  # cancel the navigator
    app.settle()
    quit_app(app)


def test_double_escape_action_fork_and_none(running, tmp_path: Path) -> None:
    (tmp_path / "agent").mkdir(exist_ok=True)
    (tmp_path / "agent" / "settings.json").write_text(json.dumps({"doubleEscapeAction": "fork"}))
    app = running()
    app.type("prompt to fork")
    app.wait_for("echo: prompt to fork")
    app.send("\x1b")
    app.pump(0.15)
    app.send("\x1b")
    app.wait_for("Fork before which message?")
    app.send("\x1b")
    app.settle()
    quit_app(app)
    (tmp_path / "agent" / "settings.json").write_text(json.dumps({"doubleEscapeAction": "none"}))
    again = running()
    again.send("\x1b")
    again.pump(0.15)
    again.send("\x1b")
    again.settle(0.5)
    assert "which message" not in again.text() and "Session tree" not in again.text()
    quit_app(again)


def test_shift_enter_inserts_a_new_line_with_extended_keys(running, tmp_path: Path) -> None:
    app = running()
    assert b"\x1b[>1u" in app.raw and b"\x1b[>4;2m" in app.raw  # extended key reporting was requested
    app.type("first line", enter=False)
    app.send("\x1b[13;2u")  # Shift+Enter, kitty protocol
    app.type("second line", enter=False)
    app.send("\x1b[27;2;13~")  # Shift+Enter, xterm modifyOtherKeys
    app.type("third line")
    app.wait_for("echo: first line")
    quit_app(app)
    users = [r["message"]["content"][0]["text"] for r in session_lines(tmp_path)
             if r.get("message", {}).get("role") == "user"]
    assert users == ["first line\nsecond line\nthird line"]
    assert b"\x1b[<u" in app.raw  # and given back on exit


def test_exit_prints_how_to_resume(running, tmp_path: Path) -> None:
    app = running()
    app.type("something to keep")
    app.wait_for("echo: something to keep")
    assert quit_app(app) == 0
    session_id = session_lines(tmp_path)[0]["id"]
    text = app.text()
    assert "To resume this session:" in text
    assert f"--session {session_id}" in text and "--session-dir" in text


def test_keybindings_json_remaps_and_unbinds(running, tmp_path: Path) -> None:
    (tmp_path / "agent").mkdir(exist_ok=True)
    (tmp_path / "agent" / "keybindings.json").write_text(json.dumps({
        "app.model.select": "ctrl+k", "app.thinking.cycle": [], "app.tools.expand": "ctrl+nope",
        "app.tree.editLabel": "shift+l"}))
    app = running()
    assert "keybindings:" in app.text() and "ctrl+nope" in app.text()  # the bad key is reported
    assert "editLabel" not in app.text()  # a pi action this terminal does not draw is not an error
    app.send(SHIFT_TAB)
    app.settle(0.4)
    assert "thinking off" in footer(app)  # unbound
    app.send("\x0b")  # Ctrl+K
    app.wait_for("faux/faux-2")
    app.send("\x1b")
    app.settle()
    quit_app(app)


def test_ctrl_p_while_the_agent_works_switches_for_the_next_request(running, tmp_path: Path) -> None:
    app = running([{"text": "slow " * 60, "delta_delay": 0.05}])
    app.type("first")
    app.wait_for("Working")
    app.send("\x10")  # Ctrl+P while the answer streams
    app.wait_for(lambda: "faux-2" in footer(app))
    wait_idle(app)
    app.type("second")
    app.wait_for("echo: second")
    quit_app(app)
    answers = [r["message"]["model"] for r in session_lines(tmp_path)
               if r["type"] == "message" and r["message"]["role"] == "assistant"]
    assert answers == ["faux-1", "faux-2"]  # the run under way finished on its model; the next used the new one


def test_the_editor_rule_takes_the_thinking_levels_colour_and_bash_modes(running) -> None:
    app = running()

    def rule_colour() -> str:
        rows = app.display()
        editor = next(i for i, row in enumerate(rows) if row.startswith("›"))
        assert set(rows[editor - 1]) == {"─"}
        return app.screen.buffer[editor - 1][0].fg

    assert rule_colour() == "brightblack"  # thinking off (the system theme: ANSI colours)
    for _ in range(2):
        app.send(SHIFT_TAB)  # minimal, then low
        app.pump(0.2)
    app.wait_for(lambda: "low" in footer(app))
    app.wait_for(lambda: rule_colour() == "blue")  # thinkingLow
    app.send(SHIFT_TAB)
    app.wait_for(lambda: rule_colour() == "cyan")  # thinkingMedium
    app.type("!ls", enter=False)
    app.wait_for(lambda: rule_colour() == "green")  # bashMode while the text is a !command
    app.send("\x15")
    app.wait_for(lambda: rule_colour() == "cyan")
    quit_app(app)
