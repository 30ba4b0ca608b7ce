"""Settings files: pi's merge rules, defaults, migrations, trust, bad files, and key-level writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pi_core.runtime.settings import Settings, SettingsError, merge_settings


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    agent = tmp_path / "agent"
    cwd = tmp_path / "project"
    (cwd / ".pi").mkdir(parents=True)
    agent.mkdir()
    return agent, cwd


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def test_defaults_are_pis_when_no_file_exists(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    s = Settings.load(cwd, agent, trusted=True)
    assert s.errors == []
    assert (s.compaction.enabled, s.compaction.reserve_tokens, s.compaction.keep_recent_tokens) == (True, 16384, 20000)
    assert s.branch_summary.reserve_tokens == 16384
    assert (s.retry.enabled, s.retry.max_retries, s.retry.base_delay_ms, s.retry.max_agent_delay_ms) == (True, 3, 2000, 60000)
    assert (s.retry.provider.max_retries, s.retry.provider.max_retry_delay_ms, s.retry.provider.timeout_ms) == (0, 60000, None)
    assert s.steering_mode == s.follow_up_mode == "one-at-a-time"
    assert s.default_project_trust == "ask" and s.enable_skill_commands is True
    assert s.default_provider is None and s.default_model is None and s.session_dir_path is None
    assert s.default_tool_names() == ["read", "bash", "edit", "write"]


def test_project_replaces_scalars_and_arrays_and_merges_objects_one_level(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    write(agent / "settings.json", {
        "defaultModel": "g-model", "defaultProvider": "g-prov", "enabledModels": ["a", "b"],
        "compaction": {"enabled": False, "reserveTokens": 1000},
        "markdown": {"codeBlockIndent": "  ", "deep": {"x": 1, "y": 2}},
    })
    write(cwd / ".pi" / "settings.json", {
        "defaultModel": "p-model", "enabledModels": ["c"],
        "compaction": {"reserveTokens": 2000}, "markdown": {"deep": {"x": 9}},
    })
    s = Settings.load(cwd, agent, trusted=True)
    assert s.errors == []
    assert (s.default_model, s.default_provider) == ("p-model", "g-prov")
    assert s.get("enabledModels") == ["c"]
    assert (s.compaction.enabled, s.compaction.reserve_tokens, s.compaction.keep_recent_tokens) == (False, 2000, 20000)
    # one level deep only: the nested "deep" object is replaced, not merged
    assert s.get("markdown") == {"codeBlockIndent": "  ", "deep": {"x": 9}}


def test_untrusted_project_counts_only_for_session_dir(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    write(agent / "settings.json", {"defaultModel": "g"})
    write(cwd / ".pi" / "settings.json", {"defaultModel": "p", "sessionDir": "~/sessions-here"})
    untrusted = Settings.load(cwd, agent, trusted=False)
    assert untrusted.default_model == "g"
    assert untrusted.session_dir_path == Path.home() / "sessions-here"
    assert Settings.load(cwd, agent, trusted=True).default_model == "p"


def test_relative_session_dir_resolves_against_cwd_as_pi_does(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    write(cwd / ".pi" / "settings.json", {"sessionDir": ".pi/sessions"})
    assert Settings.load(cwd, agent, trusted=True).session_dir_path == cwd / ".pi" / "sessions"


def test_global_only_keys_are_ignored_in_the_project_file(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    write(cwd / ".pi" / "settings.json", {"defaultProjectTrust": "always"})
    assert Settings.load(cwd, agent, trusted=True).default_project_trust == "ask"
    write(agent / "settings.json", {"defaultProjectTrust": "never"})
    assert Settings.load(cwd, agent, trusted=True).default_project_trust == "never"


def test_malformed_file_is_reported_ignored_and_left_untouched(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    bad = '{\n  "defaultModel": "x",\n  oops\n}'
    write(agent / "settings.json", bad)
    write(cwd / ".pi" / "settings.json", {"defaultProvider": "p"})
    s = Settings.load(cwd, agent, trusted=True)
    assert len(s.errors) == 1
    issue = s.errors[0]
    assert issue.scope == "global" and issue.path == agent / "settings.json"
    assert str(agent / "settings.json") in issue.message and "line 3" in issue.message
    assert s.default_model is None and s.default_provider == "p"
    assert (agent / "settings.json").read_text() == bad


def test_non_object_json_is_reported(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    write(cwd / ".pi" / "settings.json", "[1, 2]")
    s = Settings.load(cwd, agent, trusted=True)
    assert [e.scope for e in s.errors] == ["project"]
    assert "expected a JSON object" in s.errors[0].message


def test_empty_file_and_bom_are_accepted(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    write(agent / "settings.json", "")
    (cwd / ".pi" / "settings.json").write_bytes(b'\xef\xbb\xbf{"defaultModel": "bom"}')
    s = Settings.load(cwd, agent, trusted=True)
    assert s.errors == [] and s.default_model == "bom"


def test_wrong_typed_value_falls_back_to_default_and_keeps_the_rest(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    write(agent / "settings.json", {
        "retry": {"maxRetries": "three", "baseDelayMs": 10},
        "steeringMode": "sometimes", "defaultModel": "m", "skills": ["ok", 3],
    })
    s = Settings.load(cwd, agent, trusted=True)
    assert s.retry.max_retries == 3 and s.retry.base_delay_ms == 10
    assert s.steering_mode == "one-at-a-time" and s.default_model == "m" and s.skills == []
    messages = " | ".join(e.message for e in s.errors)
    assert "retry.maxRetries" in messages and '"three"' in messages
    assert "steeringMode" in messages and "skills" in messages
    assert len(s.errors) == 3


def test_unknown_keys_are_preserved(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    write(agent / "settings.json", {"theme": "light", "compaction": {"futureKnob": 7}})
    s = Settings.load(cwd, agent, trusted=True)
    assert s.get("theme") == "light" and s.get("compaction.futureKnob") == 7
    assert s.get("nope", "dflt") == "dflt"
    assert s.model_dump(by_alias=True)["theme"] == "light"


def test_load_time_migrations(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    original = {"queueMode": "all", "websockets": True,
                "skills": {"enableSkillCommands": False, "customDirectories": ["~/my-skills"]},
                "retry": {"maxDelayMs": 7000, "provider": {"maxRetryDelayMs": 5000}}}
    write(agent / "settings.json", original)
    s = Settings.load(cwd, agent, trusted=True)
    assert s.errors == []
    assert s.steering_mode == "all" and s.transport == "websocket"
    assert s.enable_skill_commands is False
    assert s.skill_paths() == [Path.home() / "my-skills"]
    assert (s.retry.max_agent_delay_ms, s.retry.provider.max_retry_delay_ms) == (7000, 5000)  # old maxDelayMs
    assert json.loads((agent / "settings.json").read_text()) == original  # loading never writes


def test_resource_paths_resolve_against_their_file_and_project_comes_first(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    write(agent / "settings.json", {"skills": ["g-skills", "/abs/skills"], "prompts": ["~/p"],
                                    "extensions": ["ext.py"]})
    write(cwd / ".pi" / "settings.json", {"skills": ["../team-skills", "!excluded/**", "+forced"]})
    s = Settings.load(cwd, agent, trusted=True)
    assert s.skill_paths() == [cwd / "team-skills", agent / "g-skills", Path("/abs/skills")]
    assert s.prompt_paths() == [Path.home() / "p"]
    assert s.extension_paths() == [agent / "ext.py"]
    assert Settings.load(cwd, agent, trusted=False).skill_paths() == [agent / "g-skills", Path("/abs/skills")]


def test_default_tools_plain_names_replace_and_modifiers_edit(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    write(agent / "settings.json", {"defaultTools": ["read", "grep"]})
    write(cwd / ".pi" / "settings.json", {"defaultTools": ["+find", "-grep"]})
    assert Settings.load(cwd, agent, trusted=True).default_tool_names() == ["read", "find"]
    write(agent / "settings.json", {"defaultTools": ["-bash"]})
    assert Settings.load(cwd, agent, trusted=False).default_tool_names() == ["read", "edit", "write"]
    write(agent / "settings.json", {"defaultTools": []})
    assert Settings.load(cwd, agent, trusted=False).default_tool_names() == []


def test_merge_settings_keeps_inputs_unchanged() -> None:
    base = {"a": {"x": 1}, "b": [1]}
    over = {"a": {"y": 2}, "b": [2]}
    assert merge_settings(base, over) == {"a": {"x": 1, "y": 2}, "b": [2]}
    assert base == {"a": {"x": 1}, "b": [1]} and over == {"a": {"y": 2}, "b": [2]}


def test_required_plugins_from_both_files_and_missing_ones(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    write(agent / "settings.json", {"plugins": {"required": ["pi-lint"]}})
    write(cwd / ".pi" / "settings.json", {"plugins": {"required": ["Pi_Review>=1.2", "pi-lint", "pi-mcp"]}})
    s = Settings.load(cwd, agent, trusted=True)
    assert s.required_plugins() == ["pi-lint", "Pi_Review>=1.2", "pi-mcp"]
    assert s.missing_required_plugins(["pi.review", "requests"]) == ["pi-lint", "pi-mcp"]
    assert s.missing_required_plugins(["PI-LINT", "pi-review", "pi_mcp"]) == []


# --- writing ---------------------------------------------------------------------------------------


def test_set_global_patches_only_that_key(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    path = write(agent / "settings.json", {"theme": "dark", "compaction": {"enabled": True, "custom": 1},
                                           "zzz": [1, 2]})
    s = Settings.load(cwd, agent, trusted=True)
    # another program changes the file after we loaded it
    data = json.loads(path.read_text())
    data["lastChangelogVersion"] = "9.9"
    path.write_text(json.dumps(data))
    s2 = s.set_global("compaction.reserveTokens", 4096)
    assert s2.compaction.reserve_tokens == 4096 and s2.compaction.enabled is True
    assert json.loads(path.read_text()) == {"theme": "dark", "compaction": {"enabled": True, "custom": 1,
                                            "reserveTokens": 4096}, "zzz": [1, 2], "lastChangelogVersion": "9.9"}
    s3 = s2.set_global("defaultModel", "m1").set_global("theme", None)
    assert s3.default_model == "m1" and s3.get("theme") is None
    assert sorted(p.name for p in agent.iterdir()) == ["settings.json"]  # no temp file or lock left


def test_set_global_creates_the_file(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    s = Settings.load(cwd, agent / "new", trusted=True).set_global("defaultProvider", "anthropic")
    assert json.loads((agent / "new" / "settings.json").read_text()) == {"defaultProvider": "anthropic"}
    assert s.default_provider == "anthropic"


def test_malformed_file_is_never_overwritten(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    path = write(agent / "settings.json", '{"defaultModel": ')
    s = Settings.load(cwd, agent, trusted=True)
    with pytest.raises(SettingsError, match="invalid JSON"):
        s.set_global("defaultModel", "x")
    assert path.read_text() == '{"defaultModel": '


def test_wrong_type_is_refused_before_writing(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    path = write(agent / "settings.json", {"retry": {"enabled": True}})
    s = Settings.load(cwd, agent, trusted=True)
    with pytest.raises(SettingsError, match="retry.maxRetries"):
        s.set_global("retry.maxRetries", "many")
    with pytest.raises(SettingsError, match="steeringMode"):
        s.set_global("steeringMode", "whenever")
    assert json.loads(path.read_text()) == {"retry": {"enabled": True}}


def test_set_project_requires_trust_and_refuses_global_only_keys(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    with pytest.raises(SettingsError, match="not trusted"):
        Settings.load(cwd, agent, trusted=False).set_project("defaultModel", "x")
    assert not (cwd / ".pi" / "settings.json").exists()
    trusted = Settings.load(cwd, agent, trusted=True)
    with pytest.raises(SettingsError, match="global"):
        trusted.set_project("defaultProjectTrust", "always")
    assert trusted.set_project("defaultModel", "x").default_model == "x"
    assert json.loads((cwd / ".pi" / "settings.json").read_text()) == {"defaultModel": "x"}


def test_stale_lock_is_broken_and_fresh_lock_waits(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    lock = agent / "settings.json.lock"
    lock.mkdir()
    old = time.time() - 60
    os.utime(lock, (old, old))
    Settings.load(cwd, agent, trusted=True).set_global("defaultModel", "after-stale")
    assert not lock.exists()
    assert json.loads((agent / "settings.json").read_text())["defaultModel"] == "after-stale"


def test_two_processes_writing_different_keys_lose_nothing(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    script = (
        "import sys\n"
        "from pi_core.runtime.settings import write_setting\n"
        "from pathlib import Path\n"
        "p, tag = Path(sys.argv[1]), sys.argv[2]\n"
        "for i in range(15):\n"
        "    write_setting(p, f'{tag}{i}', i)\n"
    )
    path = agent / "settings.json"
    procs = [subprocess.Popen([sys.executable, "-c", script, str(path), tag]) for tag in ("a", "b")]
    for proc in procs:
        assert proc.wait(timeout=60) == 0
    data = json.loads(path.read_text())
    assert data == {f"{tag}{i}": i for tag in ("a", "b") for i in range(15)}
