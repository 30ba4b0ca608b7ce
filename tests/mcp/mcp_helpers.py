"""Helpers for the MCP, tool search and codemode tests: real SDK servers, the real CLI, a fake model."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "cli"))  # fake_openai
DEMO = HERE / "servers" / "demo_server.py"


def stdio_server(*args: str, **fields: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(DEMO), *args], **fields}


def write_mcp(agent: Path, servers: dict[str, Any], **top: Any) -> Path:
    agent.mkdir(parents=True, exist_ok=True)
    path = agent / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers, **top}, indent=2))
    return path


def run_pi(cwd: Path, agent: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 180,
           stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pi_core", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, input=stdin,
                          env={**os.environ, "PI_CODING_AGENT_DIR": str(agent), **(env or {})})


def model_args() -> list[str]:
    return ["--provider", "fake", "--model", "fake-model", "--no-session"]


def tool_names(request: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in request["body"].get("tools", [])]


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in request["body"]["messages"] if m["role"] == "tool"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class HttpServer:
    """The demo server on streamable HTTP at 127.0.0.1 in a child process."""

    def __init__(self, *args: str) -> None:
        self.port = free_port()
        self.args = args
        self.process = self._spawn()

    def _spawn(self) -> subprocess.Popen[bytes]:
        return subprocess.Popen([sys.executable, str(DEMO), "--http", str(self.port), *self.args],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def restart(self) -> None:
        """A new server process on the same port: it knows none of the old one's sessions."""
        self.__exit__()
        self.process = self._spawn()
        self.__enter__()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def __enter__(self) -> HttpServer:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return self
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("the demo HTTP server did not start")

    def __exit__(self, *exc: Any) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


