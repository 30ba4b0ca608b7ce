"""Adds a reminder to every request the model gets (never stored in the session), and /note to change it."""

from __future__ import annotations

from typing import Any

from pi_core import Command, UserMessage, hookimpl

NOTE = {"text": "Prefer small, reviewable changes."}


@hookimpl
def context(event: Any) -> None:
    event.messages.append(UserMessage(content=f"[project note] {NOTE['text']}"))


async def set_note(args: str, ctx: Any) -> None:
    NOTE["text"] = args.strip() or NOTE["text"]
    await ctx.ui.notify(f"note is now: {NOTE['text']}")


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("note", set_note, "Change the note added to every request"))
