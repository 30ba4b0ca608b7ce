"""pi's own cases for filter entries in the top-level resource arrays (its package-manager tests), checked
through `pi config`'s listing of what loads."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from pkg_helpers import run_pi, skill, write

PY = sys.executable

# (files under the agent dir, the settings' entries, expected state per file)
CASES = {
    "auto-discovered prompt switched off": (
        ["prompts/auto.md"], {"prompts": ["!prompts/auto.md"]}, {"prompts/auto.md": False}),
    "exclusion by file name among listed paths": (
        ["prompts/review.md", "prompts/explain.md"], {"prompts": ["prompts", "!explain.md"]},
        {"prompts/review.md": True, "prompts/explain.md": False}),
    "skill excluded by its directory": (
        ["skills/good-skill/SKILL.md", "skills/bad-skill/SKILL.md"], {"skills": ["skills", "!**/bad-skill"]},
        {"skills/good-skill/SKILL.md": True, "skills/bad-skill/SKILL.md": False}),
    "force-exclude wins over force-include": (
        ["prompts/alpha.md", "prompts/beta.md"], {"prompts": ["prompts", "+prompts/alpha.md", "-prompts/alpha.md"]},
        {"prompts/alpha.md": False, "prompts/beta.md": True}),
    "force-include after an exclusion": (
        ["prompts/a.md", "prompts/b.md"], {"prompts": ["!prompts/*.md", "+prompts/b.md"]},
        {"prompts/a.md": False, "prompts/b.md": True}),
    "plain paths without patterns": (
        ["prompts/mine.md"], {"prompts": ["prompts/mine.md"]}, {"prompts/mine.md": True}),
}


@pytest.mark.parametrize("name", list(CASES))
def test_pi_filter_case(name: str, tmp_path: Path, agent_dir: Path) -> None:
    files, entries, expected = CASES[name]
    for rel in files:
        if rel.endswith("SKILL.md"):
            skill(agent_dir / "skills", Path(rel).parent.name)
        else:
            write(agent_dir / rel, "Say $1\n")
    (agent_dir / "settings.json").write_text(json.dumps(entries))
    shown = run_pi(PY, tmp_path, "config")
    assert shown.returncode == 0, shown.stderr
    for rel, on in expected.items():
        assert f"[{'x' if on else ' '}] {rel.split('/')[0]:<10} {rel}" in shown.stdout, shown.stdout
