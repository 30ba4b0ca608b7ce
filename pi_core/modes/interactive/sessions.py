"""``/new`` and ``/resume``: leave the current session and continue in another one.

The plugins may veto (``session_before_switch``); the old session is shut down (``session_shutdown``
with reason ``new``/``resume``, its file released) and a fresh :class:`AgentSession` is built on the
same plugin host, model stream, tools and settings, then started (``session_start``).

``AgentSession`` has no public "switch" yet; the pieces it was built from are read here, in one
place, so a future ``AgentSession`` method can replace this module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


class SwitchCancelled(Exception):
    """A plugin vetoed the switch; the message gives its reason."""


async def switch_session(old: Any, target: Path | None, reason: str) -> Any:
    """Return the new session (``target`` ``None``: a new empty one). Raises :class:`SwitchCancelled`."""
    from pi_core import SessionBeforeSwitchEvent, SessionManager

    event = await old.host.dispatch.call("session_before_switch",
                                         SessionBeforeSwitchEvent(reason, target_session_file=target), old.ctx)
    if event.decision is not None:
        raise SwitchCancelled(event.decision.reason or "a plugin cancelled the switch")
    directory = old.session.session_dir
    if target is not None:
        SessionManager.open(target, read_only=True).close()  # fail before closing the old one
    await old.close(reason)  # type: ignore[arg-type]
    if target is None:
        manager = SessionManager.create(old.cwd, session_dir=directory) if old.session.is_persisted \
            else SessionManager.in_memory(old.cwd)
    else:
        manager = SessionManager.open(target, session_dir=directory)
    new = _rebuild(old, manager)
    await new.start(reason)  # type: ignore[arg-type]
    return new


def _rebuild(old: Any, manager: Any) -> Any:
    from pi_core.runtime.session import AgentSession

    restored = manager.build_session_context() if manager.get_entries() else None
    model = _restored_model(old, restored)
    level = (restored.thinking_level if restored is not None else None) or old.thinking_level
    session = AgentSession(
        host=old.host, session=manager, model=model, stream=old._stream, tools=old.active_tool_names(),
        system_prompt=old._system_prompt_factory, thinking_level=level, mode=old.mode, ui=old.ctx.ui,
        retry=old.retry, flags=dict(old.ctx._flags),
        queue_modes=(old.agent.steering_mode, old.agent.follow_up_mode),
    )
    for name in ("settings", "models"):
        if hasattr(old, name):
            setattr(session, name, getattr(old, name))
    if not manager.get_entries():
        manager.append_model_change(model.provider, model.id)
        manager.append_thinking_level_change(level)
    return session


def _restored_model(old: Any, restored: Any) -> Any:
    ref = getattr(restored, "model", None)
    registry = getattr(old, "models", None)
    if ref is None or registry is None or not ref.provider or not ref.model_id:
        return old.model
    found = registry.get_model(ref.provider, ref.model_id) if hasattr(registry, "get_model") else None
    return found or old.model


__all__ = ["SwitchCancelled", "switch_session"]
