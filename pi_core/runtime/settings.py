"""Settings: ``<agent dir>/settings.json`` (global) and ``<cwd>/.pi/settings.json`` (project).

The files are pi's: the same names, keys and defaults, so pi and this program can share them. The
effective settings are the global file merged with the project file: the project's top-level scalars
and arrays replace the global ones, plain objects are merged one level deep. The project file only
counts once the project is trusted — except its ``sessionDir``, which is read regardless, as pi does.

Nothing here crashes on a bad file. A file that is not valid JSON, or not a JSON object, is reported
in :attr:`Settings.errors` and its scope is ignored; a key whose value has the wrong type is reported
and falls back to its default while the other keys still apply. Loading never writes. Writing
(:meth:`Settings.set_global` / :meth:`Settings.set_project`) re-reads the file and patches only the
key it was given, so settings written meanwhile by another program survive.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import re
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError
from pydantic.alias_generators import to_camel

SETTINGS_FILE = "settings.json"
PROJECT_DIR = ".pi"
#: Keys only the global file may set (pi reads them from the global file alone).
GLOBAL_ONLY_KEYS = frozenset({"defaultProjectTrust", "httpProxy", "cacheWarming"})
#: ``extensions`` entries naming a built-in plugin: ``builtin:mcp``, ``-builtin:mcp``.
BUILTIN_PREFIX = "builtin:"
#: The tools enabled when ``defaultTools`` does not say otherwise.
DEFAULT_TOOL_NAMES = ("read", "bash", "edit", "write")

QueueMode = Literal["all", "one-at-a-time"]
ThinkingLevelSetting = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]
Scope = Literal["global", "project"]


class SettingsError(Exception):
    """A settings file could not be written (malformed file, untrusted project, bad value)."""


@dataclass(frozen=True)
class SettingsIssue:
    """A problem found while loading settings; ``message`` names the file and what was ignored."""

    scope: Scope
    path: Path
    message: str

    def __str__(self) -> str:
        return self.message


# -------------------------------------------------------------------------------------------------
# the typed view


class _SettingsModel(BaseModel):
    model_config = ConfigDict(
        extra="allow",
        strict=True,
        defer_build=True,
        alias_generator=to_camel,
        populate_by_name=True,
        serialize_by_alias=True,
    )


class CompactionModelOverride(_SettingsModel):
    """One entry of ``compaction.modelOverrides``: token budgets for one model (unset: the ordinary value)."""

    reserve_tokens: int | None = Field(default=None, ge=0)
    keep_recent_tokens: int | None = Field(default=None, ge=0)


class CompactionSettings(_SettingsModel):
    """``compaction``: summarise old history when the context fills up."""

    enabled: bool = True
    reserve_tokens: int = Field(default=16384, ge=0)
    keep_recent_tokens: int = Field(default=20000, ge=0)
    #: Keyed by the exact ``provider/modelId``; each field falls back on its own to the ordinary setting.
    model_overrides: dict[str, CompactionModelOverride] = Field(default_factory=dict)

    def for_model(self, provider: str, model_id: str) -> tuple[int, int]:
        """``(reserve_tokens, keep_recent_tokens)`` for one model, its override applied field by field."""
        override = self.model_overrides.get(f"{provider}/{model_id}")
        reserve = override.reserve_tokens if override and override.reserve_tokens is not None else None
        keep = override.keep_recent_tokens if override and override.keep_recent_tokens is not None else None
        return (self.reserve_tokens if reserve is None else reserve,
                self.keep_recent_tokens if keep is None else keep)


class BranchSummarySettings(_SettingsModel):
    """``branchSummary``: the summary written when leaving a branch of the session tree."""

    reserve_tokens: int = 16384
    skip_prompt: bool = False


class ProviderRetrySettings(_SettingsModel):
    """``retry.provider``: retries inside one provider request, before the agent sees an error."""

    #: Provider request timeout in ms (unset: the HTTP idle timeout).
    timeout_ms: int | None = None
    #: Retries of one request (pi's default 0: the agent-level retry handles failures).
    max_retries: int = 0
    #: A server-requested delay (Retry-After) above this fails at once; 0 means no cap.
    max_retry_delay_ms: int = 60000


class RetrySettings(_SettingsModel):
    """``retry``: the agent's automatic retries of failed turns (delays double from ``base_delay_ms``)."""

    enabled: bool = True
    max_retries: int = 3
    base_delay_ms: int = 2000
    #: The longest wait between the agent's attempts (the doubling stops there).
    max_agent_delay_ms: int = 60000
    provider: ProviderRetrySettings = Field(default_factory=ProviderRetrySettings)


class ThinkingBudgets(_SettingsModel):
    """``thinkingBudgets``: token budgets per thinking level (unset levels use the provider's)."""

    minimal: int | None = None
    low: int | None = None
    medium: int | None = None
    high: int | None = None


class ImageSettings(_SettingsModel):
    """``images``: what happens to images before they reach a model."""

    #: Scale images down to at most 2000x2000 pixels as they enter the session.
    auto_resize: bool = True
    #: Send no images at all (each is replaced by a short note in the request).
    block_images: bool = False


class PluginSettings(_SettingsModel):
    """``plugins`` (ours): ``required`` lists pip distributions the project needs; ``hookTimeoutMs`` is
    the time limit of one plugin hook call (``0``: none) and ``hookTimeouts`` sets it per hook name."""

    required: list[str] = Field(default_factory=list)
    hook_timeout_ms: int = Field(default=5000, ge=0)
    hook_timeouts: dict[str, Annotated[int, Field(ge=0)]] = Field(default_factory=dict)


class Settings(_SettingsModel):
    """The effective settings: global merged with project, pi's defaults for what neither sets.

    Attributes are snake_case; the files use pi's camelCase keys. Unknown keys are kept (see
    :meth:`get`). Build one with :meth:`load`; ``Settings()`` is the defaults, bound to no files.
    """

    default_provider: str | None = None
    default_model: str | None = None
    default_thinking_level: ThinkingLevelSetting | None = None
    model_thinking_levels: dict[str, ThinkingLevelSetting] = Field(default_factory=dict)
    """Start-up thinking level per exact ``provider/modelId`` (also used when switching to that model)."""
    thinking_budgets: ThinkingBudgets = Field(default_factory=ThinkingBudgets)
    transport: str | None = None
    steering_mode: QueueMode = "one-at-a-time"
    follow_up_mode: QueueMode = "one-at-a-time"
    compaction: CompactionSettings = Field(default_factory=CompactionSettings)
    branch_summary: BranchSummarySettings = Field(default_factory=BranchSummarySettings)
    retry: RetrySettings = Field(default_factory=RetrySettings)
    #: The longest silence allowed between two chunks of a provider response (pi's default 300000;
    #: ``0`` keeps the built-in one). ``retry.provider.timeoutMs`` wins when set.
    http_idle_timeout_ms: int = 300000
    #: Proxy for provider requests; sets ``HTTP_PROXY``/``HTTPS_PROXY`` for the process (global file only).
    http_proxy: str | None = None
    shell_path: str | None = None
    shell_command_prefix: str | None = None
    default_tools: list[str] | None = None
    session_dir: str | None = None
    default_project_trust: Literal["ask", "always", "never"] = "ask"
    enable_skill_commands: bool = True
    skills: list[str] = Field(default_factory=list)
    prompts: list[str] = Field(default_factory=list)
    extensions: list[str] = Field(default_factory=list)
    packages: list[str | dict[str, Any]] = Field(default_factory=list)
    images: ImageSettings = Field(default_factory=ImageSettings)
    #: ``true`` hides the terminal's start-up header, ``"header"`` keeps only its first lines (read by
    #: the terminal interface; ``--verbose`` sets it back to ``false`` for one run).
    quiet_startup: bool | Literal["header"] = False
    plugins: PluginSettings = Field(default_factory=PluginSettings)

    _cwd: Path | None = PrivateAttr(default=None)
    _agent_dir: Path | None = PrivateAttr(default=None)
    _trusted: bool = PrivateAttr(default=False)
    _scopes: dict[str, dict[str, Any]] = PrivateAttr(default_factory=dict)
    _merged: dict[str, Any] = PrivateAttr(default_factory=dict)
    _errors: list[SettingsIssue] = PrivateAttr(default_factory=list)

    # --- loading ---------------------------------------------------------------------------------

    @classmethod
    def load(cls, cwd: Path | str, agent_dir: Path | str | None = None, *, trusted: bool) -> Settings:
        """Read both files for ``cwd``; the project file (bar ``sessionDir``) only if ``trusted``."""
        cwd_path = _absolute(cwd)
        agent = _absolute(agent_dir) if agent_dir is not None else _default_agent_dir()
        errors: list[SettingsIssue] = []
        global_data = _read_scope(agent / SETTINGS_FILE, "global", errors)
        project_path = cwd_path / PROJECT_DIR / SETTINGS_FILE
        project_data = _read_scope(project_path, "project", errors)
        if not trusted:
            project_data = {k: v for k, v in project_data.items() if k == "sessionDir"}
        project_data = {k: v for k, v in project_data.items() if k not in GLOBAL_ONLY_KEYS}
        scopes = {"global": _clean(global_data, agent / SETTINGS_FILE, "global", errors),
                  "project": _clean(project_data, project_path, "project", errors)}
        merged = merge_settings(scopes["global"], scopes["project"])
        settings = cls.model_validate(merged)
        settings._cwd, settings._agent_dir, settings._trusted = cwd_path, agent, trusted
        settings._scopes, settings._merged, settings._errors = scopes, merged, errors
        return settings

    def reload(self) -> Settings:
        """Read the files again (after they changed on disk); returns the new settings."""
        if self._cwd is None or self._agent_dir is None:
            raise SettingsError("these settings are not bound to files (use Settings.load)")
        return Settings.load(self._cwd, self._agent_dir, trusted=self._trusted)

    # --- reading ---------------------------------------------------------------------------------

    @property
    def errors(self) -> list[SettingsIssue]:
        """Problems met while loading, in the order found (empty when both files were fine)."""
        return list(self._errors)

    @property
    def global_path(self) -> Path | None:
        return self._agent_dir / SETTINGS_FILE if self._agent_dir else None

    @property
    def project_path(self) -> Path | None:
        return self._cwd / PROJECT_DIR / SETTINGS_FILE if self._cwd else None

    @property
    def trusted(self) -> bool:
        return self._trusted

    def get(self, key: str, default: Any = None) -> Any:
        """A merged value by pi's key, dotted for nested ones (``"compaction.reserveTokens"``).

        Returns what the files say (a copy), or ``default`` when neither sets it; for pi's defaults
        use the typed attributes instead.
        """
        node: Any = self._merged
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return copy.deepcopy(node)

    def scope_data(self, scope: Scope) -> dict[str, Any]:
        """One file's settings as loaded (migrated, bad values removed); a copy."""
        return copy.deepcopy(self._scopes.get(scope, {}))

    @property
    def session_dir_path(self) -> Path | None:
        """``sessionDir`` as a path: ``~`` expanded, relative to cwd (as pi resolves it)."""
        if not self.session_dir:
            return None
        path = Path(os.path.expanduser(self.session_dir.strip()))
        return path if path.is_absolute() else (self._cwd or Path.cwd()) / path

    def skill_paths(self) -> list[Path]:
        """``skills`` entries of both files, project first, each resolved against its file's dir."""
        return self._resource_paths("skills")

    def prompt_paths(self) -> list[Path]:
        """``prompts`` entries of both files, project first, each resolved against its file's dir."""
        return self._resource_paths("prompts")

    def theme_paths(self) -> list[Path]:
        """``themes`` entries of both files, project first, each resolved against its file's dir."""
        return self._resource_paths("themes")

    def extension_paths(self) -> list[Path]:
        """``extensions`` entries of both files, project first, each resolved against its file's dir."""
        return [p for p in self._resource_paths("extensions") if not p.name.startswith(BUILTIN_PREFIX)]

    def builtin_extension_switches(self) -> dict[str, bool]:
        """``builtin:<name>`` / ``+builtin:<name>`` (on) and ``-builtin:<name>`` (off) entries of
        ``extensions``, by name; the project's entry for a name overrides the global one."""
        switches: dict[str, bool] = {}
        for scope in ("global", "project"):
            for entry in self._scopes.get(scope, {}).get("extensions", []):
                sign = entry[0] if entry[:1] in ("+", "-") else "+"
                name = entry.lstrip("+-")
                if name.startswith(BUILTIN_PREFIX) and name[len(BUILTIN_PREFIX):]:
                    switches[name[len(BUILTIN_PREFIX):]] = sign == "+"
        return switches

    def _resource_paths(self, key: str) -> list[Path]:
        # Resource arrays are combined, not merged: pi reads each file's list on its own.
        bases = [("project", self._cwd / PROJECT_DIR if self._cwd else None),
                 ("global", self._agent_dir)]
        paths: list[Path] = []
        for scope, base in bases:
            for entry in self._scopes.get(scope, {}).get(key, []):
                if base is not None and not _is_pattern(entry):
                    path = resolve_settings_path(entry, base)
                    if path not in paths:
                        paths.append(path)
        return paths

    def default_tool_names(self) -> list[str]:
        """The tools to enable at start: ``defaultTools`` applied to pi's defaults.

        Plain names replace the default set; ``+name`` / ``-name`` entries add or remove one tool.
        """
        if self.default_tools is None:
            return list(DEFAULT_TOOL_NAMES)
        entries = self.default_tools
        plain = [e for e in entries if not _is_tool_modifier(e)]
        # An explicit empty list means no tools; a list of only modifiers edits the defaults.
        tools = plain if plain or not entries else list(DEFAULT_TOOL_NAMES)
        for entry in (e for e in entries if _is_tool_modifier(e)):
            name = entry[1:]
            if entry[0] == "+" and name and name not in tools:
                tools.append(name)
            elif entry[0] == "-" and name in tools:
                tools.remove(name)
        return tools

    def required_plugins(self) -> list[str]:
        """``plugins.required`` of both files (global first), without repeats."""
        seen: dict[str, str] = {}
        for scope in ("global", "project"):
            for entry in self._scopes.get(scope, {}).get("plugins", {}).get("required", []):
                seen.setdefault(_dist_key(entry), entry)
        if not self._scopes:
            for entry in self.plugins.required:
                seen.setdefault(_dist_key(entry), entry)
        return list(seen.values())

    def missing_required_plugins(self, installed_dists: Iterable[str]) -> list[str]:
        """The ``plugins.required`` entries whose distribution is not among ``installed_dists``.

        Names compare as pip does (case, ``-``/``_``/``.`` folded); an entry may carry a version
        specifier (``"pi-foo>=1.2"``), which is not checked here.
        """
        installed = {_dist_key(name) for name in installed_dists}
        return [entry for entry in self.required_plugins() if _dist_key(entry) not in installed]

    # --- writing ---------------------------------------------------------------------------------

    def set_global(self, key: str, value: Any) -> Settings:
        """Set one key (dotted for nested) in the global file; ``None`` removes it.

        Returns the reloaded settings. Raises :class:`SettingsError` when the file is malformed
        (it is left untouched) or the value has the wrong type for a known key.
        """
        if self.global_path is None:
            raise SettingsError("these settings are not bound to files (use Settings.load)")
        write_setting(self.global_path, key, value, scope="global")
        return self.reload()

    def set_project(self, key: str, value: Any) -> Settings:
        """Set one key in the project's ``.pi/settings.json``; refused while the project is untrusted."""
        if self.project_path is None:
            raise SettingsError("these settings are not bound to files (use Settings.load)")
        if not self._trusted:
            raise SettingsError(f"the project is not trusted; refusing to write {self.project_path}")
        if key.split(".")[0] in GLOBAL_ONLY_KEYS:
            raise SettingsError(f"{key} can only be set in the global settings")
        write_setting(self.project_path, key, value, scope="project")
        return self.reload()


# -------------------------------------------------------------------------------------------------
# reading files


def _default_agent_dir() -> Path:
    from pi_core.paths import agent_dir

    return agent_dir()


def _absolute(path: Path | str) -> Path:
    return Path(os.path.abspath(os.path.expanduser(os.fspath(path))))


def resolve_settings_path(entry: str, base: Path) -> Path:
    """A path from a settings file: ``~`` expanded, relative ones resolved against ``base``."""
    path = Path(os.path.expanduser(entry.strip()))
    return Path(os.path.abspath(path if path.is_absolute() else base / path))


def _read_scope(path: Path, scope: Scope, errors: list[SettingsIssue]) -> dict[str, Any]:
    """The file's settings after pi's migrations; ``{}`` (and an issue) when it cannot be used."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        errors.append(SettingsIssue(scope, path, f"{path}: cannot read the {scope} settings ({exc}); "
                                    "they are ignored"))
        return {}
    try:
        data = parse_settings_text(text, path)
    except SettingsError as exc:
        errors.append(SettingsIssue(scope, path, f"{exc}; the {scope} settings are ignored until it is fixed"))
        return {}
    return migrate_settings(data)


def parse_settings_text(text: str, path: Path) -> dict[str, Any]:
    """A settings file's JSON object (empty text is ``{}``); :class:`SettingsError` otherwise."""
    if not text.strip():
        return {}
    from ..safejson import parse_json

    try:
        data = parse_json(text)
    except ValueError as exc:
        raise SettingsError(f"{path}: invalid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise SettingsError(f"{path}: expected a JSON object, found {type(data).__name__}")
    return data


def migrate_settings(data: dict[str, Any]) -> dict[str, Any]:
    """pi's load-time migrations of older keys; returns a new dict (the file is never rewritten)."""
    data = copy.deepcopy(data)
    if "queueMode" in data and "steeringMode" not in data:
        data["steeringMode"] = data.pop("queueMode")
    retry = data.get("retry")
    if isinstance(retry, dict) and "maxDelayMs" in retry:  # the name this program used before pi's
        retry = data["retry"] = dict(retry)
        legacy = retry.pop("maxDelayMs")
        retry.setdefault("maxAgentDelayMs", legacy)
    if "transport" not in data and isinstance(data.get("websockets"), bool):
        data["transport"] = "websocket" if data.pop("websockets") else "sse"
    legacy = data.get("skills")
    if isinstance(legacy, dict):
        if "enableSkillCommands" in legacy and "enableSkillCommands" not in data:
            data["enableSkillCommands"] = legacy["enableSkillCommands"]
        custom = legacy.get("customDirectories")
        if isinstance(custom, list) and custom:
            data["skills"] = custom
        else:
            del data["skills"]
    return data


def _clean(data: dict[str, Any], path: Path, scope: Scope, errors: list[SettingsIssue]) -> dict[str, Any]:
    """``data`` without the values of known keys that have the wrong type (each one reported)."""
    data = copy.deepcopy(data)
    for _ in range(64):  # each pass removes at least one bad value
        problems = _validation_problems(data)
        if not problems:
            return data
        for key_path, msg, value in problems:
            _delete_path(data, key_path)
            shown = json.dumps(value, ensure_ascii=False)[:80]
            errors.append(SettingsIssue(scope, path, f"{path}: {'.'.join(key_path)}: {msg} (found {shown}); "
                                        "using the default"))
    return {}


def _validation_problems(data: dict[str, Any]) -> list[tuple[tuple[str, ...], str, Any]]:
    try:
        Settings.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            key_path = _key_path(err["loc"], data)
            if key_path and all(key_path != p[0] for p in problems):
                problems.append((key_path, err["msg"], _lookup(data, key_path)))
        return problems
    return []


def _key_path(loc: tuple[Any, ...], data: dict[str, Any]) -> tuple[str, ...]:
    """The dict keys of an error location, up to (not into) the first list or scalar."""
    keys: list[str] = []
    node: Any = data
    for part in loc:
        if not isinstance(part, str) or not isinstance(node, dict) or part not in node:
            break
        keys.append(part)
        node = node[part]
    return tuple(keys)


def _lookup(data: dict[str, Any], key_path: tuple[str, ...]) -> Any:
    node: Any = data
    for part in key_path:
        node = node[part]
    return node


def _delete_path(data: dict[str, Any], key_path: tuple[str, ...]) -> None:
    node = data
    for part in key_path[:-1]:
        node = node[part]
    node.pop(key_path[-1], None)


def merge_settings(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """pi's merge: ``override``'s scalars and arrays replace, plain objects merge one level deep.

    ``defaultTools`` made only of ``+name``/``-name`` entries extends the inherited list instead.
    """
    merged = copy.deepcopy(dict(base))
    for key, value in override.items():
        old = merged.get(key)
        if isinstance(old, dict) and isinstance(value, dict):
            merged[key] = {**old, **copy.deepcopy(value)}
            if key == "compaction":
                merged[key].update(_merged_model_overrides(old, value))
        elif (key == "defaultTools" and isinstance(old, list) and isinstance(value, list)
              and value and all(_is_tool_modifier(v) for v in value)):
            merged[key] = [*old, *value]
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _merged_model_overrides(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """pi merges ``compaction.modelOverrides`` down to each field: a global value for one model beats the
    project's ordinary value until the project overrides that model's field too."""
    before, after = old.get("modelOverrides"), new.get("modelOverrides")
    if not isinstance(before, dict) or not isinstance(after, dict):
        return {}
    combined = copy.deepcopy(before)
    for model, fields in after.items():
        kept = combined.get(model)
        combined[model] = ({**kept, **copy.deepcopy(fields)} if isinstance(kept, dict) and isinstance(fields, dict)
                           else copy.deepcopy(fields))
    return {"modelOverrides": combined}


def _is_tool_modifier(entry: Any) -> bool:
    return isinstance(entry, str) and entry[:1] in ("+", "-")


def _is_pattern(entry: str) -> bool:
    """Filter entries (``!glob``, ``+path``, ``-path``, globs) select among resources; they are not paths."""
    return entry[:1] in ("!", "+", "-") or any(c in entry for c in "*?[")


def _dist_key(requirement: str) -> str:
    """The PEP 503 normalised distribution name of a requirement string."""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    name = match.group(1) if match else requirement.strip()
    return re.sub(r"[-_.]+", "-", name).lower()


# -------------------------------------------------------------------------------------------------
# writing files


def write_setting(path: Path, key: str, value: Any, *, scope: Scope = "global") -> None:
    """Patch one key of a settings file (dotted key for a nested one; ``None`` deletes it).

    Re-reads the file under pi's lock (a ``settings.json.lock`` directory), changes only that key and
    replaces the file atomically. A malformed file is never overwritten: :class:`SettingsError`.
    """
    parts = key.split(".")
    if not all(parts):
        raise SettingsError(f"invalid settings key {key!r}")
    with _locked(path):
        try:
            text = path.read_text(encoding="utf-8-sig")
        except FileNotFoundError:
            text = ""
        except OSError as exc:
            raise SettingsError(f"{path}: cannot read ({exc}); not written") from exc
        data = parse_settings_text(text, path)
        _patch(data, parts, value, path)
        _check_value(data, parts, path)
        _atomic_write(path, json.dumps(data, indent=2, ensure_ascii=False))


def _patch(data: dict[str, Any], parts: list[str], value: Any, path: Path) -> None:
    node = data
    for part in parts[:-1]:
        child = node.get(part)
        if child is None and value is not None:
            child = node[part] = {}
        if not isinstance(child, dict):
            if value is None:
                return
            raise SettingsError(f"{path}: {part} is not an object; cannot set {'.'.join(parts)}")
        node = child
    if value is None:
        node.pop(parts[-1], None)
    else:
        node[parts[-1]] = copy.deepcopy(value)


def _check_value(data: dict[str, Any], parts: list[str], path: Path) -> None:
    migrated = migrate_settings(data)
    for key_path, msg, value in _validation_problems(migrated):
        if tuple(parts[: len(key_path)]) == key_path or key_path[: len(parts)] == tuple(parts):
            raise SettingsError(f"{'.'.join(parts)}: {msg} (got {json.dumps(value, ensure_ascii=False)[:80]}); "
                                f"{path} not written")


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def _locked(path: Path, attempts: int = 100, stale_after: float = 10.0) -> Iterator[None]:
    """pi's file lock: a ``<file>.lock`` directory; a lock older than ``stale_after`` s is broken."""
    lock = path.with_name(path.name + ".lock")
    path.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(attempts):
        try:
            lock.mkdir()
            break
        except FileExistsError:
            with contextlib.suppress(FileNotFoundError):
                if time.time() - lock.stat().st_mtime > stale_after:
                    lock.rmdir()
                    continue
            time.sleep(0.02)
    else:
        raise SettingsError(f"{path} is locked by another process ({lock})")
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            lock.rmdir()


__all__ = [
    "DEFAULT_TOOL_NAMES",
    "GLOBAL_ONLY_KEYS",
    "BranchSummarySettings",
    "ImageSettings",
    "CompactionSettings",
    "PluginSettings",
    "ProviderRetrySettings",
    "RetrySettings",
    "Settings",
    "SettingsError",
    "SettingsIssue",
    "ThinkingBudgets",
    "merge_settings",
    "migrate_settings",
    "resolve_settings_path",
    "write_setting",
]
