"""Built-in plugin: ``/hotkeys``, ``/changelog``, ``/debug`` and ``/trust`` — registered like any plugin's
commands, on the public command context."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pi_core import Command, CommandContext, TrustStore, __version__, agent_dir, hookimpl


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("hotkeys", _hotkeys, "Show the keyboard shortcuts (keybindings.json applied, plugins' keys)"))
    register(Command("changelog", _changelog, "Show the changelog entries of this pi"))
    register(Command("debug", _debug, "Write the screen's rows and the session's messages to pi-debug.log"))
    register(Command("trust", _trust, "Save a project trust decision for future pi processes"))


# -- /hotkeys -----------------------------------------------------------------------------------------

#: Editing keys of the editor line (emacs keys): not remappable here, listed as pi lists its editor keys.
EDITING_KEYS = (
    ("Ctrl+A / Ctrl+E", "Start / end of line"),
    ("Alt+B / Alt+F", "Move by word"),
    ("Ctrl+W / Alt+Backspace", "Delete word backwards"),
    ("Alt+D", "Delete word forwards"),
    ("Ctrl+U / Ctrl+K", "Delete to start / end of line"),
    ("Ctrl+Y", "Paste the most recently deleted text"),
    ("Ctrl+_", "Undo"),
)
PREFIXES = (("/", "Slash commands"), ("!", "Run a shell command (output goes to the model)"),
            ("!!", "Run a shell command (kept out of the context)"))


def key_text(canonical: str) -> str:
    """``ctrl+shift+p`` → ``Ctrl+Shift+P``."""
    parts = canonical.split("+") if canonical != "+" else ["+"]
    if canonical.endswith("++"):
        parts = [*canonical[:-2].split("+"), "+"]
    return "+".join(p.upper() if len(p) == 1 else {"pageUp": "PageUp", "pageDown": "PageDown"}.get(p, p.capitalize())
                    for p in parts)


def _table(rows: list[tuple[str, str]]) -> list[str]:
    width = max((len(key) for key, _ in rows), default=0) + 2
    return [f"  {key.ljust(width)} {what}" for key, what in rows]


async def _hotkeys(args: str, ctx: CommandContext) -> None:
    bindings = ctx.ui.get_keybindings()
    if not bindings:
        await ctx.ui.notify("Keyboard shortcuts apply in the terminal interface only")
        return
    out: list[str] = []
    groups: dict[str, list[tuple[str, str]]] = {}
    for binding in bindings:
        groups.setdefault(binding.group, []).append((binding.shown or "(unbound)", binding.description))
    groups.setdefault("Editor", []).extend(EDITING_KEYS)
    groups["Editor"].extend(PREFIXES)
    for group, rows in groups.items():
        out += [*([""] if out else []), group, *_table(rows)]
    shortcuts = ctx.get_shortcuts()
    if shortcuts:
        out += ["", "Extensions", *_table([(key_text(s.key), s.description or "(a plugin's shortcut)")
                                           for s in shortcuts])]
    await ctx.ui.show("Keyboard shortcuts", out)


# -- /changelog ---------------------------------------------------------------------------------------

def changelog_path() -> Path:
    """The changelog this pi ships (``pi_core/CHANGELOG.md``)."""
    import pi_core

    return Path(pi_core.__file__).resolve().parent / "CHANGELOG.md"


def changelog_entries(text: str) -> list[str]:
    """The version sections (``## ...`` to the next one) in file order, newest first as written."""
    entries: list[list[str]] = []
    for line in text.splitlines():
        if line.startswith("## "):
            entries.append([line])
        elif entries:
            entries[-1].append(line)
    return ["\n".join(lines).strip() for lines in entries]


async def _changelog(args: str, ctx: CommandContext) -> None:
    try:
        entries = changelog_entries(changelog_path().read_text(encoding="utf-8"))
    except OSError:
        entries = []
    if not entries:
        await ctx.ui.show("What's New", ["No changelog entries found."])
        return
    rows: list[str] = []
    for entry in reversed(entries):  # as pi: oldest first, the newest right above the editor
        rows += [*([""] if rows else []), *entry.split("\n")]
    await ctx.ui.show("What's New", rows)


# -- /debug -------------------------------------------------------------------------------------------

def _agent_dir(ctx: CommandContext) -> Path:
    path = ctx.get_settings().global_path
    return path.parent if path is not None else agent_dir()


async def _debug(args: str, ctx: CommandContext) -> None:
    size = shutil.get_terminal_size()
    rows = ctx.ui.rendered_lines()
    messages = ctx.session.build_session_context().messages
    lines = [f"Debug output at {datetime.now(UTC).isoformat().replace('+00:00', 'Z')}",
             f"pi for Python {__version__}",
             f"Terminal: {size.columns}x{size.lines}",
             f"Total lines: {len(rows)}",
             "",
             "=== All rendered lines with visible widths ===",
             *[f"[{i}] (w={_visible_width(row)}) {json.dumps(row)}" for i, row in enumerate(rows)],
             "",
             "=== Agent messages (JSONL) ===",
             *[json.dumps(m.model_dump(mode="json", by_alias=True, exclude_none=True)
                          if hasattr(m, "model_dump") else m, default=str) for m in messages],
             ""]
    path = _agent_dir(ctx) / "pi-debug.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")
    await ctx.ui.notify(f"✓ Debug log written: {path}")


def _visible_width(text: str) -> int:
    import re
    import unicodedata

    plain = re.sub(r"\x1b\[[0-9;:?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)", "", text)
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
               for c in plain)


# -- /trust -------------------------------------------------------------------------------------------

async def _trust(args: str, ctx: CommandContext) -> None:
    cwd = Path(ctx.cwd).resolve()
    store = TrustStore(_agent_dir(ctx))
    try:
        saved = store.nearest(cwd)
    except Exception as exc:  # noqa: BLE001 - a broken trust.json: say so, change nothing
        await ctx.ui.notify(str(exc), "error")
        return
    parent = cwd.parent if cwd.parent != cwd else None
    options: list[tuple[str, bool, list[tuple[Path, bool | None]], Path]] = [
        ("Trust", True, [(cwd, True)], cwd)]
    if parent is not None:
        options.append((f"Trust parent folder ({parent})", True, [(parent, True), (cwd, None)], parent))
    options.append(("Do not trust", False, [(cwd, False)], cwd))
    if saved is None:
        described = "none"
    else:
        state = "trusted" if saved[1] else "untrusted"
        described = f"{state} ({saved[0]})" if saved[0] == cwd else f"{state} (inherited from {saved[0]})"
    await ctx.ui.show("Project trust", [f"  {cwd}", f"  Saved decision: {described}",
                                        f"  Current session: {'trusted' if ctx.is_project_trusted() else 'untrusted'}"])
    title = "Trust this project's .pi/ code and settings?"
    labels = [label + ("  (saved)" if saved is not None and saved == (where, trusted) else "")
              for label, trusted, _, where in options]
    picked = await ctx.ui.select(title, labels)
    if picked is None:
        return
    index = labels.index(picked)
    _, trusted, updates, _ = options[index]
    try:
        for path, decision in updates:
            store.set(path, decision)
    except Exception as exc:  # noqa: BLE001 - the store's own message says what is wrong
        await ctx.ui.notify(f"Trust decision not saved: {exc}", "error")
        return
    await ctx.ui.notify(f"Saved trust decision: {'trusted' if trusted else 'untrusted'}. "
                        "Restart pi for this to take effect.")
