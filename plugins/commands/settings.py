"""Built-in plugin: ``/settings`` (pi's settings list: Enter or Space changes the selected setting, written to
the global ``settings.json`` at once and used from then on) and ``/scoped-models`` (pi's scoped-models
selector: the models Ctrl+P cycles through, saved to ``enabledModels`` with Ctrl+S) — registered like any
plugin's commands, drawn as ``ctx.ui.custom`` components."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pi_core import Command, CommandContext, Model, SettingsError, hookimpl
from pi_core.ai import supported_levels

#: Raw terminal input per key name (what a component's ``handle_input`` receives). Rows wider than the
#: terminal are cut by the terminal interface, so the components below draw plain rows.
_KEYS = {"up": ("\x1b[A", "\x1bOA"), "down": ("\x1b[B", "\x1bOB"), "enter": ("\r", "\n"),
         "escape": ("\x1b",), "backspace": ("\x7f", "\x08")}


def matches_key(data: str, name: str) -> bool:
    return data in _KEYS[name]


THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")
TRUST_LABELS = {"ask": "Ask", "always": "Always trust", "never": "Never trust"}


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("settings", _settings, "Open settings"))
    register(Command("scoped-models", _scoped_models, "Configure the models used by model cycling (Ctrl+P)"))


# -- a list of settings, as pi's SettingsList draws it ----------------------------------------------------


@dataclass
class Item:
    id: str
    label: str
    description: str
    value: str
    values: list[str] = field(default_factory=list)
    submenu: Callable[[str, Callable[[str | None], None]], Any] | None = None


class SettingsList:
    """Rows of ``label  value``; Up/Down move, Enter/Space cycle the value (or open the item's submenu),
    Esc closes. ``on_change(id, value)`` runs for every change."""

    def __init__(self, theme: Any, items: list[Item], on_change: Callable[[str, str], None],
                 on_close: Callable[[], None], *, title: str = "Settings", max_visible: int = 10) -> None:
        self.theme, self.items, self.on_change, self.on_close = theme, items, on_change, on_close
        self.title, self.max_visible = title, max_visible
        self.selected = 0
        self.submenu: Any = None
        self.message: tuple[str, str] | None = None  # (token, text) under the list

    def render(self, width: int) -> list[str]:
        if self.submenu is not None:
            return [str(row) for row in self.submenu.render(width)]
        t = self.theme
        rows = [t.fg("accent", t.bold(self.title)), ""]
        label_width = min(36, max(len(i.label) for i in self.items))
        start = max(0, min(self.selected - self.max_visible // 2, len(self.items) - self.max_visible))
        end = min(start + self.max_visible, len(self.items))
        for index in range(start, end):
            item = self.items[index]
            chosen = index == self.selected
            label = item.label.ljust(label_width)
            text = f"{'› ' if chosen else '  '}{label}  {item.value}"
            rows.append(t.fg("accent", text) if chosen else text)
        if start > 0 or end < len(self.items):
            rows.append(t.fg("dim", f"  ({self.selected + 1}/{len(self.items)})"))
        description = self.items[self.selected].description
        if description:
            rows += ["", *(t.fg("muted", "  " + line) for line in _wrap(description, max(20, width - 4)))]
        if self.message is not None:
            rows += ["", t.fg(self.message[0], "  " + self.message[1])]
        rows += ["", t.fg("dim", "  Enter/Space to change · Esc to cancel")]
        return rows

    def handle_input(self, data: str) -> None:
        if self.submenu is not None:
            self.submenu.handle_input(data)
            return
        if matches_key(data, "up"):
            self.selected = (self.selected - 1) % len(self.items)
        elif matches_key(data, "down"):
            self.selected = (self.selected + 1) % len(self.items)
        elif matches_key(data, "enter") or data == " ":
            self._activate()
        elif matches_key(data, "escape") or data == "\x03":
            self.on_close()

    def _activate(self) -> None:
        item = self.items[self.selected]
        self.message = None
        if item.submenu is not None:
            def done(value: str | None) -> None:
                self.submenu = None
                if value is not None:
                    item.value = value
                    self.on_change(item.id, value)

            self.submenu = item.submenu(item.value, done)
        elif item.values:
            index = item.values.index(item.value) if item.value in item.values else -1
            item.value = item.values[(index + 1) % len(item.values)]
            self.on_change(item.id, item.value)

    def invalidate(self) -> None:
        return None


class Choices:
    """A submenu: one value out of a list (Enter chooses, Esc goes back)."""

    def __init__(self, theme: Any, title: str, options: Sequence[tuple[str, str]], current: str,
                 done: Callable[[str | None], None], *, hint: str = "") -> None:
        self.theme, self.title, self.options, self.done, self.hint = theme, title, list(options), done, hint
        values = [value for value, _ in self.options]
        self.selected = values.index(current) if current in values else 0

    def render(self, width: int) -> list[str]:
        t = self.theme
        rows = [t.fg("accent", t.bold(self.title)), ""]
        for index, (_, label) in enumerate(self.options):
            chosen = index == self.selected
            rows.append(t.fg("accent", f"› {label}") if chosen else f"  {label}")
        if not self.options:
            rows.append(t.fg("dim", "  (nothing to choose)"))
        rows += ["", t.fg("dim", "  " + (self.hint or "Enter to choose · Esc to go back"))]
        return rows

    def handle_input(self, data: str) -> None:
        if matches_key(data, "up") and self.options:
            self.selected = (self.selected - 1) % len(self.options)
        elif matches_key(data, "down") and self.options:
            self.selected = (self.selected + 1) % len(self.options)
        elif matches_key(data, "enter") and self.options:
            self.done(self.options[self.selected][0])
        elif matches_key(data, "escape") or data == "\x03":
            self.done(None)

    def invalidate(self) -> None:
        return None


def _wrap(text: str, width: int) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width) or [""]


# -- /settings ------------------------------------------------------------------------------------------


def _bool(value: Any) -> str:
    return "true" if value else "false"


def _items(ctx: CommandContext, theme: Any) -> list[Item]:
    s = ctx.get_settings()
    model = ctx.model
    levels = supported_levels(model) if model is not None else list(THINKING_LEVELS)
    thinking_key = "Shift+Tab"
    for binding in ctx.ui.get_keybindings():
        if binding.action == "app.thinking.cycle" and binding.shown:
            thinking_key = binding.shown
    items = [
        Item("autocompact", "Auto-compact", "Automatically compact context when it gets too large",
             _bool(s.compaction.enabled), ["true", "false"]),
        Item("auto-resize-images", "Auto-resize images",
             "Resize large images to 2000x2000 max for better model compatibility",
             _bool(s.images.auto_resize), ["true", "false"]),
        Item("block-images", "Block images", "Prevent images from being sent to LLM providers",
             _bool(s.images.block_images), ["true", "false"]),
        Item("skill-commands", "Skill commands", "Register skills as /skill:name commands",
             _bool(s.enable_skill_commands), ["true", "false"]),
        Item("steering-mode", "Steering mode",
             "Enter while streaming queues steering messages. 'one-at-a-time': deliver one, wait for response. "
             "'all': deliver all at once.", s.steering_mode, ["one-at-a-time", "all"]),
        Item("follow-up-mode", "Follow-up mode",
             "Alt+Enter queues follow-up messages until agent stops. 'one-at-a-time': deliver one, wait for "
             "response. 'all': deliver all at once.", s.follow_up_mode, ["one-at-a-time", "all"]),
        Item("thinking", "Thinking level",
             f"Reasoning depth for thinking-capable models; also the default for new sessions "
             f"(defaultThinkingLevel). {thinking_key} cycles in-session.", ctx.thinking_level, levels),
        Item("hide-thinking", "Hide thinking", "Hide thinking blocks in assistant responses",
             _bool(ctx.ui.get_thinking_hidden()), ["true", "false"]),  # as shown now (Ctrl+T too), as pi
        Item("collapse-changelog", "Collapse changelog", "Show condensed changelog after updates",
             _bool(s.get("collapseChangelog", False) is True), ["true", "false"]),
        Item("quiet-startup", "Quiet startup",
             "Disable verbose printing at startup (header: keep only the startup header)",
             str(s.quiet_startup).lower(), ["true", "header", "false"]),
        Item("default-project-trust", "Default project trust",
             "Fallback behavior when no extension or saved trust decision decides project trust",
             TRUST_LABELS[s.default_project_trust], list(TRUST_LABELS.values())),
        Item("double-escape-action", "Double-escape action", "Action when pressing Escape twice with empty editor",
             str(s.get("doubleEscapeAction", "tree")), ["tree", "fork", "none"]),
        Item("tree-filter-mode", "Tree filter mode", "Default filter when opening /tree",
             str(s.get("treeFilterMode", "default")), ["default", "no-tools", "user-only", "labeled-only", "all"]),
        Item("model-thinking", "Default thinking level per model",
             f"Override the default thinking level for specific models. {thinking_key} cycles in-session.",
             _overrides(s.model_thinking_levels), submenu=lambda current, done: _model_thinking(ctx, theme, done)),
        Item("theme", "Theme", "Color theme for the interface", _theme_name(ctx),
             submenu=lambda current, done: _themes(ctx, theme, current, done)),
    ]
    return items


def _overrides(levels: dict[str, Any]) -> str:
    return "none" if not levels else f"{len(levels)} model{'s' if len(levels) != 1 else ''}"


def _theme_name(ctx: CommandContext) -> str:
    configured = ctx.get_settings().get("theme")
    if isinstance(configured, str) and configured:
        return configured
    return str(getattr(ctx.ui.theme, "name", None) or "system")


def _themes(ctx: CommandContext, theme: Any, current: str, done: Callable[[str | None], None]) -> Choices:
    names = [t["name"] for t in ctx.ui.get_all_themes()] or ["system", "dark", "light"]
    return Choices(theme, "Theme", [(n, n) for n in names], current, done)


class ModelThinking:
    """Two steps: the model, then its level (or "clear override")."""

    def __init__(self, ctx: CommandContext, theme: Any, done: Callable[[str | None], None]) -> None:
        self.ctx, self.theme, self.finish = ctx, theme, done
        models = [m for m in _available(ctx) if m.reasoning]
        self.step: Any = Choices(theme, "Per-Model Thinking Level", [
            (f"{m.provider}/{m.id}", f"{m.provider}/{m.id}" + self._current(m)) for m in models], "", self._model,
            hint="Enter to choose a model · Esc to go back")
        self.models = {f"{m.provider}/{m.id}": m for m in models}

    def _current(self, model: Model) -> str:
        level = self.ctx.get_settings().model_thinking_levels.get(f"{model.provider}/{model.id}")
        return f"  ({level})" if level else ""

    def _model(self, key: str | None) -> None:
        if key is None:
            self.finish(None)
            return
        model = self.models[key]
        options = [(level, level) for level in supported_levels(model)]
        default = self.ctx.get_settings().default_thinking_level or "medium"
        options.append(("", f"(clear override: {default})"))
        current = self.ctx.get_settings().model_thinking_levels.get(key) or ""

        def picked(level: str | None) -> None:
            if level is None:
                self.finish(None)
                return
            self.finish(f"{key}={level}")

        self.step = Choices(self.theme, f"Thinking level for {key}", options, current, picked)

    def render(self, width: int) -> list[str]:
        return [str(row) for row in self.step.render(width)]

    def handle_input(self, data: str) -> None:
        self.step.handle_input(data)

    def invalidate(self) -> None:
        return None


def _model_thinking(ctx: CommandContext, theme: Any, done: Callable[[str | None], None]) -> ModelThinking:
    return ModelThinking(ctx, theme, done)


def _available(ctx: CommandContext) -> list[Model]:
    registry = ctx.model_registry
    try:
        models = list(registry.get_available()) or list(registry.get_all())
    except Exception:  # noqa: BLE001 - a broken credentials file must not break the list
        models = list(registry.get_all())
    current = ctx.model
    if current is not None and not any((m.provider, m.id) == (current.provider, current.id) for m in models):
        models.insert(0, current)
    return models


#: Item id → the settings.json key it writes and how the shown value becomes the stored one.
KEYS: dict[str, tuple[str, Callable[[str], Any]]] = {
    "autocompact": ("compaction.enabled", lambda v: v == "true"),
    "auto-resize-images": ("images.autoResize", lambda v: v == "true"),
    "block-images": ("images.blockImages", lambda v: v == "true"),
    "skill-commands": ("enableSkillCommands", lambda v: v == "true"),
    "steering-mode": ("steeringMode", str),
    "follow-up-mode": ("followUpMode", str),
    "thinking": ("defaultThinkingLevel", str),
    "hide-thinking": ("hideThinkingBlock", lambda v: v == "true"),
    "collapse-changelog": ("collapseChangelog", lambda v: v == "true"),
    "quiet-startup": ("quietStartup", lambda v: "header" if v == "header" else v == "true"),
    "default-project-trust": ("defaultProjectTrust",
                              lambda v: next(k for k, label in TRUST_LABELS.items() if label == v)),
    "double-escape-action": ("doubleEscapeAction", str),
    "tree-filter-mode": ("treeFilterMode", str),
    "theme": ("theme", str),
}


def apply_change(ctx: CommandContext, item_id: str, value: str, later: Callable[[Awaitable[Any]], None]) -> str:
    """Write the setting behind ``item_id`` and make the session use it; a note for the user."""
    if item_id == "model-thinking":
        key, _, level = value.partition("=")
        levels: dict[str, str] = dict(ctx.get_settings().model_thinking_levels)
        if level:
            levels[key] = level
        else:
            levels.pop(key, None)
        ctx.set_setting("modelThinkingLevels", levels or None)
        model = ctx.model
        if model is not None and f"{model.provider}/{model.id}" == key:
            ctx.set_thinking_level(level or ctx.get_settings().default_thinking_level or "medium")
        return f"{key}: {level or 'override cleared'}"
    setting, convert = KEYS[item_id]
    stored = convert(value)
    ctx.set_setting(setting, stored)
    if item_id == "thinking":
        ctx.set_thinking_level(value)
    elif item_id == "hide-thinking":
        later(ctx.ui.set_thinking_hidden(stored))
    elif item_id == "theme":
        later(ctx.ui.set_theme(value))
    project = ctx.get_settings().scope_data("project")
    node: Any = project
    for part in setting.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    if node is not None:
        return f"Saved globally; this project's .pi/settings.json sets {setting} to {node!r}, which wins here"
    return ""


async def _settings(args: str, ctx: CommandContext) -> None:
    if not ctx.has_ui:
        await ctx.ui.notify("/settings needs the terminal interface", "warning")
        return
    work: list[Awaitable[Any]] = []

    def later(awaitable: Awaitable[Any]) -> None:
        try:
            work.append(asyncio.ensure_future(awaitable))
        except RuntimeError:  # no running loop: run it when the list closes
            work.append(awaitable)

    def factory(tui: Any, theme: Any, keybindings: Any, done: Callable[[Any], None]) -> SettingsList:
        box: list[SettingsList] = []

        def changed(item_id: str, value: str) -> None:
            try:
                note = apply_change(ctx, item_id, value, later)
            except (SettingsError, ValueError) as exc:
                box[0].message = ("error", f"Not saved: {exc}")
            else:
                box[0].message = ("warning", note) if note else None
            if item_id == "model-thinking":
                item = next(i for i in box[0].items if i.id == "model-thinking")
                item.value = _overrides(ctx.get_settings().model_thinking_levels)
            request = getattr(tui, "request_render", None)
            if callable(request):
                request()

        box.append(SettingsList(theme, _items(ctx, theme), changed, lambda: done(None)))
        return box[0]

    await ctx.ui.custom(factory)
    for pending in work:
        await pending


# -- /scoped-models -------------------------------------------------------------------------------------


class ScopedModels:
    """pi's scoped-models selector: a checkbox per model, a search line; Enter toggles, Ctrl+A enables all
    (matching), Ctrl+X clears them, Ctrl+P toggles the provider's, Alt+Up/Alt+Down reorder, Ctrl+S saves
    to settings, Esc closes. Every change applies to this session at once."""

    def __init__(self, theme: Any, models: list[Model], enabled: list[str] | None,
                 on_change: Callable[[list[str] | None], None], on_save: Callable[[list[str] | None], None],
                 on_close: Callable[[], None], *, max_visible: int = 10) -> None:
        self.theme, self.models = theme, models
        self.order = [f"{m.provider}/{m.id}" for m in models]
        self.names = {f"{m.provider}/{m.id}": f"{m.provider}/{m.id} {m.name or ''}".lower() for m in models}
        self.enabled: list[str] | None = None if enabled is None else list(enabled)  # None: all, no filter
        self.on_change, self.on_save, self.on_close = on_change, on_save, on_close
        self.query = ""
        self.selected = 0
        self.max_visible = max_visible
        self.message: tuple[str, str] | None = None
        if self.enabled is not None:  # enabled models first, in their order, as pi lists them
            rest = [k for k in self.order if k not in self.enabled]
            self.order = [k for k in self.enabled if k in self.order] + rest

    def _visible(self) -> list[str]:
        words = self.query.lower().split()
        return [k for k in self.order if all(w in self.names.get(k, k.lower()) for w in words)]

    def _is_on(self, key: str) -> bool:
        return self.enabled is None or key in self.enabled

    def render(self, width: int) -> list[str]:
        t = self.theme
        count = len(self.order) if self.enabled is None else len(self.enabled)
        rows = [t.fg("accent", t.bold("Model Configuration")),
                t.fg("muted", "  Session-only. Ctrl+S to save to settings."), "",
                f"  search: {self.query}", ""]
        visible = self._visible()
        self.selected = min(self.selected, max(0, len(visible) - 1))
        start = max(0, min(self.selected - self.max_visible // 2, len(visible) - self.max_visible))
        for index in range(start, min(start + self.max_visible, len(visible))):
            key = visible[index]
            mark = "✓" if self._is_on(key) else " "
            text = f"{'› ' if index == self.selected else '  '}[{mark}] {key}"
            rows.append(t.fg("accent", text) if index == self.selected else text)
        if not visible:
            rows.append(t.fg("dim", "  No matching models"))
        rows += ["", t.fg("muted", f"  {count} of {len(self.order)} enabled" +
                          (" (all: no scope)" if self.enabled is None else ""))]
        if self.message is not None:
            rows.append(t.fg(self.message[0], "  " + self.message[1]))
        rows += ["", t.fg("dim", "  Enter toggle · Ctrl+A all · Ctrl+X clear · Ctrl+P provider · "
                                 "Alt+↑↓ reorder · Ctrl+S save · Esc close")]
        return rows

    def _set(self, enabled: list[str] | None) -> None:
        if enabled is not None and len(enabled) == len(self.order) and set(enabled) == set(self.order):
            enabled = None  # everything on is no scope at all
        self.enabled = enabled
        self.message = None
        self.on_change(None if enabled is None else [k for k in self.order if k in enabled])

    def handle_input(self, data: str) -> None:
        visible = self._visible()
        current = visible[self.selected] if visible else None
        on = list(self.order) if self.enabled is None else list(self.enabled)
        if matches_key(data, "up") and visible:
            self.selected = (self.selected - 1) % len(visible)
        elif matches_key(data, "down") and visible:
            self.selected = (self.selected + 1) % len(visible)
        elif matches_key(data, "enter") and current is not None:
            self._set([k for k in on if k != current] if current in on else [*on, current])
        elif data == "\x01":  # Ctrl+A: all (matching)
            self._set([*on, *[k for k in visible if k not in on]])
        elif data == "\x18":  # Ctrl+X: none (matching)
            self._set([k for k in on if k not in visible])
        elif data == "\x10" and current is not None:  # Ctrl+P: the provider's models
            provider = current.split("/", 1)[0]
            group = [k for k in self.order if k.split("/", 1)[0] == provider]
            all_on = all(k in on for k in group)
            self._set([k for k in on if k not in group] if all_on else [*on, *[k for k in group if k not in on]])
        elif data in ("\x1b[1;3A", "\x1b\x1b[A", "\x1b[1;3B", "\x1b\x1b[B") and current is not None:
            step = -1 if data.endswith("A") else 1
            index = self.order.index(current)
            target = index + step
            if 0 <= target < len(self.order):
                self.order[index], self.order[target] = self.order[target], self.order[index]
                self.selected = max(0, min(len(visible) - 1, self.selected + step))
                self._set(None if self.enabled is None else [k for k in self.order if k in self.enabled])
        elif data == "\x13":  # Ctrl+S
            self.on_save(None if self.enabled is None else [k for k in self.order if k in self.enabled])
            self.message = ("success", "Model selection saved to settings")
        elif matches_key(data, "escape") or data == "\x03":
            self.on_close()
        elif matches_key(data, "backspace"):
            self.query = self.query[:-1]
            self.selected = 0
        elif len(data) == 1 and data.isprintable():
            self.query += data
            self.selected = 0

    def invalidate(self) -> None:
        return None


def _configured(ctx: CommandContext, models: list[Model]) -> list[str] | None:
    """``enabledModels`` patterns matched against the models (``None``: no scope configured)."""
    import fnmatch

    patterns = ctx.get_settings().get("enabledModels")
    if not isinstance(patterns, list) or not patterns:
        return None
    keys: list[str] = []
    for pattern in patterns:
        if not isinstance(pattern, str):
            continue
        wanted = pattern.split(":")[0].lower()
        for m in models:
            key = f"{m.provider}/{m.id}"
            if (fnmatch.fnmatch(key.lower(), wanted) or fnmatch.fnmatch(m.id.lower(), wanted)) and key not in keys:
                keys.append(key)
    return keys


async def _scoped_models(args: str, ctx: CommandContext) -> None:
    if not ctx.has_ui:
        await ctx.ui.notify("/scoped-models needs the terminal interface", "warning")
        return
    models = _available(ctx)
    by_key = {f"{m.provider}/{m.id}": m for m in models}
    session = [f"{m.provider}/{m.id}" for m in ctx.scoped_models]
    enabled = session or _configured(ctx, models)

    def changed(keys: list[str] | None) -> None:  # everything on: cycle through all, as pi does
        ctx.set_scoped_models(list(models) if keys is None else [by_key[k] for k in keys if k in by_key])

    def save(keys: list[str] | None) -> None:
        ctx.set_setting("enabledModels", None if keys is None else list(keys))

    def factory(tui: Any, theme: Any, keybindings: Any, done: Callable[[Any], None]) -> ScopedModels:
        return ScopedModels(theme, models, enabled, changed, save, lambda: done(None))

    await ctx.ui.custom(factory)
