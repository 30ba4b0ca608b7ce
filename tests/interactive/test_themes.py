"""Themes in pi's format: loading a theme file (vars, OKHSL/OKLCH, 256-colour indices, defaults), what
is rejected and why, choosing by the ``theme`` setting (and ``light/dark``), and the terminal using it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from test_interactive_pty import quit_app, running  # noqa: F401  (running is a fixture)

from pi_core.modes.interactive.theme import (
    TOKENS,
    ThemeCatalog,
    ThemeError,
    build_theme,
    builtin_theme,
    choose_theme,
    load_theme_file,
    parse_colour,
)


def _colors(**overrides: object) -> dict[str, object]:
    base = {t: "#808080" for t in TOKENS if t not in ("scrollbarTrack", "scrollbarThumb", "searchMatchBg",
                                                      "searchMatchText", "thinkingMax")}
    return {**base, **overrides}


def test_a_pi_theme_file_with_vars_and_perceptual_colours(tmp_path: Path) -> None:
    path = tmp_path / "sunset.json"
    path.write_text(json.dumps({
        "$schema": "https://pi.dev/schemas/theme.schema.json", "name": "sunset",
        "vars": {"hot": "#f00", "warm": "hot", "sky": "okhsl(250 60% 55%)"},
        "colors": _colors(mdHeading="warm", accent="sky", muted=244, text="", success="oklch(62% 0.1 200)"),
        "export": {"pageBg": "#101010"}}))
    theme = load_theme_file(path, truecolor=True)
    assert theme.name == "sunset" and theme.source == path
    assert theme.colors["mdHeading"] == (255, 0, 0)
    assert theme.hex("accent") == "#4e88c2"  # OKHSL converted (coloraide), gamut-mapped
    assert theme.hex("success") == "#1c989e"
    assert theme.fg("mdHeading", "x") == "\x1b[38;2;255;0;0mx\x1b[39m"
    assert theme.fg("muted", "x") == "\x1b[38;5;244mx\x1b[39m"
    assert theme.fg("text", "x") == "x"  # the terminal's default colour
    assert theme.colors["thinkingMax"] == theme.colors["thinkingXhigh"]  # an optional token inherits
    assert theme.appearance == "dark" and theme.export["pageBg"] == (16, 16, 16)
    assert build_theme(json.loads(path.read_text()), truecolor=False).fg("mdHeading", "x") == "\x1b[38;5;196mx\x1b[39m"
    assert builtin_theme("dark", colour=False).fg("accent", "plain") == "plain"  # NO_COLOR


@pytest.mark.parametrize(("change", "message"), [
    ({"name": "system"}, "cannot be a theme name"),
    ({"name": "a/b"}, "cannot be a theme name"),
    ({"extra": 1}, "unknown top-level keys: extra"),
    ({"colors": _colors(madeUp="#fff")}, "unknown colour tokens: madeUp"),
    ({"colors": {"accent": "#fff"}}, "missing colour tokens"),
    ({"colors": _colors(accent="nope")}, "accent: unknown colour or variable 'nope'"),
    ({"vars": {"a": "b", "b": "a"}, "colors": _colors(accent="a")}, "circular variable reference"),
    ({"colors": _colors(accent=300)}, "outside 0-255"),
])
def test_bad_themes_are_refused_with_the_reason(change: dict[str, object], message: str) -> None:
    data = {"name": "t", "colors": _colors(), **change}
    with pytest.raises(ThemeError, match=message.replace("(", r"\(")):
        build_theme(data)


def test_choosing_by_setting_and_light_dark_pairs(tmp_path: Path) -> None:
    (tmp_path / "themes").mkdir()
    (tmp_path / "themes" / "paper.json").write_text(json.dumps({"name": "paper", "appearance": "light",
                                                                "colors": _colors()}))
    (tmp_path / "themes" / "copy.json").write_text(json.dumps({"name": "dark", "colors": _colors()}))
    (tmp_path / "themes" / "broken.json").write_text("{ not json")
    catalog = ThemeCatalog.discover(tmp_path)
    assert catalog.names() == ["dark", "light", "system", "paper"]
    assert any("'dark' is already taken" in e for e in catalog.errors)
    assert any("broken.json" in e for e in catalog.errors)
    assert choose_theme("paper", catalog).name == "paper"
    assert choose_theme("paper/dark", catalog, background="light").name == "paper"
    assert choose_theme("paper/dark", catalog, background="dark").name == "dark"
    errors: list[str] = []
    assert choose_theme("missing", catalog, errors=errors).name == "system"
    assert "no theme named 'missing'" in errors[0]
    assert choose_theme(None, catalog).name == "system"  # pi's default


def test_parse_colour_forms() -> None:
    assert parse_colour("#0af", {}) == (0, 170, 255)
    assert parse_colour(39, {}) == 39
    assert parse_colour("", {}) is None
    assert parse_colour("primary", {"primary": "#000000"}) == (0, 0, 0)


def test_the_terminal_draws_with_a_custom_theme(running, tmp_path: Path) -> None:
    (tmp_path / "agent" / "themes").mkdir(parents=True)
    (tmp_path / "agent" / "themes" / "hot.json").write_text(json.dumps({
        "name": "hot", "vars": {"red": "#ff0000"}, "colors": _colors(mdHeading="red", mdCode="#00ff00")}))
    (tmp_path / "agent" / "themes" / "bad.json").write_text(json.dumps({"name": "bad", "colors": {}}))
    (tmp_path / "agent" / "settings.json").write_text(json.dumps({"theme": "hot"}))
    app = running([{"text": "# Big heading\n\nsome `code` here"}], env={"COLORTERM": "truecolor"})
    app.type("show me")
    app.wait_for("some code here")
    quit_app(app)
    raw = bytes(app.raw)
    assert b"\x1b[38;2;255;0;0;1;4mBig heading" in raw
    assert b"\x1b[38;2;0;255;0mcode" in raw


def test_an_unknown_theme_setting_is_reported_and_system_used(running, tmp_path: Path) -> None:
    (tmp_path / "agent").mkdir(exist_ok=True)
    (tmp_path / "agent" / "settings.json").write_text(json.dumps({"theme": "nosuch"}))
    app = running([{"text": "# Heading"}])
    assert "theme: no theme named 'nosuch'" in app.text()
    app.type("x")
    app.wait_for("Heading")
    quit_app(app)
    assert b"\x1b[35;1;4mHeading" in bytes(app.raw)  # the system theme: the terminal's magenta


def test_a_theme_shipped_by_a_package_can_be_chosen(running, tmp_path: Path) -> None:
    package = tmp_path / "theme-package"
    (package / "themes").mkdir(parents=True)
    (package / "themes" / "pkg-hot.json").write_text(json.dumps({
        "name": "pkg-hot", "vars": {}, "colors": _colors(mdHeading="#ff0000")}))
    (tmp_path / "agent").mkdir(exist_ok=True)
    (tmp_path / "agent" / "settings.json").write_text(json.dumps({"theme": "pkg-hot", "packages": [str(package)]}))
    app = running([{"text": "# Big heading"}], env={"COLORTERM": "truecolor"})
    assert "no theme named" not in app.text()
    app.type("show me")
    app.wait_for("Big heading")
    quit_app(app)
    assert b"\x1b[38;2;255;0;0;1;4mBig heading" in bytes(app.raw)


def test_a_theme_added_by_resources_discover_can_be_chosen(running, tmp_path: Path) -> None:
    themes = tmp_path / "plugin-themes"
    themes.mkdir()
    (themes / "plugin-hot.json").write_text(json.dumps({
        "name": "plugin-hot", "vars": {}, "colors": _colors(mdHeading="#ff0000")}))
    (tmp_path / "agent" / "extensions").mkdir(parents=True, exist_ok=True)
    (tmp_path / "agent" / "extensions" / "themes_plugin.py").write_text(
        "from pi_core import ResourcePaths, hookimpl\n\n"
        "@hookimpl\n"
        f"def resources_discover(event, ctx):\n    return ResourcePaths(theme_paths=[{str(themes)!r}])\n")
    (tmp_path / "agent" / "settings.json").write_text(json.dumps({"theme": "plugin-hot"}))
    app = running([{"text": "# Big heading"}], env={"COLORTERM": "truecolor"})
    assert "no theme named" not in app.text()
    app.type("show me")
    app.wait_for("Big heading")
    quit_app(app)
    assert b"\x1b[38;2;255;0;0;1;4mBig heading" in bytes(app.raw)


def test_themes_switched_off_by_pi_config_or_settings_filters_cannot_be_chosen(running, tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    agent = tmp_path / "agent"
    (agent / "themes").mkdir(parents=True)
    for name in ("hot", "cold"):
        (agent / "themes" / f"{name}.json").write_text(json.dumps({"name": name, "vars": {}, "colors": _colors()}))
    extra = tmp_path / "more-themes"
    extra.mkdir()
    for name in ("dusk", "dawn"):
        (extra / f"{name}.json").write_text(json.dumps({"name": name, "vars": {}, "colors": _colors()}))
    # a plain path entry brings a folder in; its own `!` pattern narrows what comes from it
    (agent / "settings.json").write_text(json.dumps({"theme": "hot", "themes": [str(extra), "!**/dawn.json"]}))
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent)}
    listed = subprocess.run([sys.executable, "-m", "pi_core", "config"], capture_output=True, text=True,
                            env=env, cwd=tmp_path, timeout=60)
    assert "[x] themes     themes/hot.json\n" in listed.stdout, listed.stdout
    off = subprocess.run([sys.executable, "-m", "pi_core", "config", "disable", "user", "hot"],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert off.returncode == 0, off.stderr
    assert json.loads((agent / "settings.json").read_text())["themes"] == [str(extra), "!**/dawn.json",
                                                                             "-themes/hot.json"]
    app = running()
    assert "theme: no theme named 'hot' (have: dark, light, system, cold, dusk)" in app.text().replace("\n", "")
    quit_app(app)


PI_THEMES = Path(os.environ.get("PI_TS_DIR", "/work/pi-ts")) / "node_modules/@earendil-works/pi-coding-agent/dist" \
    / "modes/interactive/theme"
# What pi 1.6.0's dark.json and light.json resolve to (token colours and export colours), read from its npm
# package with load_theme_file; the test compares with the package itself too where pi is installed.
PI_PALETTES = Path(__file__).resolve().parents[1] / "fixtures" / "themes" / "pi-1.6-builtin-palettes.json"


@pytest.mark.parametrize("name", ["dark", "light"])
def test_the_built_in_dark_and_light_are_pis_palettes(name: str) -> None:
    from pi_core.modes.interactive.theme import TOKENS, builtin_theme, load_theme_file

    ours = builtin_theme(name, truecolor=True)
    got = {"appearance": ours.appearance, "tokens": {t: ours.hex(t) for t in TOKENS},
           "export": {k: list(v) for k, v in ours.export.items()}}
    assert got == json.loads(PI_PALETTES.read_text())[name]
    if (PI_THEMES / f"{name}.json").exists():  # the recorded palettes still are pi's
        pis = load_theme_file(PI_THEMES / f"{name}.json", truecolor=True)
        assert {t: pis.hex(t) for t in TOKENS} == got["tokens"] and pis.export == ours.export
