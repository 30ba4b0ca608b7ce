"""Port of pi's ``project-trust`` example: a plugin answers the trust question for a project whose trust is
not decided yet, before the project's own code loads. Install it globally (``~/.pi/agent/extensions/``) or
pass it with ``-e``.

With a UI it asks (trust and remember, trust for this session, do not trust, leave it to pi); without one it
leaves the decision to pi. The first handler answering ``yes`` or ``no`` wins."""

from __future__ import annotations

from pi_core import ExtensionContext, ProjectTrustEvent, SessionStartEvent, TrustDecision, hookimpl

CHOICES = ["Trust and remember", "Trust with note and remember", "Trust this session", "Do not trust this session",
           "Let built-in prompt decide"]


@hookimpl
async def project_trust(event: ProjectTrustEvent, ctx: ExtensionContext) -> TrustDecision:
    await ctx.ui.notify(f"project_trust fired for {event.cwd} (mode: {ctx.mode})", "info")
    if not ctx.has_ui:
        return TrustDecision("undecided")
    choice = await ctx.ui.select(f"Project trust for:\n{event.cwd}", CHOICES)
    if choice == "Trust with note and remember":
        note = await ctx.ui.input("Project trust note", "An optional note")
        await ctx.ui.notify(f"Recorded note: {note}" if note else "No note entered", "info")
        return TrustDecision("yes", remember=True)
    if choice == "Trust and remember":
        return TrustDecision("yes", remember=True)
    if choice == "Trust this session":
        return TrustDecision("yes")
    if choice == "Do not trust this session":
        return TrustDecision("no")
    return TrustDecision("undecided")


@hookimpl
async def session_start(event: SessionStartEvent, ctx: ExtensionContext) -> None:
    await ctx.ui.notify(f"project-trust example loaded after trust was resolved in {ctx.cwd}", "info")
