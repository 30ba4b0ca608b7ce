"""pi's interactive-shell example without a terminal: over RPC an interactive ``!`` command is refused with
pi's text (nothing runs), other commands run as usual."""

from __future__ import annotations

from pathlib import Path

from test_pi_examples import rpc

from pi_core.testing import FakeProviderServer


def test_interactive_commands_need_the_terminal(fake_provider_server: FakeProviderServer, pi_project: Path) -> None:
    with rpc(pi_project, "interactive_shell") as pi:
        answer, _ = pi.call({"type": "bash", "command": "i touch made-by-vim"})
        assert answer["data"]["output"] == "(interactive commands require TUI)"
        assert answer["data"]["exitCode"] == 1
        answer, _ = pi.call({"type": "bash", "command": "vim notes.txt"})
        assert answer["data"]["output"] == "(interactive commands require TUI)"
        answer, _ = pi.call({"type": "bash", "command": "echo plain"})
        assert answer["data"]["output"].strip() == "plain" and answer["data"]["exitCode"] == 0
    assert not (pi_project / "made-by-vim").exists()
