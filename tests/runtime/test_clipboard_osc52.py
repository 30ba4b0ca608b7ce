"""``/copy`` and Ctrl+X clipboard writes: the platform's clipboard program first; over SSH, or with
``PI_CLIPBOARD_OSC52=1``, the text also goes to the terminal as OSC 52 (pi's rule), and without a clipboard
program OSC 52 alone. Run on a real pseudo-terminal with a stand-in ``xsel`` on ``PATH``."""

from __future__ import annotations

import base64
import os
import stat
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interactive"))
from ptyterm import PtyApp  # noqa: E402

pytestmark = pytest.mark.timeout(120)
COPY = "from pi_core.modes.interactive.commands import copy_to_clipboard; print('HOW:', copy_to_clipboard('hi there'))"
OSC52 = b"\x1b]52;c;" + base64.b64encode(b"hi there") + b"\x07"


def copy(tmp_path: Path, *, program: bool, **env: str) -> tuple[bytes, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    tool = bin_dir / "xsel"
    if program:
        tool.write_text(f"#!/bin/sh\ncat > {tmp_path / 'clipboard.txt'}\n")
        tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    elif tool.exists():
        tool.unlink()
    base = {k: v for k, v in os.environ.items()
            if k not in ("SSH_CONNECTION", "SSH_TTY", "PI_CLIPBOARD_OSC52", "PI_NO_OSC52", "WAYLAND_DISPLAY")}
    # only the stand-in xsel is found (DISPLAY lets xsel count); the interpreter is given by full path
    app = PtyApp([sys.executable, "-c", COPY], env={**base, "PATH": f"{bin_dir}:/usr/bin:/bin", "DISPLAY": ":0",
                                                    **env}, cwd=tmp_path)
    try:
        assert app.wait_exit(60) == 0
    finally:
        app.close()
    clip = tmp_path / "clipboard.txt"
    text = clip.read_text() if clip.exists() else ""
    if clip.exists():
        clip.unlink()
    return bytes(app.raw), text


def test_a_clipboard_program_alone_locally(tmp_path: Path) -> None:
    raw, clip = copy(tmp_path, program=True)
    assert clip == "hi there" and OSC52 not in raw and b"HOW: with xsel" in raw


@pytest.mark.parametrize("env", [{"SSH_CONNECTION": "10.0.0.1 5000 10.0.0.2 22"}, {"PI_CLIPBOARD_OSC52": "1"}])
def test_over_ssh_or_when_asked_the_terminal_gets_it_too(tmp_path: Path, env: dict[str, str]) -> None:
    raw, clip = copy(tmp_path, program=True, **env)
    assert clip == "hi there" and OSC52 in raw and b"through the terminal" in raw


def test_no_program_means_osc52_and_pi_no_osc52_turns_it_off(tmp_path: Path) -> None:
    raw, clip = copy(tmp_path, program=False)
    assert clip == "" and OSC52 in raw
    raw, _ = copy(tmp_path, program=False, PI_NO_OSC52="1")
    assert OSC52 not in raw and b"HOW: None" in raw
