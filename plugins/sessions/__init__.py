"""``pi session check FILE [--repair]``: a built-in plugin adding a sub-command through the public API."""

# Annotations are evaluated where the functions are defined (no ``from __future__ import annotations``):
# typer reads every command's signature twice, and would compile and evaluate string annotations both times.

from pathlib import Path
from typing import Any

from pi_core import check_session_file, hookimpl, repair_session_file


def session(action: str, file: Path, repair: bool = False) -> None:
    """Check a session file: ``pi session check FILE`` (``--repair`` mends it, keeping a backup)."""
    if action != "check":
        print(f"pi session: unknown action {action!r} (known: check)")
        raise SystemExit(2)
    result = check_session_file(file)
    print(f"{file}: {result.entries} entries, "
          + ("no problems" if result.ok else f"{len(result.problems)} problem(s)"))
    for problem in result.problems:
        where = f"line {problem.line}: " if problem.line else ""
        mark = " [repairable]" if problem.repairable else ""
        print(f"  {where}{problem.message}{mark}")
    for note in result.notes:
        print(f"  note: {note}")
    if repair and any(p.repairable for p in result.problems):
        try:
            backup = repair_session_file(file)
        except ValueError as exc:
            print(f"pi session: {exc}")
            raise SystemExit(1) from None
        print(f"repaired; the original is kept as {backup}")
        left = [p for p in check_session_file(file).problems if not p.repairable]
        raise SystemExit(1 if left else 0)
    if repair:
        print("nothing to repair" + ("" if result.ok else " (the problems above are kept: reading skips them)"))
    raise SystemExit(0 if result.ok else 1)


@hookimpl
def register_cli_commands(register: Any) -> None:
    register(session, help="Check a session file for damage (check FILE [--repair]).")
