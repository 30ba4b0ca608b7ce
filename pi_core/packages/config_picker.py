"""``pi config`` in a terminal: every package and local resource with a checkbox, one scope at a time.

Tab switches between the user settings and the project's, Space switches the resource under the cursor
(written to that scope's settings file at once, as pi does), Esc/q/Ctrl+C close. The list is rebuilt from
disk after each change, so what is shown is what the next session loads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..extensions.manager import PluginHost


@dataclass(frozen=True)
class Row:
    """A heading (``toggle`` is ``None``) or a resource with its state."""

    text: str
    depth: int = 0
    enabled: bool | None = None
    toggle: Callable[[bool], None] | None = None


RowSource = Callable[[str], list[Row]]


def rows_for(host: PluginHost, trusted: bool) -> RowSource:
    """The rows of one scope (``"user"`` or ``"project"``), read from disk each time it is called."""
    from . import cli
    from .local_config import builtin_extensions, local_resources

    def build(scope: str) -> list[Row]:
        rows: list[Row] = []
        # The user tab shows the user's own choices; the project tab every package as this project has
        # it, and switching a user package there writes an `autoload: false` project entry.
        for package in cli._resolved(host, trusted if scope == "project" else False):
            shown = ("user", "environment", "temporary") if scope == "user" else ("project", "user", "environment")
            if not package.resources or package.scope not in shown:
                continue
            inherited = scope == "project" and package.scope != "project"
            rows.append(Row(package.source.text + (f"  ({package.scope} settings)" if inherited else "")))
            for resource in package.resources:
                if resource.note:
                    rows.append(Row(f"{resource.kind}: {resource.name}  ({resource.note})", 1))
                    continue
                rows.append(Row(f"{resource.kind}: {resource.name}", 1, resource.enabled,
                                _package_toggle(host, package, resource, scope)))
        local = [r for r in local_resources(host.cwd, host.agent_dir, trusted=trusted) if r.scope == scope]
        if local:
            rows.append(Row(f"{'User' if scope == 'user' else 'Project'} ({_base(host, scope)})"))
        for r in local:
            rows.append(Row(f"{r.kind}: {r.entry}", 1, r.enabled, _local_toggle(host, r)))
        builtins = [b for b in builtin_extensions(host.cwd, host.agent_dir, trusted=trusted) if b.scope == scope]
        if builtins:
            rows.append(Row("Built-in"))
        for b in builtins:
            rows.append(Row(f"extensions: {b.label}", 1, b.enabled, _local_toggle(host, b)))
        return rows

    return build


def _package_toggle(host: PluginHost, package: Any, resource: Any, scope: str) -> Callable[[bool], None]:
    from .cli import switch_package_resources

    return lambda on: switch_package_resources(host, package, [resource], on,
                                               "project" if scope == "project" else "user")


def _local_toggle(host: PluginHost, resource: Any) -> Callable[[bool], None]:
    from .local_config import switch

    def toggle(on: bool) -> None:
        switch(resource, on, host.cwd, host.agent_dir)

    return toggle


def _base(host: PluginHost, scope: str) -> str:
    return str(host.cwd / ".pi") if scope == "project" else str(host.agent_dir)


class ConfigPicker:
    """The picker's state, apart from prompt_toolkit, so that it reads (and tests) as plain code."""

    def __init__(self, source: RowSource, scopes: list[str]) -> None:
        self.source, self.scopes = source, scopes
        self.scope = scopes[0]
        self.cursor = 0
        self.error = ""
        self.rows = source(self.scope)

    @property
    def selectable(self) -> list[int]:
        return [i for i, row in enumerate(self.rows) if row.toggle is not None]

    def move(self, step: int) -> None:
        if self.selectable:
            self.cursor = max(0, min(len(self.selectable) - 1, self.cursor + step))

    def switch_scope(self) -> None:
        self.scope = self.scopes[(self.scopes.index(self.scope) + 1) % len(self.scopes)]
        self.cursor, self.error = 0, ""
        self.rows = self.source(self.scope)

    def toggle(self) -> None:
        if not self.selectable:
            return
        row = self.rows[self.selectable[self.cursor]]
        assert row.toggle is not None
        try:
            row.toggle(not row.enabled)
            self.error = ""
        except Exception as exc:  # noqa: BLE001 - a refused write is shown, the picker stays open
            self.error = str(exc)
        self.rows = self.source(self.scope)

    def lines(self, file: str) -> list[tuple[str, str]]:
        title = "User resources" if self.scope == "user" else "Project resources"
        keys = ("tab switch scope · " if len(self.scopes) > 1 else "") + "space toggle · esc close"
        out = [("bold", f"{title}  "), ("", f"{file}\n"), ("ansibrightblack", f"{keys}\n\n")]
        if not self.rows:
            out.append(("", "Nothing to configure here.\n"))
        current = self.selectable[self.cursor] if self.selectable else -1
        for index, row in enumerate(self.rows):
            pointer = "> " if index == current else "  "
            indent = "  " * row.depth
            if row.toggle is None and row.enabled is None and row.depth == 0:
                out.append(("bold", f"{pointer}{row.text}\n"))
            elif row.toggle is None:
                out.append(("ansibrightblack", f"{pointer}{indent}    {row.text}\n"))
            else:
                box = "[x]" if row.enabled else "[ ]"
                out.append(("reverse" if index == current else "", f"{pointer}{indent}{box} {row.text}\n"))
        if self.error:
            out.append(("ansired", f"\n{self.error}\n"))
        return out


def run_picker(host: PluginHost, trusted: bool, start_local: bool) -> None:
    from prompt_toolkit import Application
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import Layout, Window
    from prompt_toolkit.layout.controls import FormattedTextControl

    scopes = ["user", "project"] if trusted else ["user"]
    picker = ConfigPicker(rows_for(host, trusted), scopes)
    if start_local and trusted:
        picker.switch_scope()
    files = {"user": str(host.agent_dir / "settings.json"), "project": str(host.cwd / ".pi" / "settings.json")}
    keys = KeyBindings()

    @keys.add("up")
    @keys.add("k")
    def _up(event: Any) -> None:
        picker.move(-1)

    @keys.add("down")
    @keys.add("j")
    def _down(event: Any) -> None:
        picker.move(1)

    @keys.add(" ")
    @keys.add("enter")
    def _toggle(event: Any) -> None:
        picker.toggle()

    @keys.add("tab")
    def _scope(event: Any) -> None:
        picker.switch_scope()

    @keys.add("escape", eager=True)
    @keys.add("q")
    @keys.add("c-c")
    def _close(event: Any) -> None:
        event.app.exit()

    control = FormattedTextControl(lambda: picker.lines(files[picker.scope]), focusable=True, show_cursor=False)
    Application(layout=Layout(Window(control)), key_bindings=keys, full_screen=False, erase_when_done=True).run()


__all__ = ["ConfigPicker", "Row", "rows_for", "run_picker"]
