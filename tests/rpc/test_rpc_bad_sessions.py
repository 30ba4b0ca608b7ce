"""RPC ``switch_session`` to a damaged file (issue #16): refused cleanly, or read leniently — never half-switched."""

from __future__ import annotations

import json
from pathlib import Path

from rpc_client import RpcProcess


def _user_texts(path: Path) -> list[str]:
    out = []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        message = record.get("message") or {}
        if message.get("role") == "user":
            content = message["content"]
            out.append(content if isinstance(content, str) else content[0]["text"])
    return out


def test_switch_to_a_file_that_is_no_session_leaves_the_old_one_bound(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"hello":"world"}\n')
    with RpcProcess(tmp_path) as pi:
        pi.prompt("first")
        original = Path(pi.call({"type": "get_state"})[0]["data"]["sessionFile"])
        refused, _ = pi.call({"type": "switch_session", "sessionPath": str(bad)})
        state, _ = pi.call({"type": "get_state"})
        pi.prompt("second")
    assert refused["success"] is False and str(bad) in refused["error"]
    assert "Traceback" not in refused["error"]
    assert Path(state["data"]["sessionFile"]) == original
    assert bad.read_bytes() == b'{"hello":"world"}\n'  # the next prompt did not go there
    assert _user_texts(original) == ["first", "second"]


def test_switch_to_a_file_with_a_bad_message_skips_it(tmp_path: Path) -> None:
    damaged = tmp_path / "damaged.jsonl"
    lines = [{"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z",
              "cwd": str(tmp_path)},
             {"type": "message", "id": "a1", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z",
              "message": {"role": "user", "content": "kept", "timestamp": 1}},
             {"type": "message", "id": "a2", "parentId": "a1", "timestamp": "2026-01-01T00:00:02.000Z",
              "message": {"role": "assistant", "content": [{"type": "text", "text": "x"}],
                          "stopReason": "exploded", "timestamp": 2}}]
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    damaged.write_bytes(data)
    with RpcProcess(tmp_path) as pi:
        switched, _ = pi.call({"type": "switch_session", "sessionPath": str(damaged)})
        messages, _ = pi.call({"type": "get_messages"})
        pi.prompt("more")
    assert switched["success"] is True
    roles = [m["role"] for m in messages["data"]["messages"]]
    assert "user" in roles and "assistant" not in roles  # the bad answer is left out, the rest read
    assert damaged.read_bytes().startswith(data)
    assert _user_texts(damaged) == ["kept", "more"]


REWRITER = '''
from pathlib import Path
from pi_core import hookimpl


@hookimpl
def session_shutdown(event, ctx):
    # Another program rewrites the session being switched to while the switch reads it: same size,
    # same inode, but its second line no longer holds the entry the scan found there.
    target = event.target_session_file
    if event.reason == "resume" and target is not None and target.name == "other.jsonl":
        data = target.read_bytes()
        target.write_bytes(data.replace(b'"id":"m0000001"', b'"id":"zzzzzzzz"', 1))
'''


def test_a_switch_that_fails_half_way_leaves_the_old_session_bound(tmp_path: Path) -> None:
    extension = tmp_path / "rewriter.py"
    extension.write_text(REWRITER)
    other = tmp_path / "other.jsonl"
    lines = [{"type": "session", "version": 3, "id": "s2", "timestamp": "2026-01-01T00:00:00.000Z",
              "cwd": str(tmp_path)},
             {"type": "model_change", "id": "m0000001", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z",
              "provider": "fake", "modelId": "fake-model"},
             {"type": "message", "id": "a1", "parentId": "m0000001", "timestamp": "2026-01-01T00:00:02.000Z",
              "message": {"role": "user", "content": "theirs", "timestamp": 1}}]
    other.write_bytes("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines).encode())
    with RpcProcess(tmp_path, extensions=(extension,)) as pi:
        pi.prompt("first")
        original = Path(pi.call({"type": "get_state"})[0]["data"]["sessionFile"])
        refused, _ = pi.call({"type": "switch_session", "sessionPath": str(other)})
        state, _ = pi.call({"type": "get_state"})
        messages, _ = pi.call({"type": "get_messages"})
        pi.prompt("second")
    changed = other.read_bytes()
    assert refused["success"] is False and str(other) in refused["error"], refused
    assert "\n" not in refused["error"] and "Traceback" not in pi.stderr.decode()
    assert Path(state["data"]["sessionFile"]) == original
    shown = json.dumps(messages["data"]["messages"])
    assert "first" in shown and "theirs" not in shown  # the agent holds the old conversation again
    assert _user_texts(original) == ["first", "second"]  # the next prompt went to the old file
    assert other.read_bytes() == changed  # and nothing to the refused one
    assert not Path(f"{other}.lock").exists()  # whose lock is not kept
