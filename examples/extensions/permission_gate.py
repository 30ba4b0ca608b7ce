"""Port of pi's ``permission-gate`` example: ask before a dangerous bash command runs.

``pi -e examples/extensions/permission_gate.py``. Commands matching ``rm -rf``, ``sudo`` or a
``chmod``/``chown`` to 777 need a "Yes" in a dialog; without a UI (print and JSON mode) they are blocked.
"""

from __future__ import annotations

import re

from pi_core import Block, BeforeToolCallEvent, ExtensionContext, hookimpl

DANGEROUS = [re.compile(r"\brm\s+(-rf?|--recursive)", re.I), re.compile(r"\bsudo\b", re.I),
             re.compile(r"\b(chmod|chown)\b.*777", re.I)]


@hookimpl
async def before_tool_call(event: BeforeToolCallEvent, ctx: ExtensionContext) -> Block | None:
    if event.tool_name != "bash":
        return None
    command = str(event.arguments.get("command", ""))
    if not any(pattern.search(command) for pattern in DANGEROUS):
        return None
    if not ctx.has_ui:
        return Block("Dangerous command blocked (no UI to confirm it)")
    choice = await ctx.ui.select(f"Dangerous command:\n\n  {command}\n\nAllow it?", ["Yes", "No"])
    return None if choice == "Yes" else Block("Blocked by the user")
