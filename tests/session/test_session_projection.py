"""The projection (``build_session_context``): against pi's own results, and case by case.

``tests/fixtures/session/projection/*.pi-context.json`` hold what pi 1.6.0's ``buildSessionContext``
returned for each listed leaf of the synthetic trees next to them (see generate_pi_fixtures.py).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pi_core import (
    BashExecutionMessage,
    CompactionSummaryMessage,
    CustomMessage,
    SessionManager,
    convert_to_llm,
)
from pi_core.ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from pi_core.session.messages import (
    BRANCH_SUMMARY_PREFIX,
    BRANCH_SUMMARY_SUFFIX,
    COMPACTION_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_SUFFIX,
)

PROJECTION = Path(__file__).resolve().parent.parent / "fixtures" / "session" / "projection"
TREES = sorted(PROJECTION.glob("*.jsonl"))
KNOWN_ROLES = {"user", "assistant", "toolResult", "system", "bashExecution", "custom",
               "branchSummary", "compactionSummary"}


def cases() -> list[tuple[Path, str]]:
    return [(tree, leaf) for tree in TREES
            for leaf in json.loads(tree.with_suffix(".leaves.json").read_text())]


@pytest.fixture(scope="module")
def opened(tmp_path_factory: pytest.TempPathFactory) -> dict[str, SessionManager]:
    out = {}
    for tree in TREES:
        target = tmp_path_factory.mktemp("trees") / tree.name
        shutil.copyfile(tree, target)
        out[tree.stem] = SessionManager.open(target, read_only=True)
    return out


@pytest.mark.parametrize(("tree", "leaf"), cases(), ids=[f"{t.stem}:{leaf}" for t, leaf in cases()])
def test_same_context_as_pi(tree: Path, leaf: str, opened: dict[str, SessionManager]) -> None:
    expected = json.loads(tree.with_suffix(".pi-context.json").read_text())[leaf]
    manager = opened[tree.stem]
    leaf_id = {"@last": "no-such-entry", "@null": None}.get(leaf, leaf)
    context = manager.build_session_context(leaf_id=leaf_id)
    # pi passes messages of unknown roles on (its convertToLlm then drops them); we drop them here.
    pi_messages = [m for m in expected["messages"] if m.get("role") in KNOWN_ROLES]
    assert context.raw_messages == pi_messages
    assert context.thinking_level == expected["thinkingLevel"]
    assert (context.model.to_json() if context.model else None) == expected["model"]


def test_the_trees_exercise_what_they_claim() -> None:
    kinds = {json.loads(line)["type"] for tree in TREES for line in tree.read_text().splitlines()}
    assert {"context_edit", "compaction", "branch_summary", "custom_message", "label", "custom",
            "session_info", "usage", "future_entry_type"} <= kinds


# ---------------------------------------------------------------------------------------------
# case by case, through the API


def user(text: str) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)])


def reply(text: str, **extra: Any) -> AssistantMessage:
    return AssistantMessage(content=[TextContent(text=text)], provider="acme", model="m1",
                            stop_reason="stop", **extra)


def texts(context: Any) -> list[str]:
    out = []
    for m in convert_to_llm(context.messages):
        content = m.content
        out.append(content if isinstance(content, str) else "".join(
            b.text for b in content if isinstance(b, TextContent)))
    return out


@pytest.fixture
def session() -> SessionManager:
    return SessionManager.in_memory("/work/project")


def test_context_edit_replace_omit_and_last_wins(session: SessionManager) -> None:
    u = session.append_message(user("original question"))
    a = session.append_message(reply("first answer"))
    session.append_context_edit(u, {"content": "edited once"})
    session.append_context_edit(a, None)
    assert texts(session.build_session_context()) == ["edited once"]
    session.append_context_edit(u, {"content": [{"type": "text", "text": "edited twice"}]})
    context = session.build_session_context()
    assert texts(context) == ["edited twice"]
    assert session.get_entry(u).message.content[0].text == "original question"  # never mutated


def test_context_edit_of_assistant_string_becomes_a_text_block(session: SessionManager) -> None:
    session.append_message(user("q"))
    a = session.append_message(reply("long answer", usage={"input": 5, "output": 7}))
    edit = session.append_context_edit(a, {"content": "short"})
    assert session.get_raw_entry(edit)["replacement"] == {"content": [{"type": "text", "text": "short"}]}
    edited = session.build_session_context().messages[1]
    assert isinstance(edited, AssistantMessage)
    assert edited.content == [TextContent(text="short")] and edited.usage.output == 7


def test_context_edit_is_branch_relative(session: SessionManager) -> None:
    u = session.append_message(user("q"))
    a = session.append_message(reply("a"))
    session.append_context_edit(u, None)
    assert texts(session.build_session_context()) == ["a"]
    session.branch(a)  # before the edit: the original comes back
    assert texts(session.build_session_context()) == ["q", "a"]


def test_context_edit_rejects_bad_targets(session: SessionManager) -> None:
    u = session.append_message(user("q"))
    change = session.append_model_change("acme", "m2")
    with pytest.raises(ValueError, match="no editable model content"):
        session.append_context_edit(change, None)
    with pytest.raises(LookupError, match="not found"):
        session.append_context_edit("nope", None)
    with pytest.raises(ValueError, match="replacement"):
        session.append_context_edit(u, {"text": "x"})
    session.reset_leaf()
    session.append_message(user("other root"))
    with pytest.raises(LookupError, match="not on the current branch"):
        session.append_context_edit(u, None)


def test_compaction_keeps_from_first_kept_and_summary_comes_first(session: SessionManager) -> None:
    session.append_message(user("one"))
    session.append_message(reply("1"))
    kept = session.append_message(user("two"))
    session.append_message(reply("2"))
    session.append_compaction("the summary", kept, 1234)
    session.append_message(user("three"))
    context = session.build_session_context()
    assert isinstance(context.messages[0], CompactionSummaryMessage)
    assert context.messages[0].tokens_before == 1234
    assert texts(context) == [COMPACTION_SUMMARY_PREFIX + "the summary" + COMPACTION_SUMMARY_SUFFIX,
                              "two", "2", "three"]
    assert context.source_ids[1] == kept


def test_compaction_without_first_kept_keeps_nothing_before_it(session: SessionManager) -> None:
    session.append_message(user("one"))
    compaction = session.append_compaction("all gone", None, 10)
    assert session.get_raw_entry(compaction)["firstKeptEntryId"] == compaction
    assert texts(session.build_session_context())[1:] == []


def test_compaction_records_the_system_prompt_in_force(session: SessionManager) -> None:
    session.append_message({"role": "system", "content": "", "sections": {"a": "A", "b": "B"},
                            "timestamp": 5, "toolsAdded": [{"name": "read", "description": "r",
                                                            "parameters": {"type": "object"}}]})
    session.append_message({"role": "system", "content": "", "sections": {"b": None},
                            "timestamp": 6, "toolsRemoved": [{"name": "read"}]})
    first = session.append_message(user("go"))
    entry_id = session.append_compaction("s", first, 1)
    raw = session.get_raw_entry(entry_id)
    assert list(raw) == ["type", "id", "parentId", "timestamp", "summary", "firstKeptEntryId",
                         "tokensBefore", "systemMessage"]
    assert raw["systemMessage"]["sections"] == {"a": "A"} and "toolsAdded" not in raw["systemMessage"]
    context = session.build_session_context()
    assert [m.role for m in context.messages] == ["system", "compactionSummary", "user"]


def test_compaction_must_keep_from_the_current_branch(session: SessionManager) -> None:
    first = session.append_message(user("one"))
    session.reset_leaf()
    session.append_message(user("elsewhere"))
    with pytest.raises(LookupError, match="not on the current branch"):
        session.append_compaction("s", first, 1)


def test_branch_summary_is_wrapped_and_empty_ones_say_nothing(session: SessionManager) -> None:
    root = session.append_message(user("start"))
    session.append_message(reply("went left"))
    summary_id = session.branch_with_summary(root, "Explored left.")
    assert session.get_raw_entry(summary_id)["parentId"] == root
    assert texts(session.build_session_context()) == [
        "start", BRANCH_SUMMARY_PREFIX + "Explored left." + BRANCH_SUMMARY_SUFFIX]
    session.branch_with_summary(root, "")
    assert texts(session.build_session_context()) == ["start"]


def test_custom_messages_and_bash_become_user_messages(session: SessionManager) -> None:
    session.append_custom_message_entry("note", "plain text", display=False)
    session.append_custom_message_entry("pic", [{"type": "image", "data": "AAAA", "mimeType": "image/png"}])
    session.append_message(BashExecutionMessage(command="make test", output="2 failed", exit_code=1))
    session.append_message(BashExecutionMessage(command="secret", output="x", exclude_from_context=True))
    context = session.build_session_context()
    assert [type(m) for m in context.messages] == [CustomMessage, CustomMessage,
                                                   BashExecutionMessage, BashExecutionMessage]
    llm = convert_to_llm(context.messages)
    assert len(llm) == 3 and all(isinstance(m, UserMessage) for m in llm)
    assert llm[0].content == [TextContent(text="plain text")]
    assert llm[1].content[0].type == "image"
    bash = llm[2].content[0].text
    assert "`make test`" in bash and "```\n2 failed\n```" in bash and "1" in bash.split("\n")[-1]


def test_settings_follow_the_path(session: SessionManager) -> None:
    assert session.build_session_context().thinking_level == "off"
    assert session.build_session_context().model is None
    session.append_thinking_level_change("high")
    change = session.append_model_change("acme", "m2")
    assert session.build_session_context().model.model_id == "m2"
    session.append_message(reply("x"))  # an assistant message names the model it came from
    assert session.build_session_context().model.model_id == "m1"
    session.branch(change)
    assert session.build_session_context().model.model_id == "m2"
    assert session.build_session_context().thinking_level == "high"


def test_labels_names_and_plugin_state_stay_out_of_the_context(session: SessionManager) -> None:
    u = session.append_message(user("q"))
    session.append_label_change(u, "start")
    session.append_session_info("My session")
    session.append_custom_entry("plugin.state", {"n": 1})
    session.append_usage("cache_warm", "acme", "m1", {"input": 1, "output": 0})
    assert texts(session.build_session_context()) == ["q"]


def test_messages_are_typed_lazily_and_convert_like_pi(session: SessionManager) -> None:
    session.append_message(user("q"))
    session.append_message(AssistantMessage(
        content=[ToolCall(id="c1", name="read", arguments={"path": "a"})], stop_reason="toolUse"))
    session.append_message(ToolResultMessage(tool_call_id="c1", tool_name="read",
                                             content=[TextContent(text="data")]))
    context = session.build_session_context()
    assert len(context.messages) == 3
    assert isinstance(context.messages[-1], ToolResultMessage)
    assert context.messages[0:2][1].tool_calls()[0].name == "read"
    assert [m.role for m in context.to_llm()] == ["user", "assistant", "toolResult"]


def test_a_cycle_in_parent_links_does_not_hang(tmp_path: Path) -> None:
    path = tmp_path / "cycle.jsonl"
    lines = [{"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z",
              "cwd": "/w"},
             {"type": "message", "id": "a", "parentId": "b", "timestamp": "2026-01-01T00:00:01.000Z",
              "message": {"role": "user", "content": "A", "timestamp": 1}},
             {"type": "message", "id": "b", "parentId": "a", "timestamp": "2026-01-01T00:00:02.000Z",
              "message": {"role": "user", "content": "B", "timestamp": 2}},
             {"type": "label", "id": "c", "parentId": "c", "timestamp": "2026-01-01T00:00:03.000Z",
              "targetId": "a", "label": "x"}]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    manager = SessionManager.open(path, read_only=True)
    assert len(manager.build_session_context(leaf_id="b").messages) == 2
    assert manager.get_raw_branch("c") == [manager.get_raw_entry("c")]
    assert [node.id for node in manager.get_tree()] == ["c"]  # a self-parent is a root
