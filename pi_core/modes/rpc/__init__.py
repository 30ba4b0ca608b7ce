"""RPC mode (``pi --mode rpc``): pi's JSONL protocol over stdin/stdout, for hosts embedding pi.

See ``docs/rpc.md`` for the protocol. :func:`run_rpc` serves an ``AgentSession``; :class:`RpcUI`
is the ``ctx.ui`` plugins get in this mode (dialogs travel to the host).
"""

from __future__ import annotations

from .server import RpcServer, run_rpc
from .ui import RpcUI

__all__ = ["RpcServer", "RpcUI", "run_rpc"]
