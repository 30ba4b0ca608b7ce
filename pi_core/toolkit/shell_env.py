"""The environment processes started for the model get: pi's, minus credentials.

A provider API key exported in the shell that started pi would otherwise reach every command the model
runs: ``env`` (or a script the model writes) prints it into the tool result, and from there into the
session file, an HTML export and the provider's logs. So the bash tool, ``ctx.exec``, RPC's ``bash``,
the terminal's ``!command`` and MCP stdio servers get the environment with credential-looking
variables removed (as codex's default shell policy does):

* the API-key variables of every registered provider (``ANTHROPIC_API_KEY``, ...),
* any name matching :data:`DEFAULT_SECRET_PATTERNS` (case-insensitive ``fnmatch`` patterns), and
* any value that is a URL with a password in it (``postgres://user:secret@host/db``), whatever its name.

The ``shellEnv`` setting adjusts this: ``include`` patterns keep matching variables even so (a
``GITHUB_TOKEN`` the model should use with ``gh``), ``exclude`` patterns remove more, and
``"scrub": false`` turns the default removal off. Variables a caller passes explicitly (``extra``, an MCP
server's ``env``) are always kept: naming a variable is consent.

This is a guard against accidental leaks, not a sandbox: a model with ``bash`` can still read
``~/.pi/agent/auth.json``, ``.env`` files and anything else the user can read.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

DEFAULT_SECRET_PATTERNS: tuple[str, ...] = (
    "*API_KEY*", "*APIKEY*", "*SECRET*", "*ACCESS_KEY*", "*PRIVATE_KEY*", "*PASSWORD*", "*PASSWD*",
    "TOKEN", "*_TOKEN", "*_TOKEN_*", "KEY", "*_KEY", "*_PAT", "*_AUTH", "*CREDENTIAL*", "*_CREDS",
)
"""Names that look like credentials (case-insensitive). codex removes ``*KEY*`` and ``*TOKEN*``, which would
also catch ``XKB_KEYMAP``, ``KEYBOARD_LAYOUT`` and ``TOKENIZERS_PARALLELISM``; these are anchored on the
usual spellings instead: ``OPENAI_KEY``, ``GITHUB_PAT``, ``NPM_AUTH``, ``GOOGLE_APPLICATION_CREDENTIALS``
are removed (keep one with ``shellEnv.include``), ``SSH_AUTH_SOCK`` and ``XAUTHORITY`` are not."""

_PASSWORD_URL = re.compile(r"[a-z][a-z0-9+.-]*://[^/\s:@]*:[^/\s@]+@", re.IGNORECASE)
"""A URL with a password in its user part: ``scheme://user:password@``."""


@dataclass(frozen=True)
class ShellEnvPolicy:
    """What is removed from the environment of processes started for the model."""

    scrub: bool = True
    """Remove provider key variables and names matching :data:`DEFAULT_SECRET_PATTERNS`."""
    include: tuple[str, ...] = ()
    """Patterns of variables kept even when they look like credentials."""
    exclude: tuple[str, ...] = ()
    """Patterns of further variables to remove."""
    credential_names: frozenset[str] = field(default_factory=frozenset)
    """Exact names to remove (the providers' API-key variables)."""

    def removes(self, name: str, value: str = "") -> bool:
        """Whether variable ``name`` (holding ``value``) is removed."""
        upper = name.upper()
        if _matches(upper, self.include):
            return False
        if _matches(upper, self.exclude):
            return True
        return self.scrub and (upper in self.credential_names or _matches(upper, DEFAULT_SECRET_PATTERNS)
                               or "://" in value and _PASSWORD_URL.search(value) is not None)

    @classmethod
    def from_setting(cls, value: object, credential_names: Iterable[str] = ()) -> tuple[ShellEnvPolicy, list[str]]:
        """The policy of a ``shellEnv`` settings value, and problems found in it (bad parts are ignored)."""
        problems: list[str] = []
        names = frozenset(n.upper() for n in credential_names)
        if value is None:
            return cls(credential_names=names), problems
        if not isinstance(value, dict):
            return cls(credential_names=names), ["shellEnv must be an object with include/exclude lists"]
        lists: dict[str, tuple[str, ...]] = {}
        for key in ("include", "exclude"):
            raw = value.get(key, [])
            if not isinstance(raw, list) or not all(isinstance(p, str) for p in raw):
                problems.append(f"shellEnv.{key} must be a list of name patterns; ignored")
                raw = []
            lists[key] = tuple(raw)
        scrub = value.get("scrub", True)
        if not isinstance(scrub, bool):
            problems.append("shellEnv.scrub must be true or false; ignored")
            scrub = True
        return cls(scrub, lists["include"], lists["exclude"], names), problems


_policy = ShellEnvPolicy()


def set_shell_env_policy(policy: ShellEnvPolicy) -> None:
    """Use ``policy`` for every process started from now on (sessions set it from their settings)."""
    global _policy
    _policy = policy


def shell_env_policy() -> ShellEnvPolicy:
    return _policy


def add_credential_names(names: Iterable[str]) -> None:
    """Also remove these exact variable names (a provider registered at run time)."""
    set_shell_env_policy(ShellEnvPolicy(_policy.scrub, _policy.include, _policy.exclude,
                                        _policy.credential_names | {n.upper() for n in names}))


def scrubbed_env(extra: Mapping[str, str] | None = None, *, base: Mapping[str, str] | None = None,
                 policy: ShellEnvPolicy | None = None) -> dict[str, str]:
    """``base`` (default: this process's environment) without credentials, then ``extra`` on top.

    Everything in ``extra`` is kept, whatever its name: pass what a child process needs explicitly.
    """
    chosen = policy or _policy
    env = {k: v for k, v in (os.environ if base is None else base).items() if not chosen.removes(k, v)}
    if extra:
        env.update({k: str(v) for k, v in extra.items()})
    return env


def _matches(upper: str, patterns: tuple[str, ...]) -> bool:
    return bool(patterns) and _compiled(patterns).match(upper) is not None


@functools.lru_cache(maxsize=32)
def _compiled(patterns: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(fnmatch.translate(p.upper()) for p in patterns))


__all__ = ["DEFAULT_SECRET_PATTERNS", "ShellEnvPolicy", "add_credential_names", "scrubbed_env",
           "set_shell_env_policy", "shell_env_policy"]
