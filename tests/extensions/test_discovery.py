"""Entry-point discovery and the fallback used when package metadata is missing."""

from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path

import pytest

from pi_core.extensions import discovery
from pi_core.extensions.discovery import BUILTIN_PLUGINS, scan_entry_points

REPO = Path(__file__).resolve().parents[2]


def pyproject_entry_points() -> dict[str, str]:
    data = tomllib.loads((REPO / "pyproject.toml").read_text())
    return data["project"]["entry-points"].get("pi", {})


def test_fallback_tuple_equals_the_pyproject_table() -> None:
    assert dict(BUILTIN_PLUGINS) == pyproject_entry_points()
    assert len(dict(BUILTIN_PLUGINS)) == len(BUILTIN_PLUGINS)  # no duplicate names


def test_installed_metadata_agrees_with_pyproject() -> None:
    scan_entry_points.cache_clear()
    builtins = {s.name: s.module for s in scan_entry_points() if s.source == "builtin"}
    assert builtins == pyproject_entry_points(), "reinstall with `pip install -e .` after editing entry points"


def test_fallback_is_used_when_metadata_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(metadata, "entry_points", lambda **_: ())
    scan_entry_points.cache_clear()
    try:
        specs = scan_entry_points()
    finally:
        scan_entry_points.cache_clear()
    assert [(s.name, s.module) for s in specs] == sorted(BUILTIN_PLUGINS)
    assert {s.source for s in specs} <= {"builtin"}


def test_scan_happens_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    scan_entry_points.cache_clear()
    calls = []
    real = metadata.entry_points

    def counting(**kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(**kwargs)

    monkeypatch.setattr(metadata, "entry_points", counting)
    first = scan_entry_points()
    assert scan_entry_points() is first
    assert calls == [1]
    scan_entry_points.cache_clear()


def test_extension_files_are_sorted_and_skip_private(tmp_path: Path) -> None:
    for name in ("b.py", "a.py", "_private.py", ".hidden.py", "notes.txt"):
        (tmp_path / name).write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "not_a_pkg").mkdir()
    assert [p.relative_to(tmp_path).as_posix() for p in discovery.extension_files(tmp_path)] == [
        "a.py", "b.py", "pkg/__init__.py"]
