"""Port of pi's ``preset`` example: named presets of model, thinking level, tools and system prompt
instructions, from ``<agent dir>/presets.json`` and ``<cwd>/.pi/presets.json`` (the project's win):

    {"plan": {"provider": "openai", "model": "gpt-5", "thinkingLevel": "high",
              "tools": ["read", "grep", "find", "ls"], "instructions": "You are in PLANNING MODE..."}}

``pi --preset plan`` starts with one, ``/preset`` picks one in a list (a ``SelectList`` between two
``DynamicBorder`` rules in a ``ctx.ui.custom`` component; "(none)" restores what was there before),
``/preset plan`` switches directly and Ctrl+Shift+U cycles through them. The active preset's instructions
are added to the system prompt; its name is kept in the session (``preset-state``) and the footer."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pi_core import (
    AgentStartPatch,
    BeforeAgentStartEvent,
    Command,
    CommandContext,
    ExtensionContext,
    Flag,
    agent_dir,
    hookimpl,
)
from pi_core.tui import Container, DynamicBorder, SelectItem, SelectList, SelectListTheme, Text

CONFIG_DIR = ".pi"
DEFAULT_TOOLS = ["read", "bash", "edit", "write"]


class State:
    presets: dict[str, dict[str, Any]] = {}
    active: str | None = None
    original: dict[str, Any] | None = None  # model, thinking level and tools before the first preset


def load_presets(cwd: Path) -> dict[str, dict[str, Any]]:
    merged: dict[str, dict[str, Any]] = {}
    for path in (agent_dir() / "presets.json", cwd / CONFIG_DIR / "presets.json"):
        if path.exists():
            try:
                merged.update(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError) as exc:
                print(f"Failed to load presets from {path}: {exc}", file=sys.stderr)
    return merged


def missing_note(ctx: ExtensionContext) -> str:
    return (f"No presets defined. Add presets to {agent_dir() / 'presets.json'} or "
            f"{ctx.cwd / CONFIG_DIR / 'presets.json'}")


async def apply_preset(name: str, preset: dict[str, Any], ctx: ExtensionContext) -> None:
    if State.active is None:
        State.original = {"model": ctx.model, "thinking": ctx.get_thinking_level(), "tools": ctx.get_active_tools()}
    if preset.get("provider") and preset.get("model"):
        model = ctx.model_registry.find(preset["provider"], preset["model"])
        if model is None:
            await ctx.ui.notify(f'Preset "{name}": Model {preset["provider"]}/{preset["model"]} not found', "warning")
        elif not ctx.set_model(model):
            await ctx.ui.notify(f'Preset "{name}": No API key for {preset["provider"]}/{preset["model"]}', "warning")
    if preset.get("thinkingLevel"):
        ctx.set_thinking_level(preset["thinkingLevel"])
    if preset.get("tools"):
        known = {tool.name for tool in ctx.get_all_tools()}
        unknown = [t for t in preset["tools"] if t not in known]
        if unknown:
            await ctx.ui.notify(f'Preset "{name}": Unknown tools: {", ".join(unknown)}', "warning")
        valid = [t for t in preset["tools"] if t in known]
        if valid:
            ctx.set_active_tools(valid)
    State.active = name


async def clear_preset(ctx: ExtensionContext) -> None:
    State.active = None
    original = State.original
    if original is not None:
        if original["model"] is not None:
            ctx.set_model(original["model"])
        ctx.set_thinking_level(original["thinking"])
        ctx.set_active_tools(original["tools"])
    else:
        ctx.set_active_tools(DEFAULT_TOOLS)
    await ctx.ui.notify("Preset cleared, defaults restored", "info")
    await update_status(ctx)


def describe(preset: dict[str, Any]) -> str:
    parts = []
    if preset.get("provider") and preset.get("model"):
        parts.append(f"{preset['provider']}/{preset['model']}")
    if preset.get("thinkingLevel"):
        parts.append(f"thinking:{preset['thinkingLevel']}")
    if preset.get("tools"):
        parts.append(f"tools:{','.join(preset['tools'])}")
    if preset.get("instructions"):
        text = preset["instructions"]
        parts.append(f'"{text[:27] + "..." if len(text) > 30 else text}"')
    return " | ".join(parts)


async def update_status(ctx: ExtensionContext) -> None:
    text = ctx.ui.theme.fg("accent", f"preset:{State.active}") if State.active else None
    await ctx.ui.set_status("preset", text)


class PresetPicker:
    def __init__(self, tui: Any, theme: Any, items: list[SelectItem], done: Any) -> None:
        self.tui = tui
        self.container = Container()
        self.container.add_child(DynamicBorder(lambda s: str(theme.fg("accent", s))))
        self.container.add_child(Text(theme.fg("accent", theme.bold("Select Preset")), 1, 1))
        self.select = SelectList(items, min(len(items), 10), SelectListTheme(
            selected_prefix=lambda t: str(theme.fg("accent", t)), selected_text=lambda t: str(theme.fg("accent", t)),
            description=lambda t: str(theme.fg("muted", t)), scroll_info=lambda t: str(theme.fg("dim", t)),
            no_match=lambda t: str(theme.fg("warning", t))))
        self.select.on_select = lambda item: done(item.value)
        self.select.on_cancel = lambda: done(None)
        self.container.add_child(self.select)
        self.container.add_child(Text(theme.fg("dim", "↑↓ navigate • enter select • esc cancel"), 1, 1))
        self.container.add_child(DynamicBorder(lambda s: str(theme.fg("accent", s))))

    def render(self, width: int) -> list[str]:
        return self.container.render(width)

    def invalidate(self) -> None:
        self.container.invalidate()

    def handle_input(self, data: str) -> None:
        self.select.handle_input(data)
        self.tui.request_render()


async def show_selector(ctx: ExtensionContext) -> None:
    if not State.presets:
        await ctx.ui.notify(missing_note(ctx), "warning")
        return
    items = [SelectItem(name, f"{name} (active)" if name == State.active else name, describe(preset))
             for name, preset in State.presets.items()]
    items.append(SelectItem("(none)", "(none)", "Clear active preset, restore defaults"))
    chosen = await ctx.ui.custom(lambda tui, theme, kb, done: PresetPicker(tui, theme, items, done))
    if not chosen:
        return
    if chosen == "(none)":
        await clear_preset(ctx)
        return
    if chosen in State.presets:
        await apply_preset(chosen, State.presets[chosen], ctx)
        await ctx.ui.notify(f'Preset "{chosen}" activated', "info")
        await update_status(ctx)


async def cycle(ctx: ExtensionContext) -> None:
    names = sorted(State.presets)
    if not names:
        await ctx.ui.notify(missing_note(ctx), "warning")
        return
    order = ["(none)", *names]
    current = State.active or "(none)"
    following = order[(order.index(current) + 1) % len(order)] if current in order else order[0]
    if following == "(none)":
        await clear_preset(ctx)
        return
    await apply_preset(following, State.presets[following], ctx)
    await ctx.ui.notify(f'Preset "{following}" activated', "info")
    await update_status(ctx)


async def preset_command(args: str, ctx: CommandContext) -> None:
    name = args.strip()
    if not name:
        await show_selector(ctx)
        return
    if name not in State.presets:
        available = ", ".join(State.presets) or "(none defined)"
        await ctx.ui.notify(f'Unknown preset "{name}". Available: {available}', "error")
        return
    await apply_preset(name, State.presets[name], ctx)
    await ctx.ui.notify(f'Preset "{name}" activated', "info")
    await update_status(ctx)


@hookimpl
def register_flags(register: Any) -> None:
    register(Flag("preset", str, None, "Preset configuration to use"))


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("preset", preset_command, "Switch preset configuration", usage="[name]"))


@hookimpl
def before_agent_start(event: BeforeAgentStartEvent, ctx: ExtensionContext) -> AgentStartPatch | None:
    instructions = State.presets.get(State.active or "", {}).get("instructions")
    return AgentStartPatch(system_prompt=f"{event.system_prompt}\n\n{instructions}") if instructions else None


@hookimpl
async def session_start(event: Any, ctx: ExtensionContext) -> None:
    State.presets = load_presets(ctx.cwd)
    if not any(s.key == "ctrl+shift+u" for s in ctx.get_shortcuts()):  # session_start comes again after /new
        ctx.register_shortcut("ctrl+shift+u", cycle, description="Cycle presets")
    flag = ctx.get_flag("preset")
    if isinstance(flag, str) and flag:
        if flag in State.presets:
            await apply_preset(flag, State.presets[flag], ctx)
            await ctx.ui.notify(f'Preset "{flag}" activated', "info")
        else:
            available = ", ".join(State.presets) or "(none defined)"
            await ctx.ui.notify(f'Unknown preset "{flag}". Available: {available}', "warning")
    saved = [e for e in ctx.session.get_entries() if getattr(e, "type", None) == "custom"
             and getattr(e, "custom_type", None) == "preset-state"]
    name = (saved[-1].data or {}).get("name") if saved and isinstance(saved[-1].data, dict) else None
    if name and not flag and name in State.presets:
        State.active = name  # the instructions come back; model and tools stay as the session has them
    await update_status(ctx)


@hookimpl
def turn_start(event: Any, ctx: ExtensionContext) -> None:
    if State.active:
        ctx.append_entry("preset-state", {"name": State.active})
