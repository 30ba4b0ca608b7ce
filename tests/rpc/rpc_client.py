"""A test client for ``pi --mode rpc``: a real subprocess, binary pipes, records split on LF only."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "rpc"
SCRIPTED = FIXTURES / "scripted_model.py"
Record = dict[str, Any]


class RpcProcess:
    """``with RpcProcess(cwd, ...) as pi: pi.call({"type": "get_state"})``."""

    def __init__(self, cwd: Path, *args: str, script: Path | None = None, env: dict[str, str] | None = None,
                 model: tuple[str, str] = ("fake", "fake-model"), extensions: tuple[Path, ...] = (),
                 scripted: bool = True) -> None:
        # scripted=False: no scripted ``fake`` provider; the model comes from models.json (a FakeProviderServer)
        ext_args = [a for path in ((SCRIPTED,) if scripted else ()) + tuple(extensions) for a in ("-e", str(path))]
        command = [sys.executable, "-m", "pi_core", "--mode", "rpc", "--provider", model[0], "--model", model[1],
                   *ext_args, *args]
        full_env = {**os.environ, **(env or {})}
        if script is not None:
            full_env["RPC_TEST_SCRIPT"] = str(script)
        self.proc = subprocess.Popen(command, cwd=cwd, env=full_env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, start_new_session=True)
        self.records: queue.Queue[Record | None] = queue.Queue()
        self.raw_lines: list[bytes] = []
        self.stderr = b""
        self._ids = 0
        self._threads = [threading.Thread(target=self._read_stdout, daemon=True),
                         threading.Thread(target=self._read_stderr, daemon=True)]
        for thread in self._threads:
            thread.start()

    def _read_stdout(self) -> None:
        buffer = b""
        for chunk in iter(lambda: self.proc.stdout.read1(65536), b""):  # type: ignore[union-attr]
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                self.raw_lines.append(line)
                self.records.put(json.loads(line.decode("utf-8")))
        if buffer:
            self.raw_lines.append(buffer)
        self.records.put(None)

    def _read_stderr(self) -> None:
        self.stderr = self.proc.stderr.read()  # type: ignore[union-attr]

    # -- sending -------------------------------------------------------------------------------

    def send(self, command: Record) -> None:
        self.send_raw(json.dumps(command, ensure_ascii=False).encode() + b"\n")

    def send_raw(self, data: bytes) -> None:
        self.proc.stdin.write(data)  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]

    def close_stdin(self) -> None:
        self.proc.stdin.close()  # type: ignore[union-attr]

    # -- receiving -----------------------------------------------------------------------------

    def next(self, timeout: float = 20) -> Record:
        try:
            record = self.records.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no record in {timeout}s; stderr: {self.stderr[-2000:]!r}") from None
        if record is None:
            raise EOFError(f"pi closed stdout; stderr: {self.stderr[-2000:]!r}")
        return record

    def wait_for(self, predicate: Callable[[Record], bool], timeout: float = 20) -> tuple[Record, list[Record]]:
        deadline, seen = time.monotonic() + timeout, []
        while True:
            record = self.next(max(0.01, deadline - time.monotonic()))
            seen.append(record)
            if predicate(record):
                return record, seen

    def response(self, request_id: Any, timeout: float = 20) -> tuple[Record, list[Record]]:
        return self.wait_for(lambda r: r.get("type") == "response" and r.get("id") == request_id, timeout)

    def call(self, command: Record, timeout: float = 20) -> tuple[Record, list[Record]]:
        """Send ``command`` (with a fresh id unless it has one) and wait for its response."""
        if "id" not in command:
            self._ids += 1
            command = {**command, "id": f"t-{self._ids}"}
        self.send(command)
        return self.response(command["id"], timeout)

    def settle(self, seen: list[Record] = (), timeout: float = 20) -> list[Record]:  # type: ignore[assignment]
        """Records up to the next ``agent_settled`` (or ``seen`` if it is already there)."""
        seen = list(seen)
        if any(r.get("type") == "agent_settled" for r in seen):
            return seen
        _record, more = self.wait_for(lambda r: r.get("type") == "agent_settled", timeout)
        return seen + more

    def prompt(self, message: str, **fields: Any) -> list[Record]:
        response, seen = self.call({"type": "prompt", "message": message, **fields})
        assert response["success"] is True, response
        return self.settle(seen)

    def wait(self, timeout: float = 20) -> int:
        """The exit code, once the process and both output pipes are done."""
        code = self.proc.wait(timeout)
        for thread in self._threads:
            thread.join(5)
        return code

    # -- cleanup -------------------------------------------------------------------------------

    def __enter__(self) -> RpcProcess:  # noqa: PYI034
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(10)
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()  # type: ignore[union-attr]
            except (OSError, ValueError):
                pass


def transcript_exchanges(path: Path) -> list[tuple[Record, Record]]:
    """(request, response) pairs of a recorded ``rpc_transcript.jsonl``, in request order."""
    records = [json.loads(line) for line in path.read_text().splitlines()]
    responses = [r["record"] for r in records if r["dir"] == "out" and r["record"].get("type") == "response"]
    pairs = []
    for r in records:
        if r["dir"] != "in":
            continue
        request = r["record"]
        match = next(x for x in responses if (x.get("id") == request.get("id") if "id" in request
                                               else x.get("command") == "parse"))
        responses.remove(match)
        pairs.append((request, match))
    return pairs
