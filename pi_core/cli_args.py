"""Reading ``pi``'s command line before typer does: global flags, plugin flags, the default command."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .extensions.manager import PluginHost

DEFAULT_COMMAND = "run"
BUILTIN_COMMANDS = ("plugins", "trust", "install", "remove", "uninstall", "list", "update", "config", "plugin")


@dataclass
class GlobalOptions:
    """Flags that decide which plugins load; read before the command line is parsed for real."""

    approve: bool | None = None
    no_plugins: bool = False
    no_extensions: bool = False
    extensions: list[Path] = field(default_factory=list)
    package_sources: list[str] = field(default_factory=list)
    """``-e`` values that name packages (``pypi:NAME``, git URLs, package directories), fetched for this run."""
    plugin_flags: dict[str, Any] = field(default_factory=dict)


_GLOBAL_SWITCHES = {"--approve": ("approve", True), "-a": ("approve", True),
                    "--no-approve": ("approve", False), "-na": ("approve", False),
                    "--no-plugins": ("no_plugins", True),
                    "--no-extensions": ("no_extensions", True), "-ne": ("no_extensions", True)}
_GLOBAL_VALUES = ("-e", "--extension")
_OWN_E_FLAG = ("install", "update")  # install -e: editable; update --extension SOURCE: one package


def preparse(args: Sequence[str]) -> tuple[GlobalOptions, list[str]]:
    """Pick the global flags out of ``args`` (anywhere before ``--``); return them and the rest."""
    options, rest = GlobalOptions(), []
    items = list(args)
    i = 0
    while i < len(items):
        arg = items[i]
        if arg == "--" or (arg in _OWN_E_FLAG and not rest):
            rest.extend(items[i:])  # `pi install -e PATH` means editable, not an extension (see _OWN_E_FLAG)
            break
        if arg in _GLOBAL_SWITCHES:
            attr, value = _GLOBAL_SWITCHES[arg]
            setattr(options, attr, value)
        elif arg in _GLOBAL_VALUES and i + 1 < len(items):
            _add_extension(options, items[i + 1])
            i += 1
        elif arg.startswith("--extension="):
            _add_extension(options, arg.split("=", 1)[1])
        else:
            rest.append(arg)
        i += 1
    return options, rest


def _add_extension(options: GlobalOptions, value: str) -> None:
    from .packages.temporary import is_package_source

    if is_package_source(value):
        options.package_sources.append(value)
    else:
        options.extensions.append(Path(value))


def take_plugin_flags(args: list[str], host: PluginHost) -> tuple[dict[str, Any], list[str]]:
    """Remove flags registered by plugins (``register_flags``) from ``args`` and return their values."""
    flags = {f.name: f for f in host.flags}
    values: dict[str, Any] = {name: flag.default for name, flag in flags.items()}
    rest, i = [], 0
    while i < len(args):
        arg = args[i]
        name, _, inline = arg[2:].partition("=") if arg.startswith("--") else ("", "", "")
        flag = flags.get(name)
        if arg == "--":
            rest.extend(args[i:])
            break
        if flag is None:
            rest.append(arg)
        elif flag.type is bool:
            values[name] = inline.lower() not in ("0", "false", "no") if inline else True
        elif inline or arg.endswith("="):
            values[name] = inline
        elif i + 1 < len(args):
            values[name] = args[i + 1]
            i += 1
        else:
            raise SystemExit(_usage_error(f"option --{name} requires a value"))
        i += 1
    return values, rest


def _optional_values(args: list[str]) -> list[str]:
    """``--list-models`` takes a search term only when one follows (pi's rule): give it ``""`` otherwise."""
    out = list(args)
    for i, arg in enumerate(out):
        if arg == "--list-models" and (i + 1 == len(out) or out[i + 1].startswith(("-", "@"))):
            out.insert(i + 1, "")
            break
    return out


def _usage_error(message: str) -> int:
    print(f"pi: {message}", file=sys.stderr)
    return 2


def route(args: list[str], commands: Sequence[str]) -> list[str]:
    """Insert the default command unless the first word names a sub-command."""
    if args and args[0] in commands:
        return args
    return [DEFAULT_COMMAND, *_optional_values(args)]


@dataclass(frozen=True)
class OptionShapes:
    """The spellings of a command's options: those that take a value and those that do not."""

    values: frozenset[str]
    switches: frozenset[str]

    @classmethod
    def of(cls, params: Sequence[Any]) -> OptionShapes:
        values: set[str] = set()
        switches: set[str] = set()
        for param in params:
            opts = [*getattr(param, "opts", ()), *getattr(param, "secondary_opts", ())]
            if getattr(param, "param_type_name", "") != "option":
                continue
            (switches if param.is_flag else values).update(opts)
        return cls(frozenset(values), frozenset(switches | {"-h", "--help"}))


def scan_options(args: Sequence[str], shapes: OptionShapes) -> tuple[bool, str | None]:
    """Whether ``--help``/``-h`` is among the options, and the first unknown short option.

    pi's rule: a single-dash word must be exactly one of its short options (``-nc``, ``-xt``, ...);
    anything else is rejected, so ``-nc`` is never read as ``-n c`` and ``-pc`` never as ``-p -c``.
    Values of options are skipped, and nothing after ``--`` is looked at.
    """
    wants_help, unknown = False, None
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            break
        if arg in shapes.values:
            i += 2
            continue
        if arg in ("-h", "--help"):
            wants_help = True
        elif arg.startswith("-") and not arg.startswith("--") and len(arg) > 1 and arg not in shapes.switches:
            unknown = unknown or arg
        i += 1
    return wants_help, unknown


__all__ = ["BUILTIN_COMMANDS", "DEFAULT_COMMAND", "GlobalOptions", "OptionShapes", "preparse", "route", "scan_options",
           "take_plugin_flags"]
