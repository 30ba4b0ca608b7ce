"""Virtual providers (pi's virtual models): each request asks the route, then a real model serves it; a route
that answers badly, or points at another virtual model, ends that request with an error, never a hang."""

from __future__ import annotations

import asyncio
from typing import Any

from pi_core.ai import Context, FauxProvider, Model, ModelRegistry, Route, RouteRequest, UserMessage, virtual_provider


def _registry(route: Any) -> tuple[ModelRegistry, FauxProvider]:
    faux = FauxProvider("faux-real", models=[Model(id=i, name=i, api="faux", provider="faux-real", reasoning=True) for i in ("small", "large")])
    registry = ModelRegistry([faux.api_provider], [faux.provider_config, virtual_provider("router", ["auto"], route)],
                             load_files=False)
    return registry, faux


def _ask(registry: ModelRegistry, text: str, **options: Any) -> Any:
    model = registry.find("router", "auto")
    assert model is not None
    return asyncio.run(registry.complete(model, Context(messages=[UserMessage(content=text)]), **options))


def test_each_request_goes_where_the_route_says() -> None:
    seen: list[tuple[str, str | None]] = []

    async def route(request: RouteRequest) -> Route:
        seen.append((request.last_user_text, request.thinking_level))
        target = request.registry.find("faux-real", "large" if "hard" in request.last_user_text else "small")
        assert target is not None
        return Route(target, thinking_level="high" if target.id == "large" else None)

    registry, faux = _registry(route)
    faux.enqueue("a", "b")
    easy, hard = _ask(registry, "easy one"), _ask(registry, "hard one", reasoning="low")
    assert (easy.provider, easy.model, hard.model) == ("faux-real", "small", "large")
    assert [r.model.id for r in faux.requests] == ["small", "large"]
    assert faux.requests[0].options.reasoning is None and faux.requests[1].options.reasoning == "high"
    assert seen == [("easy one", None), ("hard one", "low")]


def test_a_bad_route_ends_the_request_with_an_error() -> None:
    registry, faux = _registry(lambda request: "faux-real/small")
    reply = _ask(registry, "hi")
    assert reply.stop_reason == "error" and "not a Route" in (reply.error_message or "")

    loop, _ = _registry(lambda request: Route(request.model))
    reply = _ask(loop, "hi")
    assert reply.stop_reason == "error" and "another virtual model" in (reply.error_message or "")
    assert faux.requests == []
