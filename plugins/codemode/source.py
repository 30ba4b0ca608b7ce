"""The codemode input: JavaScript, optionally starting with one ``// @options: {...}`` line.

``max_output_tokens`` bounds what reaches the model; ``timeout_ms`` is a hard deadline for the whole
script (including the wait for a free worker). An options line anywhere but the first line, bad JSON
or an unknown field fails the call before the script runs, rather than being ignored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

PREFIX = "// @options:"
FIELDS = ("max_output_tokens", "timeout_ms")
MAX_TIMEOUT_MS = 2_147_483_647
_FIELDS_TEXT = "`max_output_tokens` and `timeout_ms`"


class SourceError(ValueError):
    """The input cannot run: empty, or a bad options line."""


@dataclass(frozen=True)
class Source:
    code: str
    max_output_tokens: int | None = None
    timeout_ms: int | None = None


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 2**53 - 1


def _options(text: str) -> dict[str, int]:
    try:
        value = json.loads(text) if text else None
    except ValueError as exc:
        raise SourceError(f"@options must be valid JSON with the fields {_FIELDS_TEXT}: {exc}") from exc
    if not isinstance(value, dict):
        raise SourceError(f"@options must be a JSON object with the fields {_FIELDS_TEXT}")
    unknown = [key for key in value if key not in FIELDS]
    if unknown:
        raise SourceError(f"@options supports only {_FIELDS_TEXT}, not `{unknown[0]}`")
    tokens, timeout = value.get("max_output_tokens"), value.get("timeout_ms")
    if tokens is not None and not _is_count(tokens):
        raise SourceError("@options `max_output_tokens` must be a non-negative integer")
    if timeout is not None and (not _is_count(timeout) or timeout == 0 or timeout > MAX_TIMEOUT_MS):
        raise SourceError(f"@options `timeout_ms` must be a positive integer of at most {MAX_TIMEOUT_MS}")
    return {k: v for k, v in (("max_output_tokens", tokens), ("timeout_ms", timeout)) if v is not None}


def parse_source(text: str) -> Source:
    """Split the options line off; raises :class:`SourceError` for input that must not run."""
    if not text.strip():
        raise SourceError("The script is empty: send JavaScript source (optionally after a first line "
                          '`// @options: {"timeout_ms": 60000}`).')
    lines = text.split("\n")
    for number, line in enumerate(lines[1:], start=2):
        if line.lstrip().startswith(PREFIX):
            raise SourceError(f"The {PREFIX} line must be the first line of the script; line {number} has one")
    first = lines[0].rstrip("\r").lstrip()
    if not first.startswith(PREFIX):
        return Source(text)
    code = text[text.index("\n"):] if "\n" in text else ""
    if not code.strip():
        raise SourceError("The @options line must be followed by the script on the next lines")
    # the options line stays as an empty line, so line numbers in errors match the script as sent
    return Source(code, **_options(first[len(PREFIX):].strip()))
