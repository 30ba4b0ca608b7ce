"""``enableSkillCommands``: pi lists skills as ``/skill:name`` in the terminal's ``/`` menu only while it is on;
typing ``/skill:name`` expands the skill either way (docs/configuration.md)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from pi_core import create_agent_session
from pi_core.ai.faux import FauxProvider
from pi_core.modes.interactive.commands import all_commands


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


@pytest.mark.parametrize("enabled", [True, False])
def test_skills_leave_the_menu_when_skill_commands_are_off(tmp_path: Path, enabled: bool) -> None:
    agent, ws = tmp_path / "agent", tmp_path / "ws"
    skill = agent / "skills" / "tidy"
    skill.mkdir(parents=True)
    ws.mkdir()
    (skill / "SKILL.md").write_text("---\nname: tidy\ndescription: Tidy the code up.\n---\nTidy every file.\n")
    (agent / "settings.json").write_text(json.dumps({"enableSkillCommands": enabled}))
    faux = FauxProvider()
    faux.enqueue("done")

    async def go() -> tuple[list[str], str]:
        session = await create_agent_session(ws, model=faux.model, plugins=[faux], agent_dir=agent, session="memory")
        try:
            names = [name for name, _ in all_commands(session)]
            await session.prompt("/skill:tidy now")
            await session.wait_for_idle()
            return names, json.dumps([m.model_dump(mode="json") for m in faux.requests[0].context.messages])
        finally:
            await session.close()

    names, request = run(go())
    assert ("skill:tidy" in names) is enabled
    assert "model" in names  # pi's own commands stay
    assert "Tidy every file." in request and "now" in request  # the command works either way
