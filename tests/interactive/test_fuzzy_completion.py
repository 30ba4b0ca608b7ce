"""The matching behind the editor's completion: ``pi_core.tui.fuzzy_filter`` (prefix, letters in order,
misspellings) and how a provider's applied completion becomes the editor's edit."""

from __future__ import annotations

from pathlib import Path

from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from pi_core.modes.interactive.input import PiCompleter
from pi_core.tui import AppliedCompletion, AutocompleteItem, AutocompleteSuggestions, fuzzy_filter

NAMES = ["model", "compact", "copy", "changelog", "commands", "export", "resume", "skill:review", "new", "name"]


def test_prefix_matches_come_first_then_letters_in_order_then_misspellings() -> None:
    assert fuzzy_filter(NAMES, "co")[:3] == ["compact", "copy", "commands"]
    assert fuzzy_filter(NAMES, "mdl") == ["model"]
    assert fuzzy_filter(NAMES, "comapct") == ["compact"]
    assert fuzzy_filter(NAMES, "rvw") == ["skill:review"]
    assert fuzzy_filter(NAMES, "") == NAMES
    assert fuzzy_filter(NAMES, "zzz") == []
    issues = [(7, "Document the theme tokens"), (12, "Crash in the parser")]
    assert fuzzy_filter(issues, "thme", lambda i: f"{i[0]} {i[1]}") == [issues[0]]


class Suffixing:
    """A provider whose completion adds a space after the value (text after the cursor kept)."""

    def __init__(self, current: object) -> None:
        self.current = current

    def get_suggestions(self, lines: list[str], line: int, col: int, options: object) -> AutocompleteSuggestions:
        return AutocompleteSuggestions([AutocompleteItem("$HOME", description="home")], "$H")

    def apply_completion(self, lines: list[str], line: int, col: int, item: AutocompleteItem,
                         prefix: str) -> AppliedCompletion:
        text = lines[line]
        lines[line] = text[:col - len(prefix)] + item.value + " " + text[col:]
        return AppliedCompletion(lines, line, col - len(prefix) + len(item.value) + 1)


def test_a_providers_applied_completion_is_the_edit(tmp_path: Path) -> None:
    completer = PiCompleter(lambda: [("model", "pick a model")], tmp_path, providers=lambda: [Suffixing])
    document = Document("echo $H world", cursor_position=len("echo $H"))
    [completion] = list(completer.get_completions(document, CompleteEvent()))
    assert (completion.text, completion.start_position) == ("OME ", 0)  # "$H" stays, "OME " is added
    assert completion.display_meta_text == "home"


def test_the_built_in_completions_without_providers(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "parser_utils.py").write_text("")
    (tmp_path / "src" / ".hidden").write_text("")
    completer = PiCompleter(lambda: [("model", "pick a model"), ("compact", "compact")], tmp_path)
    shown = [c.text for c in completer.get_completions(Document("/cpt"), CompleteEvent())]
    assert shown == ["/compact"]
    shown = [c.text for c in completer.get_completions(Document("see @src/pu"), CompleteEvent())]
    assert shown == ["@src/parser_utils.py"]
