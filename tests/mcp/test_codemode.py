"""``codemode`` end to end: ``pi`` against a fake model server, scripts calling real MCP servers.

Every script below is what a model sends as the ``code`` argument; the assertions read what reached
the model's next request (the tool result) and what the session file kept.
"""

from __future__ import annotations

import base64
import json
import os
import struct
import sys
import zlib
from pathlib import Path
from typing import Any

from mcp_helpers import run_pi, stdio_server, tool_names, tool_results, write_mcp
from fake_openai import FakeOpenAI, write_agent_dir

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "rpc"))
from rpc_client import RpcProcess  # noqa: E402

MODEL = ["--provider", "fake", "--model", "fake-model"]


def output(content: str) -> str:
    """What follows the ``Output:`` header (providers join the result's text blocks with a newline)."""
    body = content.split("Output:\n", 1)[1]
    return body[1:] if body.startswith("\n") else body


def script(code: str, call_id: str = "s1") -> dict[str, Any]:
    return {"tool_calls": [{"id": call_id, "name": "codemode", "arguments": {"code": code}}]}


def run_scripts(ws: Path, agent: Path, *codes: str, servers: dict[str, Any] | None = None, args: tuple[str, ...] = (),
                settings: dict[str, Any] | None = None) -> tuple[list[dict[str, Any]], Any, list[dict[str, Any]]]:
    """Run one prompt whose model sends these scripts one after the other; returns the codemode
    results (as the model saw them), the run, and the requests."""
    if servers is not None:
        write_mcp(agent, servers)
    turns = [script(code, f"s{n}") for n, code in enumerate(codes, 1)] + [{"text": "done"}]
    with FakeOpenAI(turns) as server:
        write_agent_dir(agent, server.base_url, settings)
        result = run_pi(ws, agent, *MODEL, "--no-session", *args, "-p", "go")
    assert result.returncode == 0, result.stderr
    results = [tool_results(request)[-1] for request in server.requests[1:]]
    return results, result, server.requests


def test_mcp_tools_run_in_parallel_from_a_script_and_only_its_output_reaches_the_model(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    # meet() answers only once `count` calls of its group are waiting at the same time: two calls made
    # one after the other would each give up after 20 s with an error
    code = ("const [a, b] = await Promise.all([tools.mcp__demo__meet({group: 'g', count: 2}),"
            " tools.mcp__demo__meet({group: 'g', count: 2})]);\n"
            "text(a.content[0].text); text(b.structuredContent.result);\n"
            "console.log('sum is', (await tools.mcp__demo__add({a: 2, b: 3})).content[0].text);\n"
            "return {done: true}")
    (result,), run, requests = run_scripts(ws, agent, code, servers={"demo": stdio_server()})
    assert "codemode" in tool_names(requests[0])  # activated for the codemode server
    assert not [n for n in tool_names(requests[0]) if n.startswith("mcp__")]  # its tools are not declared
    text = result["content"]
    assert text.startswith("Script completed\nWall time ")
    assert output(text) == ("==> text 1/3 <==\nmet 2\n==> text 2/3 <==\nmet 2\n==> text 3/3 <==\n"
                         '{"done":true}\n<console_output>\nsum is 5\n</console_output>'), text
    # the nested calls are recorded on the codemode result, not sent to the model
    assert "nestedCalls" not in json.dumps(requests[1]["body"])


SEQUENTIAL_PLUGIN = '''
import asyncio
from pathlib import Path

from pi_core import Tool, ToolCapabilities, ToolResult, hookimpl

LOG = Path(__file__).with_name("steps.log")
running = set()


async def step(params, ctx):
    running.add(params["n"])
    with LOG.open("a") as handle:
        handle.write(f"{params['n']}:{len(running)}\\n")
    await asyncio.sleep(0.3)
    running.discard(params["n"])
    return ToolResult.text(str(params["n"]))


@hookimpl
def register_tools(register):
    register(Tool(name="step", description="A step that must never overlap another one.", execute=step,
                  exposure="deferred", capabilities=ToolCapabilities(writes=True, sequential=True),
                  parameters={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}))
'''


def test_calls_run_concurrently_unless_the_tool_is_marked_sequential(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    plugin = tmp_path / "steps.py"
    plugin.write_text(SEQUENTIAL_PLUGIN)
    # meet_writing has no read-only hint, so it is not concurrency_safe; as in pi, a script's calls of it still
    # overlap (run one after the other, each would wait 20 s for the other and fail)
    writing = ("const [a, b] = await Promise.all([tools.mcp__demo__meet_writing({group: 'w', count: 2}),"
               " tools.mcp__demo__meet_writing({group: 'w', count: 2})]);\n"
               "return [a.isError, a.content[0].text, b.content[0].text]")
    steps = "return await Promise.all([1, 2, 3].map((n) => tools.step({n})))"
    (met, stepped), _, _ = run_scripts(ws, agent, writing, steps, servers={"demo": stdio_server()},
                                       args=("-e", str(plugin)))
    assert json.loads(output(met["content"])) == [False, "met 2", "met 2"], met["content"]
    assert json.loads(output(stepped["content"])) == ["1", "2", "3"]
    # each sequential call started alone, in the order the script made them
    assert (tmp_path / "steps.log").read_text().split() == ["1:1", "2:1", "3:1"]


def test_a_script_finds_deferred_tools_and_describes_them(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    code = ("const found = await searchTools('add two integers', {limit: 1});\n"
            "const ns = await describeNamespace('demo');\n"
            "text(found[0].name); text(ns.name + ' ' + ns.tools.includes('mcp__demo__echo'));\n"
            "text((await describeTool('mcp__demo__add')).includes('mcp__demo__add(args: {\\n  // @integer\\n  a: number;'));\n"
            "text(ALL_TOOLS.some(t => t.name === 'mcp__demo__delete_record'));\n"
            "text(await describeTool('no_such_tool') === undefined)")
    (result,), _, _ = run_scripts(ws, agent, code, servers={"demo": stdio_server(description="A demo server.")})
    assert output(result["content"]) == (
        "==> text 1/5 <==\nmcp__demo__add\n==> text 2/5 <==\nmcp__demo true\n==> text 3/5 <==\ntrue\n"
        "==> text 4/5 <==\ntrue\n==> text 5/5 <==\ntrue")


def test_a_timeout_stops_a_spinning_script_and_a_hanging_call_keeping_the_output(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    spin = '// @options: {"timeout_ms": 1000}\ntext("before the loop");\nwhile (true) {}'
    hang = ('// @options: {"timeout_ms": 1500}\nconsole.log("calling");\n'
            "await tools.mcp__demo__stall({seconds: 60});\ntext('never')")
    (spun, hung), _, _ = run_scripts(ws, agent, spin, hang, servers={"demo": stdio_server()})
    assert spun["content"].startswith("Script failed\n")
    assert "before the loop\nScript error:\nScript timed out: it ran past its timeout of 1000 ms" in spun["content"]
    assert "No tool calls were made." in spun["content"]
    assert hung["content"].startswith("Script failed\n")
    assert "<console_output>\ncalling\n</console_output>\nScript error:\nScript timed out" in hung["content"]
    assert "Tool calls made before the failure (they are not undone): mcp__demo__stall (cancelled)" in hung["content"]
    assert "never" not in hung["content"]


def test_a_script_cannot_reach_the_file_system_the_network_or_timers(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    (ws / "secret.txt").write_text("top secret")
    code = ("const kinds = [typeof require, typeof process, typeof fetch, typeof XMLHttpRequest, typeof Deno,"
            " typeof setTimeout, typeof setInterval, typeof WebAssembly, typeof queueMicrotask];\n"
            "let imported;\ntry { await import('fs'); imported = 'imported'; } catch (e) { imported = 'refused'; }\n"
            "let read;\ntry { read = require('fs').readFileSync('secret.txt', 'utf8'); } catch (e) { read = e.name; }\n"
            "return {kinds: [...new Set(kinds)], imported, read}")
    (result,), _, _ = run_scripts(ws, agent, code, args=("--tools", "+codemode"))
    answer = json.loads(output(result["content"]))
    assert answer == {"kinds": ["undefined"], "imported": "refused", "read": "ReferenceError"}
    assert "top secret" not in result["content"]


def test_a_failing_script_keeps_its_partial_output_and_names_the_calls_it_made(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    code = ("text('first');\nconsole.log('noted');\nawait tools.mcp__demo__echo({text: 'x'});\n"
            "const r = await tools.mcp__demo__fail({reason: 'testing'});\ntext(r.isError);\n"
            "throw new RangeError('boom');")
    (result,), run, _ = run_scripts(ws, agent, code, servers={"demo": stdio_server()})
    text = result["content"]
    assert text.startswith("Script failed\n")
    body = output(text)
    assert body.startswith("==> text 1/2 <==\nfirst\n==> text 2/2 <==\ntrue\n<console_output>\nnoted\n</console_output>\n"
                           "Script error:\nRangeError: boom\n    at codemode.js:6:"), body
    assert body.endswith("Tool calls made before the failure (they are not undone): mcp__demo__echo (ok), "
                         "mcp__demo__fail (error)")


def test_a_rejected_call_and_bad_options(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    rejected = ("try { await tools.read({path: 'missing.txt'}); } catch (e) { text('caught ' + e.message.includes('missing.txt')); }\n"
                "try { tools.READ({}); } catch (e) { text(e.message); }")
    misplaced = 'text(1)\n// @options: {"timeout_ms": 10}'
    unknown = '// @options: {"memory": 1}\ntext(1)'
    results, _, _ = run_scripts(ws, agent, rejected, misplaced, unknown, args=("--tools", "read,codemode"))
    first = output(results[0]["content"])
    assert first.startswith("==> text 1/2 <==\ncaught true\n==> text 2/2 <==\ntools.READ is not defined. Close: tools.read.")
    assert results[1]["content"] == "The // @options: line must be the first line of the script; line 2 has one"
    assert results[2]["content"] == "@options supports only `max_output_tokens` and `timeout_ms`, not `memory`"


def test_long_output_is_cut_to_max_output_tokens_and_saved_whole(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    code = '// @options: {"max_output_tokens": 100}\nfor (let i = 0; i < 200; i++) console.log("line " + i);'
    (result,), _, _ = run_scripts(ws, agent, code, args=("--tools", "+codemode"))
    body = output(result["content"])
    assert body.startswith("Warning: truncated output (original token count: ")
    assert "Total output lines: 202\n\n<console_output>\nline 0\n" in body and "line 199\n</console_output>" in body
    assert "line 100\n" not in body
    saved = Path(body.rsplit("[Full output: ", 1)[1].split(" (read with offset/limit)]")[0])
    assert saved.read_text().count("\n") == 201 and "line 100\n" in saved.read_text()


def test_store_and_load_last_across_calls_and_each_fork_sees_its_own_branch(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    turns = [script("store('n', 1); store('gone', 'x'); return load('n')", "a"), {"text": "one"},
             script("const n = load('n'); store('n', n + 1); store('gone', undefined); "
                    "return [n + 1, load('gone') === undefined]", "b"), {"text": "two"},
             script("return [load('n'), load('gone')]", "c"), {"text": "three"}]
    with FakeOpenAI(turns) as server:
        write_agent_dir(agent, server.base_url)
        with RpcProcess(ws, "--tools", "+codemode", env={"PI_CODING_AGENT_DIR": str(agent)}) as pi:
            pi.prompt("one")
            pi.prompt("two")
            forks, _ = pi.call({"type": "get_fork_messages"})
            second = next(m for m in forks["data"]["messages"] if m["text"] == "two")
            forked, _ = pi.call({"type": "fork", "entryId": second["entryId"]})
            assert forked["success"] and forked["data"]["cancelled"] is False
            pi.prompt("three")
            state, _ = pi.call({"type": "get_state"})
    values = [output(tool_results(server.requests[i])[-1]["content"]) for i in (1, 3, 5)]
    assert values == ["1", "[2,true]", '[1,"x"]']  # the fork sits before "two": it sees what "one" stored
    fork_file = Path(state["data"]["sessionFile"])
    stores = [e["data"] for e in map(json.loads, fork_file.read_text().splitlines())
              if e.get("type") == "custom" and e.get("customType") == "codemode-store"]
    assert stores == [{"set": {"n": 1, "gone": "x"}, "delete": []}]
    originals = [p for p in (agent / "sessions").rglob("*.jsonl") if p != fork_file]
    assert len(originals) == 1
    kept = [e["data"] for e in map(json.loads, originals[0].read_text().splitlines())
            if e.get("customType") == "codemode-store"]
    assert kept == [{"set": {"n": 1, "gone": "x"}, "delete": []}, {"set": {"n": 2}, "delete": ["gone"]}]
    codemode_result = next(e["message"] for e in map(json.loads, originals[0].read_text().splitlines())
                           if e.get("type") == "message" and e["message"].get("toolName") == "codemode")
    assert codemode_result["details"] == {"calls": []}


def test_a_failed_script_stores_nothing(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    turns = [script("store('k', 1); throw new Error('no')"), script("return load('k') === undefined", "s2"),
             {"text": "ok"}]
    with FakeOpenAI(turns) as server:
        write_agent_dir(agent, server.base_url)
        result = run_pi(ws, agent, *MODEL, "--tools", "+codemode", "-p", "go")
    assert result.returncode == 0, result.stderr
    assert output(tool_results(server.requests[2])[-1]["content"]) == "true"
    session = next((agent / "sessions").rglob("*.jsonl")).read_text()
    assert "codemode-store" not in session


def test_nested_calls_go_through_policies_and_are_recorded_on_the_result(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    policy = tmp_path / "policy.py"
    policy.write_text("from pi_core import Block, hookimpl\n\n"
                      "@hookimpl\ndef before_tool_call(event, ctx):\n"
                      "    if event.tool.annotations.get('destructiveHint'):\n"
                      "        return Block('destructive tools need a human')\n")
    code = ("const results = await Promise.allSettled([tools.mcp__demo__delete_record({record_id: '7'}),"
            " tools.mcp__demo__echo({text: 'kept'})]);\n"
            "return results.map(r => r.status === 'fulfilled' ? r.value.content[0].text : r.reason.message)")
    write_mcp(agent, {"demo": stdio_server()})
    with FakeOpenAI([script(code), {"text": "ok"}]) as server:
        write_agent_dir(agent, server.base_url)
        result = run_pi(ws, agent, *MODEL, "-e", str(policy), "-p", "go")
    assert result.returncode == 0, result.stderr
    body = output(tool_results(server.requests[1])[-1]["content"])
    assert json.loads(body) == ["destructive tools need a human", "echo:kept"]
    entries = [json.loads(line) for line in next((agent / "sessions").rglob("*.jsonl")).read_text().splitlines()]
    message = next(e["message"] for e in entries if e.get("message", {}).get("toolName") == "codemode")
    assert [(c["name"], c["status"]) for c in message["nestedCalls"]["calls"]] == [
        ("mcp__demo__delete_record", "error"), ("mcp__demo__echo", "ok")]
    assert message["nestedCalls"]["calls"][0]["error"] == "destructive tools need a human"
    assert [(c["name"], c["status"]) for c in message["details"]["calls"]] == [
        ("mcp__demo__delete_record", "error"), ("mcp__demo__echo", "ok")]


def test_mode_only_hides_declared_tools_and_lists_them_in_the_codemode_description(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    with FakeOpenAI([{"text": "a"}, {"text": "b"}]) as server:
        write_agent_dir(agent, server.base_url, {"codemode": {"mode": "only"}})
        only = run_pi(ws, agent, *MODEL, "--no-session", "--tools", "read,bash,codemode", "-p", "go")
        write_agent_dir(agent, server.base_url, {})
        on = run_pi(ws, agent, *MODEL, "--no-session", "--tools", "read,bash,codemode", "-p", "go")
    assert only.returncode == 0 and on.returncode == 0, only.stderr + on.stderr
    only_tools = {t["function"]["name"]: t["function"] for t in server.requests[0]["body"]["tools"]}
    on_tools = {t["function"]["name"]: t["function"] for t in server.requests[1]["body"]["tools"]}
    assert list(only_tools) == ["codemode"]
    assert "### `read`" in only_tools["codemode"]["description"] and "### `bash`" in only_tools["codemode"]["description"]
    assert set(on_tools) == {"read", "bash", "codemode"}
    assert "### `read`" not in on_tools["codemode"]["description"]
    assert on_tools["read"]["description"].endswith(
        'Codemode: `tools.read(args)` resolves to `string | { data: string; mimeType: string; note: string; '
        'type: "image"; }`.')
    assert on_tools["bash"]["description"].endswith(
        "Codemode: `tools.bash(args)` resolves to `{ output, truncated, full_output_path?, exit_code, "
        "wall_time_seconds }`.")


def test_the_inline_budget_limits_the_listed_declarations(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    with FakeOpenAI([{"text": "a"}]) as server:
        write_agent_dir(agent, server.base_url, {"codemode": {"mode": "only", "inlineBudget": 0}})
        result = run_pi(ws, agent, *MODEL, "--no-session", "--tools", "read,codemode", "-p", "go")
    assert result.returncode == 0, result.stderr
    description = server.requests[0]["body"]["tools"][0]["function"]["description"]
    assert "### `read`" not in description and "searchTools(query" in description


def test_codemode_is_not_active_unless_asked_for(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    with FakeOpenAI([{"text": "a"}, {"text": "b"}]) as server:
        write_agent_dir(agent, server.base_url)
        plain = run_pi(ws, agent, *MODEL, "--no-session", "-p", "go")
        added = run_pi(ws, agent, *MODEL, "--no-session", "--tools", "+codemode", "-p", "go")
    assert plain.returncode == 0 and added.returncode == 0
    assert "codemode" not in tool_names(server.requests[0])
    assert "codemode" in tool_names(server.requests[1]) and "read" in tool_names(server.requests[1])


def test_the_worker_limit_comes_from_the_environment(ws: Path, tmp_path: Path) -> None:
    from plugins.codemode.sandbox import DEFAULT_MAX_WORKERS, max_workers

    os.environ["PI_CODEMODE_MAX_WORKERS"] = "5"
    try:
        assert max_workers() == 5
        os.environ["PI_CODEMODE_MAX_WORKERS"] = "zero"
        assert max_workers() == DEFAULT_MAX_WORKERS
    finally:
        del os.environ["PI_CODEMODE_MAX_WORKERS"]


def test_without_the_engine_codemode_servers_are_reached_through_tool_search(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    hide = tmp_path / "no_engine"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text("import sys\nsys.modules['py_mini_racer'] = None  # as if not installed\n")
    write_mcp(agent, {"demo": stdio_server()})
    turns = [script("text(1)"), {"text": "ok"}]
    with FakeOpenAI(turns) as server:
        write_agent_dir(agent, server.base_url)
        result = run_pi(ws, agent, *MODEL, "--no-session", "--tools", "+codemode", "-p", "go",
                        env={"PYTHONPATH": str(hide)})
    assert result.returncode == 0, result.stderr
    assert "tool_search" in tool_names(server.requests[0])
    assert tool_results(server.requests[1])[-1]["content"] == (
        "codemode needs the JavaScript sandbox: pip install 'pi-core-agent[codemode]' (py_mini_racer is missing)")


def _one_pixel_png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
            + chunk(b"IEND", b""))


def test_image_is_saved_and_shown_to_the_model_and_exit_ends_the_script(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    data = base64.b64encode(_one_pixel_png()).decode()
    code = f"text('before');\nimage('data:image/png;base64,{data}');\nexit();\ntext('never reached');"
    (result,), _, requests = run_scripts(ws, agent, code, args=("--tools", "+codemode"))
    body = output(result["content"])
    assert body.startswith("before\n[Image saved to ") and "never reached" not in result["content"]
    saved = Path(body.split("[Image saved to ", 1)[1].split(" (image/png, ", 1)[0])
    assert saved.read_bytes() == _one_pixel_png()
    # the image itself reaches the model beside the tool result (chat completions carry it in a user message)
    attached = requests[1]["body"]["messages"][-1]["content"]
    assert {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}} in attached


def test_bash_and_read_resolve_to_pis_result_objects(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    (ws / "dot.png").write_bytes(_one_pixel_png())
    (ws / "notes.txt").write_text("one\ntwo\n")
    # what scripts written for pi do: read .exit_code of a failing command (it resolves, it does not reject),
    # pass read's image block to image(), and find the whole of a long output in full_output_path
    code = ("const failed = await tools.bash({command: 'echo partial; exit 3'});\n"
            "const long = await tools.bash({command: 'seq 1 300000'});\n"
            "const picture = await tools.read({path: 'dot.png'});\n"
            "image(picture);\n"
            "return {failed, long: [long.exit_code, long.truncated, long.output.includes('bytes omitted'),"
            " long.output.length <= 1024 * 1024 + 100, long.full_output_path],"
            " picture: [picture.type, picture.mimeType, picture.note], text: await tools.read({path: 'notes.txt'})}")
    (result,), _, requests = run_scripts(ws, agent, code, args=("--tools", "read,bash,codemode"))
    assert result["content"].startswith("Script completed\n"), result["content"]
    body = output(result["content"])
    answer = json.loads(body[body.index("{"):])
    failed = answer["failed"]
    assert (failed["output"], failed["exit_code"], failed["truncated"]) == ("partial\n", 3, False)
    assert isinstance(failed["wall_time_seconds"], (int, float)) and "full_output_path" not in failed
    exit_code, truncated, omitted, bounded, path = answer["long"]
    assert (exit_code, truncated, omitted, bounded) == (0, True, True, True)
    assert Path(path).read_text().split() == [str(n) for n in range(1, 300001)]
    assert answer["picture"] == ["image", "image/png", "Read image file [image/png]"]
    assert answer["text"] == "one\ntwo\n"
    attached = requests[1]["body"]["messages"][-1]["content"]  # the image the script passed on
    png = base64.b64encode(_one_pixel_png()).decode()
    assert {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png}"}} in attached
