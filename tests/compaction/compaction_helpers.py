"""Shared helpers of the compaction tests: settings files, sessions on the faux provider, reading entries."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from pi_core import create_agent_session


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


def settings(agent: Path, **compaction: Any) -> None:
    """An agent settings file with these ``compaction`` settings and automatic retries off."""
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "settings.json").write_text(json.dumps({"compaction": compaction, "retry": {"enabled": False}}))


def entries(session: Any) -> list[dict[str, Any]]:
    """The session file's entries (without the header), as written."""
    return [json.loads(line) for line in session.session.session_file.read_text().splitlines()][1:]


async def new_session(tmp_path: Path, model: Any, *plugins: Any, **kwargs: Any) -> Any:
    return await create_agent_session(tmp_path, model=model, plugins=list(plugins), agent_dir=tmp_path / "agent",
                                      tools=kwargs.pop("tools", []), **kwargs)


def user_texts(context: Any) -> list[str]:
    """The text of every user message of a request."""
    out = []
    for m in context.messages:
        if m.role == "user":
            out.append(m.content if isinstance(m.content, str) else "".join(b.text for b in m.content))
    return out
