"""The SDK example: a host embeds pi with an in-memory plugin object (no entry point) and runs it."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
from pathlib import Path

from pi_core.ai.faux import FauxProvider, faux_tool_call

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sdk-upgrade-assistant" / "upgrade.py"


def load_example():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("sdk_upgrade_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_upgrade_assistant_uses_its_plugin_tools(tmp_path: Path, agent_dir: Path) -> None:
    code, docs = tmp_path / "code", tmp_path / "docs"
    code.mkdir()
    docs.mkdir()
    (code / "app.py").write_text("import oldsdk\nclient = oldsdk.connect('x')\n")
    (code / "test_app.py").write_text("def test_new():\n    assert 'newsdk' in open('app.py').read()\n")
    (docs / "migration.md").write_text("# Intro\nhello\n\n# connect\nUse `newsdk.Client(url)` instead of connect.\n")
    faux = FauxProvider()
    faux.enqueue(
        [faux_tool_call("lookup_docs", {"query": "connect"})],
        [faux_tool_call("edit", {"path": "app.py", "edits": [
            {"oldText": "import oldsdk\nclient = oldsdk.connect('x')", "newText": "import newsdk\nclient = newsdk.Client('x')"}]})],
        [faux_tool_call("run_build", {})],
        "Upgraded app.py to newsdk.Client; the build passes.",
    )
    example = load_example()
    session = asyncio.run(example.upgrade(code, docs, model=faux.model, plugins=[faux],
                                          build=f"{sys.executable} -m pytest -q -p no:cacheprovider"))
    results = {m.tool_name: m for m in session.messages if m.role == "toolResult"}
    assert "newsdk.Client(url)" in results["lookup_docs"].content[0].text
    assert "# Intro" not in results["lookup_docs"].content[0].text
    assert not results["edit"].is_error and "newsdk.Client('x')" in (code / "app.py").read_text()
    assert not results["run_build"].is_error and "[exit code 0]" in results["run_build"].content[0].text
    assert session.messages[-1].text().startswith("Upgraded app.py")
    # the plugin's tools were offered to the model and the session was written like any other
    request_tools = [t.name for t in faux.requests[0].context.tools]
    assert request_tools == ["read", "edit", "write", "lookup_docs", "run_build"]
    lines = session.session.session_file.read_text().splitlines()
    assert json.loads(lines[0])["cwd"] == str(code)
