"""The custom-editor examples (modal_editor, rainbow_editor, border_status_editor) and the autocomplete one
(github_issue_autocomplete) and the entry-renderer ones (entry_renderer, debug_provider) loaded without a
terminal: over RPC, in JSON mode and in print mode ``set_editor_component``, ``add_autocomplete_provider`` and
``register_entry_renderer`` change nothing visible and the runs are as usual."""

from __future__ import annotations

from pathlib import Path

from test_pi_examples import TIMEOUT, example, notices, rpc

from pi_core.testing import FakeProviderServer, PiRunner

EDITOR_EXAMPLES = ("modal_editor", "rainbow_editor", "border_status_editor", "github_issue_autocomplete",
                   "entry_renderer", "debug_provider")


def extension_args() -> list[str]:
    return [a for name in EDITOR_EXAMPLES for a in ("-e", str(example(name)))]


def test_editor_examples_over_rpc_leave_the_client_alone(fake_provider_server: FakeProviderServer,
                                                         pi_project: Path) -> None:
    fake_provider_server.script("hello back", "again")
    with rpc(pi_project, *EDITOR_EXAMPLES) as pi:
        seen = pi.prompt("hi")
        # only the autocomplete example's start-up notice, as pi's (the project is no GitHub checkout)
        assert notices(seen) == ["github-issue-autocomplete: cwd is not a git repository"]
        assert not [r for r in seen if r.get("type") == "extension_error"]
        _, seen = pi.call({"type": "prompt", "message": "/status-card shipped"})
        assert notices(seen) == []  # the card is kept, nothing is drawn over RPC
        _, seen = pi.call({"type": "prompt", "message": "/debug-provider on"})
        assert notices(seen) == ["Provider event capture enabled"]
        seen = pi.prompt("ultrathink please")
    assert [r.body["messages"][-1]["content"] for r in fake_provider_server.requests][-1] in (
        "ultrathink please", [{"type": "text", "text": "ultrathink please"}])


def test_editor_examples_in_json_and_print_mode(fake_provider_server: FakeProviderServer, run_pi: PiRunner) -> None:
    fake_provider_server.script("json answer", "print answer")
    result = run_pi("--mode", "json", *extension_args(), "hi", timeout=TIMEOUT)
    assert result.ok, str(result)
    assert "json answer" in result.stdout and "extension_error" not in result.stdout
    result = run_pi("-p", *extension_args(), "hi", timeout=TIMEOUT)
    assert result.ok, str(result)
    assert result.stdout.strip() == "print answer"
    assert "Traceback" not in result.stderr
