"""``mcp.json`` in pi's format: reading, validating, merging and editing server entries.

Servers come from ``<agent dir>/mcp.json`` and, in a trusted project, ``<project>/.pi/mcp.json``; both use
the ``mcpServers`` shape other MCP clients share, so a configuration can be copied between them. A project
entry replaces a global one of the same name; a project entry without ``command``, ``url`` or ``type``
only overrides ``enabled``, ``exposure`` and ``toolExposure`` of the global one and keeps the rest.

Entries stay plain JSON dicts: they are the user's file, and editing them (``pi mcp add``, ``/mcp``) must
keep every field this program does not know. Validation returns pi's error messages.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pi_core import parse_json

Scope = Literal["global", "project", "plugin"]
EXPOSURES = ("codemode", "deferred", "direct", "hidden")
EXPOSURE_ALIASES = {"codemode-deferred": "codemode"}
OVERRIDE_KEYS = ("enabled", "exposure", "toolExposure")
DEFAULT_TIMEOUT_SECONDS = 60.0

_SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass
class ServerEntry:
    """One configured server: its validated config and where it came from."""

    name: str
    config: dict[str, Any]
    source: str
    """The file that defines it (or the plugin that registered it)."""
    scope: Scope = "global"
    override: str | None = None
    """The project file whose override changed ``enabled``/``exposure`` of this global server."""

    @property
    def enabled(self) -> bool:
        return self.config.get("enabled") is not False

    @property
    def exposure(self) -> str:
        return self.config.get("exposure") or "codemode"

    @property
    def is_http(self) -> bool:
        return "url" in self.config

    @property
    def timeout(self) -> float:
        return float(self.config.get("timeout") or DEFAULT_TIMEOUT_SECONDS)

    def exposures(self) -> set[str]:
        """Exposures its tools can have, known before it connects."""
        return {self.exposure, *(self.config.get("toolExposure") or {}).values()}

    def tool_exposure(self, tool: str) -> str:
        """A tool's exposure: its exact ``toolExposure`` key, else the first matching pattern, else the server's."""
        overrides: dict[str, str] = self.config.get("toolExposure") or {}
        if tool in overrides:
            return overrides[tool]
        for pattern, exposure in overrides.items():
            if "*" in pattern and name_pattern(pattern).match(tool):
                return exposure
        return self.exposure

    def transport(self) -> str:
        if self.is_http:
            return str(self.config["url"])
        return " ".join([self.config["command"], *self.config.get("args", [])])


@dataclass
class LoadedConfig:
    servers: list[ServerEntry] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    auto_enable_codemode: bool | None = None
    project_config: Path | None = None
    """The trusted project's ``mcp.json`` path (where project overrides are saved)."""


def name_pattern(pattern: str) -> re.Pattern[str]:
    """A tool-name pattern where ``*`` matches any characters (``toolExposure``, ``--tools``)."""
    return re.compile("^" + ".*".join(re.escape(part) for part in pattern.split("*")) + "$")


def namespace(server: str) -> str:
    """The namespace of a server's tools: ``mcp__<server>`` with ``-`` as ``_``."""
    return "mcp__" + server.replace("-", "_")


def global_path(agent_dir: Path) -> Path:
    return Path(agent_dir) / "mcp.json"


def project_path(cwd: Path) -> Path:
    return Path(cwd) / ".pi" / "mcp.json"


# -------------------------------------------------------------------------------------------------
# validation


def validate_server(name: str, raw: Any) -> dict[str, Any] | str:
    """A copy of the entry with exposure aliases resolved, or pi's error message."""
    if not _SERVER_NAME.match(name):
        return f'invalid server name "{name}" (use letters, digits, "_" and "-")'
    if not isinstance(raw, dict):
        return f'server "{name}" must be an object'
    entry = _resolve_aliases(raw)
    problem = _check_base(entry)
    kind = entry.get("type")
    if problem is None and kind == "sse":
        problem = "legacy SSE transport is not supported; use the streamable HTTP URL"
    elif problem is None and isinstance(entry.get("url"), str) and kind in (None, "http", "streamable-http"):
        problem = _check_http(entry)
    elif problem is None and isinstance(entry.get("command"), str) and kind in (None, "stdio"):
        problem = _check_stdio(entry)
    elif problem is None:
        return f'server "{name}" needs either "command" (stdio) or "url" (streamable HTTP)'
    problem = problem or _check_exposures(entry)
    return f'server "{name}": {problem}' if problem else entry


def is_override(entry: Mapping[str, Any]) -> bool:
    """An entry that changes a server defined elsewhere instead of defining one."""
    return "command" not in entry and "url" not in entry and "type" not in entry


def _resolve_aliases(raw: dict[str, Any]) -> dict[str, Any]:
    entry = dict(raw)
    if isinstance(entry.get("exposure"), str):
        entry["exposure"] = EXPOSURE_ALIASES.get(entry["exposure"], entry["exposure"])
    if isinstance(entry.get("toolExposure"), dict):
        entry["toolExposure"] = {k: EXPOSURE_ALIASES.get(v, v) if isinstance(v, str) else v
                                 for k, v in entry["toolExposure"].items()}
    return entry


def _check_base(entry: dict[str, Any]) -> str | None:
    if "enabled" in entry and not isinstance(entry["enabled"], bool):
        return "enabled must be a boolean"
    if "description" in entry and not isinstance(entry["description"], str):
        return "description must be a string"
    timeout = entry.get("timeout")
    if "timeout" in entry and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0):
        return "timeout must be a positive number of seconds"
    return None


def _check_http(entry: dict[str, Any]) -> str | None:
    if not re.match(r"^https?://[^/\s]+", entry["url"]):
        return "url must be an http or https URL"
    if "headers" in entry and not _string_map(entry["headers"]):
        return "headers must map names to strings"
    if "oauth" in entry and not isinstance(entry["oauth"], dict):
        return "oauth must be an object"
    return _check_oauth(entry.get("oauth") or {})


LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]", "::1")


def _check_oauth(oauth: dict[str, Any]) -> str | None:
    """pi's rules for the ``oauth`` keys."""
    from urllib.parse import urlsplit

    for key in ("clientId", "clientSecret", "callbackUrl", "scope", "clientName", "authServerMetadataUrl"):
        if key in oauth and not isinstance(oauth[key], str):
            return f"oauth.{key} must be a string"
    port = oauth.get("callbackPort")
    if "callbackPort" in oauth and (isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536):
        return "oauth.callbackPort must be a port number"
    mode = oauth.get("clientRegistration", "auto")
    if mode not in ("auto", "cimd", "dcr"):
        return 'oauth.clientRegistration must be "auto", "cimd", or "dcr"'
    callback = oauth.get("callbackUrl")
    if callback is not None:
        parts = urlsplit(callback)
        if parts.scheme != "http" or parts.hostname not in LOOPBACK_HOSTS:
            return "oauth.callbackUrl must use http on localhost, 127.0.0.1, or [::1]"
    if mode == "cimd":
        if "clientId" in oauth or "clientName" in oauth:
            return 'oauth.clientRegistration "cimd" cannot be combined with oauth.clientId or oauth.clientName'
        if callback is not None and (urlsplit(callback).hostname not in ("localhost", "127.0.0.1")
                                     or urlsplit(callback).path != "/callback"):
            return 'oauth.clientRegistration "cimd" requires oauth.callbackUrl on localhost or 127.0.0.1 with path /callback'
    metadata = oauth.get("authServerMetadataUrl")
    if metadata is not None:
        parts = urlsplit(metadata)
        if not (parts.scheme == "https" or parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS):
            return "oauth.authServerMetadataUrl must use https (http only on localhost, 127.0.0.1, or [::1])"
    return None


def _check_stdio(entry: dict[str, Any]) -> str | None:
    args = entry.get("args")
    if "args" in entry and not (isinstance(args, list) and all(isinstance(a, str) for a in args)):
        return "args must be an array of strings"
    if "env" in entry and not _string_map(entry["env"]):
        return "env must map names to strings"
    if "cwd" in entry and not isinstance(entry["cwd"], str):
        return "cwd must be a string"
    return None


def _check_exposures(entry: dict[str, Any]) -> str | None:
    choices = ", ".join(f'"{e}"' for e in EXPOSURES)
    if "exposure" in entry and entry["exposure"] not in EXPOSURES:
        return f"exposure must be one of {choices}"
    overrides = entry.get("toolExposure")
    if "toolExposure" in entry:
        if not isinstance(overrides, dict):
            return "toolExposure must map tool names to exposures"
        for tool, value in overrides.items():
            if value not in EXPOSURES:
                return f'toolExposure "{tool}" must be one of {choices}'
    return None


def _string_map(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


# -------------------------------------------------------------------------------------------------
# loading


def load_config(agent_dir: Path, cwd: Path, *, project_trusted: bool, registered: Iterable[Any] = ()) -> LoadedConfig:
    """Global and (when trusted) project servers, then those plugins registered
    (``ctx.register_mcp_server``) under names the files do not use; disabled servers are included
    with ``enabled: false``."""
    loaded = LoadedConfig()
    servers: dict[str, ServerEntry] = {}
    _read_file(global_path(agent_dir), "global", servers, loaded)
    if project_trusted:
        loaded.project_config = project_path(cwd)
        _read_file(loaded.project_config, "project", servers, loaded)
    for registration in registered:
        entry = registered_entry(registration, servers)
        if isinstance(entry, str):
            loaded.errors.append(entry)
        elif entry is not None:
            servers[entry.name] = entry
    loaded.servers = list(servers.values())
    return loaded


def registered_entry(registration: Any, configured: Mapping[str, ServerEntry]) -> ServerEntry | str | None:
    """A plugin's server as an entry; ``None`` when ``mcp.json`` defines the name (the file wins), an
    error message when the config is invalid."""
    name = registration.name
    if name in configured and configured[name].scope != "plugin":
        return None
    config = validate_server(name, registration.config)
    if isinstance(config, str):
        return f"registered by a plugin: {config}"
    clash = next((other for other in configured if other != name and namespace(other) == namespace(name)), None)
    if clash:
        return f'registered by a plugin: server "{name}" conflicts with "{clash}"'
    return ServerEntry(name, config, "plugin", "plugin")


def read_json(path: Path) -> Any:
    return parse_json(path.read_text(encoding="utf-8-sig"))


def _read_file(path: Path, scope: Scope, servers: dict[str, ServerEntry], loaded: LoadedConfig) -> None:
    try:
        parsed = read_json(path)
    except FileNotFoundError:
        return
    except (OSError, ValueError) as exc:
        loaded.errors.append(f"{path}: {exc}")
        return
    if not isinstance(parsed, dict) or not isinstance(parsed.get("mcpServers", {}), dict):
        loaded.errors.append(f'{path}: expected an object with an "mcpServers" object')
        return
    auto = parsed.get("autoEnableCodemode")
    if isinstance(auto, bool):
        loaded.auto_enable_codemode = auto
    elif auto is not None:
        loaded.errors.append(f"{path}: autoEnableCodemode must be a boolean")
    for name, value in parsed.get("mcpServers", {}).items():
        if scope == "project" and isinstance(value, dict) and is_override(value):
            _apply_override(path, name, value, servers, loaded)
            continue
        config = validate_server(name, value)
        if isinstance(config, str):
            loaded.errors.append(f"{path}: {config}")
            continue
        clash = next((other for other in servers if other != name and namespace(other) == namespace(name)), None)
        if clash:
            loaded.errors.append(f'{path}: server "{name}" conflicts with "{clash}"')
            continue
        servers[name] = ServerEntry(name, config, str(path), scope)


def _apply_override(path: Path, name: str, value: dict[str, Any], servers: dict[str, ServerEntry],
                    loaded: LoadedConfig) -> None:
    base = servers.get(name)
    extra = [key for key in value if key not in OVERRIDE_KEYS]
    if base is None:
        loaded.errors.append(f'{path}: server "{name}" needs "command" or "url", or a global server to override')
        return
    if extra:
        loaded.errors.append(f'{path}: server "{name}": an override can only set {", ".join(OVERRIDE_KEYS)}')
        return
    config = validate_server(name, {**base.config, **value})
    if isinstance(config, str):
        loaded.errors.append(f"{path}: {config}")
        return
    servers[name] = ServerEntry(name, config, base.source, base.scope, override=str(path))


# -------------------------------------------------------------------------------------------------
# values: ${VAR} and !command


class ConfigValueError(ValueError):
    pass


def resolve_value(value: str, where: str, env: Mapping[str, str] | None = None) -> str:
    """``!command`` runs the command (the whole value); otherwise ``$VAR``/``${VAR}`` are expanded,
    ``$$`` is a literal ``$`` and ``$!`` a literal ``!``. A variable that is not set is an error."""
    environ = os.environ if env is None else env
    if value.startswith("!"):
        return _run_command(value[1:], where)
    out, i = [], 0
    while i < len(value):
        char = value[i]
        if char != "$" or i + 1 >= len(value):
            out.append(char)
            i += 1
            continue
        nxt = value[i + 1]
        if nxt in "$!":
            out.append(nxt)
            i += 2
            continue
        name, end = _env_reference(value, i)
        if name is None:
            out.append("$")
            i += 1
            continue
        if not environ.get(name):
            raise ConfigValueError(f"{where}: environment variable {name} is not set")
        out.append(environ[name])
        i = end
    return "".join(out)


def _env_reference(value: str, start: int) -> tuple[str | None, int]:
    if value[start + 1] == "{":
        close = value.find("}", start + 2)
        name = value[start + 2:close] if close > 0 else ""
        return (name, close + 1) if close > 0 and _ENV_NAME.fullmatch(name) else (None, start + 1)
    match = _ENV_NAME.match(value, start + 1)
    return (match.group(0), match.end()) if match else (None, start + 1)


_command_cache: dict[str, str] = {}


def _run_command(command: str, where: str) -> str:
    if command not in _command_cache:
        import subprocess

        try:
            done = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=30,
                                  stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ConfigValueError(f"{where}: command failed: {exc}") from exc
        if done.returncode != 0:
            raise ConfigValueError(f"{where}: command exited with {done.returncode}: {done.stderr.strip()}")
        _command_cache[command] = done.stdout.strip()
    return _command_cache[command]


def resolve_map(values: Mapping[str, str] | None, where: str) -> dict[str, str]:
    return {key: resolve_value(value, f'{where} "{key}"') for key, value in (values or {}).items()}


def expand_home(value: str) -> str:
    if value == "~" or value.startswith("~/"):
        return str(Path.home() / value[2:]) if value != "~" else str(Path.home())
    return value


# -------------------------------------------------------------------------------------------------
# editing (pi mcp add/remove, /mcp): other content of the file is kept


def _edit(path: Path, change: Callable[[dict[str, Any] | None, dict[str, Any]], bool]) -> None:
    text = path.read_text(encoding="utf-8-sig") if path.exists() else None
    parsed = {} if text is None else parse_json(text)
    if not isinstance(parsed, dict) or not isinstance(parsed.get("mcpServers", {}), dict):
        raise ValueError(f'{path}: expected an object with an "mcpServers" object')
    servers = parsed.get("mcpServers") if isinstance(parsed.get("mcpServers"), dict) else None
    if not change(servers, parsed):
        return
    indent_match = re.search(r"^([ \t]+)\S", text or "", re.M)
    indent = indent_match.group(1) if indent_match else "  "
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(parsed, indent=indent, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def add_server(path: Path, name: str, config: dict[str, Any]) -> bool:
    """Add or replace a server; returns whether an entry was replaced."""
    replaced = False

    def change(servers: dict[str, Any] | None, parsed: dict[str, Any]) -> bool:
        nonlocal replaced
        target = servers if servers is not None else {}
        replaced = name in target
        target[name] = config
        parsed["mcpServers"] = target
        return True

    _edit(path, change)
    return replaced


def remove_server(path: Path, name: str) -> bool:
    if not path.exists():
        return False
    removed = False

    def change(servers: dict[str, Any] | None, parsed: dict[str, Any]) -> bool:
        nonlocal removed
        if not servers or name not in servers:
            return False
        del servers[name]
        removed = True
        return True

    _edit(path, change)
    return removed


def update_server(path: Path, name: str, patch: dict[str, Any], *, override: bool = False) -> None:
    """Change ``enabled``/``exposure`` in the file that defines (or, with ``override``, overrides) a server.
    Defaults are dropped from full entries and kept in overrides (they replace the global values)."""

    def change(servers: dict[str, Any] | None, parsed: dict[str, Any]) -> bool:
        server = (servers or {}).get(name)
        if server is None and override:
            server = {}
            parsed["mcpServers"] = {**(servers or {}), name: server}
        if not isinstance(server, dict):
            raise ValueError(f'{path} does not define MCP server "{name}"')
        keep_defaults = is_override(server)
        defaults = {"enabled": True, "exposure": "codemode"}
        for key, value in patch.items():
            if value == defaults.get(key) and not keep_defaults:
                server.pop(key, None)
            else:
                server[key] = value
        return True

    _edit(path, change)
