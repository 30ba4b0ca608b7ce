"""OAuth in a running session (RPC mode): "needs sign-in" in ``/mcp`` and in tool errors, ``/mcp login`` and
``/mcp logout``, and a sign-in made by another process picked up on the next turn."""

from __future__ import annotations

import sys
from pathlib import Path

from mcp_helpers import run_pi, tool_names, tool_results, write_mcp
from oauth_helpers import OAuthServer, auth_file, browser_env, login
from fake_openai import FakeOpenAI

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "rpc"))
from rpc_client import RpcProcess  # noqa: E402
from test_mcp_command import dialog, notices, write_models  # noqa: E402

WHOAMI = {"tool_calls": [{"id": "call_1", "name": "mcp__guard__whoami", "arguments": {}}]}


def test_mcp_login_in_the_session_then_the_next_turn_declares_and_calls_the_tools(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    with OAuthServer() as auth, FakeOpenAI([{"text": "one"}, WHOAMI, {"text": "done"}]) as model:
        write_mcp(agent, {"guard": {"url": auth.url, "exposure": "direct"}})
        write_models(agent, model.base_url)
        env = {"PI_CODING_AGENT_DIR": str(agent), **browser_env()}
        with RpcProcess(ws, model=("srv", "m"), env=env) as pi:
            _, status = pi.call({"type": "prompt", "message": "/mcp status"}, timeout=120)
            pi.prompt("hello")
            pi.send({"type": "prompt", "message": "/mcp login guard", "id": "login"})
            paste, before = pi.wait_for(dialog("input"), timeout=120)  # offered, not needed: the browser redirect wins
            _, during = pi.response("login", timeout=120)
            pi.prompt("who am I")
            _, out = pi.call({"type": "prompt", "message": "/mcp logout guard"}, timeout=120)
    assert "guard: needs sign-in (direct, global)" in notices(status)
    assert "paste the URL" in paste["title"]
    shown = notices(before + during)
    assert shown[0].startswith('Sign in to MCP server "guard" in your browser:\n' + auth.base + "/authorize?")
    assert shown[-1] == 'Signed in to MCP server "guard" · connected · 1 tool · resources'
    assert not [n for n in tool_names(model.requests[0]) if n.startswith("mcp__guard")]
    assert "mcp__guard__whoami" in tool_names(model.requests[1])
    assert tool_results(model.requests[2])[0]["content"].startswith("signed in as ")
    assert notices(out)[-1] == 'Signed out of MCP server "guard" · needs sign-in'
    assert auth_file(agent) == {}


def test_a_tool_call_to_a_server_that_needs_sign_in_says_so_and_a_sign_in_elsewhere_is_picked_up(
        ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    turns = [{"text": "one"}, WHOAMI, {"text": "done"}]
    with OAuthServer() as auth, FakeOpenAI(turns) as model:
        write_mcp(agent, {"guard": {"url": auth.url, "exposure": "direct"}})
        write_models(agent, model.base_url)
        assert login(ws, agent, "guard").returncode == 0
        auth.revoke_access_tokens()
        data = auth_file(agent)
        data[f"mcp__guard|{auth.url}"]["tokens"]["refresh_token"] = "rt-unknown"  # no refresh can help
        (agent / "mcp-auth.json").write_text(__import__("json").dumps(data))
        with RpcProcess(ws, model=("srv", "m"), env={"PI_CODING_AGENT_DIR": str(agent)}) as pi:
            _, status = pi.call({"type": "prompt", "message": "/mcp status"}, timeout=120)
            pi.prompt("hello")
            # another process signs in (the TypeScript pi or `pi mcp login` share mcp-auth.json)
            signed = run_pi(ws, agent, "mcp", "login", "guard", env=browser_env())
            pi.prompt("who am I", timeout=120)
    assert any(m.startswith("guard: needs sign-in") for m in notices(status))
    assert signed.returncode == 0, signed.stderr
    assert not [n for n in tool_names(model.requests[0]) if n.startswith("mcp__guard")]
    assert "mcp__guard__whoami" in tool_names(model.requests[1])
    assert tool_results(model.requests[2])[0]["content"].startswith("signed in as ")


def test_a_server_that_rejects_the_session_midway_fails_the_call_with_needs_sign_in(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    second = {"tool_calls": [{"id": "call_2", "name": "mcp__guard__whoami", "arguments": {}}]}
    with OAuthServer() as auth, FakeOpenAI([WHOAMI, {"text": "one"}, second, {"text": "two"}]) as model:
        write_mcp(agent, {"guard": {"url": auth.url, "exposure": "direct"}})
        write_models(agent, model.base_url)
        assert login(ws, agent, "guard").returncode == 0
        with RpcProcess(ws, model=("srv", "m"), env={"PI_CODING_AGENT_DIR": str(agent)}) as pi:
            pi.call({"type": "prompt", "message": "/mcp status"}, timeout=120)
            pi.prompt("first", timeout=120)
            auth.revoke_access_tokens(refresh_tokens=True)  # the server forgets the session's grant
            pi.prompt("second", timeout=120)
            _, status = pi.call({"type": "prompt", "message": "/mcp status"}, timeout=120)
    assert tool_results(model.requests[1])[0]["content"].startswith("signed in as ")
    failed = tool_results(model.requests[3])[-1]["content"]
    assert 'MCP server "guard" needs sign-in' in failed and "pi mcp login guard" in failed
    assert any(m.startswith("guard: needs sign-in") for m in notices(status))
