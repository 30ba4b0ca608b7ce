"""Port of pi's ``git-checkpoint`` example: when a turn starts, ``git stash create`` records the working tree
(without changing it or the stash list); forking back to before the message the turn answered offers to put
the code back as it was then (``git stash apply``). Without a UI nothing is restored.

Difference from the original: pi's keys a checkpoint by the entry the last tool result followed and clears
them all when the agent settles, so a fork — made from a user message once pi waits again — never finds one
and its restore never runs. Here a checkpoint stays for the session under the entry the turn's request ended
on (the user message, or the tool result a follow-up turn answered), which is the entry a fork names; and a
failed ``git stash apply`` is reported as such.
"""

from __future__ import annotations

from pi_core import Cancel, ExtensionContext, SessionBeforeForkEvent, TurnEndEvent, TurnStartEvent, hookimpl

RESTORE = "Yes, restore code to that point"
KEEP = "No, keep current code"

checkpoints: dict[str, str] = {}
taken: dict[str, str | None] = {"ref": None}  # the running turn's checkpoint, until its entries exist


@hookimpl
async def turn_start(event: TurnStartEvent, ctx: ExtensionContext) -> None:
    result = await ctx.exec("git", ["stash", "create"])
    # empty: nothing differs from HEAD, there is nothing to keep
    taken["ref"] = result.stdout.strip() if result.exit_code == 0 and result.stdout.strip() else None


@hookimpl
def turn_end(event: TurnEndEvent, ctx: ExtensionContext) -> None:
    ref, taken["ref"] = taken["ref"], None
    answer = ctx.session.get_entry(event.message_entry_id) if event.message_entry_id else None
    if ref is not None and answer is not None and answer.parent_id is not None:
        checkpoints[answer.parent_id] = ref


@hookimpl
async def session_before_fork(event: SessionBeforeForkEvent, ctx: ExtensionContext) -> Cancel | None:
    ref = checkpoints.get(event.entry_id) if event.entry_id is not None else None
    if ref is None or not ctx.has_ui:  # without a UI, never restore on our own
        return None
    choice = await ctx.ui.select("Restore code state?", [RESTORE, KEEP])
    if choice == RESTORE:
        applied = await ctx.exec("git", ["stash", "apply", ref])
        if applied.exit_code == 0:
            await ctx.ui.notify("Code restored to checkpoint", "info")
        else:
            await ctx.ui.notify(f"Could not restore the checkpoint: {applied.stderr.strip()}", "error")
    return None
