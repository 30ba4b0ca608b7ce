"""The OAuth-protected MCP server of the sign-in tests, and ``pi mcp login`` with a scripted browser."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from mcp_helpers import HERE, free_port, run_pi

OAUTH_SERVER = HERE / "servers" / "oauth_server.py"
BROWSER = HERE / "servers" / "browser.py"


class OAuthServer:
    """``servers/oauth_server.py`` (an MCP server and its authorization server) on 127.0.0.1."""

    def __init__(self, *args: str) -> None:
        self.port = free_port()
        self.process = subprocess.Popen([sys.executable, str(OAUTH_SERVER), str(self.port), *args],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.base}/mcp"

    def events(self, kind: str | None = None) -> list[dict[str, Any]]:
        log = httpx.get(f"{self.base}/test/log", timeout=30).json()
        return [e for e in log if kind is None or e["event"] == kind]

    def revoke_access_tokens(self, refresh_tokens: bool = False) -> None:
        httpx.post(f"{self.base}/test/revoke", params={"refresh": "1"} if refresh_tokens else {},
                   timeout=30).raise_for_status()

    def __enter__(self) -> OAuthServer:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return self
            except OSError:
                if self.process.poll() is not None:
                    raise RuntimeError("the OAuth test server exited") from None
                time.sleep(0.1)
        raise RuntimeError("the OAuth test server did not start")

    def __exit__(self, *exc: Any) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


def browser_env(*extra: str) -> dict[str, str]:
    """``$BROWSER`` for pi: the scripted browser that approves and follows the redirect."""
    command = " ".join([sys.executable, str(BROWSER), *extra, "%s"])
    return {"BROWSER": command}


def login(ws: Path, agent: Path, name: str, *args: str, env: dict[str, str] | None = None
          ) -> subprocess.CompletedProcess[str]:
    return run_pi(ws, agent, "mcp", "login", name, *args, env={**browser_env(), **(env or {})})


def auth_file(agent: Path) -> dict[str, Any]:
    return json.loads((agent / "mcp-auth.json").read_text())


def state_of(agent: Path, name: str, url: str) -> dict[str, Any]:
    return auth_file(agent)[f"mcp__{name.replace('-', '_')}|{url}"]
