"""What pi tells the terminal about itself besides the screen, as pi 1.6 does.

* **Program status** (OSC 7501, on by default where the terminal supports it): ``working`` while a run or a
  compaction goes on, ``blocked`` while a dialog waits for the user, then ``done``, ``error`` (the first line
  of the error) or ``idle``. Reports carry the session name, never prompts or answers. They are sent once the
  terminal has answered the protocol's query (tmux and screen do not pass it on), or always with
  ``PI_PROGRAM_STATUS=1``; ``PI_PROGRAM_STATUS=0`` turns them off.
* **Progress** (OSC 9;4, off by default: the ``terminal.showTerminalProgress`` setting): an indeterminate
  progress mark in the terminal's tab while the agent works, renewed every second.
* **tmux**: inside tmux without ``extended-keys``, Shift+Enter and the other modified keys cannot arrive; pi
  says so at start and how to fix it.
"""

from __future__ import annotations

import base64
import os
import re
import subprocess
from collections.abc import Callable
from typing import Any

PROGRAM_STATUS_QUERY = "\x1b]7501;?\x1b\\"
"""Asks whether the terminal speaks the Program Status Protocol; one that does answers with the same text."""
PROGRESS_ON = "\x1b]9;4;3\x07"
PROGRESS_OFF = "\x1b]9;4;0\x07"
PROGRESS_RENEW_S = 1.0
_APP = re.compile(r"^[A-Za-z0-9_.+-]{1,32}$")
MAX_MESSAGE_BYTES = 2048


def program_status(state: str, *, app: str = "pi", message: str | None = None) -> str:
    """One OSC 7501 report (the message base64-encoded; control characters would make terminals drop it)."""
    pairs = [f"state={state}"]
    if _APP.match(app):
        pairs.append(f"app={app}")
    text = "".join(c if c.isprintable() else " " for c in (message or "")).strip()
    data = text.encode()[:MAX_MESSAGE_BYTES].decode("utf-8", "ignore")
    if data:
        pairs.append("msg=" + base64.b64encode(data.encode()).decode())
    return f"\x1b]7501;{':'.join(pairs)}\x1b\\"


def program_status_wanted(env: dict[str, str] | None = None) -> bool | None:
    """``True``/``False`` when ``PI_PROGRAM_STATUS`` decides, ``None`` when the terminal is to be asked."""
    value = (os.environ if env is None else env).get("PI_PROGRAM_STATUS")
    return {"1": True, "0": False}.get(value or "")


def _first_line(text: str | None) -> str:
    return (text or "").strip().split("\n", 1)[0].strip() or "Error"


class TerminalStatus:
    """Follows the session's events and writes the reports (:func:`program_status`) and progress marks."""

    def __init__(self, write: Callable[[str], None], session_name: Callable[[], str | None], *,
                 progress: bool = False, supported: bool | None = None) -> None:
        self._write = write
        self._session_name = session_name
        self.progress = progress
        self.supported = bool(supported)
        self.running = False
        self.compacting = False
        self.blocked = 0
        self._result: tuple[str, str | None] = ("done", None)
        self._resting: tuple[str, str | None] = ("idle", None)
        self._last: str | None = None
        self._progress_on = False

    # -- program status ------------------------------------------------------------------------

    def confirm(self) -> None:
        """The terminal answered the query: it shows the reports."""
        if not self.supported:
            self.supported = True
            self.report()

    def handle(self, event: Any) -> None:
        kind = getattr(event, "type", "")
        if kind == "agent_start":
            self.running, self._result = True, ("done", None)
            self._set_progress(True)
        elif kind == "message_end" and getattr(event.message, "role", None) == "assistant":
            failed = getattr(event.message, "stop_reason", None) == "error"
            self._result = ("error", _first_line(event.message.error_message)) if failed else ("done", None)
        elif kind == "compaction_start":
            self.compacting = True
            self._set_progress(True)
        elif kind == "compaction_end":
            self._compaction_ended(event)
        elif kind == "agent_settled":
            self.running = False
            self._resting = ("idle", None) if getattr(event, "aborted", False) else self._result
            self._set_progress(False)
        elif kind != "session_info_changed":
            return
        self.report()

    def _compaction_ended(self, event: Any) -> None:
        self.compacting = False
        if not self.running:
            self._set_progress(False)
        aborted, error = getattr(event, "aborted", False), getattr(event, "error_message", None)
        if self.running:
            if aborted:
                self._result = ("idle", None)
            elif error:
                self._result = ("error", _first_line(error))
        elif aborted:
            self._resting = ("idle", None)
        elif getattr(event, "reason", "") == "manual":
            self._resting = ("error", _first_line(error)) if error else ("done", None)

    def dialog(self, opened: bool) -> None:
        """A dialog waits for the user (``blocked``) or has been answered."""
        self.blocked = max(self.blocked + (1 if opened else -1), 0)
        self.report()

    def current(self) -> tuple[str, str | None]:
        if self.blocked:
            return "blocked", None
        if self.compacting:
            return "working", "Compacting context"
        state, message = ("working", None) if self.running else self._resting
        return (state, self._session_name()) if state in ("working", "done") else (state, message)

    def report(self) -> None:
        state, message = self.current()
        text = program_status(state, message=message)
        if text != self._last and self.supported:
            self._last = text
            self._write(text)

    # -- progress ------------------------------------------------------------------------------

    def _set_progress(self, on: bool) -> None:
        if not self.progress or on == self._progress_on:
            return
        self._progress_on = on
        self._write(PROGRESS_ON if on else PROGRESS_OFF)

    def renew(self) -> None:
        """Called every :data:`PROGRESS_RENEW_S` while pi runs: terminals drop a progress mark not renewed."""
        if self._progress_on:
            self._write(PROGRESS_ON)

    def close(self) -> None:
        """pi exits: the tab's progress mark and the status go away."""
        if self._progress_on:
            self._progress_on = False
            self._write(PROGRESS_OFF)
        if self.supported and self._last is not None:
            self._write(program_status("clear"))


def tmux_warning(env: dict[str, str] | None = None, run: Callable[[str], str | None] | None = None) -> str | None:
    """Inside tmux, what is wrong with its modified-keys setup (``None``: nothing, or tmux did not answer)."""
    if not (os.environ if env is None else env).get("TMUX"):
        return None
    show = run or _tmux_option
    keys = show("extended-keys")
    if keys is None:
        return None
    if keys not in ("on", "always"):
        return ("tmux has extended-keys off, so Shift+Enter and other modified keys do not reach pi: add "
                "`set -g extended-keys on` to ~/.tmux.conf and restart tmux")
    if show("extended-keys-format") == "xterm":
        return ("tmux sends modified keys in its xterm format; pi works best with csi-u: add "
                "`set -g extended-keys-format csi-u` to ~/.tmux.conf and restart tmux")
    return None


def _tmux_option(name: str) -> str | None:
    try:
        done = subprocess.run(["tmux", "show", "-gv", name], capture_output=True, text=True, timeout=2, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None




def reply_key_bindings(on_reply: Callable[[], None]) -> Any:
    """Key bindings that take the terminal's answer to :data:`PROGRAM_STATUS_QUERY` off the input (it must not
    end up in the editor) and call ``on_reply``. Installed before the editor first reads its input."""
    from prompt_toolkit.input.ansi_escape_sequences import ANSI_SEQUENCES
    from prompt_toolkit.key_binding import KeyBindings

    from .keybindings import private_char

    char = private_char("program-status-reply")
    for ending in ("\x1b\\", "\x07"):
        ANSI_SEQUENCES[f"\x1b]7501;?{ending}"] = char  # type: ignore[assignment]
    keys = KeyBindings()
    keys.add(char)(lambda event: on_reply())
    return keys


__all__ = ["PROGRAM_STATUS_QUERY", "PROGRESS_OFF", "PROGRESS_ON", "TerminalStatus", "program_status",
           "program_status_wanted", "reply_key_bindings", "tmux_warning"]
