"""What the terminal can do, decided as pi 1.6 decides it, and pi's display settings as pi reads them.

* **OSC 8 hyperlinks and truecolour** are detected from the environment (the terminal program's variables,
  ``COLORTERM``, tmux's and screen's ``TERM``; inside tmux, whether its client forwards hyperlinks), then
  ``PI_HYPERLINKS`` / ``PI_TRUE_COLOR`` (``1`` or ``0``; anything else keeps the detection), then the settings
  ``terminal.hyperlinks`` / ``terminal.trueColor`` (``true`` or ``false``; ``"auto"`` keeps the rest), which
  win. An unknown terminal gets no hyperlinks: a terminal that swallows OSC 8 would hide the address, so
  links are then written as ``text (url)``.
* **The escape timeout** (``PI_TUI_ESC_TIMEOUT``, milliseconds): how long a lone Esc waits for the rest of a
  sequence before it counts as the Escape key; 10 ms, 100 ms over SSH.
* **The terminal's cursor** (``showHardwareCursor``, else ``PI_HARDWARE_CURSOR=1``): pi hides it and draws
  its own in the editor unless asked to show it.
* **Display settings** read leniently, as pi reads them (its settings are not validated): ``editorPaddingX``,
  ``autocompleteMaxVisible``, ``outputPad``, ``markdown.codeBlockIndent``.

The themes read the truecolour decision through :func:`truecolor`, which follows the settings once
:func:`configure` has been given them (pi keeps these overrides for the process too).
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

DEFAULT_ESCAPE_MS = 10.0
SSH_ESCAPE_MS = 100.0


@dataclass(frozen=True)
class Capabilities:
    hyperlinks: bool
    truecolor: bool


def tmux_forwards_hyperlinks() -> bool:
    """tmux re-emits OSC 8 only when its client's terminal features list ``hyperlinks``; any failure: no."""
    try:
        features = subprocess.run(["tmux", "display-message", "-p", "#{client_termfeatures}"], capture_output=True,
                                  text=True, timeout=0.25, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return "hyperlinks" in (feature.strip() for feature in features.split(","))


def detect(env: Mapping[str, str] | None = None, *, tmux_hyperlinks: Callable[[], bool] = tmux_forwards_hyperlinks,
           platform: str = sys.platform) -> Capabilities:
    """What the environment says about the terminal (pi's table of known terminals)."""
    env = os.environ if env is None else env
    program = env.get("TERM_PROGRAM", "").lower()
    term = env.get("TERM", "").lower()
    truecolor_hint = env.get("COLORTERM", "").lower() in ("truecolor", "24bit") or term.endswith("-direct")
    if env.get("TMUX") or term.startswith("tmux"):
        return Capabilities(tmux_hyperlinks(), truecolor_hint)
    if term.startswith("screen"):
        return Capabilities(False, truecolor_hint)
    if program == "herdr":  # checked first: the outer terminal's variables leak into its panes
        return Capabilities(True, truecolor_hint)
    if _known_modern_terminal(env, program, term):
        return Capabilities(True, True)
    if env.get("TERMINAL_EMULATOR", "").lower() == "jetbrains-jediterm":
        return Capabilities(False, True)
    if platform == "win32":
        return Capabilities(False, True)
    return Capabilities(False, truecolor_hint)


def _known_modern_terminal(env: Mapping[str, str], program: str, term: str) -> bool:
    """Terminals pi knows to draw both OSC 8 hyperlinks and 24-bit colour."""
    return (program == "rex"
            or (program == "orca" and env.get("ORCA_IMAGE_PROTOCOL") == "kitty")
            or bool(env.get("KITTY_WINDOW_ID")) or program == "kitty"
            or program == "ghostty" or "ghostty" in term or bool(env.get("GHOSTTY_RESOURCES_DIR"))
            or bool(env.get("WEZTERM_PANE")) or program == "wezterm"
            or program == "warpterminal" or bool(env.get("WARP_SESSION_ID") or env.get("WARP_TERMINAL_SESSION_UUID"))
            or bool(env.get("ITERM_SESSION_ID")) or program == "iterm.app"
            or bool(env.get("WT_SESSION"))
            or program in ("alacritty", "vscode", "zed") or term.startswith("alacritty")
            or bool(env.get("ALACRITTY_WINDOW_ID")))


def _switch(value: str | None) -> bool | None:
    """``PI_HYPERLINKS`` / ``PI_TRUE_COLOR``: ``1`` on, ``0`` off, anything else (``auto``) undecided."""
    return True if value == "1" else False if value == "0" else None


def _setting_switch(value: Any) -> bool | None:
    """``terminal.hyperlinks`` / ``terminal.trueColor``: a boolean decides, ``"auto"`` (or anything else) not."""
    return value if isinstance(value, bool) else None


def resolve(settings: Any = None, env: Mapping[str, str] | None = None, *,
            tmux_hyperlinks: Callable[[], bool] = tmux_forwards_hyperlinks) -> Capabilities:
    """The terminal's capabilities: the settings first, then the variables, then the detection."""
    env = os.environ if env is None else env
    hyperlinks = _setting_switch(_get(settings, "terminal.hyperlinks"))
    if hyperlinks is None:
        hyperlinks = _switch(env.get("PI_HYPERLINKS"))
    truecolor = _setting_switch(_get(settings, "terminal.trueColor"))
    if truecolor is None:
        truecolor = _switch(env.get("PI_TRUE_COLOR"))
    if hyperlinks is not None and truecolor is not None:
        return Capabilities(hyperlinks, truecolor)
    decided = hyperlinks
    detected = detect(env, tmux_hyperlinks=(lambda: bool(decided)) if decided is not None else tmux_hyperlinks)
    return Capabilities(detected.hyperlinks if hyperlinks is None else hyperlinks,
                        detected.truecolor if truecolor is None else truecolor)


def _get(settings: Any, key: str) -> Any:
    getter = getattr(settings, "get", None)
    return getter(key, None) if callable(getter) else None


_configured: Capabilities | None = None


def configure(settings: Any) -> Capabilities:
    """Decide the capabilities for this process from ``settings`` (and the environment); returns them."""
    global _configured
    _configured = resolve(settings)
    return _configured


def hyperlinks() -> bool:
    """Whether links are written as OSC 8 hyperlinks: as :func:`configure` decided for the terminal (outside the
    terminal interface, where nothing was decided: yes)."""
    return _configured.hyperlinks if _configured is not None else True


def truecolor(env: Mapping[str, str] | None = None) -> bool:
    """Whether theme colours are written as 24-bit: as :func:`configure` decided, or for ``env`` alone (a
    tmux probe is not needed for colour)."""
    if env is None and _configured is not None:
        return _configured.truecolor
    return resolve(None, env, tmux_hyperlinks=lambda: False).truecolor


def escape_timeout(env: Mapping[str, str] | None = None) -> float:
    """Seconds a lone Esc waits for the rest of a sequence (``PI_TUI_ESC_TIMEOUT`` in ms; 10 ms, over SSH
    100 ms: legacy Alt+key input is Esc and a key, which a slow link may deliver apart)."""
    env = os.environ if env is None else env
    try:
        configured = float(env.get("PI_TUI_ESC_TIMEOUT", "").strip() or "nan")
    except ValueError:
        configured = float("nan")
    if configured > 0 and configured != float("inf"):
        return configured / 1000
    if env.get("SSH_CONNECTION") or env.get("SSH_TTY"):
        return SSH_ESCAPE_MS / 1000
    return DEFAULT_ESCAPE_MS / 1000


def use_escape_timeout(app: Any) -> None:
    """Give a prompt_toolkit application pi's escape timeout: the input is flushed (a lone Esc becomes the
    Escape key) and a key that may start a longer binding (Esc before Alt+key) is decided after it."""
    seconds = escape_timeout()
    app.ttimeoutlen = seconds
    app.timeoutlen = seconds


def output_pad(value: Any) -> int:
    """``outputPad``: ``1`` pads the transcript by a column on each side, anything else is no padding (pi's
    default is 1; here 0, see docs/configuration.md)."""
    return 1 if _number(value) == 1 else 0


def editor_padding(value: Any, columns: int) -> int:
    """``editorPaddingX``: blank columns on both sides of the editor's text; a number's whole part, at least 0,
    at most what leaves the text a column."""
    number = _number(value)
    padding = max(0, math.floor(number)) if number is not None else 0
    return min(padding, max(0, (columns - 1) // 2))


def menu_rows(value: Any) -> int:
    """``autocompleteMaxVisible``: the completion menu's rows, 3 to 20 (5 when unset or not a number)."""
    number = _number(value)
    return 5 if number is None else max(3, min(20, math.floor(number)))


def code_block_indent(value: Any) -> str:
    """``markdown.codeBlockIndent``: what each line of a code block starts with (two spaces unless a string)."""
    return value if isinstance(value, str) else "  "


def _number(value: Any) -> float | None:
    """A JSON number as pi's ``Number.isFinite`` takes it (``true`` is not a number)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def hardware_cursor(settings: Any, env: Mapping[str, str] | None = None) -> bool:
    """pi's ``showHardwareCursor``: the setting when it is set, else ``PI_HARDWARE_CURSOR=1``."""
    value = _get(settings, "showHardwareCursor")
    if value is not None:
        return bool(value)
    return (os.environ if env is None else env).get("PI_HARDWARE_CURSOR") == "1"


__all__ = ["Capabilities", "code_block_indent", "configure", "detect", "editor_padding", "escape_timeout",
           "hardware_cursor", "hyperlinks", "menu_rows", "output_pad", "resolve", "truecolor", "use_escape_timeout"]
