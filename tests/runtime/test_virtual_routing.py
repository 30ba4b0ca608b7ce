"""What a session tells a virtual model's router (pi's ``ModelRouteRequest``): why each request is made, the
model that answered last, what failed before a retry, and the router state the session keeps on its branch
(it follows ``/tree`` navigation and survives compaction; ``direct`` requests see none)."""

from __future__ import annotations

from typing import Any

from pi_core import hookimpl
from pi_core.ai import Model, Route, RouteRequest, virtual_provider
from pi_core.ai.faux import faux_error, faux_tool_call
from pi_core.testing import PiTestSession

STATE = "pi.virtual-model-state"


class Router:
    """Routes everything to the faux model; a ``user`` request starts a new state ``{"turns": n}``."""

    def __init__(self, target: Model) -> None:
        self.target = target
        self.seen: list[RouteRequest] = []
        self.contexts: list[Any] = []

    def route(self, request: RouteRequest, ctx: Any) -> Route:
        self.seen.append(request)
        self.contexts.append(ctx)
        if request.reason == "user":
            turns = (request.state or {}).get("turns", 0) + 1
            return Route(self.target, state={"turns": turns})
        return Route(self.target)

    @hookimpl
    def register_providers(self, register: Any) -> None:
        register(virtual_provider("router", ["auto"], self.route))


def _start(pi_session: PiTestSession) -> Router:
    router = Router(pi_session.faux.model)
    session = pi_session.start(plugins=[router], settings={"retry": {"baseDelayMs": 1}, "compaction": {"keepRecentTokens": 1}})
    model = session.models.find("router", "auto")
    assert model is not None
    pi_session._run(session.set_model(model))
    return router


def test_the_router_hears_why_each_request_is_made_and_what_failed(pi_session: PiTestSession) -> None:
    (pi_session.cwd / "a.txt").write_text("alpha\n")
    router = _start(pi_session)
    pi_session.script(faux_tool_call("read", {"path": "a.txt"}), "Read it.",
                      faux_error("503: overloaded", status=503), "Recovered.")
    pi_session.prompt("one")
    assert pi_session.prompt("two") == "Recovered."
    assert [r.reason for r in router.seen] == ["user", "continuation", "user", "retry"]
    assert [r.state for r in router.seen] == [None, {"turns": 1}, {"turns": 1}, {"turns": 2}]
    faux = pi_session.faux.model
    assert router.seen[0].previous is None
    assert router.seen[1].previous is not None and router.seen[1].previous.model.id == faux.id
    failed = router.seen[3].failed
    assert failed is not None and failed.model.id == faux.id and failed.message is not None
    assert failed.message.stop_reason == "error" and "overloaded" in (failed.message.error_message or "")
    assert all(r.failed is None for r in router.seen[:3])
    assert router.contexts[0] is pi_session.session.ctx  # route(request, ctx): the session's plugin context
    assert [m.role for m in router.seen[1].messages][-1] == "toolResult"
    stored = [e["data"] for e in pi_session.entries("custom") if e["customType"] == STATE]
    assert stored == [{"provider": "router", "modelId": "auto", "state": {"turns": 1}},
                      {"provider": "router", "modelId": "auto", "state": {"turns": 2}}]
    answers = pi_session.assistant_messages
    assert {(a.provider, a.model) for a in answers} == {(faux.provider, faux.id)}  # the real model answered


def test_router_state_follows_the_tree_and_survives_compaction(pi_session: PiTestSession) -> None:
    router = _start(pi_session)
    pi_session.script("First.", "Second.")
    pi_session.prompt("one")
    pi_session.prompt("two")
    first_answer = next(e for e in pi_session.entries("message")
                        if e["message"]["role"] == "assistant" and e["message"]["content"][0]["text"] == "First.")
    session = pi_session.session
    pi_session._run(session.navigate_tree(first_answer["id"]))
    pi_session.script("Third.")
    pi_session.prompt("three")  # on the first branch: the state stored there
    assert router.seen[-1].reason == "user" and router.seen[-1].state == {"turns": 1}

    before = len(router.seen)
    pi_session.script("Summary of the work.", "Summary of the turn so far.")
    pi_session._run(session.compact())
    summaries = router.seen[before:]
    assert summaries and all(r.reason == "direct" and r.state is None for r in summaries)  # no state for them
    pi_session.script("Fourth.")
    pi_session.prompt("four")
    assert router.seen[-1].state == {"turns": 2}  # the branch's state, kept across compaction
