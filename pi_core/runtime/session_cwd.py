"""A resumed session runs in the working directory it was made in; this module covers the case where
that directory is gone, with pi 1.6's wording.

Outside the terminal pi refuses such a session (:class:`MissingSessionCwdError`, whose message names the
stored directory, the session file and the current directory). In the terminal it asks: continue in the
current directory (asked again next time), fork the session into it (a new id; the original is kept), or
cancel (:func:`ask_missing_cwd`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

MissingCwdChoice = Literal["continue", "fork"]


@dataclass(frozen=True)
class MissingSessionCwd:
    """A session file whose stored working directory does not exist, and where pi is now."""

    session_file: Path
    session_cwd: Path
    fallback_cwd: Path

    def error(self) -> str:
        return (f"Stored session working directory does not exist: {self.session_cwd}\n"
                f"Session file: {self.session_file}\nCurrent working directory: {self.fallback_cwd}")

    def question(self) -> str:
        return f"Session cwd does not exist: {self.session_cwd}"

    def choices(self) -> list[tuple[str, MissingCwdChoice | None]]:
        return [(f"Continue in {self.fallback_cwd} (asks again next time)", "continue"),
                (f"Fork into {self.fallback_cwd} (new session ID, original kept)", "fork"),
                ("Cancel", None)]


class MissingSessionCwdError(RuntimeError):
    """The session to switch to was made in a directory that no longer exists (``issue`` says which)."""

    def __init__(self, issue: MissingSessionCwd) -> None:
        super().__init__(issue.error())
        self.issue = issue


def missing_session_cwd(manager: Any, fallback: Path) -> MissingSessionCwd | None:
    """The problem with ``manager``'s stored directory, or ``None`` when it exists (or nothing is stored)."""
    file = getattr(manager, "session_file", None)
    stored = getattr(manager, "cwd", None)
    if file is None or not stored or Path(stored).exists():
        return None
    return MissingSessionCwd(Path(file), Path(stored), Path(fallback))


async def ask_missing_cwd(ui: Any, issue: MissingSessionCwd) -> MissingCwdChoice | None:
    """pi's question in the terminal; ``None`` means cancel."""
    choices = issue.choices()
    label = await ui.select(issue.question(), [label for label, _ in choices])
    return next((value for text, value in choices if text == label), None)


def stored_trust(host: Any, cwd: Path) -> bool:
    """Whether ``cwd``'s ``.pi/`` files may be used, without asking: ``--approve``, the remembered
    decision, ``defaultProjectTrust``; an undecided project is not trusted (the question is asked at a
    start in that project, or with ``/trust``)."""
    from ..extensions.trust import TrustStore, TrustStoreError, has_trust_inputs

    options = getattr(host, "options", None)
    approve = getattr(options, "approve", None)
    if approve is not None:
        return bool(approve)
    if not has_trust_inputs(cwd):
        return False
    try:
        decision = TrustStore(options.agent_dir).get(cwd) if options is not None else None
    except TrustStoreError:
        return False
    if decision is not None:
        return decision
    return getattr(options, "default_trust", "ask") == "always"


__all__ = ["MissingCwdChoice", "MissingSessionCwd", "MissingSessionCwdError", "ask_missing_cwd",
           "missing_session_cwd", "stored_trust"]
