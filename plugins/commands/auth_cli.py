"""``pi auth``: sign in and out, print credentials for other programs, check that a provider is ready.

Exit codes follow pi: ``login``/``logout``/``print-*`` 0 on success, 1 on failure; ``check`` 0 ready,
1 not ready, 2 invalid (broken ``auth.json``, a sign-in that cannot be refreshed).
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from dataclasses import dataclass, field
from typing import Any

from pi_core.ai import (
    AuthError,
    LoginCancelled,
    ModelRegistry,
    login_methods,
    login_provider,
    logout_provider,
    provider_label,
)

HELP = """Usage:
  pi auth login <provider> [--api-key] [--no-browser]
  pi auth logout <provider>
  pi auth print-api-key [--provider <provider>] [--model <model>]
  pi auth print-bearer-token [--provider <provider>] [--model <model>] [--min-expiry <duration>]
  pi auth check [--provider <provider>] [--model <model>] [--json] [--credentials] [--no-refresh]

Sign in to model providers and out again, print their credentials for other programs, or check that one
is ready to use. Credentials are kept in auth.json in the agent directory (shared with the TypeScript pi).

Commands:
  login <provider>      Sign in with an account (browser or device code) or save an API key
  logout <provider>     Remove the stored credential (environment variables and models.json stay)
  print-api-key         Print the API key a request would use
  print-bearer-token    Print the OAuth access token, refreshed when it expires soon
  check                 Print ready, not_ready or invalid; exit 0, 1 or 2

Options:
  --provider <provider> The provider (print-*, check)
  --model <model>       A model, whose provider is meant (print-*, check)
  --api-key             login: save an API key instead of signing in with an account
  --no-browser          login: do not open a browser; use the provider's other method (a device code)
  --min-expiry <d>      print-bearer-token: refresh unless the token lives this long (default 30m; 90s, 1h)
  --json                check: print the result as JSON
  --credentials         check: print the credential (or add it to the JSON)
  --no-refresh          check: do not refresh an expired sign-in
"""


class UsageError(Exception):
    pass


@dataclass
class Args:
    command: str
    positional: list[str] = field(default_factory=list)
    provider: str | None = None
    model: str | None = None
    flags: set[str] = field(default_factory=set)
    min_expiry_ms: int | None = None


_FLAGS = {"login": {"--api-key", "--no-browser"}, "logout": set(), "print-api-key": set(),
          "print-bearer-token": set(), "check": {"--json", "--credentials", "--no-refresh"}}
_VALUES = {"login": set(), "logout": set(), "print-api-key": {"--provider", "--model"},
           "print-bearer-token": {"--provider", "--model", "--min-expiry"},
           "check": {"--provider", "--model"}}


def parse_duration(text: str) -> int:
    match = re.fullmatch(r"(\d+)(ms|s|m|h)", text.strip(), re.I)
    if not match:
        raise UsageError("--min-expiry takes a duration such as 30m, 90s or 1h")
    return int(match.group(1)) * {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000}[match.group(2).lower()]


def parse(argv: list[str]) -> Args:
    command, *rest = argv
    if command not in _FLAGS:
        raise UsageError(f'Unknown auth command "{command}". Use login, logout, print-api-key, '
                         f"print-bearer-token or check (pi auth --help).")
    args = Args(command)
    items = iter(rest)
    for item in items:
        name, eq, inline = item.partition("=")
        if name in _VALUES[command]:
            value = inline if eq else next(items, None)
            if value is None:
                raise UsageError(f"{name} needs a value")
            if name == "--min-expiry":
                args.min_expiry_ms = parse_duration(value)
            else:
                setattr(args, name[2:], value.strip() or None)
        elif item in _FLAGS[command]:
            args.flags.add(item)
        elif item.startswith("-"):
            raise UsageError(f'Unknown option {item} for "pi auth {command}" (pi auth --help)')
        else:
            args.positional.append(item)
    if command in ("login", "logout"):
        if len(args.positional) != 1:
            raise UsageError(f"Usage: pi auth {command} <provider>" + (" [--api-key] [--no-browser]"
                                                                        if command == "login" else ""))
        if {"--api-key", "--no-browser"} <= args.flags:
            raise UsageError("--no-browser only applies to account sign-in; omit it with --api-key.")
    elif args.positional:
        raise UsageError(f'"pi auth {command}" takes --provider and --model, not {args.positional[0]!r}')
    elif not args.provider and not args.model:
        raise UsageError(f'"pi auth {command}" needs --provider <provider> or --model <model>')
    return args


def find_provider(registry: ModelRegistry, name: str) -> str | None:
    lowered = name.strip().lower()
    for provider in registry.get_providers():
        if provider.lower() == lowered or provider_label(registry, provider).lower() == lowered:
            return provider
    return None


def _err(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def run(argv: list[str], registry: ModelRegistry) -> int:
    if not argv or argv[0] in ("help", "--help", "-h") or "--help" in argv or "-h" in argv:
        sys.stdout.write(HELP)
        return 0
    try:
        args = parse(argv)
    except UsageError as exc:
        _err(f"Error: {exc}")
        return 1
    if args.command == "login":
        return asyncio.run(_login(args, registry))
    if args.command == "logout":
        return _logout(args, registry)
    if args.command == "check":
        return asyncio.run(_check(args, registry))
    return asyncio.run(_print(args, registry))


# -- login / logout --------------------------------------------------------------------------------------
def _login_providers(registry: ModelRegistry) -> str:
    return ", ".join(sorted(p for p in registry.get_providers() if login_methods(registry, p)))


async def _login(args: Args, registry: ModelRegistry) -> int:
    from .auth_terminal import TerminalLogin, interactive

    provider = find_provider(registry, args.positional[0])
    if provider is None:
        _err(f'Unknown provider "{args.positional[0]}".')
        _err(f"Providers: {_login_providers(registry)}")
        return 1
    if not interactive():
        _err('"pi auth login <provider>" needs an interactive terminal')
        return 1
    label = provider_label(registry, provider)
    kinds = [m.kind for m in login_methods(registry, provider)]
    method = "api_key" if "--api-key" in args.flags or "oauth" not in kinds else "oauth"
    if method not in kinds:
        auth = registry.provider_auth(provider)
        why = (f"{label} has no API key sign-in. Omit --api-key to sign in." if auth.oauth is not None else
               f"{label} is configured outside pi ({auth.ambient_label or 'ambient credentials'}).")
        _err(why)
        return 1
    terminal = TerminalLogin(provider, browser="--no-browser" not in args.flags, ask_methods=method == "api_key")
    try:
        await login_provider(registry, provider, terminal, method)  # type: ignore[arg-type]
    except (LoginCancelled, KeyboardInterrupt):
        _err("Login cancelled.")
        return 1
    except Exception as exc:  # the flow's own error: shown, never a traceback
        _err(f"Failed to log in to {label}: {exc}")
        return 1
    path = registry.credentials.path if registry.credentials else "auth.json"
    terminal.write(f"{'Logged in to' if method == 'oauth' else 'Saved API key for'} {label}. "
                   f"Credentials saved to {path}")
    problem = await refresh_after_login(registry, provider)
    if problem:
        terminal.write(f"The {label} model list could not be refreshed ({problem}); pi tries again at the next start.")
    return 0


async def refresh_after_login(registry: ModelRegistry, provider: str) -> str | None:
    """Fetch the model list of a provider that has one, right after signing in to it (its list may be
    empty or another account's until then). Returns what went wrong, or ``None``."""
    config = registry.get_provider(provider)
    if config is None or config.fetch_models is None:
        return None
    result = await registry.refresh_models([provider])
    return result.errors.get(provider)


def _logout(args: Args, registry: ModelRegistry) -> int:
    stored = dict(registry.credentials.list()) if registry.credentials else {}
    name = args.positional[0]
    provider = find_provider(registry, name) or (name if name in stored else None)
    if provider is None:
        _err(f'Unknown provider "{name}".')
        _err(f"Stored credentials: {', '.join(sorted(stored)) or 'none'}")
        return 1
    label = provider_label(registry, provider) if registry.get_provider(provider) else provider
    kind = stored.get(provider)
    if kind is None:
        print(f"No stored credentials for {label}. Environment variables and models.json config are unchanged.")
        return 0
    try:
        logout_provider(registry, provider)
    except Exception as exc:
        _err(f"Logout failed: {exc}")
        return 1
    print(f"Logged out of {label}." if kind == "oauth" else
          f"Removed stored API key for {label}. Environment variables and models.json config are unchanged.")
    return 0


# -- print and check ---------------------------------------------------------------------------------------
def _target(args: Args, registry: ModelRegistry) -> str:
    if args.provider:
        provider = find_provider(registry, args.provider)
        if provider is None:
            raise AuthError(f'Unknown provider "{args.provider}". Use --list-models to see available providers.')
        if args.model:
            registry.resolve(provider, args.model)
        return provider
    assert args.model
    try:
        return registry.resolve(None, args.model).provider
    except LookupError as exc:
        raise AuthError(str(exc)) from exc


def _credential_text(result: Any) -> str | None:
    if result is None:
        return None
    if result.api_key:
        return result.api_key
    for name, value in (result.headers or {}).items():
        if name.lower() == "authorization" and value.lower().startswith("bearer "):
            return value[7:]
    return None


async def _print(args: Args, registry: ModelRegistry) -> int:
    try:
        provider = _target(args, registry)
        stored = registry.credentials.get(provider) if registry.credentials else None
        oauth = stored is not None and stored.get("type") == "oauth"
        if args.command == "print-api-key" and oauth:
            raise AuthError(f'Provider "{provider}" is configured with OAuth, not an API key')
        if args.command == "print-bearer-token" and not oauth:
            raise AuthError(f'Provider "{provider}" is not configured with an OAuth bearer token')
        minimum = args.min_expiry_ms if args.min_expiry_ms is not None else 30 * 60_000
        result = await registry.resolve_auth(provider, min_validity_ms=minimum if oauth else None)
        value = _credential_text(result)
        if not value:
            kind = "API key" if args.command == "print-api-key" else "OAuth bearer token"
            raise AuthError(f"No usable {kind} is configured for {provider}")
    except (AuthError, LookupError) as exc:
        _err(f"Error: {exc}")
        return 1
    sys.stdout.write(value + "\n")
    return 0


async def _check(args: Args, registry: ModelRegistry) -> int:
    provider = args.provider or args.model or ""
    credential: str | None = None
    try:
        provider = _target(args, registry)
        if registry.errors and any("auth.json" in e for e in registry.errors):
            result: dict[str, Any] = {"status": "invalid", "provider": provider, "reason": "invalid_state"}
        elif not registry.has_auth(provider):
            result = {"status": "not_ready", "provider": provider, "reason": "credentials_not_configured"}
        else:
            stored = registry.credentials.get(provider) if registry.credentials else None
            kind = "oauth" if stored is not None and stored.get("type") == "oauth" else "api_key"
            if "--no-refresh" in args.flags:
                auth = registry.peek_auth(provider)
            else:
                auth = await registry.resolve_auth(provider)
            result = {"status": "ready", "provider": provider, "authType": kind}
            if auth is None:
                result = {"status": "not_ready", "provider": provider, "reason": "credentials_not_configured"}
            elif "--credentials" in args.flags:
                credential = _credential_text(auth)
                if credential is None:
                    result = {"status": "not_ready", "provider": provider, "reason": "credential_not_available"}
    except AuthError:
        result = {"status": "invalid", "provider": provider, "reason": "invalid_state"}
    if "--json" in args.flags:
        print(json.dumps({**result, **({"credentials": credential} if credential else {})}, separators=(",", ":")))
    else:
        print(credential if credential and result["status"] == "ready" else result["status"])
    return {"ready": 0, "not_ready": 1}.get(result["status"], 2)


__all__ = ["HELP", "parse", "refresh_after_login", "run"]
