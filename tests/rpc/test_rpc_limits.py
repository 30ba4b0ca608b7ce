"""RPC stdin is untrusted: no line ends the loop, every line gets its answer, output stays strict JSON."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_core import create_agent_session
from pi_core.ai import FauxProvider
from pi_core.modes.rpc import run_rpc
from pi_core.modes.rpc.jsonl import LineSplitter, Oversized, serialize

from rpc_client import RpcProcess


def _strict(text: bytes) -> Any:
    def reject(name: str) -> Any:
        raise AssertionError(f"{name} in the output is not JSON")

    return json.loads(text.decode("utf-8"), parse_constant=reject)


def test_deep_nesting_and_huge_numbers_get_parse_errors_and_the_answers_around_them_are_kept(tmp_path: Path) -> None:
    deep_990 = b'{"id":"deep","type":"prompt","message":' + b"[" * 990 + b"]" * 990 + b"}\n"
    with RpcProcess(tmp_path) as pi:
        first, _ = pi.call({"type": "get_state", "id": "before"})
        pi.send_raw(deep_990 + b"[" * 100_000 + b"\n" + b'{"id":1e400,"type":"get_state"}\n')
        pi.send_raw(b'{"id":"huge-int","type":"get_state","x":' + b"9" * 5000 + b"}\n")
        after, seen = pi.call({"type": "get_state", "id": "after"})
        parse_errors = [r for r in seen if r.get("command") == "parse"]
        pi.close_stdin()
        assert pi.wait() == 0
    assert first["success"] is True and after["success"] is True
    assert len(parse_errors) == 4, parse_errors
    assert all(r["success"] is False and "id" not in r for r in parse_errors)
    assert sum("nested more than" in r["error"] for r in parse_errors) == 2
    assert any("1e400" in r["error"] for r in parse_errors)
    assert any("digits" in r["error"] for r in parse_errors)
    for line in pi.raw_lines:
        _strict(line)  # never Infinity or NaN
        assert b"Infinity" not in line
    assert b"Traceback" not in pi.stderr


def test_an_oversized_line_is_dropped_as_it_streams_and_reported_once() -> None:
    splitter = LineSplitter(max_record=10)
    records = splitter.feed(b'{"a":1}\n0123456') + splitter.feed(b"789abcdef") + splitter.feed(b'xyz\n{"b":2}\n')
    assert records[0] == '{"a":1}'
    assert isinstance(records[1], Oversized) and records[1].size == 19
    assert records[2] == '{"b":2}'
    assert splitter.feed(b"0123456789abc") == [] and isinstance(splitter.end()[0], Oversized)


def test_non_finite_floats_in_output_are_written_as_null() -> None:
    line = serialize({"type": "response", "data": {"a": float("inf"), "b": [float("nan"), 1.5]}})
    assert _strict(line) == {"type": "response", "data": {"a": None, "b": [None, 1.5]}}


# -- fuzz: random lines into a real server --------------------------------------------------------

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
_commands = st.fixed_dictionaries(
    {"type": st.sampled_from(["get_state", "get_commands", "get_messages", "get_session_stats", "no_such",
                              "set_thinking_level", "set_session_name", "get_fork_messages"])},
    optional={"id": _json_values, "level": _json_values, "name": _json_values},
)
_nested = st.builds(lambda n, opener, close: opener * n + ("" if not close else {"[": "]", "{": "}"}.get(
    opener[-1], "") * n), st.integers(150, 3000), st.sampled_from(["[", '{"a":', '[{"a":']), st.booleans())
_numbers = st.sampled_from(["1e400", "-1e400", "1e-400", "9" * 5000, "-0", "1E+999", "NaN", "Infinity", "0x10"])
_lines = st.one_of(
    st.text(max_size=200).map(lambda t: t.replace("\n", " ")),
    st.binary(max_size=200).map(lambda b: b.replace(b"\n", b" ").decode("utf-8", "replace")),
    _json_values.map(lambda v: json.dumps(v)),
    _commands.map(lambda c: json.dumps(c)),
    _nested,
    _numbers.map(lambda n: '{"type":"get_state","id":' + n + "}"),
)


def _serve(tmp_path: Path, lines: list[bytes]) -> tuple[int, list[bytes]]:
    faux = FauxProvider("fuzz", "m1", reasoning=False)
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.extend(iter(lambda: os.read(out_read, 65536), b"")))
    reader.start()
    writer = threading.Thread(target=lambda: (os.write(in_write, b"".join(lines)), os.close(in_write)))

    async def main() -> int:
        session = await create_agent_session(tmp_path, model=faux.model, plugins=[faux], session="memory")
        writer.start()
        try:
            return await asyncio.wait_for(run_rpc(session, stdin=in_read, stdout=out_write), 60)
        finally:
            await session.close()

    try:
        code = asyncio.run(main())
    finally:
        writer.join(10)
        os.close(out_write)
        reader.join(10)
        os.close(in_read)
        os.close(out_read)
    return code, b"".join(received).split(b"\n")[:-1]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(st.lists(_lines, min_size=1, max_size=12))
def test_fuzzed_stdin_lines_are_each_answered_and_the_loop_survives(tmp_path: Path, lines: list[str]) -> None:
    framed = [line.encode("utf-8") + b"\n" for line in lines]
    framed = [b'{"type":"get_state","id":"sentinel-first"}\n', *framed, b'{"type":"get_commands","id":"sentinel-last"}\n']
    code, out = _serve(tmp_path, framed)
    records = [_strict(line) for line in out]  # every output line is strict JSON
    expected = sum(1 for line in framed if line.decode("utf-8", "replace").strip())
    responses = [r for r in records if r.get("type") == "response"]
    assert code == 0
    assert len(responses) == expected
    by_id = {r.get("id"): r for r in responses if isinstance(r.get("id"), str)}
    assert by_id["sentinel-first"]["success"] is True and by_id["sentinel-last"]["success"] is True
