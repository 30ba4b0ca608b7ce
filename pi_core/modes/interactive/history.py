"""``/history [count]``: the earlier messages of a resumed session, which are not printed at start so
that a long session is ready for input at once."""

from __future__ import annotations

from .commands import CommandHost, builtin


@builtin("history", "Show the earlier messages of a resumed session", usage="[count]", while_running=True)
async def _history(host: CommandHost, args: str) -> None:
    text = args.strip()
    if text and not text.isdigit():
        host.renderer.notice("Usage: /history [count] (a number of messages; none: all)", "error")
        return
    printed = host.renderer.history(int(text) if text else None)
    if not printed:
        host.renderer.notice("No earlier messages: the whole conversation is on screen")


__all__: list[str] = []
