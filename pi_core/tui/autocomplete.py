"""Completion as the editor offers it: pi's ``AutocompleteProvider`` types, snake_cased, and the fuzzy
matching behind ``/`` names and ``@`` paths (:func:`fuzzy_filter`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


@dataclass
class AutocompleteItem:
    """One suggestion: ``value`` replaces the typed prefix; ``label`` (default: the value) and
    ``description`` are what the menu shows."""

    value: str
    label: str | None = None
    description: str | None = None


@dataclass
class AutocompleteSuggestions:
    """What a provider suggests: ``items`` and the ``prefix`` before the cursor they replace."""

    items: list[AutocompleteItem]
    prefix: str


@dataclass
class AppliedCompletion:
    """The editor's lines and cursor after a suggestion was chosen."""

    lines: list[str]
    cursor_line: int
    cursor_col: int


@dataclass
class AutocompleteOptions:
    """``signal.aborted`` turns true when the text changed meanwhile (the answer is not wanted);
    ``force`` is true when the user asked with Tab."""

    signal: Any = None
    force: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


class AutocompleteProvider(Protocol):
    """pi's ``AutocompleteProvider``, snake_cased. ``get_suggestions`` may be sync or async and returns
    ``None`` for "nothing here" (delegate to the provider below first, as pi's examples do).
    ``trigger_characters`` and ``should_trigger_file_completion`` are optional (the editor asks for
    suggestions at every change of the text)."""

    def get_suggestions(self, lines: list[str], cursor_line: int, cursor_col: int,
                        options: AutocompleteOptions) -> Any: ...

    def apply_completion(self, lines: list[str], cursor_line: int, cursor_col: int, item: AutocompleteItem,
                         prefix: str) -> AppliedCompletion: ...


def fuzzy_filter(items: Sequence[T], query: str, text: Callable[[T], str] | None = None) -> list[T]:
    """``items`` matching ``query`` fuzzily, best first (pi's ``fuzzyFilter``): those whose text starts with
    it, then those containing its characters in order, then close misspellings; scored with rapidfuzz.
    An empty query keeps every item in its order."""
    key = text or str
    wanted = query.strip().lower()
    if not wanted:
        return list(items)
    score = _scorer()
    ranked: list[tuple[int, float, int, T]] = []
    for index, item in enumerate(items):
        candidate = key(item).lower()
        if candidate.startswith(wanted):
            ranked.append((0, 0.0, index, item))
        elif _in_order(wanted, candidate):
            ranked.append((1, -score(wanted, candidate), index, item))
        else:
            similarity = score(wanted, candidate)
            if len(wanted) >= 3 and similarity >= TYPO_SCORE:
                ranked.append((2, -similarity, index, item))
    return [item for *_, item in sorted(ranked, key=lambda r: r[:3])]


TYPO_SCORE = 75.0
"""How similar (0-100) a text must be to a query it does not contain to be offered as a misspelling."""


def _in_order(query: str, text: str) -> bool:
    position = 0
    for char in query:
        position = text.find(char, position) + 1
        if position == 0:
            return False
    return True


def _scorer() -> Callable[[str, str], float]:
    try:
        from rapidfuzz import fuzz
    except ImportError:  # an environment without the dependency still completes (difflib's ratio)
        from difflib import SequenceMatcher

        return lambda a, b: 100.0 * SequenceMatcher(None, a, b).ratio()
    return lambda a, b: float(fuzz.WRatio(a, b))


__all__ = ["AppliedCompletion", "AutocompleteItem", "AutocompleteOptions", "AutocompleteProvider",
           "AutocompleteSuggestions", "TYPO_SCORE", "fuzzy_filter"]
