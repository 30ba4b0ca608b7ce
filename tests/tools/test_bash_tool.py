"""The bash tool and the process layer under it: a conformance suite of the ways commands hang.

Each hostile command carries a unique marker in its arguments; after the call returns, /proc must
show no process with that marker, and the call must have returned within its limit.
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from pathlib import Path

import pytest
from conftest import load_tool, recorded_results, run_tool, run_tool_error

from pi_core import AbortController, ToolContext, run_process, run_shell

BASH = load_tool("bash")

pytestmark = pytest.mark.timeout(60)


QUICK = 60
"""Seconds within which a cut-off command returns: far above any load's delay, far below the sleeps of ``marker()``."""


def marker() -> str:
    """A unique, harmless argument: ``sleep`` accepts a fractional number of seconds."""
    return f"{300 + uuid.uuid4().int % 10000}.{uuid.uuid4().int % 10**6:06d}"


def processes_with(token: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if token.encode() in f.read():
                    found.append(int(name))
        except OSError:
            continue
    return found


def eventually_running(token: str, within: float = 2.0) -> list[int]:
    """Processes with ``token``, looking again for a moment: while a process is in the middle of an
    ``exec`` its /proc cmdline reads empty, and a daemon execs twice (setsid, then its program)."""
    deadline = time.monotonic() + within
    while not (found := processes_with(token)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return found


def timed(params: dict, cwd: Path, **ctx) -> tuple[object, float]:
    start = time.monotonic()
    result = run_tool(BASH, params, cwd, **ctx)
    return result, time.monotonic() - start


def test_schema_is_pi_16s() -> None:
    assert BASH.parameters["required"] == ["command"]
    assert list(BASH.parameters["properties"]) == ["command", "timeout"]
    assert [p["type"] for p in BASH.parameters["properties"].values()] == ["string", "number"]
    caps = BASH.capabilities
    assert caps.executes and caps.network and not caps.concurrency_safe


def test_recorded_results_match_pi(workspace) -> None:
    ws = workspace("b_json_tools")
    for rec in recorded_results("b_json_tools", "bash") + recorded_results("f_tool_errors", "bash"):
        result = run_tool(BASH, rec["arguments"], ws)
        assert result.is_error == rec["isError"]
        assert [c.model_dump(by_alias=True, exclude_none=True) for c in result.content] == rec["content"]


def test_structured_content(tmp_path: Path) -> None:
    result = run_tool(BASH, {"command": "printf 'a\\nb'; exit 4"}, tmp_path)
    sc = result.structured_content
    assert sc["output"] == "a\nb" and sc["exit_code"] == 4 and sc["truncated"] is False
    assert "wall_time_seconds" in sc


def test_grandchild_still_running_after_timeout_is_killed(tmp_path: Path) -> None:
    m = marker()
    result, elapsed = timed({"command": f"sleep {m} & sleep {m}; echo never", "timeout": 1}, tmp_path)
    assert result.is_error and result.text_content().endswith("Command timed out after 1 seconds")
    assert elapsed < QUICK
    assert processes_with(m) == []


def test_setsid_daemon_holding_stdout_does_not_hang(tmp_path: Path) -> None:
    m = marker()
    result, elapsed = timed({"command": f"setsid sleep {m} & echo started"}, tmp_path)
    assert not result.is_error and result.text_content() == "started\n"
    assert elapsed < QUICK
    assert processes_with(m) == []


def test_double_forked_writer_is_cut_off(tmp_path: Path) -> None:
    m = marker()
    cmd = f"(setsid sh -c 'while :; do echo tick; sleep 0.05; done; sleep {m}' &); echo parent-done"
    result, elapsed = timed({"command": cmd}, tmp_path)
    assert "parent-done" in result.text_content()
    assert elapsed < QUICK
    time.sleep(0.1)
    assert processes_with(m) == []


def test_detached_daemon_with_its_own_output_survives(tmp_path: Path) -> None:
    m = marker()
    result, elapsed = timed({"command": f"setsid sleep {m} > /dev/null 2>&1 < /dev/null & echo ok"}, tmp_path)
    try:
        assert result.text_content() == "ok\n" and elapsed < QUICK
        assert eventually_running(m) != []
    finally:
        for pid in processes_with(m):
            os.kill(pid, 9)


def test_daemon_started_after_quiet_output_survives(tmp_path: Path) -> None:
    """The output went quiet long before the exit: the daemon still gets to close its pipe and leave."""
    m = marker()
    result, _ = timed({"command": f"echo ok; sleep 0.5; setsid sleep {m} > /dev/null 2>&1 < /dev/null &"}, tmp_path)
    try:
        assert result.text_content() == "ok\n"
        assert eventually_running(m) != []
    finally:
        for pid in processes_with(m):
            os.kill(pid, 9)


def test_command_reading_stdin_gets_eof(tmp_path: Path) -> None:
    result, elapsed = timed({"command": "cat; read x || echo no-input; echo done"}, tmp_path)
    assert result.text_content() == "no-input\ndone\n"
    assert elapsed < QUICK


def test_process_ignoring_sigterm_is_killed(tmp_path: Path) -> None:
    m = marker()
    cmd = f"trap '' TERM; sh -c \"trap '' TERM; sleep {m}\" & trap '' TERM; sleep {m}"
    result, elapsed = timed({"command": cmd, "timeout": 0.5}, tmp_path)
    assert result.is_error and "timed out" in result.text_content()
    assert elapsed < QUICK
    assert processes_with(m) == []


def test_50mb_of_output_stays_within_limits_and_spills(tmp_path: Path) -> None:
    size = 50 * 1024 * 1024
    result, elapsed = timed({"command": f"yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c {size}",
                             "timeout": 60}, tmp_path)
    text = result.text_content()
    assert not result.is_error
    assert len(text.encode()) < 51200 + 400
    path = Path(result.details["fullOutputPath"])
    assert f"Full output: {path}" in text
    assert path.stat().st_size == size
    assert text.startswith("0123456789abcdefghijklmnopqrstuvwxyz\n")
    truncation = result.details["truncation"]
    assert truncation["totalBytes"] == size and truncation["totalLines"] == size // 37 + 1
    assert elapsed < 60
    path.unlink()


def test_binary_output_is_sanitised(tmp_path: Path) -> None:
    result = run_tool(BASH, {"command": "head -c 200000 /dev/urandom; printf '\\033[31mred\\033[0m\\n'"}, tmp_path)
    text = result.text_content()
    assert not result.is_error
    assert not any(ch in text for ch in "\x00\x01\x1b\x7f")
    assert "red\n" in text
    assert len(text.encode()) < 51200 + 400 and "Full output:" in text
    Path(result.details["fullOutputPath"]).unlink()


def test_head_and_tail_are_kept(tmp_path: Path) -> None:
    result = run_tool(BASH, {"command": "seq 1 10000; echo FINAL-ERROR >&2; exit 1"}, tmp_path)
    text = result.text_content()
    lines = text.split("\n")
    assert lines[:3] == ["1", "2", "3"]
    assert lines[499] == "500" and lines[500] == ""
    assert "FINAL-ERROR" in text and text.endswith("Command exited with code 1")
    assert "[Showing lines 1-500 and 8502-10001 of 10001. Full output: " in text
    full = Path(result.details["fullOutputPath"])
    assert full.read_text().splitlines()[-1] == "FINAL-ERROR"
    full.unlink()


def test_non_interactive_environment_and_pi_variables(tmp_path: Path) -> None:
    cmd = "echo $GIT_TERMINAL_PROMPT $PAGER $DEBIAN_FRONTEND $PI_SESSION_ID; [ -t 0 ] || echo no-tty"
    result = run_tool(BASH, {"command": cmd}, tmp_path, env={"PI_SESSION_ID": "abc123"})
    assert result.text_content() == "0 cat noninteractive abc123\nno-tty\n"


def test_git_never_prompts(tmp_path: Path) -> None:
    result, elapsed = timed({"command": "git clone http://127.0.0.1:9/none.git x 2>&1; echo rc=$?",
                             "timeout": 20}, tmp_path)
    assert "rc=" in result.text_content() and elapsed < 20


def test_abort_kills_the_tree(tmp_path: Path) -> None:
    m = marker()
    controller = AbortController()

    async def go():
        ctx = ToolContext(tool_call_id="b", cwd=tmp_path, signal=controller.signal)
        task = asyncio.create_task(BASH.run({"command": f"echo begun; sleep {m} & sleep {m}"}, ctx))
        await asyncio.sleep(0.4)
        controller.abort()
        return await asyncio.wait_for(task, QUICK)

    start = time.monotonic()
    result = asyncio.run(go())
    assert result.is_error and result.text_content() == "begun\n\n\nCommand aborted"
    assert time.monotonic() - start < QUICK
    assert processes_with(m) == []


def test_streaming_updates(tmp_path: Path) -> None:
    updates = []
    run_tool(BASH, {"command": "for i in 1 2 3; do echo $i; sleep 0.15; done"}, tmp_path, on_update=updates.append)
    assert updates[0].content == []
    texts = [u.text_content() for u in updates[1:]]
    assert texts[-1] == "1\n2\n3\n"
    assert len(texts) >= 3 and all(b.startswith(a) for a, b in zip(texts, texts[1:]))


def test_timeouts_default_clamp_and_rejection(tmp_path: Path) -> None:
    assert "positive" in run_tool_error(BASH, {"command": "true", "timeout": 0}, tmp_path)
    assert "positive" in run_tool_error(BASH, {"command": "true", "timeout": -5}, tmp_path)
    result = run_tool(BASH, {"command": "echo hi", "timeout": 100000}, tmp_path)
    assert not result.is_error and "lowered to the maximum, 600" in result.text_content()
    result = run_tool(BASH, {"command": "sleep 5"}, tmp_path, env={"PI_BASH_TIMEOUT": "0.3"})
    assert result.is_error and "timed out after 0.3 seconds" in result.text_content()


def test_no_output_and_missing_directory(tmp_path: Path) -> None:
    assert run_tool(BASH, {"command": "true"}, tmp_path).text_content() == "(no output)"
    text = run_tool_error(BASH, {"command": "true"}, tmp_path / "gone")
    assert "does not exist" in text and "gone" in text


def test_run_process_for_ctx_exec(tmp_path: Path) -> None:
    result = asyncio.run(run_process(["python3", "-c", "import sys; print(input()); print('e', file=sys.stderr)"],
                                     cwd=tmp_path, input="fed\n", timeout=10))
    assert (result.stdout, result.stderr, result.exit_code) == ("fed\n", "e\n", 0)
    m = marker()
    result = asyncio.run(run_process(["sleep", m], timeout=0.3))
    assert result.timed_out and result.killed and result.exit_code is None
    assert processes_with(m) == []
    with pytest.raises(OSError, match="no-such-program"):
        asyncio.run(run_process(["no-such-program-xyz"]))


def test_run_shell_for_rpc(tmp_path: Path) -> None:
    deltas: list[str] = []
    result = asyncio.run(run_shell("echo a; echo b >&2; exit 2", cwd=tmp_path, on_output=deltas.append))
    assert "".join(deltas) == "a\nb\n"
    assert result.to_rpc() == {"output": "a\nb\n", "exitCode": 2, "cancelled": False, "truncated": False}
