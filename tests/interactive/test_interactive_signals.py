"""SIGTERM and SIGHUP in the terminal interface: the run is aborted like Esc, the bash process tree is
killed, ``session_shutdown`` runs, and pi exits 143 / 129."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from test_interactive_pty import session_lines, start

pytestmark = pytest.mark.timeout(90)


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_signal_during_a_bash_call_aborts_kills_and_shuts_down(tmp_path: Path, sig: signal.Signals,
                                                                  code: int) -> None:
    pids = tmp_path / "pids"
    command = f"echo $$ > {pids}; (sleep 300; echo late) & echo $! >> {pids}; sleep 300"
    app = start(tmp_path, [{"text": "Running it.", "tools": [["bash", {"command": command}]]},
                           {"text": "never reached"}])
    try:
        app.type("run the long command")
        deadline = time.monotonic() + 30
        while not (pids.exists() and len(pids.read_text().split()) == 2):
            assert time.monotonic() < deadline, app.text()
            app.pump()
        started = [int(p) for p in pids.read_text().split()]
        app.proc.send_signal(sig)
        assert app.wait_exit(30) == code
    finally:
        app.close()
    deadline = time.monotonic() + 10
    while any(alive(p) for p in started):
        assert time.monotonic() < deadline, "the bash process tree survived"
        time.sleep(0.05)
    assert (tmp_path / "agent" / "shutdown.log").read_text() == "shutdown quit\n"
    results = [r["message"] for r in session_lines(tmp_path) if r.get("message", {}).get("role") == "toolResult"]
    assert results and results[-1]["isError"] is True
    assert "never reached" not in app.text()


def test_closing_the_terminal_during_a_bash_call_is_a_clean_hangup(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    command = f"echo $$ > {pids}; (sleep 300; echo late) & echo $! >> {pids}; sleep 300"
    app = start(tmp_path, [{"text": "Running it.", "tools": [["bash", {"command": command}]]}])
    try:
        app.type("run the long command")
        deadline = time.monotonic() + 30
        while not (pids.exists() and len(pids.read_text().split()) == 2):
            assert time.monotonic() < deadline, app.text()
            app.pump()
        started = [int(p) for p in pids.read_text().split()]
        os.close(app.master)  # the terminal window goes away: the kernel sends SIGHUP
        app.master = os.open("/dev/null", os.O_RDONLY)  # for app.close()
        code = app.proc.wait(30)
    finally:
        app.close()
    assert code == 129, (tmp_path / "stderr.txt").read_text()[-3000:]
    deadline = time.monotonic() + 10
    while any(alive(p) for p in started):
        assert time.monotonic() < deadline, "the bash process tree survived"
        time.sleep(0.05)
    assert (tmp_path / "agent" / "shutdown.log").read_text() == "shutdown quit\n"
    assert "Traceback" not in (tmp_path / "stderr.txt").read_text()
