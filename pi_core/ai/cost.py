"""Usage cost, computed the way pi does it.

Prices are USD per million tokens. Each bucket costs ``rate / 1e6 * tokens``; ``total`` is the sum in the
order input, output, cacheRead, cacheWrite, so the floating-point results equal pi's to the last bit.
Integral results are kept as ``int`` because JavaScript prints ``0``, not ``0.0``.
"""

from __future__ import annotations

from typing import Any

from .types import Cost, Model, Number, Usage


def _js(value: float) -> Number:
    """A number as JavaScript would print it: integral values without a fraction."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def _rates(model: Model, usage: Usage) -> Any:
    """The price tier that applies: ``cost.tiers`` (pi 1.6 catalog) picks rates by prompt size."""
    rates: Any = model.cost
    tiers = (model.cost.model_extra or {}).get("tiers") or []
    prompt = usage.input + usage.cache_read + usage.cache_write
    best = -1
    for tier in tiers:
        above = tier.get("inputTokensAbove", 0)
        if prompt > above and above > best:
            rates, best = tier, above
    return rates


def _rate(rates: Any, name: str, camel: str) -> float:
    if isinstance(rates, dict):
        return float(rates.get(camel, 0) or 0)
    return float(getattr(rates, name) or 0)


def calculate_cost(model: Model, usage: Usage) -> Cost:
    """Fill ``usage.cost`` from ``model.cost`` and return it (mutates ``usage``, as pi does)."""
    rates = _rates(model, usage)
    cost = usage.cost
    c_in = _rate(rates, "input", "input") / 1e6 * usage.input
    c_out = _rate(rates, "output", "output") / 1e6 * usage.output
    c_read = _rate(rates, "cache_read", "cacheRead") / 1e6 * usage.cache_read
    c_write = _rate(rates, "cache_write", "cacheWrite") / 1e6 * usage.cache_write
    cost.input, cost.output = _js(c_in), _js(c_out)
    cost.cache_read, cost.cache_write = _js(c_read), _js(c_write)
    cost.total = _js(c_in + c_out + c_read + c_write)
    cost.total_from_provider = False
    return cost


def total_tokens(usage: Usage) -> int:
    """``input + output + cacheRead + cacheWrite``: what ``totalTokens`` must equal."""
    return usage.input + usage.output + usage.cache_read + usage.cache_write


__all__ = ["calculate_cost", "total_tokens"]
