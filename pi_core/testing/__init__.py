"""The plugin author's test kit: fixtures and helpers to test pi plugins with pytest.

Installing pi registers :mod:`pi_core.testing.plugin` with pytest (entry point ``pytest11``), so a
plugin's tests get the ``pi_session``, ``fake_provider_server``, ``run_pi``, ``pi_project``,
``pi_agent_dir`` and ``pi_home`` fixtures without a ``conftest.py``. The names here build scripts and
check results:

    from pi_core.testing import text, thinking, tool_call, error

    def test_gate(pi_session):
        pi_session.script(tool_call("bash", {"command": "rm -rf /"}), "I will not do that.")
        pi_session.prompt("clean up")
        pi_session.assert_blocked("bash", reason="dangerous")

Nothing here is imported by ``pi`` itself; names load on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS: dict[str, str] = {
    # scripted model turns (the faux provider's builders, under short names)
    "text": "pi_core.ai.faux:faux_text",
    "thinking": "pi_core.ai.faux:faux_thinking",
    "tool_call": "pi_core.ai.faux:faux_tool_call",
    "turn": "pi_core.ai.faux:faux_turn",
    "error": "pi_core.ai.faux:faux_error",
    # the session harness
    "PiTestSession": "pi_core.testing.harness:PiTestSession",
    "request_text": "pi_core.testing.harness:request_text",
    "result_text": "pi_core.testing.harness:result_text",
    # the provider server
    "FakeProviderServer": "pi_core.testing.server:FakeProviderServer",
    "Recorded": "pi_core.testing.server:Recorded",
    "Reply": "pi_core.testing.server:Reply",
    "anthropic_chunks": "pi_core.testing.server:anthropic_chunks",
    "as_turn": "pi_core.testing.server:as_turn",
    "google_chunks": "pi_core.testing.server:google_chunks",
    "json_reply": "pi_core.testing.server:json_reply",
    "openai_chunks": "pi_core.testing.server:openai_chunks",
    "split_every": "pi_core.testing.server:split_every",
    "sse": "pi_core.testing.server:sse",
    # the command line
    "PiResult": "pi_core.testing.cli:PiResult",
    "PiRunner": "pi_core.testing.cli:PiRunner",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    target = _EXPORTS.get(name)
    if target is None:
        raise AttributeError(f"module 'pi_core.testing' has no attribute {name!r}")
    module, _, attr = target.partition(":")
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:
    from ..ai.faux import faux_error as error
    from ..ai.faux import faux_text as text
    from ..ai.faux import faux_thinking as thinking
    from ..ai.faux import faux_tool_call as tool_call
    from ..ai.faux import faux_turn as turn
    from .cli import PiResult, PiRunner
    from .harness import PiTestSession, request_text, result_text
    from .server import (
        FakeProviderServer,
        Recorded,
        Reply,
        anthropic_chunks,
        as_turn,
        google_chunks,
        json_reply,
        openai_chunks,
        split_every,
        sse,
    )
