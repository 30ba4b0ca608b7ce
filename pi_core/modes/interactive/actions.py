"""What the application keys do that is more than a line: cycling models and thinking levels, the
external editor, pasting from the clipboard, the resume hint printed on exit."""

from __future__ import annotations

import contextlib
import fnmatch
import os
import shlex
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from .keybindings import editor_command

if TYPE_CHECKING:
    from ...runtime.agent_session import AgentSession


def scoped_models(session: AgentSession) -> list[Any]:
    """The models Ctrl+P cycles through: the session's scope (``--models``), else the
    ``enabledModels`` setting's patterns matched against the available models, else all of them."""
    available = _available(session)
    scoped = list(getattr(session, "scoped_models", None) or [])
    if scoped:
        keys = {(m.provider, m.id) for m in available}
        return [m for m in scoped if (m.provider, m.id) in keys] or scoped
    settings = getattr(session, "settings", None)
    patterns = settings.get("enabledModels") if settings is not None and hasattr(settings, "get") else None
    if isinstance(patterns, list) and patterns:
        chosen = []
        for pattern in patterns:
            if not isinstance(pattern, str):
                continue
            wanted = pattern.split(":")[0].lower()
            for model in available:
                full = f"{model.provider}/{model.id}".lower()
                if (fnmatch.fnmatch(full, wanted) or fnmatch.fnmatch(model.id.lower(), wanted)) \
                        and model not in chosen:
                    chosen.append(model)
        if chosen:
            return chosen
    return available


def _available(session: AgentSession) -> list[Any]:
    from .commands import available_models

    return available_models(session)


def next_model(session: AgentSession, step: int) -> Any | None:
    """The model ``step`` places from the current one in :func:`scoped_models` (``None``: nothing
    else to switch to)."""
    models = scoped_models(session)
    current = session.model
    index = next((i for i, m in enumerate(models) if (m.provider, m.id) == (current.provider, current.id)), -1)
    if not models or (len(models) == 1 and index == 0):
        return None
    if index < 0:
        return models[0] if step > 0 else models[-1]
    return models[(index + step) % len(models)]


def next_thinking_level(session: AgentSession) -> str | None:
    """The level after the current one among those the model supports (``None``: no thinking)."""
    from pi_core.ai import supported_levels

    model = session.model
    if not getattr(model, "reasoning", False):
        return None
    levels = supported_levels(model)
    index = levels.index(session.thinking_level) if session.thinking_level in levels else -1
    return levels[(index + 1) % len(levels)]


def edit_externally(text: str, settings: Any = None) -> str | None:
    """Open ``text`` in the external editor (blocking; the terminal is the editor's meanwhile) and
    return the saved text, or ``None`` when the editor failed or could not be started."""
    command = editor_command(settings)
    fd, name = tempfile.mkstemp(prefix="pi-editor-", suffix=".md")
    path = Path(name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        argv = [*shlex.split(command), str(path)]
        try:
            code = subprocess.call(argv)
        except OSError as exc:
            sys.stderr.write(f"pi: cannot start the editor {command!r}: {exc.strerror or exc}\n")
            return None
        if code != 0:
            return None
        result = path.read_text(encoding="utf-8")
        return result[:-1] if result.endswith("\n") and not text.endswith("\n") else result
    finally:
        with contextlib.suppress(OSError):
            path.unlink()


# -- clipboard -------------------------------------------------------------------------------------

_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


def _run(argv: list[str], timeout: float = 3.0) -> bytes | None:
    try:
        done = subprocess.run(argv, capture_output=True, timeout=timeout, check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _readers() -> list[tuple[list[str], Any]]:
    """(list the clipboard's types, read one type) command pairs for this platform."""
    from shutil import which

    out: list[tuple[list[str], Any]] = []
    if os.environ.get("WAYLAND_DISPLAY") and which("wl-paste"):
        out.append((["wl-paste", "--list-types"], lambda t: ["wl-paste", "--type", t, "--no-newline"]))
    if os.environ.get("DISPLAY") and which("xclip"):
        out.append((["xclip", "-selection", "clipboard", "-t", "TARGETS", "-o"],
                    lambda t: ["xclip", "-selection", "clipboard", "-t", t, "-o"]))
    return out


def paste_from_clipboard() -> tuple[str, str] | None:
    """What Ctrl+V inserts, as pi does it: copied files as their paths, else an image saved to a
    temporary file (its path), else the text. Returns ``(kind, text)`` or ``None``."""
    for list_types, read in _readers():
        listed = _run(list_types)
        if listed is None:
            continue
        types = [t.strip() for t in listed.decode(errors="replace").splitlines() if t.strip()]
        if "text/uri-list" in types:
            uris = _run(read("text/uri-list")) or b""
            paths = [unquote(urlparse(u).path) for u in uris.decode(errors="replace").splitlines()
                     if u.startswith("file://")]
            if paths and not any(any(ord(c) < 32 for c in p) for p in paths):
                return "files", "\n".join(paths)
        image = next((t for t in _IMAGE_TYPES if t in types), None)
        if image is not None:
            data = _run(read(image))
            if data:
                suffix = image.split("/")[1].replace("jpeg", "jpg")
                path = Path(tempfile.gettempdir()) / f"pi-clipboard-{uuid.uuid4()}.{suffix}"
                path.write_bytes(data)
                return "image", str(path)
        for kind in ("text/plain;charset=utf-8", "UTF8_STRING", "text/plain", "STRING"):
            if kind in types:
                text = _run(read(kind))
                if text:
                    return "text", text.decode(errors="replace")
    return None


# -- exit ------------------------------------------------------------------------------------------

def resume_command(session: AgentSession) -> str | None:
    """``pi --session <id>`` (with ``--session-dir`` when it is not the default), as pi prints on exit;
    ``None`` for a session that was never written."""
    manager = getattr(session, "session", None)
    if manager is None or not getattr(manager, "is_persisted", False):
        return None
    file = getattr(manager, "session_file", None)
    if not file or not Path(file).exists():
        return None
    args = ["pi"]
    session_dir = getattr(manager, "session_dir", None)
    if session_dir is not None and not _is_default_dir(session, Path(session_dir)):
        args += ["--session-dir", shlex.quote(str(session_dir))]
    args += ["--session", manager.session_id]
    return " ".join(args)


def _is_default_dir(session: AgentSession, directory: Path) -> bool:
    from pi_core.session.locations import default_session_dir

    try:
        return default_session_dir(session.cwd).resolve() == directory.resolve()
    except OSError:
        return False


__all__ = ["edit_externally", "next_model", "next_thinking_level", "paste_from_clipboard", "resume_command",
           "scoped_models"]
