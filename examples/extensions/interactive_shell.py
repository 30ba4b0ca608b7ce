"""Port of pi's ``interactive-shell`` example: ``!vim file``, ``!git rebase -i``, ``!htop``... get the whole
terminal. pi's interface steps aside (``tui.stop()`` in a ``ctx.ui.custom`` factory), the program runs on the
real terminal, pi comes back (``tui.start()``) and records how it ended.

* ``!i command`` runs any command this way; known interactive programs are found by name
* ``INTERACTIVE_COMMANDS`` adds names (comma-separated), ``INTERACTIVE_EXCLUDE`` removes some
* only the user's ``!`` commands, not the agent's bash calls; without a terminal they are refused

Unlike pi's, the screen is not cleared first (pi for Python never erases the user's scrollback).
"""

from __future__ import annotations

import os
import subprocess
from typing import Any

from pi_core import ExtensionContext, UserBashResult, hookimpl

DEFAULT_INTERACTIVE_COMMANDS = [
    "vim", "nvim", "vi", "nano", "emacs", "pico", "micro", "helix", "hx", "kak", "less", "more", "most",
    "git commit", "git rebase", "git merge", "git cherry-pick", "git revert", "git add -p", "git add --patch",
    "git add -i", "git add --interactive", "git stash -p", "git stash --patch", "git reset -p",
    "git reset --patch", "git checkout -p", "git checkout --patch", "git difftool", "git mergetool",
    "htop", "top", "btop", "glances", "ranger", "nnn", "lf", "mc", "vifm", "tig", "lazygit", "gitui", "fzf",
    "sk", "ssh", "telnet", "mosh", "psql", "mysql", "sqlite3", "mongosh", "redis-cli", "kubectl edit",
    "kubectl exec -it", "docker exec -it", "docker run -it", "tmux", "screen", "ncdu",
]


def interactive_commands() -> list[str]:
    extra = [c.strip() for c in os.environ.get("INTERACTIVE_COMMANDS", "").split(",") if c.strip()]
    excluded = {c.strip().lower() for c in os.environ.get("INTERACTIVE_EXCLUDE", "").split(",")}
    return [c for c in [*DEFAULT_INTERACTIVE_COMMANDS, *extra] if c.lower() not in excluded]


def is_interactive(command: str) -> bool:
    text = command.strip().lower()
    for name in (c.lower() for c in interactive_commands()):
        if text == name or text.startswith(f"{name} ") or text.startswith(f"{name}\t"):
            return True
        if "|" in text:
            after = text[text.rfind("|") + 1:].strip()
            if after == name or after.startswith(f"{name} "):
                return True
    return False


def result(output: str, exit_code: int) -> UserBashResult:
    return UserBashResult(result={"output": output, "exitCode": exit_code, "cancelled": False, "truncated": False})


@hookimpl
async def user_bash(event: Any, ctx: ExtensionContext) -> UserBashResult | None:
    command, forced = event.command, False
    if command.startswith(("i ", "i\t")):  # `!i command`
        command, forced = command[2:].strip(), True
    if not (forced or is_interactive(command)):
        return None  # pi runs it as usual
    if ctx.mode != "tui":
        return result("(interactive commands require TUI)", 1)

    def run(tui: Any, theme: Any, keybindings: Any, done: Any) -> Any:
        tui.stop()  # the terminal is the program's now
        try:
            code = subprocess.run([os.environ.get("SHELL") or "/bin/sh", "-c", command], cwd=ctx.cwd).returncode
        finally:
            tui.start()
            tui.request_render(True)
        done(code)
        return [""]  # never shown: done() came first

    exit_code = await ctx.ui.custom(run)
    if exit_code == 0:
        return result("(interactive command completed successfully)", 0)
    return result(f"(interactive command exited with code {exit_code})", exit_code if exit_code is not None else 1)
