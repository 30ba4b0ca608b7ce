"""Themes in pi's format: colours by pi's token names (``accent``, ``mdHeading``, ``toolDiffAdded``...).

Built in: ``dark`` and ``light`` (pi 1.6's palettes) and ``system``, which uses the
terminal's own 16 ANSI colours and default foreground/background, so it follows whatever palette the
terminal has (pi's fallback when a terminal does not report its colours). A custom theme is a pi
theme JSON file (``name``, ``appearance``, ``vars``, ``colors``, ``export``) in
``<agent dir>/themes/``, ``<cwd>/.pi/themes/`` (trusted projects) or a path from the ``themes`` setting.
Colours are ``#rgb``/``#rrggbb``, ``oklch(...)``, ``okhsl(...)``, a 256-colour index, a ``vars``
reference, or ``""`` (the terminal's default). OKLCH/OKHSL are converted with coloraide (imported
only for a theme that uses them).

A theme never fails the program: a bad file is reported and skipped, a bad colour falls back to the
built-in value of its token. ``NO_COLOR`` turns every colour off.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...safejson import parse_json

if TYPE_CHECKING:
    from ...runtime.agent_session import AgentSession

FG_TOKENS = (
    "accent", "border", "borderAccent", "borderMuted", "success", "error", "warning", "muted", "dim", "text",
    "thinkingText", "userMessageText", "customMessageText", "customMessageLabel", "toolTitle", "toolOutput",
    "mdHeading", "mdLink", "mdLinkUrl", "mdCode", "mdCodeBlock", "mdCodeBlockBorder", "mdQuote", "mdQuoteBorder",
    "mdHr", "mdListBullet", "toolDiffAdded", "toolDiffRemoved", "toolDiffContext", "syntaxComment",
    "syntaxKeyword", "syntaxFunction", "syntaxVariable", "syntaxString", "syntaxNumber", "syntaxType",
    "syntaxOperator", "syntaxPunctuation", "thinkingOff", "thinkingMinimal", "thinkingLow", "thinkingMedium",
    "thinkingHigh", "thinkingXhigh", "thinkingMax", "bashMode", "scrollbarTrack", "scrollbarThumb",
    "searchMatchText",
)
BG_TOKENS = ("selectedBg", "searchMatchBg", "userMessageBg", "customMessageBg", "toolPendingBg", "toolSuccessBg",
             "toolErrorBg")
TOKENS = (*FG_TOKENS, *BG_TOKENS)
OPTIONAL = {"scrollbarTrack": "muted", "scrollbarThumb": "text", "searchMatchBg": "selectedBg",
            "searchMatchText": "text", "thinkingMax": "thinkingXhigh"}
"""Tokens a theme may leave out, and the token they inherit."""
EXPORT_KEYS = ("pageBg", "cardBg", "infoBg")

Colour = tuple[int, int, int] | int | None
"""An RGB triple, a 256-colour index (0-15 are the terminal's ANSI colours), or ``None`` (default)."""


class ThemeError(ValueError):
    """A theme file that cannot be used."""


# -- the built-in palettes: pi 1.6's dark and light (its OKHSL values converted to sRGB) --------------------

_DARK = {
    "accent": "#a798d7", "border": "#5fa8cc", "borderAccent": "#a08ed5", "borderMuted": "#768186",
    "success": "#68b78d", "error": "#ea7f81", "warning": "#cd9a22", "muted": "#9da5a9", "dim": "#7e888e",
    "text": "#dee0e1", "thinkingText": "#96a0a4", "userMessageText": "#dee0e1", "customMessageText": "#9da5a9",
    "customMessageLabel": "#a798d7", "toolTitle": "#dee0e1", "toolOutput": "#9da5a9", "mdHeading": "#cd9a22",
    "mdLink": "#69add0", "mdLinkUrl": "#9da5a9", "mdCode": "#a798d7", "mdCodeBlock": "#68b78d",
    "mdCodeBlockBorder": "#9da5a9", "mdQuote": "#9da5a9", "mdQuoteBorder": "#9da5a9", "mdHr": "#9da5a9",
    "mdListBullet": "#a798d7", "toolDiffAdded": "#68b78d", "toolDiffRemoved": "#ea7f81",
    "toolDiffContext": "#9da5a9", "syntaxComment": "#9da5a9", "syntaxKeyword": "#69add0",
    "syntaxFunction": "#cd9a22", "syntaxVariable": "#5db3ba", "syntaxString": "#de8d5a", "syntaxNumber": "#68b78d",
    "syntaxType": "#a798d7", "syntaxOperator": "#9da5a9", "syntaxPunctuation": "#9da5a9", "thinkingOff": "#6c767b",
    "thinkingMinimal": "#68808d", "thinkingLow": "#5489a4", "thinkingMedium": "#6185cc", "thinkingHigh": "#9776e5",
    "thinkingXhigh": "#de54c1", "thinkingMax": "#fe5462", "bashMode": "#5eb286", "scrollbarTrack": "#484e52",
    "scrollbarThumb": "#97a0a5", "searchMatchText": "#9da5a9", "selectedBg": "#213b49", "searchMatchBg": "#4e2f1b",
    "userMessageBg": "#213b49", "customMessageBg": "#3a3055", "toolPendingBg": "#34383a", "toolSuccessBg": "#254131",
    "toolErrorBg": "#5b282a",
}

_DARK_EXPORT = {"pageBg": "#21252c", "cardBg": "#282c34", "infoBg": "#4e2f1b"}

_LIGHT = {
    "accent": "#7459b4", "border": "#3d8eb3", "borderAccent": "#8a72cb", "borderMuted": "#9aa2a7",
    "success": "#337e58", "error": "#c8253d", "warning": "#8f6802", "muted": "#677176", "dim": "#879095",
    "text": "#3b3f41", "thinkingText": "#7c868c", "userMessageText": "#3b3f41", "customMessageText": "#677176",
    "customMessageLabel": "#7459b4", "toolTitle": "#3b3f41", "toolOutput": "#677176", "mdHeading": "#8f6802",
    "mdLink": "#2f7899", "mdLinkUrl": "#677176", "mdCode": "#7459b4", "mdCodeBlock": "#337e58",
    "mdCodeBlockBorder": "#677176", "mdQuote": "#677176", "mdQuoteBorder": "#677176", "mdHr": "#677176",
    "mdListBullet": "#7459b4", "toolDiffAdded": "#337e58", "toolDiffRemoved": "#c8253d",
    "toolDiffContext": "#677176", "syntaxComment": "#677176", "syntaxKeyword": "#2f7899",
    "syntaxFunction": "#8f6802", "syntaxVariable": "#287a81", "syntaxString": "#a45417", "syntaxNumber": "#337e58",
    "syntaxType": "#7459b4", "syntaxOperator": "#677176", "syntaxPunctuation": "#677176", "thinkingOff": "#c2c8ca",
    "thinkingMinimal": "#b5c4cb", "thinkingLow": "#9fc2d5", "thinkingMedium": "#a2b7e0", "thinkingHigh": "#b5a5e8",
    "thinkingXhigh": "#e585cd", "thinkingMax": "#fe7479", "bashMode": "#40976c", "scrollbarTrack": "#e1e3e4",
    "scrollbarThumb": "#96a0a4", "searchMatchText": "#677176", "selectedBg": "#dfe7ec", "searchMatchBg": "#ede3dd",
    "userMessageBg": "#dfe7ec", "customMessageBg": "#e6e4ee", "toolPendingBg": "#e4e5e6", "toolSuccessBg": "#dee9e1",
    "toolErrorBg": "#eee2e1",
}

_LIGHT_EXPORT = {"pageBg": "#efeeee", "cardBg": "#f7f6f6", "infoBg": "#ede3dd"}

# system: the terminal's ANSI colours (0-15) and defaults, so the terminal's palette decides.
_SYSTEM: dict[str, Any] = {
    **{k: "" for k in TOKENS},
    "accent": 6, "border": 4, "borderAccent": 6, "borderMuted": 8, "success": 2, "error": 1, "warning": 3,
    "muted": 8, "dim": 8, "thinkingText": 8, "customMessageLabel": 5, "toolOutput": 8, "mdHeading": 5,
    "mdLink": 4, "mdLinkUrl": 8, "mdCode": 6, "mdCodeBlockBorder": 8, "mdQuote": 8, "mdQuoteBorder": 8,
    "mdHr": 8, "mdListBullet": 6, "toolDiffAdded": 2, "toolDiffRemoved": 1, "toolDiffContext": 8,
    "syntaxComment": 8, "syntaxKeyword": 5, "syntaxFunction": 4, "syntaxVariable": 1, "syntaxString": 2,
    "syntaxNumber": 3, "syntaxType": 3, "syntaxOperator": 6, "syntaxPunctuation": "", "thinkingOff": 8,
    "thinkingMinimal": 8, "thinkingLow": 4, "thinkingMedium": 6, "thinkingHigh": 5, "thinkingXhigh": 13,
    "bashMode": 2,
}
BUILTIN_SOURCES: dict[str, tuple[str, dict[str, Any], dict[str, str]]] = {
    "dark": ("dark", _DARK, _DARK_EXPORT), "light": ("light", _LIGHT, _LIGHT_EXPORT), "system": ("dark", _SYSTEM, {})}


# -- colours --------------------------------------------------------------------------------------------

_HEX = re.compile(r"^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")


def parse_colour(value: Any, variables: dict[str, Any], seen: tuple[str, ...] = ()) -> Colour:
    """One colour value of a theme file (see the module docstring); raises :class:`ThemeError`."""
    if isinstance(value, bool):
        raise ThemeError(f"{value!r} is not a colour")
    if isinstance(value, int):
        if 0 <= value <= 255:
            return value
        raise ThemeError(f"colour index {value} is outside 0-255")
    if not isinstance(value, str):
        raise ThemeError(f"{value!r} is not a colour")
    text = value.strip()
    if text == "":
        return None
    if _HEX.match(text):
        digits = text[1:]
        if len(digits) == 3:
            digits = "".join(c * 2 for c in digits)
        return int(digits[0:2], 16), int(digits[2:4], 16), int(digits[4:6], 16)
    if text.lower().startswith(("oklch(", "okhsl(")):
        return _perceptual(text)
    if text in variables:
        if text in seen:
            raise ThemeError(f"circular variable reference: {' -> '.join((*seen, text))}")
        return parse_colour(variables[text], variables, (*seen, text))
    raise ThemeError(f"unknown colour or variable {text!r}")


def _perceptual(text: str) -> tuple[int, int, int]:
    try:
        from coloraide import Color
        from coloraide.spaces.okhsl import Okhsl
        from coloraide.spaces.oklch import OkLCh
    except ImportError as exc:  # pragma: no cover - coloraide is a dependency
        raise ThemeError(f"{text}: OKLCH/OKHSL colours need the coloraide package") from exc

    class _Colour(Color):
        pass

    _Colour.register([OkLCh(), Okhsl()], overwrite=True)
    try:
        match = re.match(r"^(ok\w+)\(\s*([^)]*)\)$", text.strip(), re.IGNORECASE)
        if match is None:
            raise ValueError(text)
        space = match.group(1).lower()
        parts = [p for p in re.split(r"[\s,/]+", match.group(2).strip()) if p]
        if len(parts) < 3:
            raise ValueError(text)
        if space == "okhsl":
            hue, sat, light = _number(parts[0]), _percent(parts[1]), _percent(parts[2])
            colour = _Colour("okhsl", [hue, sat, light])
        else:
            light, chroma, hue = _percent(parts[0]), _number(parts[1]), _number(parts[2])
            colour = _Colour("oklch", [light, chroma, hue])
        rgb = colour.convert("srgb").fit("srgb")
    except (ValueError, TypeError) as exc:
        raise ThemeError(f"cannot read the colour {text!r}") from exc
    r, g, b = (max(0, min(255, round(c * 255))) for c in rgb.coords())
    return r, g, b


def _number(text: str) -> float:
    return float(text.removesuffix("deg"))


def _percent(text: str) -> float:
    return float(text[:-1]) / 100 if text.endswith("%") else float(text)


def _sgr(colour: Colour, *, background: bool, truecolor: bool) -> str:
    if colour is None:
        return ""
    if isinstance(colour, int):
        if colour < 8:
            return str((40 if background else 30) + colour)
        if colour < 16:
            return str((100 if background else 90) + colour - 8)
        return f"{48 if background else 38};5;{colour}"
    r, g, b = colour
    if truecolor:
        return f"{48 if background else 38};2;{r};{g};{b}"
    return f"{48 if background else 38};5;{_to_256(r, g, b)}"


def _to_256(r: int, g: int, b: int) -> int:
    def level(v: int) -> int:
        return 0 if v < 48 else 1 if v < 115 else (v - 35) // 40

    cube = 16 + 36 * level(r) + 6 * level(g) + level(b)
    grey = round((r + g + b) / 3)
    if abs(r - g) < 10 and abs(g - b) < 10:
        return 232 + min(23, max(0, (grey - 8) // 10)) if 8 <= grey <= 238 else (16 if grey < 8 else 231)
    return cube


def truecolor_wanted(env: dict[str, str] | None = None) -> bool:
    """24-bit colours, or the nearest of 256: as pi decides it (the terminal, ``PI_TRUE_COLOR``, the
    ``terminal.trueColor`` setting; see :mod:`.capabilities`)."""
    from .capabilities import truecolor

    return truecolor(env)


# -- the theme ------------------------------------------------------------------------------------------


@dataclass
class Theme:
    """A resolved theme: every token has a colour. ``fg``/``bg``/``style`` return styled text, which
    is what renderers and plugins use (``ctx.ui.theme.fg("accent", "text")``)."""

    name: str
    appearance: str = "dark"
    colors: dict[str, Colour] = field(default_factory=dict)
    export: dict[str, Colour] = field(default_factory=dict)
    source: Path | None = None
    colour: bool = True
    truecolor: bool = False
    _codes: dict[tuple[str, bool], str] = field(default_factory=dict, repr=False)

    def code(self, token: str, *, background: bool = False) -> str:
        """The SGR parameters of a token (``""`` for the terminal's default or with colour off)."""
        key = (token, background)
        cached = self._codes.get(key)
        if cached is None:
            if token not in self.colors:
                raise KeyError(f"unknown theme token {token!r}")
            cached = _sgr(self.colors[token], background=background, truecolor=self.truecolor) \
                if self.colour else ""
            self._codes[key] = cached
        return cached

    def fg(self, token: str, text: str) -> str:
        code = self.code(token)
        return f"\x1b[{code}m{text}\x1b[39m" if code and text else text

    def bg(self, token: str, text: str) -> str:
        code = self.code(token, background=True)
        return f"\x1b[{code}m{text}\x1b[49m" if code and text else text

    def bold(self, text: str) -> str:
        return f"\x1b[1m{text}\x1b[22m" if self.colour and text else text

    def italic(self, text: str) -> str:
        return f"\x1b[3m{text}\x1b[23m" if self.colour and text else text

    def underline(self, text: str) -> str:
        return f"\x1b[4m{text}\x1b[24m" if self.colour and text else text

    def style(self, text: str, *, fg: str | None = None, bg: str | None = None, bold: bool = False,
              italic: bool = False, underline: bool = False, dim: bool = False) -> str:
        if not self.colour or not text:
            return text
        codes = [c for c in (self.code(fg) if fg else "", self.code(bg, background=True) if bg else "") if c]
        codes += [a for a, on in (("1", bold), ("2", dim), ("3", italic), ("4", underline)) if on]
        return f"\x1b[{';'.join(codes)}m{text}\x1b[0m" if codes else text

    def hex(self, token: str) -> str | None:
        """A token's colour as ``#rrggbb`` (``None`` for the terminal's default or an ANSI index)."""
        value = self.colors.get(token)
        return "#%02x%02x%02x" % value if isinstance(value, tuple) else None


def build_theme(data: dict[str, Any], *, source: Path | None = None, colour: bool = True,
                truecolor: bool | None = None) -> Theme:
    """A :class:`Theme` from pi's theme JSON (already parsed). Raises :class:`ThemeError` for what
    pi rejects (no name, a reserved name, unknown top-level keys or tokens, bad colours)."""
    if not isinstance(data, dict):
        raise ThemeError("a theme is a JSON object")
    unknown = set(data) - {"$schema", "name", "appearance", "vars", "colors", "export"}
    if unknown:
        raise ThemeError(f"unknown top-level keys: {', '.join(sorted(unknown))}")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ThemeError("the theme has no name")
    if "/" in name or name == "system":
        raise ThemeError(f"{name!r} cannot be a theme name (no '/', not 'system')")
    variables = data.get("vars") or {}
    colors = data.get("colors")
    if not isinstance(variables, dict) or not isinstance(colors, dict):
        raise ThemeError("'vars' and 'colors' must be objects")
    bad = set(colors) - set(TOKENS)
    if bad:
        raise ThemeError(f"unknown colour tokens: {', '.join(sorted(bad))}")
    missing = [t for t in TOKENS if t not in colors and t not in OPTIONAL]
    if missing:
        raise ThemeError(f"missing colour tokens: {', '.join(missing)}")
    resolved: dict[str, Colour] = {}
    for token in TOKENS:
        if token in colors:
            try:
                resolved[token] = parse_colour(colors[token], variables)
            except ThemeError as exc:
                raise ThemeError(f"{token}: {exc}") from None
    for token, parent in OPTIONAL.items():
        resolved.setdefault(token, resolved.get(parent))
    appearance = data.get("appearance")
    if appearance not in ("dark", "light"):
        appearance = _guess_appearance(resolved)
    export: dict[str, Colour] = {}
    for key, value in (data.get("export") or {}).items():
        if key not in EXPORT_KEYS:
            raise ThemeError(f"unknown export colour {key!r}")
        export[key] = parse_colour(value, variables)
    return Theme(name, appearance, resolved, export, source, colour,
                 truecolor_wanted() if truecolor is None else truecolor)


def _guess_appearance(colors: dict[str, Colour]) -> str:
    bg = colors.get("userMessageBg")
    if isinstance(bg, tuple):
        return "light" if sum(bg) / 3 > 128 else "dark"
    return "dark"


def builtin_theme(name: str, *, colour: bool = True, truecolor: bool | None = None) -> Theme:
    appearance, colors, export = BUILTIN_SOURCES[name]
    theme = build_theme({"name": "builtin", "appearance": appearance, "colors": colors, "export": export},
                        colour=colour, truecolor=truecolor)
    theme.name = name
    return theme


def load_theme_file(path: Path, **options: Any) -> Theme:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ThemeError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        data = parse_json(text)
    except ValueError as exc:
        raise ThemeError(f"{path}: not valid JSON ({exc})") from None
    try:
        return build_theme(data, source=path, **options)
    except ThemeError as exc:
        raise ThemeError(f"{path}: {exc}") from None


@dataclass
class ThemeCatalog:
    """Every theme found: the built-ins, then theme files (later duplicates are reported)."""

    files: dict[str, Path] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    @classmethod
    def discover(cls, agent_dir: Path | None, cwd: Path | None = None, *, trusted: bool = False,
                 extra: Iterable[Path] = (), enabled: Callable[[Path], bool] | None = None) -> ThemeCatalog:
        """Theme files of the agent directory, the project (when trusted) and ``extra``; ``enabled``
        (the settings' ``themes`` filter entries) may switch single files off."""
        catalog = cls()
        folders: list[Path] = []
        if agent_dir is not None:
            folders.append(Path(agent_dir) / "themes")
        if cwd is not None and trusted:
            folders.append(Path(cwd) / ".pi" / "themes")
        for place in [*folders, *extra]:
            for path in _json_files(place):
                if enabled is None or enabled(path):
                    catalog._add(path)
        return catalog

    def _add(self, path: Path) -> None:
        try:
            name = parse_json(path.read_text(encoding="utf-8")).get("name")
        except (OSError, ValueError, AttributeError):
            name = None
        if not isinstance(name, str):
            self.errors.append(f"{path}: not a theme (no name)")
            return
        if name in BUILTIN_SOURCES or name in self.files:
            where = "a built-in theme" if name in BUILTIN_SOURCES else str(self.files[name])
            self.errors.append(f"{path}: theme name {name!r} is already taken by {where}; skipped")
            return
        self.files[name] = path

    def names(self) -> list[str]:
        return [*BUILTIN_SOURCES, *sorted(self.files)]

    def get(self, name: str, **options: Any) -> Theme:
        if name in BUILTIN_SOURCES:
            return builtin_theme(name, **options)
        path = self.files.get(name)
        if path is None:
            raise ThemeError(f"no theme named {name!r} (have: {', '.join(self.names())})")
        return load_theme_file(path, **options)


def _json_files(place: Path) -> list[Path]:
    if place.is_file():
        return [place] if place.suffix == ".json" else []
    if place.is_dir():
        return sorted(p for p in place.glob("*.json") if p.is_file())
    return []


def choose_theme(setting: str | None, catalog: ThemeCatalog, *, background: str = "dark", colour: bool = True,
                 errors: list[str] | None = None) -> Theme:
    """The theme for a ``theme`` setting: a name, or ``light/dark`` (light first) chosen by the
    terminal's ``background`` (``COLORFGBG``); unknown or broken themes fall back to ``system``."""
    name = (setting or "system").strip() or "system"
    if "/" in name:
        light, _, dark = name.partition("/")
        name = light if background == "light" else dark
    try:
        return catalog.get(name, colour=colour)
    except ThemeError as exc:
        if errors is not None:
            errors.append(f"theme: {exc}; using 'system'")
        return builtin_theme("system", colour=colour)


def configured_catalog(settings: Any, agent_dir: Path | None, cwd: Path, *, extra: Iterable[Path] = (),
                       given: Iterable[Path] = (), no_themes: bool = False) -> ThemeCatalog:
    """The themes ``settings`` make available: the agent directory's and (trusted) the project's theme
    folders and the ``themes`` setting's paths, switched off one by one by that setting's filter entries,
    then ``extra`` (packages' and plugins' themes) and ``given`` (``--theme`` files). With ``no_themes``
    (``--no-themes``) only the built-ins and ``given``."""
    if no_themes:
        return ThemeCatalog.discover(None, extra=given)
    paths: list[Path] = list(settings.theme_paths()) if hasattr(settings, "theme_paths") else []
    enabled = None
    if settings is not None and hasattr(settings, "scope_data") and agent_dir is not None:
        from ...runtime.resource_filter import ResourceFilter

        rules = ResourceFilter(settings, "themes", cwd, agent_dir)
        enabled = rules.enabled if rules.active else None
    # the filter only speaks for the settings' own places (agent/project themes dirs, plain entries)
    return ThemeCatalog.discover(agent_dir, cwd, trusted=bool(getattr(settings, "trusted", False)),
                                 extra=[*paths, *extra, *given], enabled=enabled)


def session_theme_catalog(session: AgentSession) -> ThemeCatalog:
    """:func:`configured_catalog` for a running ``AgentSession``: its settings, its packages' themes, the
    themes its plugins add (``resources_discover``) and its ``--theme`` / ``--no-themes`` options."""
    from ...packages import package_set_for

    cwd = Path(session.cwd)
    options = getattr(getattr(getattr(session, "resources", None), "loader", None), "options", None)
    given = [cwd / p for p in getattr(options, "theme_paths", ())]
    no_themes = bool(getattr(options, "no_themes", False))
    extra = [] if no_themes else [*package_set_for(session.host).theme_paths, *getattr(session, "theme_paths", [])]
    agent_dir = Path(getattr(session.host, "agent_dir", ".") or ".")
    return configured_catalog(getattr(session, "settings", None), agent_dir, cwd, extra=extra, given=given,
                              no_themes=no_themes)


def theme_setting(settings: Any) -> str | None:
    """The ``theme`` setting's value (a run's ``--use-theme`` override first), or ``None``."""
    value = getattr(settings, "theme", None)
    if value is None and hasattr(settings, "get"):
        value = settings.get("theme", None)
    return value if isinstance(value, str) else None


def session_theme(session: AgentSession, *, errors: list[str] | None = None) -> Theme:
    """The theme the ``theme`` setting picks for a running session, as the terminal would choose it
    (used where no terminal is up: the RPC ``export_html`` command)."""
    return choose_theme(theme_setting(getattr(session, "settings", None)), session_theme_catalog(session),
                        background=terminal_background(), errors=errors)


def terminal_background(env: dict[str, str] | None = None) -> str:
    """``light`` or ``dark`` from ``COLORFGBG`` (``fg;bg``, bg 7 or 15 is light), else ``dark``."""
    env = dict(os.environ) if env is None else env
    value = env.get("COLORFGBG", "")
    last = value.split(";")[-1] if value else ""
    return "light" if last in ("7", "15") else "dark"


__all__ = ["BG_TOKENS", "FG_TOKENS", "TOKENS", "Theme", "ThemeCatalog", "ThemeError", "build_theme",
           "builtin_theme", "choose_theme", "configured_catalog", "load_theme_file", "parse_colour",
           "session_theme", "session_theme_catalog", "terminal_background", "theme_setting"]
