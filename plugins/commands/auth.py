"""Built-in plugin: signing in. ``pi auth login|logout|check|print-api-key|print-bearer-token`` and the
slash commands ``/login [provider]`` and ``/logout [provider]``.

Both use the providers' own sign-in declarations (``ProviderConfig.auth``), so a third-party provider
plugin that declares an OAuth flow can be signed in to the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pi_core import CliCommand, Command, hookimpl


def _registry(host: Any) -> Any:
    from pi_core.ai import ModelRegistry, default_registry

    if host is None or not hasattr(host, "providers"):
        return default_registry()
    return ModelRegistry(apis=list(host.apis), providers=list(host.providers), agent_dir=host.agent_dir)


@hookimpl
def register_cli_commands(register: Any) -> None:
    import typer

    def auth(ctx: typer.Context) -> None:
        from .auth_cli import run

        raise typer.Exit(run(list(ctx.args), _registry(ctx.obj)))

    auth.__annotations__ = {"ctx": typer.Context, "return": None}  # typer reads them; this module defers them
    register(CliCommand("auth", auth, "Sign in to providers, print or check credentials (pi auth --help).",
                        extra={"context_settings": {"allow_extra_args": True, "ignore_unknown_options": True},
                               "add_help_option": False}))


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("login", _login, "Sign in to a provider (account or API key): /login [provider]"))
    register(Command("logout", _logout, "Remove a provider's stored credential: /logout [provider]"))


# -- slash commands --------------------------------------------------------------------------------------
class UILogin:
    """A :class:`~pi_core.ai.LoginInteraction` on a session's ``ctx.ui`` (every prompt is a dialog)."""

    def __init__(self, ui: Any) -> None:
        self.ui = ui
        self.pending: set[Any] = set()

    async def select(self, message: str, options: Sequence[Any]) -> str:
        from pi_core.ai import LoginCancelled

        labels = [o.label for o in options]
        chosen = await self.ui.select(message, labels)
        if chosen is None:
            raise LoginCancelled()
        return options[labels.index(chosen)].id

    async def secret(self, message: str) -> str:
        return self._answer(await self.ui.secret(message))

    async def text(self, message: str, placeholder: str = "") -> str:
        return self._answer(await self.ui.input(message, placeholder))

    async def manual_code(self, message: str, placeholder: str = "") -> str:
        return await self.text(message, placeholder)

    @staticmethod
    def _answer(value: str | None) -> str:
        from pi_core.ai import LoginCancelled

        if value is None:
            raise LoginCancelled()
        return value

    def notify(self, event: Any) -> None:
        import asyncio

        from pi_core.ai import AuthUrlEvent, DeviceCodeEvent

        from .auth_terminal import open_browser, safe_url

        if isinstance(event, AuthUrlEvent):
            text = f"Open this URL to sign in: {safe_url(event.url)}" + (f"\n{event.instructions}"
                                                                        if event.instructions else "")
            open_browser(event.url)
        elif isinstance(event, DeviceCodeEvent):
            text = f"Open {safe_url(event.verification_uri)} and enter the code: {event.user_code}"
            open_browser(event.verification_uri)
        else:
            text = event.message
        task = asyncio.ensure_future(self.ui.notify(text, "info"))
        self.pending.add(task)
        task.add_done_callback(self.pending.discard)


def _session_registry(ctx: Any) -> Any:
    registry = getattr(ctx, "model_registry", None)
    return registry if registry is not None else _registry(None)


async def _choose_provider(ctx: Any, registry: Any, names: list[str], title: str) -> str | None:
    from pi_core.ai import provider_label

    labels = [f"{provider_label(registry, n)} ({n})" if provider_label(registry, n) != n else n for n in names]
    chosen = await ctx.ui.select(title, labels)
    return None if chosen is None else names[labels.index(chosen)]


async def _login(args: str, ctx: Any) -> None:
    from pi_core.ai import LoginCancelled, login_methods, login_provider, provider_label

    from .auth_cli import find_provider, refresh_after_login

    registry = _session_registry(ctx)
    candidates = sorted(p for p in registry.get_providers() if login_methods(registry, p))
    if args.strip():
        provider = find_provider(registry, args.strip())
        if provider is None or provider not in candidates:
            await ctx.ui.notify(f'Unknown provider "{args.strip()}". Providers: {", ".join(candidates)}', "error")
            return
    else:
        provider = await _choose_provider(ctx, registry, candidates, "Sign in to which provider?")
        if provider is None:
            return
    methods = login_methods(registry, provider)
    method = methods[0]
    if len(methods) > 1:
        labels = [(m.login_label or f"Sign in with {m.label}") if m.kind == "oauth" else f"Enter {m.label}"
                  for m in methods]
        chosen = await ctx.ui.select(f"How do you want to sign in to {provider_label(registry, provider)}?", labels)
        if chosen is None:
            return
        method = methods[labels.index(chosen)]
    label = provider_label(registry, provider)
    try:
        await login_provider(registry, provider, UILogin(ctx.ui), method.kind)
    except LoginCancelled:
        await ctx.ui.notify("Login cancelled.", "warning")
        return
    except Exception as exc:
        await ctx.ui.notify(f"Failed to log in to {label}: {exc}", "error")
        return
    await ctx.ui.notify(f"Logged in to {label}." if method.kind == "oauth" else f"Saved API key for {label}.",
                        "info")
    problem = await refresh_after_login(registry, provider)
    if problem:
        await ctx.ui.notify(f"{label}'s model list could not be refreshed: {problem}. Using the saved models.",
                            "warning")


async def _logout(args: str, ctx: Any) -> None:
    from pi_core.ai import logout_provider, provider_label

    from .auth_cli import find_provider

    registry = _session_registry(ctx)
    stored = dict(registry.credentials.list()) if registry.credentials else {}
    if not stored:
        await ctx.ui.notify("No stored credentials.", "info")
        return
    if args.strip():
        provider = find_provider(registry, args.strip()) or args.strip()
        if provider not in stored:
            await ctx.ui.notify(f"No stored credentials for {args.strip()}. Stored: {', '.join(sorted(stored))}",
                                "warning")
            return
    else:
        provider = await _choose_provider(ctx, registry, sorted(stored), "Sign out of which provider?")
        if provider is None:
            return
    logout_provider(registry, provider)
    label = provider_label(registry, provider) if registry.get_provider(provider) else provider
    await ctx.ui.notify(f"Logged out of {label}." if stored[provider] == "oauth" else
                        f"Removed stored API key for {label}. Environment variables and models.json are unchanged.",
                        "info")


__all__ = ["UILogin", "register_cli_commands", "register_commands"]
