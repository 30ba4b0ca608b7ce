"""What pi tells the terminal besides the screen, as pi 1.6: OSC 7501 program status (after the terminal answers
the query, or with PI_PROGRAM_STATUS=1), OSC 9;4 progress (terminal.showTerminalProgress) and the tmux
extended-keys warning."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from test_interactive_pty import quit_app, running  # noqa: F401  (running is a fixture)

from pi_core.modes.interactive.terminal_status import (
    PROGRESS_OFF,
    PROGRESS_ON,
    TerminalStatus,
    program_status,
    tmux_warning,
)

pytestmark = pytest.mark.timeout(90)


def reports(raw: bytes) -> list[tuple[str, str | None]]:
    out = []
    for body in re.findall(rb"\x1b\]7501;([^\x07\x1b]*)\x1b\\", raw):
        pairs = dict(p.split("=", 1) for p in body.decode().split(":") if "=" in p)
        if "state" not in pairs:  # the query, not a report
            continue
        out.append((pairs["state"], base64.b64decode(pairs["msg"]).decode() if "msg" in pairs else None))
    return out


def test_reports_follow_the_run_and_carry_no_prompt() -> None:
    written: list[str] = []
    status = TerminalStatus(written.append, lambda: "Checkout bug", supported=True)
    answer = SimpleNamespace(role="assistant", stop_reason="error", error_message="429 Too Many Requests\nretry")
    for event in (SimpleNamespace(type="agent_start"), SimpleNamespace(type="message_end", message=answer),
                  SimpleNamespace(type="agent_settled", aborted=False)):
        status.handle(event)
    status.dialog(True)
    status.dialog(False)
    states = reports("".join(written).encode())
    assert states == [("working", "Checkout bug"), ("error", "429 Too Many Requests"), ("blocked", None),
                      ("error", "429 Too Many Requests")]
    assert program_status("done", message="a\x07b") == "\x1b]7501;state=done:app=pi:msg=" + \
        base64.b64encode(b"a b").decode() + "\x1b\\"  # a control character would make the terminal drop it


def test_tmux_without_extended_keys_is_warned_about() -> None:
    options = {"extended-keys": "off", "extended-keys-format": "csi-u"}
    assert tmux_warning({}, options.get) is None  # not inside tmux
    assert "set -g extended-keys on" in (tmux_warning({"TMUX": "/tmp/t"}, options.get) or "")
    options["extended-keys"] = "on"
    assert tmux_warning({"TMUX": "/tmp/t"}, options.get) is None
    options["extended-keys-format"] = "xterm"
    assert "extended-keys-format csi-u" in (tmux_warning({"TMUX": "/tmp/t"}, options.get) or "")
    assert tmux_warning({"TMUX": "/tmp/t"}, lambda name: None) is None  # tmux did not answer: no guess


def test_program_status_after_the_terminal_answers_and_progress_when_asked(running, tmp_path: Path) -> None:
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "settings.json").write_text(json.dumps({"terminal": {"showTerminalProgress": True}}))
    app = running([{"text": "slow " * 40, "delta_delay": 0.02}])
    assert b"\x1b]7501;?\x1b\\" in app.raw and not reports(bytes(app.raw))  # asked, and silent until answered
    app.send("\x1b]7501;?\x1b\\")  # the terminal's answer: it shows program status
    app.wait_for(lambda: reports(bytes(app.raw)) == [("idle", None)])
    assert "7501" not in "\n".join(app.display())  # the answer did not end up in the editor
    app.type("/name Checkout bug")
    app.wait_for("Session name set")
    app.type("go")
    app.wait_for(lambda: ("done", "Checkout bug") in reports(bytes(app.raw)), 30)
    assert ("working", "Checkout bug") in reports(bytes(app.raw))
    assert "go" not in " ".join(m or "" for _, m in reports(bytes(app.raw)))  # never the prompt
    raw = bytes(app.raw)
    assert PROGRESS_ON.encode() in raw and raw.rindex(PROGRESS_OFF.encode()) > raw.index(PROGRESS_ON.encode())
    quit_app(app)
    assert b"\x1b]7501;state=clear" in bytes(app.raw)  # taken away at exit


def test_pi_program_status_0_sends_nothing(running, tmp_path: Path) -> None:
    app = running(env={"PI_PROGRAM_STATUS": "0"})
    app.type("hi")
    app.wait_for("echo: hi")
    assert b"7501" not in app.raw and PROGRESS_ON.encode() not in app.raw  # progress is off by default too
    quit_app(app)
