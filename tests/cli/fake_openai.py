"""The CLI tests' OpenAI server: the kit's :class:`pi_core.testing.FakeProviderServer` with the
conformance scripts' defaults (usage 100 in / 10 out) and ``base_url`` ending in ``/v1``.

Turns use the conformance ``script.json`` shape: ``{"text": ..., "tool_calls": [{id, name, arguments}],
"error": {"status": 400, "message": ...}, "delay": seconds, "chunk_delay": seconds}``. A tool call may
give ``raw_arguments`` (the exact text sent) instead of ``arguments``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_core.testing import FakeProviderServer

USAGE = {"prompt_tokens": 100, "completion_tokens": 10}


class FakeOpenAI(FakeProviderServer):
    def __init__(self, turns: list[dict[str, Any]]) -> None:
        super().__init__([{"usage": USAGE, **turn} for turn in turns])

    @property
    def base_url(self) -> str:  # type: ignore[override]
        return self.url + "/v1"



def write_agent_dir(agent: Path, base_url: str, settings: dict[str, Any] | None = None) -> None:
    """models.json with a custom provider ``fake`` pointing at the server, as the conformance runs do."""
    import json

    agent.mkdir(parents=True, exist_ok=True)
    server = FakeProviderServer()
    server.port = int(base_url.rsplit(":", 1)[1].split("/")[0])
    (agent / "models.json").write_text(json.dumps({"providers": {"fake": server.provider_config()}}))
    (agent / "settings.json").write_text(json.dumps(settings or {}))
