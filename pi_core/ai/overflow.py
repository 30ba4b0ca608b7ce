"""Context-overflow detection: did this reply fail (or silently truncate) because the prompt was too big?

The patterns match the error texts providers really return (the test corpus holds real bodies, one
provider each). A reply is an overflow when:

* it ended in ``error`` and its message matches an overflow pattern (and is not a rate-limit text, which
  mentions tokens too), or it is a bodyless 400/413 from Cerebras, which reports overflow that way;
* it ended ``stop`` but reported more prompt tokens than the context window (z.ai truncates silently);
* it ended ``length`` with no output at all and a prompt filling ≥ 99% of the window.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from .types import AssistantMessage


@dataclass(frozen=True)
class OverflowPattern:
    """An overflow error text of one provider (or ``generic``)."""

    provider: str
    regex: str

    @property
    def pattern(self) -> re.Pattern[str]:
        """The compiled pattern (case-insensitive), compiled on first use: most runs never need one."""
        return _compiled(self.regex)


@functools.cache
def _compiled(regex: str) -> re.Pattern[str]:
    return re.compile(regex, re.IGNORECASE)


def _p(provider: str, regex: str) -> OverflowPattern:
    return OverflowPattern(provider, regex)


OVERFLOW_PATTERNS: tuple[OverflowPattern, ...] = (
    _p("anthropic", r"prompt (?:is )?too long"),
    _p("anthropic", r"request_too_large"),
    _p("anthropic", r"prompt exceeds max length"),
    _p("amazon-bedrock", r"input is too long for requested model"),
    _p("openai", r"exceeds the context window"),
    _p("openai-compatible", r"exceeds (?:the )?(?:model'?s )?maximum context length(?: of [\d,]+ tokens?|\s*\([\d,]+\))"),
    _p("openai-compatible", r"context window exceeded"),
    _p("google", r"input token count.*exceeds the maximum"),
    _p("xai", r"maximum prompt length is \d+"),
    _p("groq", r"reduce the length of the messages"),
    _p("openrouter", r"maximum context length is \d+ tokens"),
    _p("openrouter", r"exceeds (?:the )?maximum allowed input length of [\d,]+ tokens?"),
    _p("together", r"input \(\d+ tokens\) is longer than the model'?s context length \(\d+ tokens\)"),
    _p("github-copilot", r"exceeds the limit of \d+"),
    _p("llama.cpp", r"exceeds the available context size"),
    _p("llama.cpp", r"prompt has [\d,]+ tokens?, but the configured context size is [\d,]+ tokens?"),
    _p("lm-studio", r"greater than the context length"),
    _p("minimax", r"context window exceeds limit"),
    _p("kimi", r"exceeded model token limit"),
    _p("mistral", r"too large for model with \d+ maximum context length"),
    _p("zai", r"model_context_window_exceeded"),
    _p("ollama", r"prompt too long; exceeded (?:max )?context length"),
    _p("qwen", r"range of input length should be"),
    _p("generic", r"context[_ ]length[_ ]exceeded"),
    _p("generic", r"too many tokens"),
    _p("generic", r"token limit exceeded"),
    _p("generic", r"^(?:[\w -]+ API error \(413\):|413(?:\s|:|$))"),
)
#: Texts that mention limits or tokens but are about rate, not size: never an overflow.
NOT_OVERFLOW = (r"^(?:Throttling error|Service unavailable):", r"rate limit", r"too many requests")
CEREBRAS_BODYLESS = r"^4(?:00|13)\s*(?:status code)?\s*\(no body\)"


def overflow_pattern(text: str) -> OverflowPattern | None:
    """The overflow pattern ``text`` matches, or ``None`` (also for rate-limit texts)."""
    if not text or any(_compiled(p).search(text) for p in NOT_OVERFLOW):
        return None
    return next((p for p in OVERFLOW_PATTERNS if p.pattern.search(text)), None)


def is_overflow_text(text: str, provider: str | None = None) -> bool:
    """Whether an error text says the prompt exceeded the context window."""
    if overflow_pattern(text) is not None:
        return True
    return provider == "cerebras" and bool(_compiled(CEREBRAS_BODYLESS).search(text or ""))


def is_context_overflow(message: AssistantMessage | Any, context_window: int | None = None) -> bool:
    """pi's ``isContextOverflow``: see the module docstring."""
    stop = getattr(message, "stop_reason", None)
    if stop == "error":
        return is_overflow_text(getattr(message, "error_message", None) or "", getattr(message, "provider", None))
    if not context_window:
        return False
    usage = message.usage
    prompt = usage.input + usage.cache_read
    if stop == "stop":
        return prompt > context_window
    return stop == "length" and usage.output == 0 and prompt >= context_window * 0.99


__all__ = ["OVERFLOW_PATTERNS", "OverflowPattern", "is_context_overflow", "is_overflow_text", "overflow_pattern"]
