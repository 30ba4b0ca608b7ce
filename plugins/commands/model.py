"""Built-in plugin: ``/model`` and ``/thinking``, on the public command context."""

from __future__ import annotations

from typing import Any

from pi_core import Command, CommandContext, Model, hookimpl

THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("model", _model, "Switch the model (a pattern, provider/id, or choose from a list)",
                     usage="[pattern]"))  # while the agent works too: the next request uses it, as in pi
    register(Command("thinking", _thinking, "Set the thinking level (no argument: choose)", usage="[level]"))


def available_models(ctx: CommandContext) -> list[Model]:
    """The session's usable models (with credentials, or needing none); the current one always among them."""
    registry = ctx.model_registry
    try:
        models = list(registry.get_available()) or list(registry.get_all())
    except Exception:  # noqa: BLE001 - a broken credentials file must not break the command
        models = list(registry.get_all())
    current = ctx.model
    if current is not None and not any((m.provider, m.id) == (current.provider, current.id) for m in models):
        models.insert(0, current)
    return models


def match_models(models: list[Model], pattern: str) -> list[Model]:
    """Exact ``provider/id`` or id first; else every model whose ``provider/id`` or name contains the
    pattern (case-insensitive)."""
    wanted = pattern.strip().lower()
    exact = [m for m in models if wanted in (m.id.lower(), f"{m.provider}/{m.id}".lower())]
    if exact:
        return exact
    return [m for m in models if wanted in f"{m.provider}/{m.id}".lower() or wanted in (m.name or "").lower()]


#: Seconds ``/model <pattern>`` waits for fetched model lists when nothing known matches exactly (pi's 15 s).
REFRESH_WAIT_S = 15.0


def _exact(models: list[Model], pattern: str) -> bool:
    wanted = pattern.strip().lower()
    return any(wanted in (m.id.lower(), f"{m.provider}/{m.id}".lower()) for m in models)


def _fetched_providers(ctx: CommandContext) -> list[str]:
    """The signed-in providers whose model lists are fetched at run time (none when offline)."""
    from pi_core.ai import network_allowed

    if not network_allowed():
        return []
    registry = ctx.model_registry
    return [n for n in registry.get_providers()
            if getattr(registry.get_provider(n), "fetch_models", None) is not None and registry.has_auth(n)]


def _picker_refresh(ctx: CommandContext, pattern: str) -> Any:
    """What the open picker runs in the background, as pi's model selector does: fetch the run-time lists
    (15 s at most), then the models to show and how it went. Failures keep the saved lists."""
    async def refresh() -> tuple[list[Model], str] | None:
        import asyncio

        try:
            result = await asyncio.wait_for(ctx.model_registry.refresh_models(_fetched_providers(ctx), force=True),
                                            REFRESH_WAIT_S)
        except asyncio.TimeoutError:
            status = "Model refresh timed out; showing cached models."
        except Exception as exc:  # noqa: BLE001 - the saved lists stay
            status = f"Could not refresh model catalogs: {exc}"
        else:
            errors = list(result.errors)
            status = ("Model catalogs refreshed." if not errors else
                      f"Could not refresh {errors[0]}; showing cached models." if len(errors) == 1 else
                      f"Could not refresh {len(errors)} model catalogs ({', '.join(errors)}); showing cached models.")
        models = available_models(ctx)
        return (match_models(models, pattern) if pattern else models), status

    return refresh


async def _refresh_lists(ctx: CommandContext) -> None:
    """Fetch the run-time model lists (OpenRouter, llama.cpp) now, as pi does before giving up on a name:
    a model loaded on a router since start-up is found. Failures keep the saved lists."""
    import asyncio

    registry = ctx.model_registry
    listed = _fetched_providers(ctx)
    if not listed:
        return
    await ctx.ui.notify("Refreshing model catalogs…", "info")
    try:
        result = await asyncio.wait_for(registry.refresh_models(listed, force=True), REFRESH_WAIT_S)
    except asyncio.TimeoutError:
        await ctx.ui.notify("Model refresh timed out; searching cached models.", "warning")
        return
    if result.errors:
        await ctx.ui.notify(f"Could not refresh {', '.join(result.errors)}; searching cached models.", "warning")


async def _model(args: str, ctx: CommandContext) -> None:
    models = available_models(ctx)
    if args and not _exact(models, args):
        await _refresh_lists(ctx)
        models = available_models(ctx)
    matches = match_models(models, args) if args else models
    if not matches:
        try:
            close = ctx.model_registry.close_names(args)
        except Exception:  # noqa: BLE001
            close = []
        hint = f"; close: {', '.join(close)}" if close else ""
        await ctx.ui.notify(f"No model matches {args!r}{hint}", "error")
        return
    if len(matches) == 1 and args:
        chosen = matches[0]
    else:
        refresh = _picker_refresh(ctx, args) if _fetched_providers(ctx) else None
        chosen = await ctx.ui.select_model(matches, ctx.model, refresh=refresh)
    if chosen is None:
        return
    if not ctx.set_model(chosen):
        await ctx.ui.notify(f"{chosen.provider}/{chosen.id} has no credentials (/login)", "error")
        return
    await ctx.ui.notify(f"Model: {chosen.provider}/{chosen.id}" + ("" if chosen.reasoning else " (no thinking)"))


async def _thinking(args: str, ctx: CommandContext) -> None:
    level = args.lower()
    if not level:
        picked = await ctx.ui.select(f"Thinking level (now {ctx.thinking_level})", list(THINKING_LEVELS))
        if picked is None:
            return
        level = picked
    if level not in THINKING_LEVELS:
        await ctx.ui.notify(f"Unknown thinking level {level!r}; choose one of {', '.join(THINKING_LEVELS)}", "error")
        return
    model = ctx.model
    if level != "off" and model is not None and not model.reasoning:
        await ctx.ui.notify(f"{model.id} does not support thinking; the level stays off", "warning")
        level = "off"
    await ctx.ui.notify(f"Thinking level: {ctx.set_thinking_level(level)}")
