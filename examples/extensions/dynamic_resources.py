"""Port of pi's ``dynamic-resources`` example: a plugin contributes a skill, a prompt template and a theme
from files beside it, through ``resources_discover``."""

from __future__ import annotations

from pathlib import Path

from pi_core import ExtensionContext, ResourcePaths, ResourcesDiscoverEvent, hookimpl

BASE = Path(__file__).resolve().parent / "dynamic_resources"


@hookimpl
def resources_discover(event: ResourcesDiscoverEvent, ctx: ExtensionContext) -> ResourcePaths:
    return ResourcePaths(skill_paths=[BASE / "SKILL.md"], prompt_paths=[BASE / "dynamic.md"],
                         theme_paths=[BASE / "dynamic.json"])
