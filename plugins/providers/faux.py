"""Built-in provider ``faux`` with model ``echo``: try the whole agent loop offline.

``pi --provider faux --model echo -p "hi"`` answers ``hi``. A prompt that is a JSON object naming tool
calls makes those calls, and the next turn summarises their results::

    pi --provider faux --model echo -p '{"tool_calls":[{"name":"read","arguments":{"path":"README.md"}}]}'

Optional keys: ``"text"`` (said before the calls) and per call ``"id"``. Scripted turns for tests come
from :class:`pi_core.ai.FauxProvider`, which this plugin is built on.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pi_core import hookimpl, parse_json
from pi_core.ai import (
    Context,
    FauxProvider,
    FauxTurn,
    Model,
    StreamOptions,
    TextContent,
    ToolResultMessage,
    faux_text,
    faux_tool_call,
    last_user_text,
)

SUMMARY_CHARS = 200


def _tool_calls_request(text: str) -> FauxTurn | None:
    try:
        data = parse_json(text)  # a prompt nested too deeply is just text to echo
    except ValueError:
        return None
    calls = data.get("tool_calls") if isinstance(data, dict) else None
    if not isinstance(calls, list) or not calls:
        return None
    blocks: list[Any] = [faux_text(data["text"])] if isinstance(data.get("text"), str) and data["text"] else []
    for call in calls:
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            return FauxTurn([faux_text("Each entry of tool_calls needs a \"name\" (and optional \"arguments\").")])
        arguments = call.get("arguments") if isinstance(call.get("arguments"), dict) else {}
        blocks.append(faux_tool_call(call["name"], arguments, id=call.get("id")))
    return FauxTurn(blocks)


def _summarise(results: list[ToolResultMessage]) -> str:
    lines = [f"Results of {len(results)} tool call{'s' if len(results) != 1 else ''}:"]
    for result in results:
        text = "".join(b.text for b in result.content if isinstance(b, TextContent)).strip()
        if len(text) > SUMMARY_CHARS:
            text = text[:SUMMARY_CHARS] + "…"
        status = "error" if result.is_error else "ok"
        lines.append(f"- {result.tool_name} ({status}): {text or '(no text output)'}")
    return "\n".join(lines)


def echo(context: Context, options: StreamOptions) -> FauxTurn:
    """The echo model's answer to a request."""
    trailing: list[ToolResultMessage] = []
    for message in reversed(context.messages):
        if not isinstance(message, ToolResultMessage):
            break
        trailing.append(message)
    if trailing:
        return FauxTurn([faux_text(_summarise(list(reversed(trailing))))])
    prompt = last_user_text(context)
    return _tool_calls_request(prompt.strip()) or FauxTurn([faux_text(prompt or "(empty prompt)")])


ECHO = Model(id="echo", name="Echo (offline)", api="faux", provider="faux", input=["text", "image"],
             context_window=128_000, max_tokens=16_384)
_faux = FauxProvider("faux", api="faux", models=[ECHO], responder=echo)


@hookimpl
def register_providers(register: Any) -> None:
    # as pi has no such provider, it is never offered (model lists, cycling, the start-up choice): only
    # `--provider faux` or `PI_FAUX=1` bring it in
    register(_faux.api_provider)
    register(dataclasses.replace(_faux.provider_config, listed=False))
