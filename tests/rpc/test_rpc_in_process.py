"""``run_rpc(session, stdin=..., stdout=...)`` serving an SDK session over a pair of pipes."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from pathlib import Path

from pi_core import create_agent_session
from pi_core.ai import FauxProvider
from pi_core.modes.rpc import run_rpc


def test_run_rpc_serves_a_session_over_pipes_until_input_ends(tmp_path: Path) -> None:
    faux = FauxProvider("script", "m1", reasoning=False).enqueue("first answer")
    commands = [{"type": "prompt", "message": "hi", "id": "p"}, {"type": "get_last_assistant_text", "id": "t"}]
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.extend(iter(lambda: os.read(out_read, 65536), b"")))
    reader.start()

    async def main() -> int:
        session = await create_agent_session(tmp_path, model=faux.model, plugins=[faux], session="memory")
        # the prompt settles before the next command only because we wait for it: send both, then end input
        os.write(in_write, b"".join(json.dumps(c).encode() + b"\n" for c in commands[:1]))
        task = asyncio.ensure_future(run_rpc(session, stdin=in_read, stdout=out_write))
        async def settled() -> None:
            while b'"agent_settled"' not in b"".join(received):
                await asyncio.sleep(0.01)

        await asyncio.wait_for(settled(), 20)
        os.write(in_write, json.dumps(commands[1]).encode() + b"\n")
        os.close(in_write)
        code = await asyncio.wait_for(task, 20)
        await session.close()
        return code

    try:
        code = asyncio.run(main())
    finally:
        os.close(out_write)
        reader.join(10)
        os.close(in_read)
        os.close(out_read)
    records = [json.loads(line) for line in b"".join(received).splitlines()]
    responses = {r["id"]: r for r in records if r["type"] == "response"}
    assert code == 0
    assert responses["p"]["data"] == {"disposition": "started"}
    assert responses["t"]["data"] == {"text": "first answer"}
    assert records[0]["type"] == "response" and records[1]["type"] == "agent_start"
