"""Bad input is answered and never fatal; the process ends when stdin closes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from rpc_client import RpcProcess

SLOW = [{"text": "slow " * 60, "chunk_delay_s": 0.05}]


def parse_errors(pi: RpcProcess, count: int) -> list[dict]:
    return [pi.wait_for(lambda r: r.get("command") == "parse")[0] for _ in range(count)]


def test_malformed_lines_get_parse_errors_and_the_session_goes_on(tmp_path: Path) -> None:
    with RpcProcess(tmp_path) as pi:
        pi.send_raw(b"{not json\n")
        pi.send_raw(b"[1, 2]\n")
        pi.send_raw(b'{"type": "get_state", "id": NaN}\n')
        pi.send_raw(b"\n   \n")  # blank lines carry nothing and get no answer
        errors = parse_errors(pi, 3)
        state, _ = pi.call({"type": "get_state"})
    assert all(e == {"type": "response", "command": "parse", "success": False, "error": e["error"]} for e in errors)
    assert errors[0]["error"].startswith("Failed to parse command: ")
    assert "JSON object" in errors[1]["error"]
    assert state["success"] is True


def test_unknown_commands_and_bad_fields_are_answered_with_their_id(tmp_path: Path) -> None:
    with RpcProcess(tmp_path) as pi:
        unknown, _ = pi.call({"type": "no_such_command", "id": 7})
        untyped, _ = pi.call({"id": "u"})
        missing, _ = pi.call({"type": "prompt", "id": "m"})
        wrong, _ = pi.call({"type": "set_auto_retry", "enabled": "yes", "id": "w"})
        mode, _ = pi.call({"type": "set_steering_mode", "mode": "sometimes", "id": "s"})
        level, _ = pi.call({"type": "set_thinking_level", "level": "extreme", "id": "l"})
        model, _ = pi.call({"type": "set_model", "provider": "nope", "modelId": "x", "id": "n"})
        after = pi.prompt("still alive?")
    assert unknown == {"id": 7, "type": "response", "command": "no_such_command", "success": False,
                       "error": "Unknown command: no_such_command"}
    assert untyped["success"] is False and untyped["id"] == "u"
    assert missing["error"] == 'prompt: missing required field "message"'
    assert wrong["error"] == 'set_auto_retry: field "enabled" must be a boolean'
    assert mode["success"] is False and "one-at-a-time" in mode["error"]
    assert level["success"] is False and level["error"].startswith("Invalid thinking level: extreme")
    assert model["error"] == "Model not found: nope/x"
    assert [r for r in after if r["type"] == "message_end"][-1]["message"]["content"][0]["text"] == "echo: still alive?"


def test_line_separators_inside_messages_do_not_split_records(tmp_path: Path) -> None:
    text = "one\u2028two\u2029three\x85four\rfive"
    with RpcProcess(tmp_path) as pi:
        events = pi.prompt(text)
    answer = [r for r in events if r["type"] == "message_end"][-1]["message"]
    assert answer["content"][0]["text"] == f"echo: {text}"


def test_crlf_lines_and_a_final_unterminated_line_are_commands(tmp_path: Path) -> None:
    with RpcProcess(tmp_path) as pi:
        pi.send_raw(b'{"type":"get_state","id":"crlf"}\r\n{"type":"get_last_assistant_text","id":"tail"}')
        crlf, _ = pi.response("crlf")
        pi.close_stdin()
        tail, _ = pi.response("tail")
        assert pi.wait() == 0
    assert crlf["success"] is True and tail["data"] == {"text": None}


def test_stdin_closing_ends_the_process(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "pi_core", "--mode", "rpc", "--provider", "faux", "--model", "echo"],
                            cwd=tmp_path, input=b"", capture_output=True, timeout=30, check=False)
    assert (result.returncode, result.stdout) == (0, b"")


def test_stdin_closing_during_a_run_lets_it_settle_first(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SLOW))
    with RpcProcess(tmp_path, script=script) as pi:
        pi.send({"type": "prompt", "message": "go", "id": "p"})
        pi.wait_for(lambda r: (r.get("assistantMessageEvent") or {}).get("type") == "text_delta")
        pi.close_stdin()
        events = pi.settle()
        assert pi.wait() == 0
    final = [r for r in events if r["type"] == "message_end"][-1]["message"]
    assert final["stopReason"] == "stop" and final["content"][0]["text"] == "slow " * 60


def test_sigterm_aborts_the_run_and_exits_143(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SLOW))
    with RpcProcess(tmp_path, script=script) as pi:
        pi.send({"type": "prompt", "message": "go", "id": "p"})
        pi.wait_for(lambda r: (r.get("assistantMessageEvent") or {}).get("type") == "text_delta")
        os.kill(pi.proc.pid, signal.SIGTERM)
        events = pi.settle()
        assert pi.wait() == 143
    assert [r for r in events if r["type"] == "message_end"][-1]["message"]["stopReason"] == "aborted"


def test_client_closing_stdout_aborts_the_run_and_exits(tmp_path: Path) -> None:
    from rpc_client import SCRIPTED

    script = tmp_path / "script.json"
    script.write_text(json.dumps(SLOW))
    command = [sys.executable, "-m", "pi_core", "--mode", "rpc", "--provider", "fake", "--model", "fake-model",
               "-e", str(SCRIPTED)]
    proc = subprocess.Popen(command, cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**os.environ, "RPC_TEST_SCRIPT": str(script)})
    try:
        proc.stdin.write(b'{"type":"prompt","message":"go","id":"p"}\n')
        proc.stdin.flush()
        assert b'"command":"prompt"' in proc.stdout.readline()
        proc.stdout.close()  # the client is gone; stdin stays open
        assert proc.wait(30) == 1
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    [session] = Path(os.environ["PI_CODING_AGENT_DIR"]).glob("sessions/*/*.jsonl")
    entries = [json.loads(line) for line in session.read_text().splitlines()]
    answers = [e["message"] for e in entries if (e.get("message") or {}).get("role") == "assistant"]
    assert answers[-1]["stopReason"] == "aborted"  # stopped, not run to the end for nobody
