"""A real session for plugin tests, driven by a scripted model, with assertions on what happened.

    def test_my_tool(pi_session):
        pi_session.script(tool_call("word_count", {"path": "a.txt"}), "It has 3 words.")
        pi_session.start(tools=["word_count"])
        assert pi_session.prompt("How many words?") == "It has 3 words."
        pi_session.assert_tool_called("word_count", {"path": "a.txt"})
        pi_session.assert_tool_result("word_count", contains="3 words")

The session is the one ``pi`` builds (:func:`pi_core.create_agent_session`): installed plugins load
(the package under test included), plus any plugin objects passed to :meth:`PiTestSession.start`. The
model is a :class:`pi_core.ai.FauxProvider`: each queued turn answers one request — text, thinking,
tool calls, or an error — and every request is recorded, so a test can check what the model was sent.
Methods are synchronous (the harness owns an event loop); ``async`` tests use the ``a``-prefixed ones.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..ai.faux import FauxProvider, FauxRequest
    from ..ai.types import AssistantMessage, ToolCall, ToolResultMessage
    from ..runtime.agent_session import AgentSession


class PiTestSession:
    """See the module docstring. ``cwd`` is the project directory, ``agent_dir`` pi's agent dir."""

    def __init__(self, cwd: Path, agent_dir: Path) -> None:
        from ..ai.faux import FauxProvider

        self.cwd = Path(cwd)
        self.agent_dir = Path(agent_dir)
        self.faux: FauxProvider = FauxProvider()
        self.events: list[Any] = []
        self.executed: list[str] = []
        """Ids of the tool calls whose tool actually ran (blocked or invalid calls never do)."""
        self._session: AgentSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- setting up ----------------------------------------------------------------------------

    def script(self, *turns: Any) -> PiTestSession:
        """Queue model turns: a string, faux blocks (``text``, ``thinking``, ``tool_call``), a list of
        blocks (one turn), ``error(...)``, or a callable ``(context, options) -> turn``."""
        self.faux.enqueue(*turns)
        return self

    def start(self, *, plugins: Sequence[object] = (), tools: Sequence[str] | None = None,
              settings: dict[str, Any] | None = None, approve: bool | None = True,
              **options: Any) -> AgentSession:
        """Build the session (done for you, with the defaults, by the first :meth:`prompt`).

        :param plugins: plugin objects or modules to load besides the installed ones.
        :param tools: the active tools (default: pi's defaults plus every tool a plugin registered).
        :param settings: written into the agent dir's ``settings.json`` first (pi's keys:
            ``{"retry": {"enabled": False}}``).
        :param approve: trust the project (``.pi/extensions`` in ``cwd`` load) — the default in tests.
        :param options: passed on to :func:`pi_core.create_agent_session`.
        """
        return self._run(self.astart(plugins=plugins, tools=tools, settings=settings, approve=approve, **options))

    async def astart(self, *, plugins: Sequence[object] = (), tools: Sequence[str] | None = None,
                     settings: dict[str, Any] | None = None, approve: bool | None = True,
                     **options: Any) -> AgentSession:
        from ..sdk import create_agent_session

        if self._session is not None:
            raise RuntimeError("the session is already started")
        self.cwd.mkdir(parents=True, exist_ok=True)
        if settings:
            self.write_settings(settings)
        session = await create_agent_session(
            self.cwd, model=self.faux.model, plugins=[self.faux, _Observer(self.executed), *plugins],
            agent_dir=self.agent_dir,
            session_dir=options.pop("session_dir", self.agent_dir / "sessions"), approve=approve,
            tools=tools, **options)
        if tools is None:
            session.set_active_tools(sorted({*session.active_tool_names(), *_plugin_tools(session)}))
        session.subscribe(self.events.append)
        self._session = session
        return session

    def write_settings(self, values: dict[str, Any]) -> None:
        """Merge ``values`` (pi's settings keys) into the agent dir's ``settings.json``."""
        import json

        path = self.agent_dir / "settings.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        current = json.loads(path.read_text()) if path.exists() else {}
        path.write_text(json.dumps({**current, **values}, indent=2))

    @property
    def session(self) -> AgentSession:
        """The running session (started with the defaults when it was not yet)."""
        if self._session is None:
            self.start()
        assert self._session is not None
        return self._session

    # -- running -------------------------------------------------------------------------------

    def prompt(self, text: str, **options: Any) -> str | None:
        """Send a prompt, wait until the run ends; returns the last assistant text."""
        return self._run(self.aprompt(text, **options))

    async def aprompt(self, text: str, **options: Any) -> str | None:
        if self._session is None:
            await self.astart()
        assert self._session is not None
        await self._session.prompt(text, **options)
        await self._session.wait_for_idle()
        return self._session.last_assistant_text()

    def close(self) -> None:
        if self._session is not None:
            self._run(self._session.close())
            self._session = None
        if self._loop is not None:
            self._loop.close()
            self._loop = None

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _run(self, coro: Any) -> Any:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            coro.close()
            raise RuntimeError("PiTestSession's synchronous methods cannot run inside an event loop; "
                               "use astart()/aprompt()/aclose() in async tests")
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        return self._loop.run_until_complete(asyncio.wait_for(coro, 120))

    # -- what happened -------------------------------------------------------------------------

    @property
    def messages(self) -> list[Any]:
        """The conversation as the session holds it (user, assistant, tool results, custom messages)."""
        return list(self.session.messages)

    @property
    def assistant_messages(self) -> list[AssistantMessage]:
        return [m for m in self.messages if getattr(m, "role", None) == "assistant"]

    def tool_calls(self, name: str | None = None) -> list[ToolCall]:
        """The tool calls the model made, in order (of one tool, with ``name``)."""
        return [c for m in self.assistant_messages for c in m.tool_calls() if name is None or c.name == name]

    def tool_results(self, name: str | None = None) -> list[ToolResultMessage]:
        return [m for m in self.messages if getattr(m, "role", None) == "toolResult"
                and (name is None or m.tool_name == name)]

    @property
    def requests(self) -> list[FauxRequest]:
        """Every request the model received: ``.context`` (system prompt, messages, tools), ``.options``."""
        return list(self.faux.requests)

    @property
    def last_request(self) -> FauxRequest:
        if not self.faux.requests:
            raise AssertionError("the model received no request")
        return self.faux.requests[-1]

    def entries(self, type: str | None = None) -> list[dict[str, Any]]:
        """The session file's entries as stored (pi's JSON), optionally of one ``type``."""
        return [e for e in self.session.session.raw_entries() if type is None or e.get("type") == type]

    # -- assertions ----------------------------------------------------------------------------

    def assert_tool_called(self, name: str, arguments: dict[str, Any] | None = None) -> ToolCall:
        """The model called ``name`` (with exactly ``arguments``, when given); returns the call."""
        calls = self.tool_calls(name)
        if not calls:
            made = ", ".join(c.name for c in self.tool_calls()) or "none"
            raise AssertionError(f"no call of tool {name!r} (calls made: {made})")
        if arguments is None:
            return calls[0]
        for call in calls:
            if dict(call.arguments) == arguments:
                return call
        raise AssertionError(f"tool {name!r} was called with {[dict(c.arguments) for c in calls]}, not {arguments}")

    def assert_tool_result(self, name: str, *, contains: str | None = None,
                           is_error: bool | None = None) -> ToolResultMessage:
        """A result of tool ``name`` reached the model (containing ``contains``, with ``is_error``)."""
        results = self.tool_results(name)
        for result in results:
            text = result_text(result)
            if (contains is None or contains in text) and (is_error is None or result.is_error == is_error):
                return result
        seen = [(result_text(r), r.is_error) for r in results]
        raise AssertionError(f"no result of {name!r} with contains={contains!r}, is_error={is_error} (got {seen})")

    def assert_blocked(self, name: str, reason: str | None = None) -> ToolResultMessage:
        """A call of ``name`` was blocked before it ran (``before_tool_call``): the model got an error
        result with the reason, and the tool never started."""
        for result in self.tool_results(name):
            if result.is_error and result.tool_call_id not in self.executed and (
                    reason is None or reason in result_text(result)):
                return result
        raise AssertionError(f"no blocked call of {name!r}" + (f" with reason containing {reason!r}" if reason else ""))

    def assert_not_blocked(self, name: str) -> None:
        """Some call of ``name`` really ran."""
        if not any(c.id in self.executed for c in self.tool_calls(name)):
            raise AssertionError(f"tool {name!r} never ran")

    def assert_entry(self, type: str, **fields: Any) -> dict[str, Any]:
        """The session file has an entry of ``type`` whose fields include ``fields`` (pi's camelCase keys)."""
        for entry in self.entries(type):
            if all(entry.get(k) == v for k, v in fields.items()):
                return entry
        raise AssertionError(f"no {type!r} entry with {fields} (entries: {[e.get('type') for e in self.entries()]})")

    def assert_model_saw(self, text: str, *, request: int = -1) -> None:
        """``text`` was in what the model received (system prompt or any message) in that request."""
        seen = request_text(self.requests[request])
        if text not in seen:
            raise AssertionError(f"the model's request {request} does not contain {text!r}")

    def assert_model_did_not_see(self, text: str, *, request: int = -1) -> None:
        if text in request_text(self.requests[request]):
            raise AssertionError(f"the model's request {request} contains {text!r}")


class _Observer:
    """Notes which tool calls ran (``after_tool_call`` is only reached by a tool that executed)."""

    def __init__(self, executed: list[str]) -> None:
        self.executed = executed

    def after_tool_call(self, event: Any) -> None:
        self.executed.append(event.tool_call_id)


def _mark(observer: type) -> type:
    from ..extensions.markers import hookimpl

    observer.after_tool_call = hookimpl(trylast=True)(observer.after_tool_call)  # type: ignore[attr-defined]
    return observer


_Observer = _mark(_Observer)  # type: ignore[misc]


def _plugin_tools(session: AgentSession) -> list[str]:
    """Tools registered by plugins other than pi's built-ins (the ones a plugin test is about)."""
    records = session.host.records.values()
    names: list[str] = []
    for record in records:
        if record.source != "builtin":
            names.extend(session.host.tools.by_plugin(record.name))
    return names


def result_text(result: Any) -> str:
    """The text blocks of a tool result (or any message) joined."""
    content = getattr(result, "content", "")
    if isinstance(content, str):
        return content
    return "\n".join(getattr(block, "text", "") for block in content if getattr(block, "text", None))


def request_text(request: Any) -> str:
    """Everything textual in a faux request: system prompt, message texts, tool-call arguments."""
    import json

    context = request.context
    parts = [context.system_prompt or ""]
    for message in context.messages:
        parts.append(result_text(message))
        for block in getattr(message, "content", []) or []:
            if getattr(block, "type", "") == "toolCall":
                parts.append(json.dumps(block.arguments))
            elif getattr(block, "type", "") == "thinking":
                parts.append(block.thinking)
    return "\n".join(parts)


__all__ = ["PiTestSession", "request_text", "result_text"]
