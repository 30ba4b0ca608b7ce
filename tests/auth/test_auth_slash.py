"""``/login`` and ``/logout`` in a running session, driven through RPC mode's extension-UI dialogs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rpc"))

from auth_fakes import FakeHTTP, OAuthServer  # noqa: E402
from rpc_client import RpcProcess  # noqa: E402


def dialog(method: str):
    return lambda r: r.get("type") == "extension_ui_request" and r.get("method") == method


def notice(pi: RpcProcess) -> str:
    record, _ = pi.wait_for(dialog("notify"))
    return record["message"]


def test_login_with_an_api_key_and_logout(agent_dir: Path, tmp_path: Path) -> None:
    with RpcProcess(tmp_path, env={"PI_CODING_AGENT_DIR": str(agent_dir)}) as pi:
        pi.send({"type": "prompt", "message": "/login", "id": "p1"})
        pick, _ = pi.wait_for(dialog("select"))
        assert "Groq" not in pick["options"] and "groq" in pick["options"]
        assert "Anthropic (anthropic)" in pick["options"] and "faux" not in pick["options"]
        pi.send({"type": "extension_ui_response", "id": pick["id"], "value": "groq"})
        ask, _ = pi.wait_for(dialog("input"))
        assert ask["title"] == "Enter API key"
        pi.send({"type": "extension_ui_response", "id": ask["id"], "value": "gsk-typed"})
        assert notice(pi) == "Saved API key for groq."
        pi.response("p1")
        assert json.loads((agent_dir / "auth.json").read_text()) == {"groq": {"type": "api_key", "key": "gsk-typed"}}

        pi.send({"type": "prompt", "message": "/logout groq", "id": "p2"})
        assert notice(pi).startswith("Removed stored API key for groq.")
        pi.response("p2")
    assert json.loads((agent_dir / "auth.json").read_text()) == {}


def test_login_to_a_subscription_with_a_pasted_code(agent_dir: Path, tmp_path: Path) -> None:
    with FakeHTTP() as http:
        oauth = OAuthServer(http, "/v1/oauth/token", prefix="sk-ant-oat01")
        env = {"PI_CODING_AGENT_DIR": str(agent_dir),
               "PI_OAUTH_URL_OVERRIDES": f"https://claude.ai={http.url},https://platform.claude.com={http.url}"}
        with RpcProcess(tmp_path, env=env) as pi:
            pi.send({"type": "prompt", "message": "/login anthropic", "id": "p"})
            how, _ = pi.wait_for(dialog("select"))
            assert how["options"] == ["Sign in with Anthropic (Claude Pro/Max)", "Enter Anthropic API key"]
            pi.send({"type": "extension_ui_response", "id": how["id"], "value": how["options"][0]})
            method, _ = pi.wait_for(dialog("select"))
            pi.send({"type": "extension_ui_response", "id": method["id"], "value": "Copy code login (headless)"})
            note, seen = pi.wait_for(dialog("notify"))
            url = note["message"]
            assert url.startswith(f"Open this URL to sign in: {http.url}/oauth/authorize?")
            from urllib.parse import parse_qs, urlsplit

            params = {k: v[0] for k, v in parse_qs(urlsplit(url.split(": ", 1)[1].split("\n")[0]).query).items()}
            early = [r for r in seen if dialog("input")(r)]  # the prompt may come before the notice
            paste = early[0] if early else pi.wait_for(dialog("input"))[0]
            pi.send({"type": "extension_ui_response", "id": paste["id"],
                     "value": f"{oauth.issue_code(params['code_challenge'])}#{params['state']}"})
            messages = [notice(pi), notice(pi)]
            pi.response("p")
    assert messages[-1] == "Logged in to Anthropic."
    assert json.loads((agent_dir / "auth.json").read_text())["anthropic"]["access"] == "sk-ant-oat01-access-1"


def test_cancelling_the_dialog_stores_nothing(agent_dir: Path, tmp_path: Path) -> None:
    with RpcProcess(tmp_path, env={"PI_CODING_AGENT_DIR": str(agent_dir)}) as pi:
        pi.send({"type": "prompt", "message": "/login groq", "id": "p"})
        ask, _ = pi.wait_for(dialog("input"))
        pi.send({"type": "extension_ui_response", "id": ask["id"], "cancelled": True})
        assert notice(pi) == "Login cancelled."
        pi.send({"type": "prompt", "message": "/login nope", "id": "q"})
        assert notice(pi).startswith('Unknown provider "nope".')
    assert not (agent_dir / "auth.json").exists()
