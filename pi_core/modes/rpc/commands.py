"""The RPC command table: every command of pi 1.6's RPC mode, by its ``type``.

A handler gets the server and the parsed command and returns the response's ``data`` (or
:data:`~.protocol.NO_DATA`); raising :class:`~.protocol.RpcError` (or any exception) answers
``success: false`` with the message. ``prompt`` answers by itself, from inside the session, before
the run's first event, and returns :data:`ANSWERED`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .protocol import NO_DATA, RpcError, failure, field, success

if TYPE_CHECKING:
    from ...runtime.agent_session import AgentSession
    from .server import RpcServer

Handler = Callable[["RpcServer", dict[str, Any]], Awaitable[Any]]
COMMANDS: dict[str, Handler] = {}
#: The handler has already written its response.
ANSWERED: Any = object()
QUEUE_MODES = ("all", "one-at-a-time")


def command(name: str) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        COMMANDS[name] = handler
        return handler
    return register


# -- prompting -------------------------------------------------------------------------------

@command("prompt")
async def _prompt(rpc: RpcServer, cmd: dict[str, Any]) -> Any:
    message = field(cmd, "message", str)
    behavior = field(cmd, "streamingBehavior", str, required=False)
    if behavior not in (None, "steer", "followUp"):
        raise RpcError(f'prompt: streamingBehavior must be "steer" or "followUp", not {behavior!r}')
    images = _images(cmd)
    answered = False

    def on_disposition(disposition: str) -> None:
        nonlocal answered
        answered = True
        rpc.write(success(cmd.get("id"), "prompt", {"disposition": disposition}))

    rpc.prompts.add(asyncio.current_task())  # type: ignore[arg-type]
    try:
        await rpc.session.prompt(message, images, streaming_behavior=behavior, source="rpc",
                                 on_disposition=on_disposition)
    except Exception as exc:  # noqa: BLE001 - any failure is the client's answer
        if not answered:
            rpc.write(failure(cmd.get("id"), "prompt", str(exc) or type(exc).__name__))
        else:  # the run itself failed after it was accepted: pi reports that only through events
            rpc.report(f"prompt {cmd.get('id')!r} failed after it started: {exc!r}")
    finally:
        rpc.prompts.discard(asyncio.current_task())  # type: ignore[arg-type]
    return ANSWERED


@command("steer")
async def _steer(rpc: RpcServer, cmd: dict[str, Any]) -> Any:
    return _queue(rpc, cmd, "steer")


@command("follow_up")
async def _follow_up(rpc: RpcServer, cmd: dict[str, Any]) -> Any:
    return _queue(rpc, cmd, "follow_up")


def _queue(rpc: RpcServer, cmd: dict[str, Any], kind: str) -> dict[str, str]:
    message = field(cmd, "message", str)
    name = message[1:].split(" ", 1)[0] if message.startswith("/") else None
    if name and rpc.session.host.commands.get(name) is not None:
        raise RpcError(f'Extension command "/{name}" cannot be queued. Use prompt() or execute the command '
                       "when not streaming.")
    getattr(rpc.session, kind)(message, _images(cmd))
    return {"disposition": "queued"}


@command("abort")
async def _abort(rpc: RpcServer, cmd: dict[str, Any]) -> Any:
    rpc.cancel_retry_wait()  # the session's abort does not reach a retry that is waiting out its delay
    await rpc.session.abort()
    return NO_DATA


@command("clear_queue")
async def _clear_queue(rpc: RpcServer, cmd: dict[str, Any]) -> Any:
    steering, follow_up = rpc.session.clear_queue()
    return {"steering": steering, "followUp": follow_up}


def _images(cmd: dict[str, Any]) -> list[Any]:
    from ...ai.types import ImageContent

    raw = field(cmd, "images", list, required=False, default=[])
    images = []
    for index, item in enumerate(raw):
        try:
            images.append(ImageContent.model_validate(item))
        except ValueError as exc:
            first = exc.errors()[0] if hasattr(exc, "errors") else {"msg": str(exc)}
            raise RpcError(f"{cmd.get('type')}: images[{index}] is not an image ({first.get('msg')})") from None
    return images


# -- state -----------------------------------------------------------------------------------

@command("get_state")
async def _get_state(rpc: RpcServer, cmd: dict[str, Any]) -> Any:
    s = rpc.session
    state: dict[str, Any] = {
        "model": s.model.to_json(), "thinkingLevel": s.thinking_level, "isStreaming": s.is_streaming,
        "isCompacting": s.is_compacting, "steeringMode": s.agent.steering_mode,
        "followUpMode": s.agent.follow_up_mode,
    }
    if s.session.session_file is not None:
        state["sessionFile"] = str(s.session.session_file)
    state["sessionId"] = s.session.session_id
    name = s.session.get_session_name()
    if name:
        state["sessionName"] = name
    state["autoCompactionEnabled"] = s.auto_compaction_enabled
    state["messageCount"] = len(s.messages)
    state["pendingMessageCount"] = len(s.agent.steering) + len(s.agent.follow_ups)
    return state


@command("get_messages")
async def _get_messages(rpc: RpcServer, cmd: dict[str, Any]) -> Any:
    from ..event_json import to_jsonable

    return {"messages": [to_jsonable(m) for m in rpc.session.messages]}


@command("get_entries")
async def _get_entries(rpc: RpcServer, cmd: dict[str, Any]) -> Any:
    manager = rpc.session.session
    entries = manager.raw_entries()
    since = field(cmd, "since", str, required=False)
    if since is not None:
        index = next((i for i, e in enumerate(entries) if e.get("id") == since), None)
        if index is None:
            raise RpcError(f"Entry not found: {since}")
        entries = entries[index + 1:]
    return {"entries": entries, "leafId": manager.get_leaf_id()}


@command("get_tree")
async def _get_tree(rpc: RpcServer, cmd: dict[str, Any]) -> Any:
    from .tree_json import tree_data_json

    manager = rpc.session.session
    return RawJson(tree_data_json(manager.get_tree(), manager.get_leaf_id()))


class RawJson(str):
    """``data`` that is already JSON text (the server puts it in unparsed)."""


# -- models and thinking ---------------------------------------------------------------------

@command("set_model")
async def _set_model(rpc: RpcServer, cmd: dict[str, Any]) -> Any:
    provider, model_id = field(cmd, "provider", str), field(cmd, "modelId", str)
    named = rpc.session.models.available_models(unlisted=True)  # named: also a provider never offered (faux)
    model = next((m for m in named if m.provider == provider and m.id == model_id), None)
    if model is None:
        raise RpcError(f"Model not found: {provider}/{model_id}")
    await rpc.session.set_model(model)
    _clamp_level(rpc.session)
    return model.to_json()


@command("cycle_model")
async def _cycle_model(rpc: RpcServer, cmd: dict[str, Any]) -> Any:
    scoped = rpc.session.scoped_models
    available = {(m.provider, m.id) for m in rpc.session.models.available_models(unlisted=True)}
    candidates = [m for m in scoped if (m.provider, m.id) in available] if scoped else _available(rpc)
    current = rpc.session.model
    index = next((i for i, m in enumerate(candidates) if (m.provider, m.id) == (current.provider, current.id)), -1)
    if not candidates or (len(candidates) == 1 and index == 0):
        return None  # nothing to cycle to
    model = candidates[(index + 1) % len(candidates)]
    await rpc.session.set_model(model, source="cycle")
    _clamp_level(rpc.session)
    return {"model": model.to_json(), "thinkingLevel": rpc.session.thinking_level, "isScoped": bool(scoped)}


@command("get_available_models")
async def _get_available_models(rpc: RpcServer, cmd: dict[str, Any]) -> Any:
    return {"models": [m.to_json() for m in _available(rpc)]}


def _available(rpc: RpcServer) -> list[Any]:
    return list(rpc.session.models.available_models())


@command("set_thinking_level")
async def _set_thinking_level(rpc: RpcServer, cmd: dict[str, Any]) -> Any:
    from ...ai.request import EXTENDED_LEVELS, clamp_thinking_level

    level = field(cmd, "level", str)
    if level not in EXTENDED_LEVELS:
        raise RpcError(f"Invalid thinking level: {level} (use one of {', '.join(EXTENDED_LEVELS)})")
    _apply_level(rpc.session, clamp_thinking_level(rpc.session.model, level))
    return NO_DATA


@command("cycle_thinking_level")
async def _cycle_thinking_level(rpc: RpcServer, cmd: dict[str, Any]) -> Any:
    from ...ai.request import supported_levels

    session = rpc.session
    if not session.model.reasoning:
        return None
    levels = supported_levels(session.model)
    index = levels.index(session.thinking_level) if session.thinking_level in levels else -1
    _apply_level(session, levels[(index + 1) % len(levels)])
    return {"level": session.thinking_level}


@command("get_available_thinking_levels")
async def _get_available_thinking_levels(rpc: RpcServer, cmd: dict[str, Any]) -> Any:
    from ...ai.request import supported_levels

    return {"levels": supported_levels(rpc.session.model)}


def _clamp_level(session: AgentSession) -> None:
    _apply_level(session, session.level_for_model(session.model))


def _apply_level(session: AgentSession, level: str) -> None:
    if level != session.thinking_level:  # pi records a change only when the level changes
        session.set_thinking_level(level)


@command("set_steering_mode")
async def _set_steering_mode(rpc: RpcServer, cmd: dict[str, Any]) -> Any:
    rpc.session.agent.steering_mode = _queue_mode(cmd)
    return NO_DATA


@command("set_follow_up_mode")
async def _set_follow_up_mode(rpc: RpcServer, cmd: dict[str, Any]) -> Any:
    rpc.session.agent.follow_up_mode = _queue_mode(cmd)
    return NO_DATA


def _queue_mode(cmd: dict[str, Any]) -> str:
    mode = field(cmd, "mode", str)
    if mode not in QUEUE_MODES:
        raise RpcError(f'{cmd["type"]}: mode must be "all" or "one-at-a-time", not {mode!r}')
    return mode


# -- compaction and retry --------------------------------------------------------------------

@command("compact")
async def _compact(rpc: RpcServer, cmd: dict[str, Any]) -> Any:
    from ..event_json import to_jsonable

    result = await rpc.session.compact(field(cmd, "customInstructions", str, required=False))
    if result is None:  # a plugin's session_before_compact cancelled it
        raise RpcError("Compaction cancelled")
    return to_jsonable(result)


@command("set_auto_compaction")
async def _set_auto_compaction(rpc: RpcServer, cmd: dict[str, Any]) -> Any:
    rpc.session.set_auto_compaction(field(cmd, "enabled", bool))
    return NO_DATA


@command("set_auto_retry")
async def _set_auto_retry(rpc: RpcServer, cmd: dict[str, Any]) -> Any:
    rpc.session.retry.enabled = field(cmd, "enabled", bool)
    return NO_DATA


@command("abort_retry")
async def _abort_retry(rpc: RpcServer, cmd: dict[str, Any]) -> Any:
    rpc.session.abort_retry()
    return NO_DATA


# -- shell -----------------------------------------------------------------------------------

@command("bash")
async def _bash(rpc: RpcServer, cmd: dict[str, Any]) -> Any:
    text = field(cmd, "command", str)
    exclude = field(cmd, "excludeFromContext", bool, required=False, default=False)
    request_id = cmd.get("id")

    def on_output(delta: str) -> None:
        update: dict[str, Any] = {"type": "bash_execution_update"}
        if request_id is not None:
            update["id"] = request_id
        update["delta"] = delta
        rpc.write(update)

    result = await rpc.session.run_bash(text, exclude_from_context=exclude, on_output=on_output)
    return result.to_rpc()


@command("abort_bash")
async def _abort_bash(rpc: RpcServer, cmd: dict[str, Any]) -> Any:
    rpc.session.abort_bash()
    return NO_DATA


# -- sessions --------------------------------------------------------------------------------

@command("get_session_stats")
async def _get_session_stats(rpc: RpcServer, cmd: dict[str, Any]) -> Any:
    from .stats import session_stats

    return session_stats(rpc.session)


@command("export_html")
async def _export_html(rpc: RpcServer, cmd: dict[str, Any]) -> Any:
    from ...export_html import default_export_name, export_manager_html
    from ..interactive.theme import session_theme

    manager = rpc.session.session
    given = field(cmd, "outputPath", str, required=False)
    target = Path(given).expanduser() if given else Path(default_export_name(manager))
    if not target.is_absolute():
        target = rpc.session.cwd / target
    system_prompt = rpc.session.agent.config.system_prompt
    path = export_manager_html(manager, target, system_prompt=system_prompt, tools=rpc.session.tools(),
                               theme=session_theme(rpc.session))  # the theme setting, as pi's RPC export
    return {"path": str(path)}


@command("new_session")
async def _new_session(rpc: RpcServer, cmd: dict[str, Any]) -> Any:
    parent = field(cmd, "parentSession", str, required=False)
    return {"cancelled": not await rpc.session.new_session(parent)}


@command("switch_session")
async def _switch_session(rpc: RpcServer, cmd: dict[str, Any]) -> Any:
    path = Path(field(cmd, "sessionPath", str)).expanduser()
    if not path.is_absolute():
        path = rpc.session.cwd / path
    if not path.is_file():
        raise RpcError(f"Session file not found: {path}")
    return {"cancelled": not await rpc.session.switch_session(path)}


@command("fork")
async def _fork(rpc: RpcServer, cmd: dict[str, Any]) -> Any:
    try:
        cancelled, text = await rpc.session.fork(field(cmd, "entryId", str))
    except ValueError as exc:
        raise RpcError(str(exc)) from None
    return {"text": text, "cancelled": cancelled}


@command("clone")
async def _clone(rpc: RpcServer, cmd: dict[str, Any]) -> Any:
    if rpc.session.session.get_leaf_id() is None:
        raise RpcError("Cannot clone session: no current entry selected")
    return {"cancelled": not await rpc.session.clone()}


@command("get_fork_messages")
async def _get_fork_messages(rpc: RpcServer, cmd: dict[str, Any]) -> Any:
    return {"messages": [{"entryId": f.entry_id, "text": f.text} for f in rpc.session.get_fork_messages()]}


@command("get_last_assistant_text")
async def _get_last_assistant_text(rpc: RpcServer, cmd: dict[str, Any]) -> Any:
    return {"text": rpc.session.last_assistant_text()}


@command("set_session_name")
async def _set_session_name(rpc: RpcServer, cmd: dict[str, Any]) -> Any:
    name = field(cmd, "name", str).strip()
    if not name:
        raise RpcError("Session name cannot be empty")
    rpc.session.set_session_name(name)
    return NO_DATA


@command("get_commands")
async def _get_commands(rpc: RpcServer, cmd: dict[str, Any]) -> Any:
    from .slash import slash_commands

    return {"commands": slash_commands(rpc.session)}


@command("get_argument_completions")
async def _get_argument_completions(rpc: RpcServer, cmd: dict[str, Any]) -> Any:
    """Beyond pi 1.6 (whose RPC has no completions): a plugin command's ``argument_completions``, so a
    client's editor can offer what pi's terminal offers on Tab after ``/name ``."""
    from ...runtime.commands import argument_completions

    name = field(cmd, "name", str).strip().removeprefix("/")
    prefix = field(cmd, "prefix", str, required=False) or ""
    try:
        items = await argument_completions(rpc.session, name, prefix)
    except KeyError:
        raise RpcError(f"Unknown command: /{name}") from None
    except Exception as exc:  # noqa: BLE001 - the plugin's failure is the answer, never the server's
        raise RpcError(f"/{name}: argument completions failed: {exc}") from None
    if items is None:
        return {"items": None}
    return {"items": [{"value": value, "label": value, **({"description": text} if text else {})}
                      for value, text in items]}


__all__ = ["ANSWERED", "COMMANDS", "RawJson", "command"]
