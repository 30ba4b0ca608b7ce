"""Servers that hang, crash or flood; where their stderr goes; no process outlives pi."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcp_helpers import HttpServer, model_args, run_pi, stdio_server, tool_names, tool_results, write_mcp
from fake_openai import FakeOpenAI, write_agent_dir


def events(stdout: str, kind: str) -> list[dict]:
    return [e for e in map(json.loads, stdout.splitlines()) if e.get("type") == kind]


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def server_pids(log: Path) -> list[int]:
    return [int(p) for p in re.findall(r"demo server starting \(pid (\d+)\)", log.read_text())] if log.exists() else []


def test_a_server_that_crashes_mid_call_is_reported_and_restarted_on_the_next_call(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write_mcp(agent, {"demo": stdio_server(exposure="direct")})
    turns = [{"tool_calls": [{"id": "c1", "name": "mcp__demo__crash", "arguments": {}}]},
             {"tool_calls": [{"id": "c2", "name": "mcp__demo__echo", "arguments": {"text": "back"}}]},
             {"text": "done"}]
    with FakeOpenAI(turns) as server:
        write_agent_dir(agent, server.base_url)
        result = run_pi(ws, agent, *model_args(), "-p", "go")
    assert result.returncode == 0, result.stderr
    crashed = tool_results(server.requests[1])[0]["content"]
    assert 'MCP server "demo" closed the connection' in crashed and "crashing on purpose" in crashed
    assert tool_results(server.requests[2])[-1]["content"] == "echo:back"
    assert len(server_pids(agent / "mcp.log")) == 2  # started, crashed, started again


def test_a_hanging_server_times_out_and_does_not_hold_up_the_run(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write_mcp(agent, {"stuck": stdio_server("--hang", exposure="direct", timeout=1),
                      "demo": stdio_server(exposure="direct")})
    turns = [{"tool_calls": [{"id": "c1", "name": "mcp__demo__echo", "arguments": {"text": "x"}}]}, {"text": "ok"}]
    with FakeOpenAI(turns) as server:
        write_agent_dir(agent, server.base_url)
        result = run_pi(ws, agent, *model_args(), "-p", "go")
    assert result.returncode == 0, result.stderr
    assert tool_results(server.requests[1])[0]["content"] == "echo:x"
    # the server's own 1 s connect limit ended the wait, not the 10 s start-up wait or the 60 s default
    assert "[stuck] error failed to connect: no answer to initialize within 1 s" in (agent / "mcp.log").read_text()
    names = [t["function"]["name"] for t in server.requests[0]["body"]["tools"]]
    assert not [n for n in names if n.startswith("mcp__stuck__")]


def test_a_silent_call_times_out_and_progress_renews_the_limit(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    # `timeout` bounds the connection too. Over HTTP the server is up before pi starts (HttpServer waits
    # for its port), so connecting takes milliseconds however loaded the machine is; a stdio server of
    # this SDK can take longer than 3 s just to import on a busy machine, and then fails to connect
    with HttpServer() as http:
        write_mcp(agent, {"demo": {"url": http.url, "exposure": "direct", "timeout": 3}})
        turns = [{"tool_calls": [{"id": "c1", "name": "mcp__demo__stall", "arguments": {"seconds": 8}}]},
                 {"tool_calls": [{"id": "c2", "name": "mcp__demo__slow", "arguments": {"seconds": 4.5}}]},
                 {"text": "ok"}]
        with FakeOpenAI(turns) as server:
            write_agent_dir(agent, server.base_url)
            result = run_pi(ws, agent, *model_args(), "-p", "go")
    assert result.returncode == 0, result.stderr
    assert "mcp__demo__stall" in tool_names(server.requests[0])
    assert tool_results(server.requests[1])[-1]["content"] == 'MCP server "demo" did not answer tool stall within 3 s'
    assert tool_results(server.requests[2])[-1]["content"] == "slept 4.5"  # progress every 0.2 s renews the 3 s


def test_a_huge_result_is_cut_in_the_middle_and_saved_whole(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write_mcp(agent, {"demo": stdio_server(exposure="direct")})
    turns = [{"tool_calls": [{"id": "c1", "name": "mcp__demo__huge", "arguments": {"kilobytes": 2048}}]},
             {"text": "ok"}]
    with FakeOpenAI(turns) as server:
        write_agent_dir(agent, server.base_url)
        result = run_pi(ws, agent, *model_args(), "-p", "go")
    assert result.returncode == 0, result.stderr
    text = tool_results(server.requests[1])[0]["content"]
    assert len(text.encode()) < 22 * 1024
    assert "chars truncated…" in text and text.startswith("Warning: truncated output")
    saved = re.search(r"\[Full output: (\S+) ", text).group(1)
    assert Path(saved).stat().st_size == 2048 * 1024
    Path(saved).unlink()


def test_server_stderr_goes_to_mcp_log_not_to_the_terminal(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write_mcp(agent, {"demo": stdio_server(exposure="direct")})
    with FakeOpenAI([{"text": "hello"}]) as server:
        write_agent_dir(agent, server.base_url)
        result = run_pi(ws, agent, *model_args(), "-p", "hi")
    assert result.returncode == 0
    assert "demo server starting" not in result.stdout + result.stderr
    assert re.search(r"^\S+Z \[demo\] stderr demo server starting \(pid \d+\)$", (agent / "mcp.log").read_text(), re.M)


def test_every_server_process_is_gone_after_pi_exits(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write_mcp(agent, {"demo": stdio_server("--stubborn", exposure="direct")})
    with FakeOpenAI([{"text": "bye"}]) as server:
        write_agent_dir(agent, server.base_url)
        result = run_pi(ws, agent, *model_args(), "-p", "hi")
    assert result.returncode == 0, result.stderr
    groups = [os.getpgid(pid) for pid in server_pids(agent / "mcp.log") if _exists(pid)]
    pids = server_pids(agent / "mcp.log")
    assert pids
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and any(_exists(pid) for pid in pids):
        time.sleep(0.1)
    assert not any(_exists(pid) for pid in pids) and not any(group_alive(g) for g in groups)


def test_pi_exits_without_sitting_out_a_connecting_servers_time_limit(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write_mcp(agent, {"demo": stdio_server("--hang", exposure="direct", timeout=300)})
    with FakeOpenAI([{"text": "answered"}]) as server:
        write_agent_dir(agent, server.base_url)
        started = time.monotonic()
        result = run_pi(ws, agent, *model_args(), "-p", "hi")
        elapsed = time.monotonic() - started
    assert result.returncode == 0 and result.stdout == "answered\n", result.stderr
    assert elapsed < 150  # the server never answered initialize; its 300 s limit was not waited out at exit
    pids = server_pids(agent / "mcp.log")
    assert pids and not [pid for pid in pids if _exists(pid)]


def test_no_orphans_after_kill_9_of_pi(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write_mcp(agent, {"demo": stdio_server("--stubborn", exposure="direct")})
    with FakeOpenAI([]) as server:
        write_agent_dir(agent, server.base_url)
        pi = subprocess.Popen([sys.executable, "-m", "pi_core", *model_args(), "--mode", "rpc"], cwd=ws,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              env={**os.environ, "PI_CODING_AGENT_DIR": str(agent)})
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not server_pids(agent / "mcp.log"):
                time.sleep(0.1)
            pid = server_pids(agent / "mcp.log")[0]
            pgid = os.getpgid(pid)
            assert pgid != os.getpgid(pi.pid)  # the server runs in a process group of its own
            members = _group_members(pgid)
            assert len(members) >= 3  # guard, server, the server's stubborn child
            os.kill(pi.pid, signal.SIGKILL)
            pi.wait(timeout=10)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and group_alive(pgid):
                time.sleep(0.1)
            assert not group_alive(pgid), _group_members(pgid)
        finally:
            if pi.poll() is None:
                pi.kill()
                pi.wait()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_no_orphans_after_pi_is_interrupted_or_terminated(ws: Path, tmp_path: Path, signum: int) -> None:
    agent = tmp_path / "agent"
    write_mcp(agent, {"demo": stdio_server("--stubborn", exposure="direct")})
    with FakeOpenAI([]) as server:
        write_agent_dir(agent, server.base_url)
        pi = subprocess.Popen([sys.executable, "-m", "pi_core", *model_args(), "--mode", "rpc"], cwd=ws,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              env={**os.environ, "PI_CODING_AGENT_DIR": str(agent)})
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and len(_group_members(_server_group(agent))) < 3:
                time.sleep(0.1)
            pgid = _server_group(agent)
            assert len(_group_members(pgid)) >= 3  # guard, server, the server's stubborn child
            os.kill(pi.pid, signum)
            code = pi.wait(timeout=60)  # pi ends on its own and stops the server's group on the way out
            assert code != -signum, "pi was killed by the signal instead of handling it"
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and _group_members(pgid):
                time.sleep(0.1)
            assert not _group_members(pgid)  # (exited members may stay zombies until init reaps them)
        finally:
            if pi.poll() is None:
                pi.kill()
                pi.wait()


def _server_group(agent: Path) -> int:
    pids = server_pids(agent / "mcp.log")
    try:
        return os.getpgid(pids[0]) if pids else -1
    except ProcessLookupError:
        return -1


def test_a_server_that_exits_takes_the_children_it_left_behind_with_it(tmp_path: Path) -> None:
    # After kill -9 of pi the server usually sees its input end and exits before the guard notices
    # that pi is gone; what the server started must not outlive it (CI caught the race).
    guard = Path(__file__).parents[2] / "plugins" / "mcp" / "_guard.py"
    pid_file = tmp_path / "child.pid"
    server = ("import subprocess, sys\n"
              "child = subprocess.Popen([sys.executable, '-c', 'import signal, time\\n"
              "signal.signal(signal.SIGTERM, signal.SIG_IGN)\\nwhile True: time.sleep(1)'])\n"
              f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n")
    guarded = subprocess.run([sys.executable, "-I", "-S", str(guard), sys.executable, "-c", server],
                             start_new_session=True, timeout=30)
    assert guarded.returncode == 0
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _exists(child):
        time.sleep(0.05)
    assert not _exists(child)


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").exists() and " Z " not in Path(f"/proc/{pid}/stat").read_text()


def _group_members(pgid: int) -> list[int]:
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(stat.parent.name))
    return members


def test_the_first_prompt_goes_out_without_a_server_still_connecting_and_says_so(ws: Path, tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "rpc"))
    from rpc_client import RpcProcess

    agent = tmp_path / "agent"
    write_mcp(agent, {"slow": stdio_server("--hang", exposure="direct", timeout=300),
                      "demo": stdio_server(exposure="direct")})
    with FakeOpenAI([{"text": "ok"}]) as server:
        write_agent_dir(agent, server.base_url)
        with RpcProcess(ws, *model_args(), env={"PI_CODING_AGENT_DIR": str(agent)}) as pi:
            response, seen = pi.call({"type": "prompt", "message": "hi"}, timeout=120)  # after the 10 s wait
            assert response["success"] is True, response
            records = pi.settle(seen, timeout=120)
    notices = [r["message"] for r in records if r.get("type") == "extension_ui_request" and r.get("method") == "notify"]
    assert notices == ["MCP servers are still connecting; their tools become available once connected."]
    names = tool_names(server.requests[0])
    assert "mcp__demo__echo" in names and not [n for n in names if n.startswith("mcp__slow__")]


def test_servers_the_first_request_does_not_need_start_soon_after_start_without_a_prompt(ws: Path,
                                                                                          tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write_mcp(agent, {"cm": stdio_server(), "dir": stdio_server(exposure="direct")})
    with FakeOpenAI([]) as server:
        write_agent_dir(agent, server.base_url)
        pi = subprocess.Popen([sys.executable, "-m", "pi_core", *model_args(), "--mode", "rpc"], cwd=ws,
                              stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              env={**os.environ, "PI_CODING_AGENT_DIR": str(agent)})
        try:
            # nothing is asked of pi: the direct server starts at once, the codemode one after two seconds
            started = time.monotonic()
            deadline = started + 60
            log = agent / "mcp.log"
            while time.monotonic() < deadline and not re.search(r"\[cm\] stderr demo server starting",
                                                                 log.read_text() if log.exists() else ""):
                time.sleep(0.1)
            assert re.search(r"\[cm\] stderr demo server starting", log.read_text())
            assert time.monotonic() - started >= 2.0
            assert "[dir] stderr demo server starting" in log.read_text()
        finally:
            pi.terminate()
            pi.wait(timeout=60)
