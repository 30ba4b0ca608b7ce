"""``AgentSession.import_from_jsonl`` (pi's ``importFromJsonl``): an SDK session continues a session file
from elsewhere, copied into its folder; the next request goes to the local fake server with that history."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pi_core import (
    AssistantMessage,
    Cancel,
    SessionManager,
    TextContent,
    UserMessage,
    create_agent_session,
    hookimpl,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from fake_openai import FakeOpenAI, write_agent_dir  # noqa: E402


def _exported(folder: Path, cwd: Path) -> tuple[Path, str]:
    """A session file outside pi's folders (as /export writes one), made in ``cwd``."""
    manager = SessionManager.create(cwd, folder)
    manager.append_message(UserMessage(content=[TextContent(text="the old question")]))
    manager.append_message(AssistantMessage(content=[TextContent(text="the old answer")], provider="fake",
                                            model="fake-model", api="openai-completions"))
    path, session_id = manager.session_file, manager.session_id
    manager.close()
    assert path is not None
    return path, session_id


class Veto:
    @hookimpl
    def session_before_switch(self, event: Any, ctx: Any) -> Cancel | None:
        return Cancel() if event.reason == "resume" else None


def test_import_copies_the_file_into_the_session_folder_and_continues_it(tmp_path: Path, agent_dir: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    source, source_id = _exported(tmp_path / "exports", project)

    async def scenario() -> dict[str, Any]:
        with FakeOpenAI([{"text": "new answer"}]) as server:
            write_agent_dir(agent_dir, server.base_url, {"defaultProvider": "fake", "defaultModel": "fake-model"})
            session = await create_agent_session(project)
            before = session.session.session_file
            imported = await session.import_from_jsonl(source)
            first = session.session.session_file
            await session.prompt("and now?")
            again = await session.import_from_jsonl(source)
            second = session.session.session_file
            with pytest.raises(FileNotFoundError):
                await session.import_from_jsonl(tmp_path / "missing.jsonl")
            await session.close()
            return SimpleNamespace(before=before, imported=imported, first=first, again=again, second=second,
                                   requests=server.requests, session_id=session.session.session_id)

    got = asyncio.run(scenario())
    assert got.imported is True and got.again is True
    folder = got.first.parent
    assert got.first == folder / source.name and got.second == folder / f"{source.stem}-1{source.suffix}"
    assert got.session_id == source_id  # the id is kept, as pi keeps it
    texts = [json.dumps(m["content"]) for m in got.requests[0]["body"]["messages"] if m["role"] != "system"]
    assert "the old question" in texts[0] and "the old answer" in texts[1] and "and now?" in texts[-1]
    assert "the old question" in source.read_text() and "and now?" not in source.read_text()  # a copy went on


def test_a_vetoed_import_leaves_no_copy(tmp_path: Path, agent_dir: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    source, _ = _exported(tmp_path / "exports", project)

    async def scenario() -> tuple[bool, list[Path]]:
        with FakeOpenAI([]) as server:
            write_agent_dir(agent_dir, server.base_url, {"defaultProvider": "fake", "defaultModel": "fake-model"})
            session = await create_agent_session(project, plugins=[Veto()])
            imported = await session.import_from_jsonl(source)
            folder = Path(session.session.session_dir or "")
            await session.close()
            return imported, sorted(folder.glob("*.jsonl"))

    imported, files = asyncio.run(scenario())
    assert imported is False and files == []
