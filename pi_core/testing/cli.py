"""Running the real ``pi`` command in a subprocess, isolated from the developer's own configuration."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class PiResult:
    """What one ``pi`` run did."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    @property
    def events(self) -> list[dict[str, Any]]:
        """``--mode json`` output: every stdout line that is a JSON object."""
        out = []
        for line in self.stdout.splitlines():
            if line.startswith("{"):
                try:
                    out.append(json.loads(line))
                except ValueError:
                    continue
        return out

    def events_of(self, type: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("type") == type]

    def __str__(self) -> str:
        return f"pi {' '.join(self.args)} -> {self.returncode}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"


class PiRunner:
    """``run_pi("-p", "hello")``: ``pi`` with this runner's ``HOME`` and agent dir, in ``cwd``.

    Standard input is empty unless ``input`` is given (so ``pi`` runs non-interactively);
    ``PI_OFFLINE=1`` is set. The same interpreter that runs the tests runs ``pi``.
    """

    def __init__(self, cwd: Path, agent_dir: Path, home: Path, env: Mapping[str, str] | None = None) -> None:
        self.cwd, self.agent_dir, self.home = Path(cwd), Path(agent_dir), Path(home)
        self.env = dict(env or {})

    def environment(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PI_")}
        env.update({"HOME": str(self.home), "PI_CODING_AGENT_DIR": str(self.agent_dir), "PI_OFFLINE": "1"})
        env.update(self.env)
        env.update(extra or {})
        return env

    def __call__(self, *args: str, input: str | None = None, env: Mapping[str, str] | None = None,
                 cwd: Path | str | None = None, timeout: float = 120) -> PiResult:
        directory = Path(cwd) if cwd is not None else self.cwd
        directory.mkdir(parents=True, exist_ok=True)
        done = subprocess.run([sys.executable, "-m", "pi_core", *args], cwd=directory, input=input or "",
                              capture_output=True, text=True, timeout=timeout, env=self.environment(env))
        return PiResult(list(args), done.returncode, done.stdout, done.stderr)


__all__ = ["PiResult", "PiRunner"]
