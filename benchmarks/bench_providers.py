"""What the built-in providers and credentials cost at start-up.

    python benchmarks/bench_providers.py [--runs 20]

Measures (warm, modules imported; median of ``--runs``): registering every built-in provider plugin
(41 catalog providers; no model file may be read), building a ModelRegistry over them with an auth.json
of 20 entries, ``has_auth`` for every provider (what the model list does), and resolving a stored
API key. Results go to docs/performance.md by hand.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from timing import median_ms  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args().runs
    from pi_core.ai import ModelRegistry
    from pi_core.ai.catalog import _raw
    from pi_core.entry_points import BUILTIN_PLUGINS

    modules = [importlib.import_module(m) for _, m in BUILTIN_PLUGINS if m.startswith("plugins.providers.")]
    items: list = []

    def register() -> None:
        items.clear()
        for module in modules:
            module.register_providers(lambda item, replaces=None: items.append(item))

    reg_ms = median_ms(register, runs)
    files_read = _raw.cache_info().currsize
    agent = Path(tempfile.mkdtemp())
    (agent / "auth.json").write_text(json.dumps({f"p{i}": {"type": "api_key", "key": f"k{i}"} for i in range(19)}
                                                | {"groq": {"type": "api_key", "key": "gsk"}}))
    apis = [i for i in items if hasattr(i, "stream")]
    providers = [i for i in items if not hasattr(i, "stream")]
    build_ms = median_ms(lambda: ModelRegistry(apis, providers, agent_dir=agent, env={}), runs)
    registry = ModelRegistry(apis, providers, agent_dir=agent, env={})
    has_ms = median_ms(lambda: [registry.has_auth(p) for p in registry.get_providers()], runs)
    resolve_ms = median_ms(lambda: asyncio.run(registry.resolve_auth("groq")), runs)
    print(f"providers registered: {len(providers)} ({len(apis)} APIs), model files read: {files_read}")
    print(f"register all built-in providers: {reg_ms:.2f} ms")
    print(f"build a registry (auth.json of 20 entries): {build_ms:.2f} ms")
    print(f"has_auth for every provider: {has_ms:.2f} ms")
    print(f"resolve a stored API key (incl. asyncio.run): {resolve_ms:.2f} ms")


if __name__ == "__main__":
    main()
