"""OAuth sign-in to an MCP server: ``pi mcp login/logout``, ``mcp-auth.json`` in pi's format, refreshes.

The server (``servers/oauth_server.py``) is a real SDK MCP server with its own authorization server on
127.0.0.1; it requires a bearer token. The browser is ``servers/browser.py`` (``$BROWSER``): it GETs the
authorization URL pi prints, which the server approves at once, and follows the redirect to pi's
loopback callback.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from mcp_helpers import model_args, run_pi, tool_results, write_mcp
from oauth_helpers import OAuthServer, auth_file, login, state_of
from fake_openai import FakeOpenAI, write_agent_dir

WHOAMI = {"tool_calls": [{"id": "call_1", "name": "mcp__guard__whoami", "arguments": {}}]}


def call_whoami(ws: Path, agent: Path, env: dict[str, str] | None = None) -> tuple[object, FakeOpenAI]:
    with FakeOpenAI([WHOAMI, {"text": "done"}]) as model:
        write_agent_dir(agent, model.base_url)
        result = run_pi(ws, agent, *model_args(), "-p", "who am I", env=env)
    return result, model


def test_login_through_the_loopback_redirect_stores_pis_format_and_pi_p_calls_the_tool(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    with OAuthServer() as server:
        write_mcp(agent, {"guard": {"url": server.url, "exposure": "direct"}})
        listed = run_pi(ws, agent, "mcp", "list")
        assert listed.returncode == 1
        assert "guard: needs sign-in (direct, global)" in listed.stdout
        assert "sign in with: pi mcp login guard" in listed.stdout

        signed = login(ws, agent, "guard")
        assert signed.returncode == 0, signed.stderr
        assert 'Sign in to MCP server "guard" in your browser:' in signed.stdout
        authorize = next(line for line in signed.stdout.splitlines() if line.startswith(server.base + "/authorize?"))
        assert "code_challenge_method=S256" in authorize and "redirect_uri=http%3A%2F%2F127.0.0.1%3A" in authorize
        assert 'Signed in to MCP server "guard" (1 tool).' in signed.stdout

        path = agent / "mcp-auth.json"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        state = state_of(agent, "guard", server.url)
        assert list(auth_file(agent)) == [f"mcp__guard|{server.url}"]
        assert state["serverUrl"] == server.url
        registered = server.events("register")
        assert [e["client_id"] for e in registered] == [state["clientInformation"]["client_id"]]
        assert registered[0]["client_name"] == "pi"
        assert registered[0]["redirect_uris"][0].startswith("http://127.0.0.1:")
        assert registered[0]["redirect_uris"][0].endswith("/callback")
        assert state["tokens"]["access_token"].startswith("at-") and state["tokens"]["refresh_token"].startswith("rt-")
        assert state["tokens"]["token_type"] == "Bearer"
        assert isinstance(state["tokensExpireAt"], int)
        assert state["discovery"]["authorizationServerMetadata"]["token_endpoint"] == server.base + "/token"

        listed = run_pi(ws, agent, "mcp", "list")
        assert listed.returncode == 0, listed.stdout
        assert "guard: connected, 1 tool" in listed.stdout

        result, model = call_whoami(ws, agent)
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == "done"
        client_id = state["clientInformation"]["client_id"]
        assert [m["content"] for m in tool_results(model.requests[1])] == [f"signed in as {client_id}"]

        # signing in again while signed in changes nothing
        again = login(ws, agent, "guard")
        assert again.returncode == 0 and 'Already signed in to MCP server "guard"' in again.stdout
        assert len(server.events("register")) == 1 and len(server.events("grant")) == 1


def test_an_expired_access_token_is_refreshed_before_the_request(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    with OAuthServer() as server:
        write_mcp(agent, {"guard": {"url": server.url, "exposure": "direct"}})
        assert login(ws, agent, "guard").returncode == 0
        before = state_of(agent, "guard", server.url)
        data = auth_file(agent)
        data[f"mcp__guard|{server.url}"]["tokensExpireAt"] = 1000  # long ago
        (agent / "mcp-auth.json").write_text(json.dumps(data))

        result, model = call_whoami(ws, agent)
        assert result.returncode == 0, result.stderr
        assert tool_results(model.requests[1])[0]["content"].startswith("signed in as ")
        assert len(server.events("refresh")) == 1
        after = state_of(agent, "guard", server.url)
        assert after["tokens"]["access_token"] != before["tokens"]["access_token"]
        assert after["tokens"]["refresh_token"] != before["tokens"]["refresh_token"]
        assert after["tokensExpireAt"] > 1000
        assert after["clientInformation"] == before["clientInformation"]


def test_a_rejected_access_token_is_refreshed_once_then_the_server_needs_sign_in(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    with OAuthServer() as server:
        write_mcp(agent, {"guard": {"url": server.url, "exposure": "direct"}})
        assert login(ws, agent, "guard").returncode == 0
        server.revoke_access_tokens()  # the stored token is not expired, but the server answers 401

        result, model = call_whoami(ws, agent)
        assert result.returncode == 0, result.stderr
        assert tool_results(model.requests[1])[0]["content"].startswith("signed in as ")
        assert len(server.events("refresh")) == 1

        # now the refresh token is no good either: one refresh attempt, then "needs sign-in"
        server.revoke_access_tokens()
        data = auth_file(agent)
        data[f"mcp__guard|{server.url}"]["tokens"]["refresh_token"] = "rt-unknown"
        (agent / "mcp-auth.json").write_text(json.dumps(data))
        listed = run_pi(ws, agent, "mcp", "list")
        assert listed.returncode == 1
        assert "guard: needs sign-in" in listed.stdout
        assert len(server.events("refresh")) == 1  # the unknown refresh token was refused, not spent

        signed = login(ws, agent, "guard")
        assert signed.returncode == 0, signed.stderr
        assert 'Signed in to MCP server "guard" (1 tool).' in signed.stdout
        assert len(server.events("register")) == 1  # the registered client stays in use


def test_logout_deletes_the_stored_credentials(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    with OAuthServer() as server:
        write_mcp(agent, {"guard": {"url": server.url}, "other": {"url": server.url}})
        assert login(ws, agent, "guard").returncode == 0
        assert login(ws, agent, "other").returncode == 0
        assert set(auth_file(agent)) == {f"mcp__guard|{server.url}", f"mcp__other|{server.url}"}

        out = run_pi(ws, agent, "mcp", "logout", "guard")
        assert out.returncode == 0 and 'Signed out of MCP server "guard".' in out.stdout
        assert set(auth_file(agent)) == {f"mcp__other|{server.url}"}
        again = run_pi(ws, agent, "mcp", "logout", "guard")
        assert again.returncode == 0 and 'No stored credentials for MCP server "guard".' in again.stdout
        listed = json.loads(run_pi(ws, agent, "mcp", "list", "--json").stdout)
        assert {s["name"]: s["state"] for s in listed["servers"]} == {"guard": "needs-auth", "other": "connected"}


def test_a_configured_client_with_a_secret_from_the_environment_and_a_fixed_callback_port(ws: Path, tmp_path: Path) -> None:
    from mcp_helpers import free_port

    agent = tmp_path / "agent"
    port = free_port()
    with OAuthServer("--no-dcr", "--client", "my-client:s3cret-value") as server:
        write_mcp(agent, {"guard": {"url": server.url, "exposure": "direct", "oauth": {
            "clientId": "my-client", "clientSecret": "${EXAMPLE_SECRET}", "callbackPort": port}}})
        signed = login(ws, agent, "guard", env={"EXAMPLE_SECRET": "s3cret-value"})
        assert signed.returncode == 0, signed.stderr
        assert f"redirect_uri=http%3A%2F%2F127.0.0.1%3A{port}%2Fcallback" in signed.stdout
        assert "client_id=my-client" in signed.stdout
        assert server.events("register") == []
        assert [e["client_id"] for e in server.events("grant")] == ["my-client"]
        state = state_of(agent, "guard", server.url)
        assert "clientInformation" not in state  # the configured client is not stored
        assert "s3cret-value" not in (agent / "mcp-auth.json").read_text()

        result, model = call_whoami(ws, agent, env={"EXAMPLE_SECRET": "s3cret-value"})
        assert tool_results(model.requests[1])[0]["content"] == "signed in as my-client"

        wrong = login(ws, agent, "guard", env={"EXAMPLE_SECRET": "wrong"})
        assert wrong.returncode == 0  # still signed in: nothing to do


def test_pis_client_id_metadata_document_when_the_server_supports_it(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    with OAuthServer("--cimd", "--iss") as server:
        write_mcp(agent, {"guard": {"url": server.url, "exposure": "direct"}})
        signed = login(ws, agent, "guard")
        assert signed.returncode == 0, signed.stderr
        assert server.events("register") == []
        assert [e["client_id"] for e in server.events("grant")] == ["https://pi.dev/oauth/client.json"]
        assert server.events("authorize")[0]["redirect_uri"].endswith("/callback")
        result, model = call_whoami(ws, agent)
        assert tool_results(model.requests[1])[0]["content"] == "signed in as https://pi.dev/oauth/client.json"


def test_without_the_iss_parameter_the_document_and_callback_are_specific_to_the_server(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    with OAuthServer("--cimd") as server:
        write_mcp(agent, {"guard": {"url": server.url}})
        signed = login(ws, agent, "guard")
        assert signed.returncode == 0, signed.stderr
        (grant,) = server.events("grant")
        ident = grant["client_id"].removeprefix("https://pi.dev/oauth/").removesuffix("/client.json")
        assert len(ident) == 12 and "/" not in ident
        assert server.events("authorize")[0]["redirect_uri"].endswith(f"/callback/{ident}")


def test_client_registration_dcr_registers_even_where_documents_are_supported(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    with OAuthServer("--cimd", "--iss") as server:
        added = run_pi(ws, agent, "mcp", "add", "guard", "--url", server.url, "--oauth-client-registration", "dcr",
                       "--oauth-client-name", "Claude Code")
        assert added.returncode == 0, added.stderr
        config = json.loads((agent / "mcp.json").read_text())["mcpServers"]["guard"]
        assert config == {"url": server.url, "oauth": {"clientRegistration": "dcr", "clientName": "Claude Code"}}
        assert login(ws, agent, "guard").returncode == 0
        (registered,) = server.events("register")
        assert registered["client_name"] == "Claude Code"
        assert server.events("authorize")[0]["scopes"] == []
        # a configured scope is requested (the server advertises none)
        config = json.loads((agent / "mcp.json").read_text())
        config["mcpServers"]["guard"]["oauth"]["scope"] = "read write"
        (agent / "mcp.json").write_text(json.dumps(config))
        assert run_pi(ws, agent, "mcp", "logout", "guard").returncode == 0
        assert login(ws, agent, "guard").returncode == 0
        assert server.events("authorize")[-1]["scopes"] == ["read", "write"]


def test_client_registration_cimd_fails_where_documents_are_not_supported(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    with OAuthServer() as server:
        write_mcp(agent, {"guard": {"url": server.url, "oauth": {"clientRegistration": "cimd"}}})
        signed = login(ws, agent, "guard")
        assert signed.returncode == 1
        assert "does not support Client ID Metadata Documents" in signed.stderr
        assert server.events("register") == []
        bad = run_pi(ws, agent, "mcp", "add", "x", "--url", server.url, "--oauth-client-registration", "sometimes")
        assert bad.returncode == 1 and "clientRegistration" in bad.stderr


def test_no_token_reaches_a_file_pi_wrote_other_than_mcp_auth_json(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    with OAuthServer() as server:
        write_mcp(agent, {"guard": {"url": server.url, "exposure": "direct"}})
        signed = login(ws, agent, "guard")
        assert signed.returncode == 0, signed.stderr
        first = state_of(agent, "guard", server.url)["tokens"]
        server.revoke_access_tokens()  # a refresh during the session: new tokens
        with FakeOpenAI([WHOAMI, {"text": "done"}]) as model:
            write_agent_dir(agent, model.base_url)
            result = run_pi(ws, agent, "--provider", "fake", "--model", "fake-model", "--mode", "json", "-p", "who")
        assert result.returncode == 0, result.stderr
        second = state_of(agent, "guard", server.url)["tokens"]
        secrets = {first["access_token"], first["refresh_token"], second["access_token"], second["refresh_token"]}
        written = [p for p in tmp_path.rglob("*") if p.is_file() and p.name != "mcp-auth.json"]
        assert any(p.suffix == ".jsonl" for p in written)  # the session file
        assert (agent / "mcp.log").exists()
        for path in written:
            text = path.read_text(errors="replace")
            assert not any(s in text for s in secrets), path
        for stream in (result.stdout, result.stderr, signed.stdout, signed.stderr):
            assert not any(s in stream for s in secrets)
        assert not any(s in json.dumps([r["body"] for r in model.requests]) for s in secrets)


def test_the_redirected_url_pasted_into_the_terminal_when_the_browser_is_elsewhere(ws: Path, tmp_path: Path) -> None:
    import pty
    import subprocess
    import sys
    import threading

    from oauth_helpers import BROWSER

    agent = tmp_path / "agent"
    with OAuthServer() as server:
        write_mcp(agent, {"guard": {"url": server.url, "exposure": "direct"}})
        controller, terminal = pty.openpty()  # stdin is a terminal: pi offers the paste prompt
        env = {k: v for k, v in os.environ.items() if k != "BROWSER"}
        process = subprocess.Popen([sys.executable, "-m", "pi_core", "mcp", "login", "guard"], cwd=ws, stdin=terminal,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   env={**env, "PI_CODING_AGENT_DIR": str(agent)})
        os.close(terminal)
        lines: list[str] = []
        found = threading.Event()

        def read() -> None:
            assert process.stdout is not None
            for line in process.stdout:
                lines.append(line)
                if line.startswith(server.base + "/authorize?"):
                    found.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        assert found.wait(120), "".join(lines)
        authorize = next(line.strip() for line in lines if line.startswith(server.base + "/authorize?"))
        # the browser on "another machine": it is approved and redirected, but never reaches pi's loopback
        redirected = subprocess.run([sys.executable, str(BROWSER), "--print-redirect", authorize],
                                    capture_output=True, text=True, timeout=60).stdout.strip()
        assert redirected.startswith("http://127.0.0.1:") and "code=" in redirected
        os.write(controller, (redirected + "\n").encode())
        assert process.wait(timeout=120) == 0, process.stderr.read() if process.stderr else ""
        reader.join(10)
        os.close(controller)
    assert 'Signed in to MCP server "guard" (1 tool).' in "".join(lines)
    assert "paste the URL it was redirected to" in (process.stderr.read() if process.stderr else "")
    assert state_of(agent, "guard", server.url)["tokens"]["access_token"].startswith("at-")


def test_auth_server_metadata_url_replaces_a_wrongly_advertised_authorization_server(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    with OAuthServer("--advertise-as", "http://127.0.0.1:9/") as server:  # nothing listens there
        write_mcp(agent, {"guard": {"url": server.url, "exposure": "direct"}})
        wrong = login(ws, agent, "guard")
        assert wrong.returncode == 1
        write_mcp(agent, {"guard": {"url": server.url, "exposure": "direct", "oauth": {
            "authServerMetadataUrl": server.base + "/.well-known/oauth-authorization-server"}}})
        signed = login(ws, agent, "guard")
        assert signed.returncode == 0, signed.stderr
        assert 'Signed in to MCP server "guard" (1 tool).' in signed.stdout
        state = state_of(agent, "guard", server.url)
        assert state["discovery"]["authorizationServerMetadata"]["issuer"] == server.base + "/"
        result, model = call_whoami(ws, agent)
        assert tool_results(model.requests[1])[0]["content"].startswith("signed in as ")
        bad = run_pi(ws, agent, "mcp", "add", "x", "--url", server.url)
        assert bad.returncode == 0
        config = json.loads((agent / "mcp.json").read_text())
        config["mcpServers"]["x"]["oauth"] = {"authServerMetadataUrl": "http://example.com/meta"}
        (agent / "mcp.json").write_text(json.dumps(config))
        listed = run_pi(ws, agent, "mcp", "list")
        assert "authServerMetadataUrl must use https" in listed.stdout
