"""The extension UI sub-protocol: a plugin's ``ctx.ui`` dialogs become ``extension_ui_request`` records
and wait for the client's ``extension_ui_response``."""

from __future__ import annotations

from pathlib import Path

from rpc_client import FIXTURES, RpcProcess

UI_EXT = FIXTURES / "ui_extension.py"


def is_dialog(method: str):
    return lambda r: r.get("type") == "extension_ui_request" and r.get("method") == method


def test_dialogs_round_trip_through_the_client(tmp_path: Path) -> None:
    with RpcProcess(tmp_path, extensions=(UI_EXT,)) as pi:
        pi.send({"type": "prompt", "message": "/ask", "id": "p"})
        confirm, _ = pi.wait_for(is_dialog("confirm"))
        assert (confirm["title"], confirm["message"]) == ("Proceed?", "The test asks") and "timeout" not in confirm
        pi.send({"type": "extension_ui_response", "id": "no-such-request", "confirmed": False})  # ignored
        pi.send({"type": "extension_ui_response", "id": confirm["id"], "confirmed": True})
        select, _ = pi.wait_for(is_dialog("select"))
        assert select["options"] == ["red", "green"]
        pi.send({"type": "extension_ui_response", "id": select["id"], "value": "green"})
        ask, _ = pi.wait_for(is_dialog("input"))
        assert ask["placeholder"] == "type here"
        pi.send({"type": "extension_ui_response", "id": ask["id"], "cancelled": True})
        status, _ = pi.wait_for(is_dialog("setStatus"))
        notice, _ = pi.wait_for(is_dialog("notify"))
        response, _ = pi.response("p")
    assert (status["statusKey"], status["statusText"]) == ("test", "asked")
    assert notice["message"] == "confirmed=True choice=green text=None has_ui=True"
    assert notice["notifyType"] == "info"
    assert response["data"] == {"disposition": "handled"}  # after the command's notices, as in pi


def test_dialog_timeouts_give_the_default_answers(tmp_path: Path) -> None:
    with RpcProcess(tmp_path, extensions=(UI_EXT,)) as pi:
        pi.send({"type": "prompt", "message": "/ask 0.2", "id": "p"})
        confirm, _ = pi.wait_for(is_dialog("confirm"))
        notice, seen = pi.wait_for(is_dialog("notify"))
    assert confirm["timeout"] == 200  # milliseconds on the wire
    assert [r["method"] for r in seen if r.get("type") == "extension_ui_request"][:2] == ["select", "input"]
    assert notice["message"] == "confirmed=False choice=None text=None has_ui=True"


def test_open_dialogs_are_cancelled_when_stdin_closes(tmp_path: Path) -> None:
    with RpcProcess(tmp_path, extensions=(UI_EXT,)) as pi:
        pi.send({"type": "prompt", "message": "/ask", "id": "p"})
        pi.wait_for(is_dialog("confirm"))
        pi.close_stdin()
        notice, _ = pi.wait_for(is_dialog("notify"))
        assert pi.wait(20) == 0
    assert notice["message"] == "confirmed=False choice=None text=None has_ui=True"


def test_plugin_prints_go_to_stderr_and_command_failures_are_reported(tmp_path: Path) -> None:
    with RpcProcess(tmp_path, extensions=(UI_EXT,)) as pi:
        shout, _ = pi.call({"type": "prompt", "message": "/shout"})
        boom, _ = pi.call({"type": "prompt", "message": "/boom"})
        state, _ = pi.call({"type": "get_state"})  # still serving
        pi.close_stdin()
        assert pi.wait(20) == 0
        raw = b"\n".join(pi.raw_lines)
    assert shout["success"] is True and state["success"] is True
    assert b"stray output" not in raw and b"stray output from a plugin" in pi.stderr
    assert boom["success"] is False and "failed on purpose" in boom["error"]


def test_failing_hooks_are_reported_as_extension_error_events(tmp_path: Path) -> None:
    with RpcProcess(tmp_path, extensions=(UI_EXT,)) as pi:
        events = pi.prompt("hello")
    errors = [r for r in events if r["type"] == "extension_error"]
    assert errors and errors[0]["event"] == "turn_start"
    assert errors[0]["extensionPath"] == str(UI_EXT) and "turn_start hook broke" in errors[0]["error"]
    answers = [r for r in events if r["type"] == "message_end" and r["message"]["role"] == "assistant"]
    assert answers[-1]["message"]["content"][0]["text"] == "echo: hello"  # the run went on
